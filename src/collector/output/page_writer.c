/* SPDX-License-Identifier: MIT */
/* The writer thread of page-written rows (page_writer.h). */
#include "page_writer.h"

#include "clock.h"
#include "cpu_quota.h"
#include "db_rows.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Jobs in the ring: at some 2 µs a batch, 64 of them let either side run
 * ahead of the other for a tenth of a millisecond without a stop. */
#define JOBS 64
/* How long a side polls the other's counter before sleeping on a condition:
 * a batch comes every microsecond or two while a spool is converted, and a
 * sleep and wake-up cost more than that. It polls without giving up its CPU
 * (sched_yield): two threads that yielded to each other stayed on one CPU
 * for the 35 ms the tail of a 2 M-call run took to convert, the other CPU
 * idle (perf sched timehist: a switch every 100 us, never a sleep, so never
 * a wake-up that would place one of them on the idle CPU). Past SPIN_NS the
 * side that waits sleeps, and its wake-up finds it an idle CPU. */
#define SPIN_NS (50 * 1000)

enum { WRITER, CALLER };

typedef struct job {
    uo_table_tree *tree;
    _Atomic int *failed;
    int ncols;
    int n;
    int64_t *vals;   /* UO_ROWS_BATCH * UO_TABLE_COLS_MAX */
    size_t text[UO_ROWS_BATCH];
    char *arena;     /* the rows' texts (text[i]: offset + 1, 0 for none) */
    size_t arena_cap;
} job;

struct uo_page_writer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work; /* the writer waits here for a job */
    pthread_cond_t done; /* the converting thread waits here for a free job, or the last */
    _Atomic uint64_t head; /* jobs handed over (the converting thread's) */
    _Atomic uint64_t tail; /* jobs written (the writer's) */
    _Atomic int writer_sleeps, caller_sleeps, stop;
    /* Where each side (WRITER, CALLER) ran as it last waited (sched_getcpu). */
    _Atomic int cpu[2];
    job jobs[JOBS];
};

/* Tells the processor this is a wait loop (the other hardware thread of its
 * core runs meanwhile). */
static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Waits until ready(w, arg), spinning first, then asleep on cond with *sleeps
 * set (the other side wakes it when it sees it set: both use sequentially
 * consistent operations, so one of the two sees the other's store). side is
 * the caller's (WRITER or CALLER): where the other side last waited on this
 * CPU, the caller moves off it first (upti_move_off_cpu): on one CPU, a side
 * that spins only keeps the other from running. */
static void wait_until(uo_page_writer *w, int (*ready)(uo_page_writer *, uint64_t), uint64_t arg,
                       pthread_cond_t *cond, _Atomic int *sleeps, int side)
{
    if (ready(w, arg))
        return;
    int here = sched_getcpu();
    if (here == atomic_load_explicit(&w->cpu[!side], memory_order_relaxed)) {
        upti_move_off_cpu(here);
        here = sched_getcpu();
    }
    atomic_store_explicit(&w->cpu[side], here, memory_order_relaxed);
    uint64_t until = 0;
    for (unsigned i = 0;; i++) {
        if (ready(w, arg))
            return;
        if (i % 64 == 0) { /* (the clock a few times a microsecond at most) */
            uint64_t now = upti_mono_ns();
            if (until == 0)
                until = now + SPIN_NS;
            else if (now >= until)
                break;
        }
        spin_pause();
    }
    pthread_mutex_lock(&w->lock);
    atomic_store(sleeps, 1);
    while (!ready(w, arg))
        pthread_cond_wait(cond, &w->lock);
    atomic_store(sleeps, 0);
    pthread_mutex_unlock(&w->lock);
}

static void wake(uo_page_writer *w, pthread_cond_t *cond, _Atomic int *sleeps)
{
    if (!atomic_load(sleeps))
        return;
    pthread_mutex_lock(&w->lock);
    pthread_cond_broadcast(cond);
    pthread_mutex_unlock(&w->lock);
}

/* The writer: a job handed over, or the stop with none left. */
static int has_work(uo_page_writer *w, uint64_t tail)
{
    return atomic_load(&w->head) != tail || atomic_load(&w->stop);
}

/* The converting thread: at most `most` jobs not yet written. */
static int at_most(uo_page_writer *w, uint64_t most)
{
    return atomic_load(&w->head) - atomic_load(&w->tail) <= most;
}

static void *writer_main(void *arg)
{
    uo_page_writer *w = arg;
    uint64_t tail = atomic_load(&w->tail);
    for (;;) {
        wait_until(w, has_work, tail, &w->work, &w->writer_sleeps, WRITER);
        if (atomic_load(&w->head) == tail)
            return NULL; /* stopped, nothing left */
        job *j = &w->jobs[tail % JOBS];
        /* (A database that failed takes no more rows: its close fails anyway.) */
        if (!atomic_load(j->failed) &&
            uo_rows_write_pages(j->tree, j->vals, j->ncols, j->text, j->arena, j->n) != 0)
            atomic_store(j->failed, 1);
        atomic_store(&w->tail, ++tail);
        wake(w, &w->done, &w->caller_sleeps);
    }
}

uo_page_writer *uo_page_writer_start(void)
{
    if (upti_usable_cpus() < 2) /* (a container's quota included: two threads would share one) */
        return NULL;
    uo_page_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    for (int i = 0; i < JOBS; i++)
        if ((w->jobs[i].vals = malloc((size_t)UO_ROWS_BATCH * UO_TABLE_COLS_MAX *
                                      sizeof *w->jobs[i].vals)) == NULL)
            goto fail;
    if (pthread_mutex_init(&w->lock, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&w->work, NULL) != 0)
        goto no_work;
    if (pthread_cond_init(&w->done, NULL) != 0)
        goto no_done;
    w->cpu[WRITER] = w->cpu[CALLER] = -1;
    if (pthread_create(&w->thread, NULL, writer_main, w) == 0)
        return w;
    pthread_cond_destroy(&w->done);
no_done:
    pthread_cond_destroy(&w->work);
no_work:
    pthread_mutex_destroy(&w->lock);
fail:
    for (int i = 0; i < JOBS; i++)
        free(w->jobs[i].vals);
    free(w);
    return NULL;
}

int uo_page_writer_submit(uo_page_writer *w, uo_rows *r)
{
    uint64_t head = atomic_load_explicit(&w->head, memory_order_relaxed);
    wait_until(w, at_most, JOBS - 1, &w->done, &w->caller_sleeps, CALLER);
    job *j = &w->jobs[head % JOBS];
    size_t text_bytes = r->arena.len;
    if (text_bytes > j->arena_cap) {
        char *a = realloc(j->arena, text_bytes);
        if (a == NULL)
            return -1;
        j->arena = a;
        j->arena_cap = text_bytes;
    }
    j->tree = r->direct;
    j->failed = r->page_failed;
    j->ncols = r->ncols;
    j->n = r->n;
    memcpy(j->vals, r->vals, (size_t)r->n * (size_t)r->ncols * sizeof *r->vals);
    memcpy(j->text, r->text, (size_t)r->n * sizeof *r->text);
    if (text_bytes > 0)
        memcpy(j->arena, r->arena.data, text_bytes);
    atomic_store(&w->head, head + 1);
    wake(w, &w->work, &w->writer_sleeps);
    r->n = 0;
    r->arena.len = 0;
    return 0;
}

uint64_t uo_page_writer_jobs(uo_page_writer *w)
{
    return w != NULL ? atomic_load(&w->tail) : 0;
}

void uo_page_writer_sync(uo_page_writer *w)
{
    if (w != NULL)
        wait_until(w, at_most, 0, &w->done, &w->caller_sleeps, CALLER);
}

void uo_page_writer_stop(uo_page_writer *w)
{
    if (w == NULL)
        return;
    uo_page_writer_sync(w);
    atomic_store(&w->stop, 1);
    pthread_mutex_lock(&w->lock);
    pthread_cond_broadcast(&w->work);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    pthread_mutex_destroy(&w->lock);
    for (int i = 0; i < JOBS; i++) {
        free(w->jobs[i].vals);
        free(w->jobs[i].arena);
    }
    free(w);
}
