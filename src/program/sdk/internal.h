/* SPDX-License-Identifier: MIT */
/* Internal state of libupti shared between its files. */
#ifndef UPTI_SDK_INTERNAL_H
#define UPTI_SDK_INTERNAL_H

#include <upti/runtime.h>
#include <upti/upti.h>

#include "clock.h"
#include "compiler.h"
#include "kind_info.h"
#include "log.h"
#include "struct_size.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Locks of libupti, and the order in which they nest (outermost first). A
 * thread holding one may take only those below it; tests/unit/test_lock_order.c
 * runs the paths that take two, under ThreadSanitizer's deadlock detector.
 *
 *   g_subscribers_lock (subscriber.c)   subscribers, their domains, providers.
 *       A provider's domains_changed() runs under it and sets its kinds up
 *       through upti_runtime_subscriber_service(): then g_contexts' lock.
 *   g_buffers_lock (buffer.c)           the buffer and callback-thread tables;
 *       fork() takes it, then every buffer's lock (fork.c: buffers, contexts,
 *       agents, thread states, tools, in that order).
 *   upti_buffer.lock (ring.h)           one buffer's producer list; held while
 *       its records are delivered, so a buffer callback that starts or stops a
 *       context takes the contexts' lock under it.
 *   g_lock (context.c)                  contexts, their services and the plans.
 *   g_agents_lock (agent.c), g_metadata_lock (runtime_metadata.c),
 *   g_lock (src/names/runtime_api_names.c: RUNTIME_API ids given out),
 *   g_states_lock (thread.c), g_shared_agents_lock (shared_agents.c),
 *   upti_shared_ring.create_lock (shared_buffer.c),
 *   callback_thread.lock (buffer.c)     leaves: nothing is taken under them
 *       (a new agent is written to shared buffers after g_agents_lock is let go).
 *   g_tools_lock (registration.c)       tool discovery and initialization; let go
 *       before any tool code runs. fork() takes it last.
 */

#define UPTI_MAX_BUFFERS 64
#define UPTI_MAX_CALLBACK_THREADS 16
#define UPTI_MAX_TOOLS 32
#define UPTI_EXTERNAL_STACK_DEPTH 64
/** Longest string copied into a record, its NUL included; longer ones are
 *  cut (marker texts: UPTI_MARKER_TEXT_MAX, counted by upti_marker_text_cut). */
#define UPTI_MAX_RECORD_STRING 1024
_Static_assert(UPTI_MAX_RECORD_STRING == UPTI_MARKER_TEXT_MAX + 1, "marker text limit");

/** Counts a marker text longer than UPTI_MARKER_TEXT_MAX (marker_tracing.c). */
void upti_marker_text_cut(void);
/** Says once on stderr how many marker texts were cut, if any (at finalization). */
void upti_report_marker_texts_cut(void);

/* ---- clock (clock.c) ---- */

/** TSC-to-ns conversion, published under a sequence lock by clock.c. */
struct upti_tsc_params {
    _Atomic uint32_t seq; /* odd while being written */
    _Atomic bool enabled; /* the TSC is invariant and calibrated */
    _Atomic uint64_t base_tsc, base_ns, mult, next_refresh_tsc;
};
extern struct upti_tsc_params upti_tsc;
uint64_t upti_now_slow(void);

/** A consistent copy of the conversion parameters. */
struct upti_tsc_snapshot {
    uint64_t base_tsc, base_ns, mult, next_refresh_tsc;
};

/** Copies the parameters; false if clock.c was publishing new ones meanwhile. */
static inline bool upti_tsc_read(struct upti_tsc_snapshot *p)
{
    uint32_t seq = atomic_load_explicit(&upti_tsc.seq, memory_order_acquire);
    p->base_tsc = atomic_load_explicit(&upti_tsc.base_tsc, memory_order_relaxed);
    p->base_ns = atomic_load_explicit(&upti_tsc.base_ns, memory_order_relaxed);
    p->mult = atomic_load_explicit(&upti_tsc.mult, memory_order_relaxed);
    p->next_refresh_tsc = atomic_load_explicit(&upti_tsc.next_refresh_tsc, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return (seq & 1) == 0 && atomic_load_explicit(&upti_tsc.seq, memory_order_relaxed) == seq;
}

/** upti_now()'s fast path, which makes no call: false, leaving *ns alone, where it would take
 *  its slow path (TSC not used or not calibrated, parameters being rewritten or due for a refresh). */
static inline bool upti_now_fast(uint64_t *ns)
{
#if defined(__x86_64__)
    struct upti_tsc_snapshot p;
    bool consistent = upti_tsc_read(&p);
    uint64_t tsc = __builtin_ia32_rdtsc();
    /* Not calibrated (next == 0), being rewritten, or due for a refresh: slow path. */
    if (upti_unlikely(!consistent || tsc >= p.next_refresh_tsc || (int64_t)(tsc - p.base_tsc) < 0))
        return false;
    *ns = p.base_ns + (uint64_t)(((unsigned __int128)(tsc - p.base_tsc) * p.mult) >> 32);
    return true;
#else
    (void)ns;
    return false;
#endif
}

/** Now on UPTI's clock (CLOCK_MONOTONIC_RAW, ns), through the TSC where possible. */
static inline uint64_t upti_now(void)
{
    uint64_t ns;
    if (upti_likely(upti_now_fast(&ns)))
        return ns;
    return upti_now_slow();
}

/**
 * A thread's copy of the conversion parameters in force (a consistent snapshot of
 * upti_tsc, taken by upti_now_thread_slow()), so that the clock read of a traced call
 * is one rdtsc and the conversion, without the sequence lock's loads and checks.
 *
 * It converts exactly as upti_now_fast() would: one set of parameters is valid from its
 * base_tsc up to its next_refresh_tsc, and clock.c publishes a new set only for ticks at
 * or past the current one's next_refresh_tsc (a refresh; refresh() makes sure that two
 * threads never publish two sets for the same interval), so every tick between base_tsc
 * and base_tsc + span has one conversion, whoever reads it. Past span, or before base_tsc
 * (the unsigned difference wraps past span), the slow path reads the shared parameters,
 * refreshes them when due, and copies them again. span 0 (a new thread's state, the TSC
 * not used, a forked child's re-anchor) sends every read there.
 */
struct upti_thread_clock {
    uint64_t base_tsc, span, base_ns;
    /* upti_tsc's mult << 32: the high half of delta * mult64 is (delta * mult) >> 32, one
     * shift fewer. A mult of 2^32 or more (a TSC under 1 GHz) leaves span 0. */
    uint64_t mult64;
};

/* ---- life cycle (registration.c) ---- */

/** True while tools' initialize functions run: the only time services may be configured. */
bool upti_configuration_open(void);
/** Index of the tool whose initialize is running, or -1. */
int upti_current_tool(void);
/** Discovers and initializes tools once; safe to call repeatedly. Returns
 *  false, at once, to a thread started while discovery runs on another
 *  thread (a tool's initialize may be waiting for it): it goes on untraced. */
bool upti_ensure_tools(void);

/** Hands a registered runtime's tables to the tools' requests that want them (by
 *  mask for the built-in names, by name, or any), in the order they asked. */
void upti_pass_tables(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables);

/* ---- per-thread state (thread.c) ---- */

struct upti_producer;

typedef struct upti_thread_state_t {
    upti_thread_id_t tid;
    uint64_t corr_next, corr_end;       /* block of correlation ids owned by this thread */
    upti_runtime_call_t *current_call;  /* innermost traced call in progress */
    int in_callback;                    /* >0: inside a UPTI callback, or a UPTI thread */
    int in_subscriber;                  /* >0: inside a subscriber callback (callback.h) */
    uint32_t external_mask;             /* contexts with a non-empty external stack */
    struct upti_thread_clock clock;     /* upti_now_thread()'s parameters */
    struct external_stack {
        uint32_t depth;
        upti_user_data_t ids[UPTI_EXTERNAL_STACK_DEPTH];
    } *external[UPTI_MAX_CONTEXTS];
    struct upti_producer *producers[UPTI_MAX_BUFFERS]; /* this thread's region of each buffer */
} upti_thread_state_t;

extern UPTI_TLS upti_thread_state_t *upti_tls_state;
upti_thread_state_t *upti_thread_state_slow(void);

static inline upti_thread_state_t *upti_thread_state(void)
{
    upti_thread_state_t *s = upti_tls_state;
    if (upti_likely(s != NULL))
        return s;
    return upti_thread_state_slow();
}

/** The first half of upti_now_thread(): in *delta the ticks since s->clock.base_tsc, false
 *  where the thread's copy of the parameters does not cover now (upti_now_thread_slow()). */
static inline bool upti_thread_ticks(const upti_thread_state_t *s, uint64_t *delta)
{
#if defined(__x86_64__)
    *delta = __builtin_ia32_rdtsc() - s->clock.base_tsc;
    return upti_likely(*delta < s->clock.span);
#else
    (void)s;
    (void)delta;
    return false;
#endif
}

/** The second: upti_thread_ticks()'s delta in ns on UPTI's clock. */
static inline uint64_t upti_thread_ns(const upti_thread_state_t *s, uint64_t delta)
{
#if defined(__x86_64__)
    /* The high half of the product, where mul leaves it (rdx): GCC otherwise moves it to rax
       to add base_ns, one instruction more. */
    uint64_t lo, hi;
    __asm__("mulq %3" : "=a"(lo), "=d"(hi) : "a"(delta), "rm"(s->clock.mult64) : "cc");
    (void)lo;
    return hi + s->clock.base_ns;
#else
    (void)s;
    (void)delta;
    return 0;
#endif
}

/** Now on UPTI's clock where the thread's copy of the parameters covers it: false, leaving
 *  *ns alone, where upti_now_thread_slow() is needed. The same value upti_now() gives. */
static inline bool upti_now_thread(const upti_thread_state_t *s, uint64_t *ns)
{
    uint64_t delta;
    if (upti_unlikely(!upti_thread_ticks(s, &delta)))
        return false;
    *ns = upti_thread_ns(s, delta);
    return true;
}

/** upti_now() for the thread of s, which copies the shared parameters for its next reads. */
uint64_t upti_now_thread_slow(upti_thread_state_t *s);

/** Now on UPTI's clock, for the thread of s. */
static inline uint64_t upti_now_thread_any(upti_thread_state_t *s)
{
    uint64_t ns;
    if (upti_likely(upti_now_thread(s, &ns)))
        return ns;
    return upti_now_thread_slow(s);
}

/** Next internal correlation id: unique in the process, never 0. */
static inline uint64_t upti_next_correlation_id(upti_thread_state_t *s)
{
    if (upti_unlikely(s->corr_next == s->corr_end)) {
        extern _Atomic uint64_t upti_correlation_counter;
        uint64_t base = atomic_fetch_add_explicit(&upti_correlation_counter, 1024,
                                                  memory_order_relaxed);
        s->corr_next = base;
        s->corr_end = base + 1024;
    }
    return s->corr_next++;
}

/** External id the thread pushed for context index ctx (0 if none). */
static inline uint64_t upti_external_id(const upti_thread_state_t *s, uint32_t ctx)
{
    if (upti_likely((s->external_mask & (1u << ctx)) == 0))
        return 0;
    const struct external_stack *st = s->external[ctx];
    return st->ids[st->depth - 1].value;
}

/** Marks the calling thread as one of UPTI's own: nothing it calls is traced. */
void upti_thread_mark_internal(void);

/** Public entry points start with this: inside a subscriber callback they refuse. */
#define UPTI_REFUSE_IN_SUBSCRIBER()                                                            \
    do {                                                                                       \
        upti_thread_state_t *refuse_s_ = upti_tls_state;                                       \
        if (upti_unlikely(refuse_s_ != NULL && refuse_s_->in_subscriber > 0))                  \
            return UPTI_STATUS_ERROR_CALLBACK_CONTEXT;                                         \
    } while (0)

/* Ends a public getter: INVALID_ARGUMENT where out is NULL, else *out = value
 * (evaluated only then) and SUCCESS. */
#define UPTI_RETURN_OUT(out, value)                                                            \
    do {                                                                                       \
        if ((out) == NULL)                                                                     \
            return UPTI_STATUS_ERROR_INVALID_ARGUMENT;                                         \
        *(out) = (value);                                                                      \
        return UPTI_STATUS_SUCCESS;                                                            \
    } while (0)

/* ---- subscribers (subscriber.c; the internal context is in context.c) ---- */

/** Sets the callback service of kind of the subscribers' internal context. */
upti_status_t upti_subscriber_context_service(upti_tracing_kind_t kind, const uint8_t *filter,
                                              upti_callback_tracing_cb_t callback, void *data);
/** Enabled-domain word of the subscribers (bit 1u << upti_callback_domain_t). */
extern uint32_t upti_subscriber_domain_word;
/** INTERNAL_THREADS: a UPTI thread of type (upti_internal_thread_type_t) starts (1) or ends (0). */
void upti_subscriber_thread(int start, uint32_t type, const char *name);
/** INTERNAL_EVENT warning: buffer (its id) dropped records. */
void upti_subscriber_drops(uint64_t buffer, uint64_t drops);

/* ---- contexts and plans (context.c) ---- */

typedef struct upti_plan_callback_t {
    uint32_t context;
    upti_callback_tracing_cb_t callback;
    void *data;
} upti_plan_callback_t;

struct upti_buffer;

typedef struct upti_plan_buffer_t {
    uint32_t context;
    uint32_t index; /* buffer->index (thread states' producers[]): marker_fast() loads less */
    struct upti_buffer *buffer;
} upti_plan_buffer_t;

/** What the active contexts want of one (kind, operation). Immutable once published. */
struct upti_operation_plan_t {
    /* First: runtime.h's upti_runtime_plan_has_callbacks() reads it (the UPTI_RUNTIME_ ABI). */
    uint32_t num_callbacks;
    uint32_t num_buffers;
    upti_plan_callback_t *callbacks;
    upti_plan_buffer_t *buffers;
    upti_plan_buffer_t buffer0; /* buffers[0] if any: the one-buffer fast path loads less */
    /* No callback, one buffer that takes compact API records (ring.h), a kind whose calls
     * end in an API record (not MARKER_API): upti_runtime_call_exit_result() writes it
     * inline, after one test. */
    bool one_api_record;
};
_Static_assert(offsetof(struct upti_operation_plan_t, num_callbacks) == 0,
               "upti_runtime_plan_has_callbacks() reads the plan's first word");

/** Plans of kind, indexed by operation (see upti_kind_info()->operation_count). */
const upti_operation_plan_t *const *upti_plans(upti_tracing_kind_t kind);
/** Keeps dest[0 .. count) equal to the plans of kind's operations first .. first + count - 1,
 *  from now on (a described runtime's own copy, upti_runtime_api_t.plans). False: out of memory. */
bool upti_plans_mirror(upti_tracing_kind_t kind, uint32_t first, uint32_t count,
                       const upti_operation_plan_t **dest);
/** Stops every context and clears every plan (finalization). */
void upti_stop_all_contexts(void);
/** True once upti_stop_all_contexts ran (finalization): nothing is recorded any more. */
bool upti_contexts_finalized(void);
/** Stops the contexts created by tool index tool. */
void upti_stop_tool_contexts(int tool);
/** Buffers created by contexts of tool (bitmask by buffer index). */
uint64_t upti_tool_buffers(int tool);

/* ---- buffers (buffer.c) ---- */

/** Flushes every buffer (finalization). */
void upti_flush_all_buffers(void);
/** Flushes the buffers in mask (bit i = buffer index i). */
void upti_flush_buffers(uint64_t mask);
/** Stops and joins the callback threads (finalization). */
void upti_stop_callback_threads(void);
/** The buffer of an id, or NULL. */
struct upti_buffer *upti_buffer_lookup(upti_buffer_id_t id);
/** Releases the regions of a thread that exits. */
void upti_buffer_thread_exit(upti_thread_state_t *s);

/* ---- tracing (tracing.c) ---- */

/** Copies a record into one buffer, its string member deep-copied. */
void upti_write_record(struct upti_buffer *buffer, upti_thread_state_t *s, uint32_t ctx,
                       const void *record, size_t size, size_t string_offset,
                       const upti_runtime_correlation_t *corr);

/** Runs the EXIT callbacks of a call and leaves it (the caller writes the records). */
void upti_call_exit_callbacks(upti_runtime_call_t *call, upti_thread_state_t *s);

/* ---- agents (agent.c) ---- */
void upti_agents_init_host(void);
/** Agents registered so far (the list only grows). */
size_t upti_agent_count(void);
/** Copies agent i (0-based) into *out; its strings live as long as the process. */
bool upti_agent_at(size_t i, upti_agent_t *out);
/** An agent was registered: the calling thread writes it into the shared buffers (buffer.c). */
void upti_buffer_agent_added(void);

/* ---- marker tracing (marker_tracing.c) ---- */
/** Installs UPTI's tracing wrappers into the uptx table (marker_tracing.c). */
void upti_marker_install_wrappers(void *table);

#endif
