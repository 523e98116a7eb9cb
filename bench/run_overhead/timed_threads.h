/* SPDX-License-Identifier: MIT */
/* The probes' threads (probe.c, mark_probe.c): each times its own loop, and
 * the main thread joins them and takes the span from the first one's start to
 * the last one's end, and their CPU time summed. */
#ifndef BENCH_RUN_OVERHEAD_TIMED_THREADS_H
#define BENCH_RUN_OVERHEAD_TIMED_THREADS_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

/* A probe thread's timing: the first member of its worker struct. */
typedef struct timed_thread {
    pthread_t thread;
    double start_ns, end_ns; /* CLOCK_MONOTONIC around its loop */
    double cpu_ns;           /* its CPU time in the loop */
    double cpu0;
} timed_thread;

static inline double clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline void timed_begin(timed_thread *t)
{
    t->start_ns = clock_ns(CLOCK_MONOTONIC);
    t->cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline void timed_end(timed_thread *t)
{
    t->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t->cpu0;
    t->end_ns = clock_ns(CLOCK_MONOTONIC);
}

/* Joins the n threads of the workers at first, stride bytes apart (each
 * starting with its timed_thread): *span from the first start to the last
 * end, *cpu their CPU time summed. */
static inline void timed_join(void *first, size_t stride, int n, double *span, double *cpu)
{
    double start = 0, end = 0;
    *cpu = 0;
    for (int i = 0; i < n; i++) {
        timed_thread *t = (timed_thread *)((char *)first + (size_t)i * stride);
        pthread_join(t->thread, NULL);
        start = i == 0 || t->start_ns < start ? t->start_ns : start;
        end = t->end_ns > end ? t->end_ns : end;
        *cpu += t->cpu_ns;
    }
    *span = end - start;
}

#endif
