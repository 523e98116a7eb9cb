/* SPDX-License-Identifier: MIT */
/* Device commands: kernels, copies, fills, maps, markers — timed through
 * profiling events and reported as KERNEL_DISPATCH / MEMORY_COPY records.
 *
 * Life of a traced command (uocl_cmd_t):
 *   enqueue   uocl_cmd_begin() takes a command from this thread's pool and
 *             substitutes an internal event if the program passed none;
 *             uocl_cmd_end() retains the program's event (UPTI's hold is
 *             hidden from CL_EVENT_REFERENCE_COUNT, see objects.c) and links
 *             the command into its queue's shard of the pending list.
 *   complete  by default the completion thread polls the pending lists every
 *             millisecond or two (one clGetEventInfo per command; on an
 *             in-order queue it stops at the first unfinished command), claims
 *             finished commands and pushes them on a lock-free stack. With
 *             UPTI_OPENCL_COMPLETION=callback a CL_COMPLETE callback does the
 *             claim instead (PoCL runs it synchronously in its worker, and never
 *             for failed commands). Polling measured cheaper on PoCL: no
 *             callback allocation in the runtime, nothing added to its worker.
 *   reap      clFinish / clWaitForEvents / queue release / exit claim their
 *             queue's finished commands at once (also failed ones).
 *   emit      the completion thread or the synchronising thread pops the
 *             stack, reads the four profiling times, maps them onto UPTI's
 *             clock, emits the record, unlinks the command, drops UPTI's event
 *             reference and returns the command to the pool.
 * A command is claimed once (state 0 -> 1 by compare-and-swap). With
 * callbacks, the command is recycled only once both the reap and the
 * callback are done with it (holds): a late callback never touches a
 * recycled command, and the event stays UPTI's until then. (A command that
 * fails is never called back by PoCL: it and its event stay held.)
 *
 * Pool: commands are recycled in batches. A thread allocates from its own
 * list; when empty it takes one batch from the global list (or mallocs one).
 * The emitting thread gathers retired commands into batches and hands each
 * back in one locked push; an exiting thread gives its list back.
 */
#include "layer.h"
#include "fork.h"
#include "subscriber_hooks.h"
#include "clock.h"
#include "env.h"

#include <upti/names.h>

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct uocl_cmd_t {
    struct uocl_cmd_t *done_next;  /* on the completed stack, or in a pool list */
    struct uocl_cmd_t *batch_next; /* next batch in the global pool */
    struct uocl_cmd_t *prev, *next; /* in the shard's pending list */
    _Atomic int state;             /* 0 pending, 1 claimed */
    _Atomic int holds;             /* 1 for the pending list, +1 while a CL_COMPLETE callback
                                      may still run: recycled (and its event released) at 0 */
    int internal_event;            /* the event is UPTI's own */
    cl_event event;                /* the event UPTI holds a reference to */
    cl_event local_event;          /* storage for the internal event */
    cl_event *app_event;           /* the program's event pointer, or NULL */
    cl_command_queue queue;
    uocl_queue_info_t qi;
    upti_tracing_kind_t kind;
    uint32_t op;
    const upti_operation_plan_t *started_plan; /* the kind's plan at the enqueue */
    upti_runtime_correlation_t corr;
    uint64_t host_before, host_after; /* around the enqueue, to calibrate the clock */
    uint64_t real_before, real_after; /* the same on CLOCK_REALTIME (oclgrind's clock) */
    cl_ulong times[4];             /* queued, submit, start, end (device clock) */
    cl_int status;
    /* kernels */
    cl_kernel kernel;
    const char *kernel_name;
    uint32_t work_dim;
    uint64_t offset[3], global[3], local[3];
    /* copies */
    upti_memory_direction_t direction;
    uint64_t bytes;
};

#define SHARDS 16
typedef struct shard_t {
    pthread_mutex_t lock;
    uocl_cmd_t head; /* sentinel of a circular list */
} shard_t;

/* Locks initialized statically: a fork() takes them whether or not anything
 * was ever tracked (fork.c). */
static shard_t g_shards[SHARDS] = {[0 ... SHARDS - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}};
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static _Atomic int g_started; /* init_once ran: something was tracked */
static _Atomic(uocl_cmd_t *) g_done;
static _Atomic unsigned g_done_count;
static pthread_mutex_t g_emit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static int g_stopped; /* under g_emit_lock: UPTI is finalizing, emit nothing more */
static int g_use_callbacks; /* UPTI_OPENCL_COMPLETION=callback: CL_COMPLETE callbacks, no polling */

/* --- command pool --- */
#define POOL_BATCH 256
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uocl_cmd_t *g_pool_batches; /* under g_pool_lock; linked by batch_next */
static pthread_key_t g_pool_key;
static __thread uocl_cmd_t *t_pool; /* this thread's free commands, linked by done_next */

static void pool_put_batch(uocl_cmd_t *first)
{
    if (first == NULL)
        return;
    pthread_mutex_lock(&g_pool_lock);
    first->batch_next = g_pool_batches;
    g_pool_batches = first;
    pthread_mutex_unlock(&g_pool_lock);
}

/* Thread exit: the cached commands go back to the global pool. */
static void pool_thread_exit(void *arg)
{
    uocl_cmd_t **cache = arg;
    pool_put_batch(*cache);
    *cache = NULL;
}

static __attribute__((noinline)) uocl_cmd_t *pool_refill(void)
{
    pthread_mutex_lock(&g_pool_lock);
    uocl_cmd_t *batch = g_pool_batches;
    if (batch != NULL)
        g_pool_batches = batch->batch_next;
    pthread_mutex_unlock(&g_pool_lock);
    if (batch == NULL) {
        uocl_cmd_t *block = calloc(64, sizeof *block);
        if (block == NULL)
            return NULL;
        for (int i = 0; i < 63; i++)
            block[i].done_next = &block[i + 1];
        batch = block;
    }
    if (pthread_getspecific(g_pool_key) == NULL)
        pthread_setspecific(g_pool_key, &t_pool);
    return batch;
}

static inline uocl_cmd_t *cmd_alloc(void)
{
    uocl_cmd_t *c = t_pool;
    if (__builtin_expect(c == NULL, 0) && (c = pool_refill()) == NULL)
        return NULL;
    t_pool = c->done_next;
    memset(c, 0, sizeof *c);
    return c;
}

/* A command that was never linked, back to this thread's list. */
static inline void cmd_free_local(uocl_cmd_t *c)
{
    c->done_next = t_pool;
    t_pool = c;
}

static shard_t *shard_of(cl_command_queue q)
{
    uintptr_t x = (uintptr_t)q;
    return &g_shards[((x >> 4) ^ (x >> 12)) & (SHARDS - 1)];
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void drain_done(void);
static unsigned reap(cl_command_queue q, int force, unsigned budget);

static _Atomic int g_stop;         /* the process is exiting: the thread ends */
static _Atomic int g_thread_ended;

static void *completion_thread(void *arg)
{
    (void)arg;
    uocl_sub_thread_started(); /* INTERNAL_THREADS subscribers (subscriber_hooks.c) */
    while (!atomic_load(&g_stop)) {
        if (!g_use_callbacks)
            reap(NULL, 0, 64);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (g_use_callbacks ? 2 : 1) * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&g_wake_lock);
        if (atomic_load(&g_done) == NULL)
            pthread_cond_timedwait(&g_wake, &g_wake_lock, &until);
        pthread_mutex_unlock(&g_wake_lock);
        if (atomic_load(&g_done) != NULL)
            drain_done();
    }
    uocl_sub_thread_ended();
    pthread_mutex_lock(&g_wake_lock);
    atomic_store(&g_thread_ended, 1);
    pthread_cond_broadcast(&g_wake);
    pthread_mutex_unlock(&g_wake_lock);
    return NULL;
}

void uocl_commands_stop_thread(void)
{
    if (!atomic_load(&g_started))
        return;
    /* Bounded: a thread stuck inside the runtime must not hold up the exit. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&g_wake_lock);
    atomic_store(&g_stop, 1);
    pthread_cond_broadcast(&g_wake);
    while (!atomic_load(&g_thread_ended) &&
           pthread_cond_timedwait(&g_wake, &g_wake_lock, &until) == 0)
        ;
    pthread_mutex_unlock(&g_wake_lock);
}

static void init_once(void)
{
    for (int i = 0; i < SHARDS; i++) {
        pthread_mutex_lock(&g_shards[i].lock);
        g_shards[i].head.next = g_shards[i].head.prev = &g_shards[i].head;
        pthread_mutex_unlock(&g_shards[i].lock);
    }
    g_use_callbacks = upti_env_get(UPTI_ENV_OPENCL_COMPLETION) == UPTI_ENV_COMPLETION_CALLBACK;
    pthread_key_create(&g_pool_key, pool_thread_exit);
    atomic_store(&g_started, 1);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* Block every signal in the helper so the program's handlers run on its threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&t, &attr, completion_thread, NULL) != 0)
        upti_runtime_warn("opencl: no completion thread; device records are emitted at synchronisation points");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

/* --- enqueue side --- */

uocl_cmd_t *uocl_cmd_begin(const upti_runtime_call_t *call, upti_tracing_kind_t kind, uint32_t op,
                           cl_command_queue queue, cl_event **event)
{
    uocl_queue_info_t qi;
    if (!uocl_queue_lookup(queue, &qi))
        return NULL;
    if (!qi.forced_profiling && !(qi.app_properties & CL_QUEUE_PROFILING_ENABLE))
        return NULL; /* a queue made before UPTI was there: no device times */
    pthread_once(&g_once, init_once);
    uocl_cmd_t *c = cmd_alloc();
    if (c == NULL)
        return NULL;
    c->queue = queue;
    c->qi = qi;
    c->kind = kind;
    c->op = op;
    /* The contexts active now get its record when it completes, even if they
     * stopped by then (a capture window that closed while it ran). */
    c->started_plan = upti_runtime_plan(
        kind == UPTI_TRACING_KIND_KERNEL_DISPATCH ? uocl_kernel_plans : uocl_copy_plans, op);
    upti_runtime_capture_correlation(call, &c->corr);
    if (*event == NULL) {
        c->internal_event = 1;
        *event = &c->local_event;
    } else {
        c->app_event = *event;
    }
    if (qi.dev != NULL && atomic_load_explicit(&qi.dev->clock_state, memory_order_acquire) == 0) {
        c->real_before = realtime_ns();
        c->host_before = upti_clock_now();
    }
    return c;
}

void uocl_cmd_kernel(uocl_cmd_t *c, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                     const size_t *global, const size_t *local)
{
    cl_program program;
    c->kernel = kernel;
    c->kernel_name = uocl_kernel_name(kernel, &program);
    c->work_dim = work_dim;
    for (cl_uint i = 0; i < 3; i++) {
        c->offset[i] = (offset != NULL && i < work_dim) ? offset[i] : 0;
        c->global[i] = i < work_dim ? (global != NULL ? global[i] : 1) : 1;
        c->local[i] = (local != NULL && i < work_dim) ? local[i] : (local == NULL ? 0 : 1);
    }
    if (work_dim == 0) /* native kernel */
        c->global[0] = c->global[1] = c->global[2] = 0;
}

void uocl_cmd_copy(uocl_cmd_t *c, upti_memory_direction_t direction, uint64_t bytes)
{
    c->direction = direction;
    c->bytes = bytes;
}

static void read_times(uocl_cmd_t *c)
{
    static const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                              CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    for (int i = 0; i < 4; i++)
        if (uocl_next.clGetEventProfilingInfo(c->event, what[i], sizeof(cl_ulong), &c->times[i], NULL) !=
            CL_SUCCESS)
            c->times[i] = 0;
}

static void push_done(uocl_cmd_t *c)
{
    uocl_cmd_t *head = atomic_load_explicit(&g_done, memory_order_relaxed);
    do {
        c->done_next = head;
    } while (!atomic_compare_exchange_weak_explicit(&g_done, &head, c, memory_order_release,
                                                    memory_order_relaxed));
    /* Wake the thread only when a lot piled up; otherwise it polls every 2 ms. */
    if (atomic_fetch_add_explicit(&g_done_count, 1, memory_order_relaxed) % 1024 == 1023)
        pthread_cond_signal(&g_wake);
}

static int claim(uocl_cmd_t *c)
{
    int expected = 0;
    return atomic_compare_exchange_strong(&c->state, &expected, 1);
}

/* Drops one hold of a command that is off the pending list; the last one
 * releases UPTI's event reference and recycles the command. */
static void cmd_put(uocl_cmd_t *c)
{
    if (atomic_fetch_sub(&c->holds, 1) != 1)
        return;
    uocl_next.clReleaseEvent(c->event);
    c->done_next = NULL;
    pool_put_batch(c);
}

/* Runs in a runtime thread: claim and hand over, then drop the callback's hold. */
static void CL_CALLBACK on_complete(cl_event event, cl_int status, void *data)
{
    (void)event;
    uocl_cmd_t *c = data;
    /* Pairs with the store of holds in uocl_cmd_end: the command's fields are
     * visible here without relying on the runtime's own synchronisation
     * (which ThreadSanitizer cannot see in an uninstrumented runtime). */
    (void)atomic_load_explicit(&c->holds, memory_order_acquire);
    if (claim(c)) {
        c->status = status < 0 ? status : 0;
        push_done(c);
    }
    cmd_put(c);
}

static void link_pending(uocl_cmd_t *c)
{
    shard_t *s = shard_of(c->queue);
    pthread_mutex_lock(&s->lock);
    c->next = &s->head;
    c->prev = s->head.prev;
    s->head.prev->next = c;
    s->head.prev = c;
    pthread_mutex_unlock(&s->lock);
}

void uocl_cmd_end(uocl_cmd_t *c, cl_int status)
{
    if (status != CL_SUCCESS) {
        /* Nothing was enqueued (no event was made): no device record. */
        cmd_free_local(c);
        return;
    }
    c->event = c->internal_event ? c->local_event : *c->app_event;
    if (c->event == NULL) {
        cmd_free_local(c);
        return;
    }
    if (!c->internal_event)
        uocl_next.clRetainEvent(c->event);
    if (c->host_before != 0) {
        c->host_after = upti_clock_now();
        c->real_after = realtime_ns();
    }
    /* The callback's hold is taken before the command is visible: a reap on
     * another thread cannot recycle it (nor release its event) under
     * clSetEventCallback. */
    atomic_store(&c->holds, g_use_callbacks ? 2 : 1);
    cl_event event = c->event; /* c is not read once linked: it may be reaped at once */
    link_pending(c);
    if (g_use_callbacks &&
        uocl_next.clSetEventCallback(event, CL_COMPLETE, on_complete, c) != CL_SUCCESS)
        cmd_put(c); /* reaped at the next synchronisation point instead */
}

/* --- emission --- */

static void calibrate(uocl_cmd_t *c)
{
    uocl_device_t *dev = c->qi.dev;
    if (dev == NULL || c->host_before == 0 || c->times[0] == 0 ||
        atomic_load_explicit(&dev->clock_state, memory_order_acquire) != 0)
        return;
    /* The QUEUED time is taken inside the enqueue call: if it lies within the
       host times around that call, both clocks are the same one. */
    uint64_t q = c->times[0];
    int64_t offset = 0;
    /* Else a device stamping with CLOCK_REALTIME (oclgrind, with microsecond
       jitter): the two clocks' difference, read back to back. Else the midpoint. */
    const uint64_t slack = 100 * 1000;
    if (q < c->host_before || q > c->host_after) {
        if (q + slack >= c->real_before && q <= c->real_after + slack)
            offset = (int64_t)((c->host_before + c->host_after) / 2) -
                     (int64_t)((c->real_before + c->real_after) / 2);
        else
            offset = (int64_t)((c->host_before + c->host_after) / 2) - (int64_t)q;
    }
    dev->clock_offset = offset;
    atomic_store_explicit(&dev->clock_state, 1, memory_order_release);
}

static upti_timestamp_t map_time(const uocl_cmd_t *c, cl_ulong t)
{
    if (t == 0)
        return 0;
    int64_t offset = c->qi.dev != NULL ? c->qi.dev->clock_offset : 0;
    return (upti_timestamp_t)((int64_t)t + offset);
}

/* The fields both record kinds share: r zeroed, where c ran, its times and status. */
#define COMMAND_RECORD(r, c, agent)                                                                \
    do {                                                                                           \
        UPTI_LAYER_DEVICE_OP(r, agent, (c)->queue, (c)->qi.context);                               \
        UPTI_LAYER_DEVICE_OP_TIMES(r, map_time(c, (c)->times[0]), map_time(c, (c)->times[1]),      \
                                   map_time(c, (c)->times[2]), map_time(c, (c)->times[3]));        \
        (r).status = (c)->status;                                                                  \
    } while (0)

/* The prefix's other fields are filled by upti_runtime_emit. */
static void emit(uocl_cmd_t *c)
{
    read_times(c);
    calibrate(c);
    upti_agent_id_t agent = {c->qi.dev != NULL ? c->qi.dev->agent.handle : 0};
    if (c->kind == UPTI_TRACING_KIND_KERNEL_DISPATCH) {
        upti_buffer_tracing_kernel_dispatch_record_t r;
        COMMAND_RECORD(r, c, agent);
        r.kernel_id = (uint64_t)(uintptr_t)c->kernel;
        r.kernel_name = c->kernel_name;
        r.work_dim = c->work_dim;
        memcpy(r.global_offset, c->offset, sizeof r.global_offset);
        memcpy(r.global_size, c->global, sizeof r.global_size);
        memcpy(r.local_size, c->local, sizeof r.local_size);
        upti_layer_emit(c->kind, c->op, UPTI_CALLBACK_PHASE_NONE, &c->corr, &r,
                        offsetof(upti_buffer_tracing_kernel_dispatch_record_t, kernel_name), c->started_plan);
        return;
    }
    upti_buffer_tracing_memory_copy_record_t r;
    COMMAND_RECORD(r, c, agent);
    r.direction = c->direction;
    switch (c->direction) {
    case UPTI_MEMORY_DIRECTION_HOST_TO_DEVICE:
        r.dst_agent_id = agent;
        break;
    case UPTI_MEMORY_DIRECTION_DEVICE_TO_HOST:
        r.src_agent_id = agent;
        break;
    case UPTI_MEMORY_DIRECTION_DEVICE_TO_DEVICE:
        r.src_agent_id = r.dst_agent_id = agent;
        break;
    default:
        break;
    }
    r.bytes = c->bytes;
    upti_layer_emit(c->kind, c->op, UPTI_CALLBACK_PHASE_NONE, &c->corr, &r, 0, c->started_plan);
}

/* Unlinks a claimed command and drops the list's hold; 1 if that was the
 * last (UPTI's event reference released: the caller recycles it). */
static int retire(uocl_cmd_t *c)
{
    shard_t *s = shard_of(c->queue);
    pthread_mutex_lock(&s->lock);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    int last = atomic_fetch_sub(&c->holds, 1) == 1;
    /* Under the lock, so that a reference-count query sees a consistent count. */
    if (last)
        uocl_next.clReleaseEvent(c->event);
    pthread_mutex_unlock(&s->lock);
    return last;
}

static void drain_done(void)
{
    pthread_mutex_lock(&g_emit_lock);
    uocl_cmd_t *list = atomic_exchange_explicit(&g_done, NULL, memory_order_acquire);
    /* The stack is newest first: reverse it to emit in completion order. */
    uocl_cmd_t *fifo = NULL;
    while (list != NULL) {
        uocl_cmd_t *next = list->done_next;
        list->done_next = fifo;
        fifo = list;
        list = next;
    }
    uocl_cmd_t *batch = NULL;
    unsigned in_batch = 0;
    while (fifo != NULL) {
        uocl_cmd_t *next = fifo->done_next;
        if (!g_stopped)
            emit(fifo);
        if (!retire(fifo)) { /* its callback has yet to return: it recycles it */
            fifo = next;
            continue;
        }
        fifo->done_next = batch;
        batch = fifo;
        if (++in_batch == POOL_BATCH) {
            pool_put_batch(batch);
            batch = NULL;
            in_batch = 0;
        }
        fifo = next;
    }
    pool_put_batch(batch);
    pthread_mutex_unlock(&g_emit_lock);
}

/*
 * Claims the finished, unclaimed commands of q (NULL: all); returns how many
 * stay pending (a lower bound when budget cut the scan short). On an in-order
 * queue commands finish in order: after its first unfinished command, the
 * queue's later ones are counted without asking the runtime. budget: stop a
 * shard's scan after that many unfinished commands (0: no limit).
 */
static unsigned reap(cl_command_queue q, int force, unsigned budget)
{
    unsigned left = 0;
    for (int i = 0; i < SHARDS; i++) {
        shard_t *s = &g_shards[i];
        if (q != NULL && s != shard_of(q))
            continue;
        cl_command_queue blocked[8];
        unsigned nblocked = 0, unfinished = 0;
        pthread_mutex_lock(&s->lock);
        for (uocl_cmd_t *c = s->head.next; c != &s->head; c = c->next) {
            if ((q != NULL && c->queue != q) || atomic_load(&c->state) != 0)
                continue;
            if (budget != 0 && unfinished >= budget)
                break;
            int skip = 0;
            for (unsigned b = 0; b < nblocked && !force; b++)
                skip |= blocked[b] == c->queue;
            if (skip) {
                left++;
                unfinished++;
                continue;
            }
            cl_int st = CL_QUEUED;
            uocl_next.clGetEventInfo(c->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
            if ((st == CL_COMPLETE || st < 0 || force) && claim(c)) {
                c->status = st < 0 ? st : (st == CL_COMPLETE ? 0 : st);
                push_done(c);
            } else if (st != CL_COMPLETE && st >= 0) {
                left++;
                unfinished++;
                if (!(c->qi.app_properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) && nblocked < 8)
                    blocked[nblocked++] = c->queue;
            }
        }
        pthread_mutex_unlock(&s->lock);
    }
    return left;
}

void uocl_commands_sync(cl_command_queue q)
{
    if (!atomic_load(&g_started))
        return; /* nothing was ever tracked */
    reap(q, 0, 0);
    /* Always: the completion thread may have claimed a command of q and be
     * emitting it right now (under g_emit_lock); its record must be out
     * before the synchronisation returns, or a tool finalized just after it
     * (SIGINT) would miss a kernel the program saw finish. */
    drain_done();
}

cl_uint uocl_commands_event_holds(cl_event event)
{
    cl_command_queue q = NULL;
    if (uocl_next.clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) != CL_SUCCESS ||
        q == NULL)
        return 0;
    shard_t *s = shard_of(q);
    cl_uint holds = 0;
    if (!atomic_load(&g_started))
        return 0;
    pthread_mutex_lock(&s->lock);
    for (uocl_cmd_t *c = s->head.next; c != &s->head; c = c->next)
        if (c->event == event && !c->internal_event)
            holds++;
    pthread_mutex_unlock(&s->lock);
    return holds;
}

void uocl_commands_drain_all(void)
{
    if (!atomic_load(&g_started))
        return;
    /* Give running commands up to two seconds to finish while they do, then
     * report what is known. Commands that cannot finish (behind a user event
     * never set) make no progress: after 100 ms without one finishing, the
     * wait ends (it held the program's exit for the whole two seconds). */
    unsigned left = reap(NULL, 0, 0), idle_ms = 0;
    for (int i = 0; i < 2000 && left > 0 && idle_ms < 100; i++) {
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
        unsigned now = reap(NULL, 0, 0);
        idle_ms = now < left ? 0 : idle_ms + 1;
        left = now;
    }
    reap(NULL, 1, 0);
    drain_done();
    pthread_mutex_lock(&g_emit_lock);
    g_stopped = 1;
    pthread_mutex_unlock(&g_emit_lock);
}

/* --- sizes of commands --- */

uint64_t uocl_image_bytes(cl_mem image, const size_t *region)
{
    size_t elem = 0;
    if (region == NULL ||
        uocl_next.clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL) != CL_SUCCESS)
        return 0;
    return (uint64_t)elem * region[0] * region[1] * region[2];
}

uint64_t uocl_mems_bytes(cl_uint n, const cl_mem *mems)
{
    uint64_t total = 0;
    for (cl_uint i = 0; mems != NULL && i < n; i++) {
        size_t size = 0;
        if (uocl_next.clGetMemObjectInfo(mems[i], CL_MEM_SIZE, sizeof size, &size, NULL) == CL_SUCCESS)
            total += size;
    }
    return total;
}

uint64_t uocl_sizes_bytes(cl_uint n, const size_t *sizes)
{
    uint64_t total = 0;
    for (cl_uint i = 0; sizes != NULL && i < n; i++)
        total += sizes[i];
    return total;
}

/* --- fork() without exec (fork.c) --- */

void uocl_commands_fork_prepare(void)
{
    pthread_mutex_lock(&g_emit_lock);
    for (int i = 0; i < SHARDS; i++)
        pthread_mutex_lock(&g_shards[i].lock);
    pthread_mutex_lock(&g_pool_lock);
    pthread_mutex_lock(&g_wake_lock);
}

void uocl_commands_fork_parent(void)
{
    pthread_mutex_unlock(&g_wake_lock);
    pthread_mutex_unlock(&g_pool_lock);
    for (int i = SHARDS; i-- > 0;)
        pthread_mutex_unlock(&g_shards[i].lock);
    pthread_mutex_unlock(&g_emit_lock);
}

/* The commands pending or completed are the parent's: the child drops them
 * (neither emitted nor released: the memory and events stay the parent's).
 * The completion thread did not survive the fork: the child runs without. */
void uocl_commands_fork_child(void)
{
    if (atomic_load(&g_started)) {
        for (int i = 0; i < SHARDS; i++)
            g_shards[i].head.next = g_shards[i].head.prev = &g_shards[i].head;
        atomic_store(&g_thread_ended, 1);
    }
    atomic_store(&g_done, NULL);
    atomic_store(&g_done_count, 0);
    pthread_mutex_unlock(&g_wake_lock);
    pthread_mutex_unlock(&g_pool_lock);
    for (int i = SHARDS; i-- > 0;)
        pthread_mutex_unlock(&g_shards[i].lock);
    pthread_mutex_unlock(&g_emit_lock);
}
