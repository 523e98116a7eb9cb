/* SPDX-License-Identifier: MIT */
/* Buffers: one single-producer ring per (thread, buffer), drained by a callback thread.
 *
 * Producer protocol (the calling thread, no lock): reserve space at its
 * private head, write the record, publish it with a release store of head.
 * A record never wraps: when it does not fit before the end of the ring a
 * padding record (kind 0) fills the gap. Consumer protocol (the buffer's
 * callback thread): acquire-load head, hand the records in [tail, head) to
 * the callback, then release-store tail, which frees the space.
 */
#include "internal.h"
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's form */
#include "compact_records.h"
#include "fork.h"
#include "ring.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIN_BUFFER_SIZE 4096u
#define DELIVERY_BATCH 4096u

struct callback_thread {
    pthread_t thread;
    bool started;
    _Atomic int wake; /* futex word: 1 = there is work */
    _Atomic bool stop;
    _Atomic uint64_t flush_requested;
    uint64_t flush_done; /* under lock */
    pthread_mutex_t lock; /* guards flush_done (with `flushed`); a leaf: nothing is taken under it */
    pthread_cond_t flushed;
    upti_record_header_t *headers;
    upti_record_header_t **header_ptrs;
    union decoded_record {
        upti_buffer_tracing_marker_api_record_t marker;
        upti_buffer_tracing_api_record_t api;
    } *decoded; /* compact records expanded for delivery */
};









static struct upti_buffer *g_buffers[UPTI_MAX_BUFFERS];
static uint32_t g_num_buffers;
static struct callback_thread g_threads[UPTI_MAX_CALLBACK_THREADS];
static uint32_t g_num_threads;
static bool g_threads_stopped;
/* Guards g_buffers, g_threads and their counts. Taken before any buffer's own lock
 * (upti_buffer.lock, ring.h), never under one (lock order: internal.h). */
static pthread_mutex_t g_buffers_lock = PTHREAD_MUTEX_INITIALIZER;

static void futex_wake(_Atomic int *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits while *word == expected, at most timeout_ns (0: no limit). */
static void futex_wait(_Atomic int *word, int expected, uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout_ns ? &ts : NULL, NULL, 0);
}

static void wake_thread(struct callback_thread *t)
{
    if (atomic_load_explicit(&t->wake, memory_order_relaxed) == 0 &&
        atomic_exchange(&t->wake, 1) == 0)
        futex_wake(&t->wake);
}

/* ---- consumer ---- */

/* Hands the published records of one producer to the callback. */
static void deliver(struct upti_buffer *b, struct upti_producer *p, struct callback_thread *t,
                    bool force)
{
    size_t head = atomic_load_explicit(&p->head, memory_order_acquire);
    size_t tail = atomic_load_explicit(&p->tail, memory_order_relaxed);
    uint64_t drops = atomic_load_explicit(&p->dropped, memory_order_relaxed) - p->drops_reported;
    if (head == tail && drops == 0)
        return;
    if (!force && drops == 0 && head - tail < b->watermark && !atomic_load(&p->starving))
        return;
    size_t mask = p->size - 1;
    do {
        size_t n = 0;
        while (tail != head && n < DELIVERY_BATCH) {
            upti_ring_record_t *r = (upti_ring_record_t *)(p->data + (tail & mask));
            tail += r->len;
            /* What the callback gets: the record's own payload, or the public record a
             * compact one stands for, expanded into t->decoded[n]. */
            upti_buffer_category_t category = UPTI_BUFFER_CATEGORY_TRACING;
            uint32_t kind = r->kind;
            void *payload = r + 1;
            if (r->kind == UPTI_RING_COMPACT_MARKER) {
                const upti_ring_compact_marker_t *m = (const upti_ring_compact_marker_t *)(r + 1);
                upti_compact_marker_expand(m, p->tid, m->has_message ? (const char *)(m + 1) : NULL,
                                           &t->decoded[n].marker);
                kind = UPTI_TRACING_KIND_MARKER_API;
                payload = &t->decoded[n].marker;
            } else if (r->kind == UPTI_RING_COMPACT_MARK) {
                /* (Written by this process: well formed; one that is not is left out.) */
                if (upti_compact_mark_expand((const uint8_t *)(r + 1), r->len - sizeof *r, p->tid,
                                             &t->decoded[n].marker) != 0)
                    continue;
                kind = UPTI_TRACING_KIND_MARKER_API;
                payload = &t->decoded[n].marker;
            } else if (r->kind == UPTI_RING_COMPACT_API) {
                upti_compact_api_expand((const upti_ring_compact_api_t *)(r + 1), p->tid,
                                        &t->decoded[n].api);
                kind = t->decoded[n].api.kind;
                payload = &t->decoded[n].api;
            } else if (r->kind == UPTI_RING_TOOL_RECORD) {
                upti_inproc_tool_record_t *tr = (upti_inproc_tool_record_t *)(r + 1);
                category = UPTI_BUFFER_CATEGORY_TOOL;
                kind = tr->kind;
                payload = &tr->size;
            } else if (r->kind == 0) {
                continue; /* padding */
            }
            t->headers[n] = (upti_record_header_t){category, kind, payload};
            t->header_ptrs[n] = &t->headers[n];
            n++;
        }
        if (n > 0 || drops > 0)
            b->callback(b->context, (upti_buffer_id_t){b->index + 1}, t->header_ptrs, n,
                        b->callback_data, drops);
        if (drops > 0)
            upti_subscriber_drops(b->index + 1, drops);
        p->drops_reported += drops;
        drops = 0;
        atomic_store_explicit(&p->tail, tail, memory_order_release);
        if (atomic_load(&p->starving)) {
            atomic_fetch_add(&p->space, 1);
            futex_wake((_Atomic int *)&p->space);
        }
    } while (tail != head);
}

/* Set while a fork() waits for the buffer locks: the callback threads then
 * stand back, or a busy one (unfair mutexes) could keep the fork waiting. */
static _Atomic bool g_fork_pending;

/* Delivers every producer of b; frees the regions of exited threads once empty. */
static void drain_buffer(struct upti_buffer *b, struct callback_thread *t, bool force)
{
    if (atomic_load_explicit(&g_fork_pending, memory_order_relaxed)) {
        sched_yield();
        return;
    }
    if (b->shared != NULL)
        return; /* a collector in another process drains it */
    pthread_mutex_lock(&b->lock);
    /* Adopt the producers that arrived since the last drain. */
    struct upti_producer *arrived = atomic_exchange(&b->incoming, NULL);
    while (arrived != NULL) {
        struct upti_producer *next = arrived->next;
        arrived->next = b->producers;
        b->producers = arrived;
        arrived = next;
    }
    struct upti_producer **link = &b->producers;
    while (*link != NULL) {
        struct upti_producer *p = *link;
        bool orphaned = atomic_load(&p->orphaned);
        deliver(b, p, t, force || orphaned);
        if (orphaned && atomic_load(&p->head) == atomic_load(&p->tail)) {
            *link = p->next;
            free(p->data);
            free(p);
        } else {
            link = &p->next;
        }
    }
    pthread_mutex_unlock(&b->lock);
}

/* Drains t's buffers: all of each if force or if its flush interval is due.
 * Returns how long t may sleep before an interval falls due (0: no limit). */
static uint64_t drain_thread_buffers(struct callback_thread *t, bool force)
{
    uint32_t n = __atomic_load_n(&g_num_buffers, __ATOMIC_ACQUIRE);
    uint64_t now = 0, sleep = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct upti_buffer *b = g_buffers[i];
        if (atomic_load(&b->thread) != t)
            continue;
        uint64_t interval = atomic_load_explicit(&b->flush_interval, memory_order_relaxed);
        bool due = false;
        if (interval != 0) {
            if (now == 0)
                now = upti_now();
            due = now >= b->next_periodic;
            if (due || b->next_periodic - now > interval)
                b->next_periodic = now + interval; /* also when the interval was shortened */
            uint64_t left = b->next_periodic - now;
            if (sleep == 0 || left < sleep)
                sleep = left;
        }
        drain_buffer(b, t, force || due);
    }
    return sleep;
}

static void *callback_thread_main(void *arg)
{
    struct callback_thread *t = arg;
    upti_thread_mark_internal();
    upti_subscriber_thread(1, UPTI_INTERNAL_THREAD_BUFFER_DELIVERY, "upti-callback");
    for (;;) {
        atomic_store(&t->wake, 0);
        uint64_t requested = atomic_load(&t->flush_requested);
        bool stop = atomic_load(&t->stop);
        pthread_mutex_lock(&t->lock);
        bool force = stop || requested != t->flush_done;
        pthread_mutex_unlock(&t->lock);
        uint64_t sleep = drain_thread_buffers(t, force);
        if (force) {
            pthread_mutex_lock(&t->lock);
            t->flush_done = requested;
            pthread_cond_broadcast(&t->flushed);
            pthread_mutex_unlock(&t->lock);
        }
        if (stop)
            break;
        futex_wait(&t->wake, 0, sleep);
    }
    upti_subscriber_thread(0, UPTI_INTERNAL_THREAD_BUFFER_DELIVERY, "upti-callback");
    return NULL;
}

/* Starts t if needed. Caller holds g_buffers_lock. */
static bool start_thread(struct callback_thread *t)
{
    if (t->started)
        return true;
    if (g_threads_stopped)
        return false;
    t->headers = calloc(DELIVERY_BATCH, sizeof *t->headers);
    t->header_ptrs = calloc(DELIVERY_BATCH, sizeof *t->header_ptrs);
    t->decoded = calloc(DELIVERY_BATCH, sizeof *t->decoded);
    if (t->headers == NULL || t->header_ptrs == NULL || t->decoded == NULL)
        return false;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->flushed, NULL);
    /* UPTI's thread takes no signals: they belong to the application's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&t->thread, NULL, callback_thread_main, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        upti_log_error("cannot start a callback thread: %s", strerror(rc));
        return false;
    }
    pthread_setname_np(t->thread, "upti-callback");
    t->started = true;
    return true;
}

/* Asks t to deliver everything and waits until it has. */
static upti_status_t flush_thread(struct callback_thread *t)
{
    if (!t->started)
        return UPTI_STATUS_SUCCESS;
    if (pthread_equal(pthread_self(), t->thread))
        return UPTI_STATUS_ERROR_DEADLOCK;
    uint64_t gen = atomic_fetch_add(&t->flush_requested, 1) + 1;
    atomic_store(&t->wake, 1);
    futex_wake(&t->wake);
    pthread_mutex_lock(&t->lock);
    while (t->flush_done < gen && !atomic_load(&t->stop))
        pthread_cond_wait(&t->flushed, &t->lock);
    pthread_mutex_unlock(&t->lock);
    return UPTI_STATUS_SUCCESS;
}

/* ---- producer ---- */

static struct upti_producer *producer_create(struct upti_buffer *b, upti_thread_state_t *s)
{
    if (b->shared != NULL)
        return upti_shared_producer_create(b, s);
    struct upti_producer *p = aligned_alloc(UPTI_CACHELINE, sizeof *p);
    if (p == NULL)
        return NULL;
    memset(p, 0, sizeof *p);
    p->data = aligned_alloc(UPTI_CACHELINE, b->size);
    if (p->data == NULL) {
        free(p);
        return NULL;
    }
    p->size = p->limit = b->size;
    p->watermark = b->watermark;
    p->buffer = b;
    p->tid = s->tid;
    /* Lock-free push: a thread's first record never waits for a running callback. */
    struct upti_producer *top = atomic_load(&b->incoming);
    do
        p->next = top;
    while (!atomic_compare_exchange_weak(&b->incoming, &top, p));
    s->producers[b->index] = p;
    return p;
}

/* Lossless: waits until the consumer has made room. Returns false if it never will. */
static bool wait_for_room(struct upti_producer *p, size_t need)
{
    struct upti_buffer *b = p->buffer;
    atomic_store(&p->starving, true);
    bool ok = false;
    for (;;) {
        /* Loaded each round: upti_assign_callback_thread may move b to another thread
         * while this one waits, and only that thread makes room (waking the old one
         * for ever was a hang, unit.lock_order). */
        struct callback_thread *t = atomic_load(&b->thread);
        /* The consumer itself (a tool record written from the buffer's callback) never
         * makes room while it waits: the record is dropped. */
        if (atomic_load(&b->destroyed) || atomic_load(&t->stop) || !t->started ||
            pthread_equal(pthread_self(), t->thread))
            break;
        uint32_t seen = atomic_load(&p->space);
        p->cached_tail = atomic_load_explicit(&p->tail, memory_order_acquire);
        if (p->local_head + need - p->cached_tail <= p->size) {
            ok = true;
            break;
        }
        wake_thread(t);
        /* Sleep until the consumer frees space (bounded, in case it is stopping). */
        struct timespec timeout = {0, 10 * 1000 * 1000};
        syscall(SYS_futex, &p->space, FUTEX_WAIT_PRIVATE, seen, &timeout, NULL, 0);
    }
    atomic_store(&p->starving, false);
    return ok;
}

void *upti_buffer_reserve_slow(struct upti_buffer *b, upti_thread_state_t *s, uint32_t kind,
                               size_t len)
{
    if (atomic_load_explicit(&b->destroyed, memory_order_relaxed))
        return NULL;
    struct upti_producer *p = s->producers[b->index];
    if (p == NULL) {
        p = producer_create(b, s);
        if (p == NULL)
            return NULL;
    }
    size_t head = p->local_head;
    size_t pos = head & (p->size - 1);
    size_t contiguous = p->size - pos;
    p->cached_tail = atomic_load_explicit(&p->tail, memory_order_acquire);
    bool wrap = contiguous < len;
    if (!wrap && pos + len > p->limit)
        wrap = upti_shared_past_limit(p, pos, len);
    size_t need = len + (wrap ? contiguous : 0);
    /* A shared ring's record that fits nowhere its file has storage for: dropped. */
    bool no_storage = !wrap && pos + len > p->limit;
    if (no_storage || head + need - p->cached_tail > p->size) {
        if (no_storage || len > p->size / 2 || b->policy != UPTI_BUFFER_POLICY_LOSSLESS ||
            !(b->shared != NULL ? upti_shared_wait_for_room(p, need) : wait_for_room(p, need))) {
            upti_own_count_add(&p->dropped, 1);
            return NULL;
        }
    }
    if (wrap) {
        *(upti_ring_record_t *)(p->data + pos) = (upti_ring_record_t){(uint32_t)contiguous, 0};
        head += contiguous;
        pos = 0;
    }
    upti_ring_record_t *r = (upti_ring_record_t *)(p->data + pos);
    r->len = (uint32_t)len;
    r->kind = kind;
    p->pending_head = head + len;
    return r + 1;
}

__attribute__((noinline)) void upti_buffer_commit_check(struct upti_buffer *b,
                                                        struct upti_producer *p, size_t head)
{
    p->cached_tail = atomic_load_explicit(&p->tail, memory_order_acquire);
    size_t pending = head - p->cached_tail;
    p->watermark = b->watermark;
    if (pending >= b->watermark) {
        upti_buffer_wake(b);
        size_t step = b->watermark / 8;
        p->watermark = pending + (step < 4096 ? step : 4096);
    }
}

void upti_buffer_wake(struct upti_buffer *b)
{
    if (b->shared != NULL) {
        upti_shared_ring_doorbell(b);
        return;
    }
    wake_thread(atomic_load_explicit(&b->thread, memory_order_relaxed));
}

void upti_buffer_thread_exit(upti_thread_state_t *s)
{
    for (uint32_t i = 0; i < UPTI_MAX_BUFFERS; i++) {
        struct upti_producer *p = s->producers[i];
        if (p != NULL) {
            s->producers[i] = NULL;
            atomic_store(&p->orphaned, true);
        }
    }
}

/* ---- public API ---- */

struct upti_buffer *upti_buffer_lookup(upti_buffer_id_t id)
{
    uint32_t n = __atomic_load_n(&g_num_buffers, __ATOMIC_ACQUIRE);
    if (id.handle == 0 || id.handle > n)
        return NULL;
    return g_buffers[id.handle - 1];
}

static size_t round_up_pow2(size_t v)
{
    size_t p = MIN_BUFFER_SIZE;
    while (p < v && p < ((size_t)1 << 40))
        p <<= 1;
    return p;
}

upti_status_t upti_buffer_may_create(upti_context_id_t context_id)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (!upti_configuration_open())
        return UPTI_STATUS_ERROR_CONFIGURATION_LOCKED;
    int valid = 0;
    upti_context_is_valid(context_id, &valid);
    return valid ? UPTI_STATUS_SUCCESS : UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND;
}

/* Both entries: o has every field set (no defaults left). */
static upti_status_t create_buffer(upti_context_id_t context_id, const upti_buffer_options_t *o,
                                   upti_buffer_id_t *buffer_id)
{
    upti_status_t may = upti_buffer_may_create(context_id);
    if (may != UPTI_STATUS_SUCCESS)
        return may;
    if (o->callback == NULL || buffer_id == NULL || o->policy <= UPTI_BUFFER_POLICY_NONE ||
        o->policy >= UPTI_BUFFER_POLICY_LAST || o->region_size > ((size_t)1 << 40))
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    struct upti_buffer *b = calloc(1, sizeof *b);
    if (b == NULL)
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    b->tool = upti_current_tool();
    b->context = context_id;
    b->size = round_up_pow2(o->region_size);
    b->watermark = o->watermark < b->size ? o->watermark : b->size;
    b->policy = o->policy;
    b->compact_api = true; /* (expanded by deliver(), here) */
    b->callback = o->callback;
    b->callback_data = o->callback_data;
    pthread_mutex_init(&b->lock, NULL);

    return upti_buffer_register(b, buffer_id);
}

UPTI_API upti_status_t upti_create_buffer_with_options(upti_context_id_t context_id,
                                                       const upti_buffer_options_t *options,
                                                       upti_buffer_id_t *buffer_id)
{
    upti_buffer_options_t o;
    upti_status_t valid = upti_struct_copy(&o, sizeof o, options);
    if (valid != UPTI_STATUS_SUCCESS)
        return valid;
    if (o.region_size == 0)
        o.region_size = UPTI_BUFFER_DEFAULT_REGION_SIZE;
    if (o.policy == UPTI_BUFFER_POLICY_NONE)
        o.policy = UPTI_BUFFER_POLICY_DISCARD;
    return create_buffer(context_id, &o, buffer_id);
}

UPTI_API upti_status_t upti_create_buffer(upti_context_id_t context_id, size_t size,
                                          size_t watermark, upti_buffer_policy_t policy,
                                          upti_buffer_tracing_cb_t callback, void *callback_data,
                                          upti_buffer_id_t *buffer_id)
{
    const upti_buffer_options_t o = {
        .size = sizeof o,
        .region_size = size,
        .watermark = watermark,
        .policy = policy,
        .callback = callback,
        .callback_data = callback_data,
    };
    return create_buffer(context_id, &o, buffer_id);
}

upti_status_t upti_buffer_register(struct upti_buffer *b, upti_buffer_id_t *buffer_id)
{
    pthread_mutex_lock(&g_buffers_lock);
    upti_status_t st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    if (g_num_buffers < UPTI_MAX_BUFFERS) {
        if (g_num_threads == 0)
            g_num_threads = 1;
        /* A shared buffer names the default thread (flushes find it) without starting it. */
        if (b->shared != NULL || start_thread(&g_threads[0])) {
            atomic_store(&b->thread, &g_threads[0]);
            b->index = g_num_buffers;
            g_buffers[g_num_buffers] = b;
            __atomic_store_n(&g_num_buffers, g_num_buffers + 1, __ATOMIC_RELEASE);
            buffer_id->handle = b->index + 1;
            st = UPTI_STATUS_SUCCESS;
        }
    }
    pthread_mutex_unlock(&g_buffers_lock);
    if (st != UPTI_STATUS_SUCCESS) {
        pthread_mutex_destroy(&b->lock);
        free(b);
    }
    return st;
}

void upti_buffer_agent_added(void)
{
    uint32_t n = __atomic_load_n(&g_num_buffers, __ATOMIC_ACQUIRE);
    upti_thread_state_t *s = NULL;
    for (uint32_t i = 0; i < n; i++) {
        struct upti_buffer *b = g_buffers[i];
        if (b->shared == NULL || atomic_load(&b->destroyed))
            continue;
        if (s == NULL)
            s = upti_thread_state();
        upti_shared_agents_added(b, s);
    }
}

UPTI_API upti_status_t upti_flush_buffer(upti_buffer_id_t buffer_id)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    struct upti_buffer *b = upti_buffer_lookup(buffer_id);
    if (b == NULL)
        return UPTI_STATUS_ERROR_BUFFER_NOT_FOUND;
    return flush_thread(atomic_load(&b->thread));
}

UPTI_API upti_status_t upti_set_buffer_flush_interval(upti_buffer_id_t buffer_id, uint64_t interval_ns)
{
    struct upti_buffer *b = upti_buffer_lookup(buffer_id);
    if (b == NULL)
        return UPTI_STATUS_ERROR_BUFFER_NOT_FOUND;
    if (interval_ns != 0 && interval_ns < 1000000u)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    atomic_store(&b->flush_interval, interval_ns);
    /* Wake the thread so that it sleeps no longer than the new interval. */
    struct callback_thread *t = atomic_load(&b->thread);
    atomic_store(&t->wake, 1);
    futex_wake(&t->wake);
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_destroy_buffer(upti_buffer_id_t buffer_id)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    struct upti_buffer *b = upti_buffer_lookup(buffer_id);
    if (b == NULL)
        return UPTI_STATUS_ERROR_BUFFER_NOT_FOUND;
    if (atomic_load(&b->destroyed))
        return UPTI_STATUS_ERROR_BUFFER_NOT_FOUND;
    upti_status_t st = flush_thread(atomic_load(&b->thread));
    if (st != UPTI_STATUS_SUCCESS)
        return st;
    atomic_store(&b->destroyed, true);
    if (b->shared != NULL)
        upti_shared_close(b);
    return flush_thread(atomic_load(&b->thread));
}

UPTI_API upti_status_t upti_create_callback_thread(upti_callback_thread_t *thread_id)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (thread_id == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&g_buffers_lock);
    upti_status_t st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    if (g_num_threads == 0)
        g_num_threads = 1; /* index 0 is the default thread */
    if (g_threads_stopped) {
        st = UPTI_STATUS_ERROR_FINALIZED;
    } else if (g_num_threads < UPTI_MAX_CALLBACK_THREADS) {
        thread_id->handle = ++g_num_threads; /* handles are index + 1 */
        st = UPTI_STATUS_SUCCESS;
    }
    pthread_mutex_unlock(&g_buffers_lock);
    return st;
}

UPTI_API upti_status_t upti_assign_callback_thread(upti_buffer_id_t buffer_id,
                                                   upti_callback_thread_t thread_id)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    struct upti_buffer *b = upti_buffer_lookup(buffer_id);
    if (b == NULL)
        return UPTI_STATUS_ERROR_BUFFER_NOT_FOUND;
    pthread_mutex_lock(&g_buffers_lock);
    upti_status_t st = UPTI_STATUS_ERROR_THREAD_NOT_FOUND;
    if (thread_id.handle >= 1 && thread_id.handle <= g_num_threads) {
        struct callback_thread *t = &g_threads[thread_id.handle - 1];
        st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
        if (start_thread(t)) {
            struct callback_thread *old = atomic_load(&b->thread);
            pthread_mutex_unlock(&g_buffers_lock);
            /* Deliver what the old thread holds so per-thread order is kept. */
            flush_thread(old);
            pthread_mutex_lock(&g_buffers_lock);
            atomic_store(&b->thread, t);
            wake_thread(t); /* a producer may be waiting for room already */
            st = UPTI_STATUS_SUCCESS;
        }
    }
    pthread_mutex_unlock(&g_buffers_lock);
    return st;
}

uint64_t upti_tool_buffers(int tool)
{
    uint64_t mask = 0;
    uint32_t n = __atomic_load_n(&g_num_buffers, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        if (g_buffers[i]->tool == tool)
            mask |= 1ull << i;
    return mask;
}

void upti_flush_buffers(uint64_t mask)
{
    bool done[UPTI_MAX_CALLBACK_THREADS] = {false};
    uint32_t n = __atomic_load_n(&g_num_buffers, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        if (!(mask & (1ull << i)))
            continue;
        struct callback_thread *t = atomic_load(&g_buffers[i]->thread);
        size_t ti = (size_t)(t - g_threads);
        if (!done[ti]) {
            done[ti] = true;
            flush_thread(t);
        }
    }
}

void upti_flush_all_buffers(void)
{
    upti_flush_buffers(~0ull);
}

void upti_stop_callback_threads(void)
{
    pthread_mutex_lock(&g_buffers_lock);
    g_threads_stopped = true;
    uint32_t n = g_num_threads;
    pthread_mutex_unlock(&g_buffers_lock);
    for (uint32_t i = 0; i < n; i++) {
        struct callback_thread *t = &g_threads[i];
        if (!t->started || pthread_equal(pthread_self(), t->thread))
            continue;
        atomic_store(&t->stop, true);
        atomic_store(&t->wake, 1);
        futex_wake(&t->wake);
        pthread_join(t->thread, NULL);
    }
}

/* ---- fork() without exec (fork.h) ----
 * prepare: no delivery may be under way (a callback thread inside a tool's
 * callback, e.g. inside SQLite, or relinking a producer list), so every
 * buffer's lock is taken, after g_buffers_lock. parent: released. child: it has only
 * the forking thread. Records still in the rings are the parent's (the
 * parent delivers them): the child starts from empty rings; the rings of the
 * other threads are orphaned (freed at the next drain); the forking thread's
 * rings carry its new thread id; the parent's drops are not the child's;
 * the callback threads, which did not survive, are started again so that
 * lossless producers of the child never wait for a consumer that is gone. */
void upti_buffer_fork_prepare(void)
{
    atomic_store(&g_fork_pending, true);
    pthread_mutex_lock(&g_buffers_lock);
    uint32_t n = __atomic_load_n(&g_num_buffers, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        pthread_mutex_lock(&g_buffers[i]->lock);
}

void upti_buffer_fork_parent(void)
{
    uint32_t n = __atomic_load_n(&g_num_buffers, __ATOMIC_ACQUIRE);
    for (uint32_t i = n; i-- > 0;)
        pthread_mutex_unlock(&g_buffers[i]->lock);
    pthread_mutex_unlock(&g_buffers_lock);
    atomic_store(&g_fork_pending, false);
}

static void fork_reset_producer(struct upti_producer *p, upti_thread_state_t *self,
                                upti_thread_id_t tid)
{
    size_t head = atomic_load(&p->head);
    atomic_store(&p->tail, head);
    p->local_head = p->pending_head = p->cached_tail = head;
    p->watermark = p->buffer->watermark;
    p->drops_reported = atomic_load(&p->dropped);
    atomic_store(&p->starving, false);
    if (self != NULL && self->producers[p->buffer->index] == p)
        p->tid = tid;
    else
        atomic_store(&p->orphaned, true);
}

void upti_buffer_fork_child(void)
{
    upti_thread_state_t *self = upti_tls_state;
    upti_thread_id_t tid = (upti_thread_id_t)syscall(SYS_gettid);
    uint32_t n = __atomic_load_n(&g_num_buffers, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        struct upti_buffer *b = g_buffers[i];
        pthread_mutex_unlock(&b->lock);
        if (b->shared != NULL)
            upti_shared_fork_child(b, self);
        for (struct upti_producer *p = b->producers; p != NULL; p = p->next)
            fork_reset_producer(p, self, tid);
        for (struct upti_producer *p = atomic_load(&b->incoming); p != NULL; p = p->next)
            fork_reset_producer(p, self, tid);
    }
    pthread_mutex_unlock(&g_buffers_lock);
    atomic_store(&g_fork_pending, false);
    for (uint32_t i = 0; i < g_num_threads; i++) {
        struct callback_thread *t = &g_threads[i];
        if (!t->started)
            continue;
        t->started = false;
        free(t->headers);
        free(t->header_ptrs);
        free(t->decoded);
        t->headers = NULL;
        t->header_ptrs = NULL;
        t->decoded = NULL;
        atomic_store(&t->wake, 0);
        atomic_store(&t->stop, false);
        atomic_store(&t->flush_requested, 0);
        t->flush_done = 0;
        if (!g_threads_stopped)
            start_thread(t);
    }
}
