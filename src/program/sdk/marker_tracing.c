/* SPDX-License-Identifier: MIT */
/* UPTI's tracing wrappers for the uptx dispatch table (kind MARKER_API). */
#include "internal.h"
#include "ring.h"
#include "fork.h"
#include "marker_operations.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <uptx/uptx_table.h>

/* The implementation's entries, saved when the wrappers were installed. */
static uptx_dispatch_table_t g_next;
static const upti_operation_plan_t *const *g_plans;

/* What a marker record carries besides the prefix. */
struct marker_event {
    uint32_t operation;
    upti_timestamp_t timestamp;
    uint64_t correlation_id;
    const char *message;
    uint64_t range_id;
    uint64_t domain;
};

/* Copies n bytes: up to 16 inline with two overlapping moves (marker texts are
 * short), longer ones with memcpy. Reads only src[0, n). */
static inline __attribute__((always_inline)) void copy_text(char *dst, const char *src, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, z;
        memcpy(&a, src, 8);
        memcpy(&z, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &z, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, z;
        memcpy(&a, src, 4);
        memcpy(&z, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &z, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            dst[i] = src[i];
    } else {
        memcpy(dst, src, n);
    }
}

/* Copies n < 32 bytes with two overlapping moves each way at most. Reads only src[0, n). */
static inline __attribute__((always_inline)) void copy_short_text(char *dst, const char *src,
                                                                  size_t n)
{
    if (n >= 16) {
        char a[16], z[16];
        memcpy(a, src, 16);
        memcpy(z, src + n - 16, 16);
        memcpy(dst, a, 16);
        memcpy(dst + n - 16, z, 16);
    } else {
        copy_text(dst, src, n);
    }
}

_Static_assert(sizeof(upti_ring_compact_mark_t) == 24,
               "a compact mark is 24 bytes, then what follows");

/* The bytes of a marker call's record after its ring header, its text aside: a compact
 * mark's (mark) with its value, or a compact marker record's (<upti/ring.h>). */
static inline size_t marker_body_size(int mark, uint64_t value)
{
    return mark ? sizeof(upti_ring_compact_mark_t) + (value != 0 ? sizeof value : 0)
                : sizeof(upti_ring_compact_marker_t);
}

/* Writes a marker call's record after its ring header, at body: a compact mark (mark) or a
 * compact marker record, then the text (n bytes before its NUL; none where text is NULL;
 * short_text: n < UPTI_SHORT_TEXT). */
static inline __attribute__((always_inline)) void
put_marker_body(void *body, int mark, uint32_t op, uint64_t corr, uint64_t timestamp,
                uint64_t external, uint64_t value, const char *text, size_t n, int short_text)
{
    char *after;
    if (mark) {
        upti_ring_compact_mark_t *m = body;
        m->operation = op;
        m->flags = (text != NULL ? UPTI_RING_MARK_MESSAGE : 0u) |
                   (value != 0 ? UPTI_RING_MARK_VALUE : 0u);
        m->correlation_id = corr;
        m->timestamp = timestamp;
        after = (char *)(m + 1);
        if (value != 0) {
            memcpy(after, &value, sizeof value);
            after += sizeof value;
        }
    } else {
        upti_ring_compact_marker_t *r = body;
        r->operation = op;
        r->has_message = text != NULL;
        r->correlation_id = corr;
        r->external = external;
        r->timestamp = timestamp;
        r->value = value;
        after = (char *)(r + 1);
    }
    if (text != NULL) {
        if (short_text)
            copy_short_text(after, text, n);
        else
            copy_text(after, text, n);
        after[n] = '\0';
    }
}

/* Writes e's compact record (len: bytes of its text, NUL included, 0 if none) into pb's
 * buffer: a compact mark where the buffer takes them and no external id is pushed. */
static inline __attribute__((always_inline)) void
write_marker_record(const upti_plan_buffer_t *pb, upti_thread_state_t *s,
                    const struct marker_event *e, size_t len, uint64_t value)
{
    struct upti_buffer *b = pb->buffer;
    uint64_t external = upti_external_id(s, pb->context);
    int mark = b->compact_api && external == 0;
    void *body = upti_buffer_reserve(b, s, mark ? UPTI_RING_COMPACT_MARK : UPTI_RING_COMPACT_MARKER,
                                     marker_body_size(mark, value) + len);
    if (body == NULL)
        return;
    /* Loaded before the text is copied (the compiler must assume the copy writes anywhere). */
    struct upti_producer *p = s->producers[b->index];
    put_marker_body(body, mark, e->operation, e->correlation_id, e->timestamp, external, value,
                    len != 0 ? e->message : NULL, len != 0 ? len - 1 : 0, 0);
    upti_buffer_commit_producer(b, p);
}

static inline __attribute__((always_inline)) void
write_marker_records(const upti_operation_plan_t *plan, upti_thread_state_t *s,
                     const struct marker_event *e)
{
    size_t len = e->message != NULL ? strnlen(e->message, UPTI_MARKER_TEXT_MAX) + 1 : 0;
    if (upti_unlikely(len == UPTI_MARKER_TEXT_MAX + 1) && e->message[UPTI_MARKER_TEXT_MAX] != '\0')
        upti_marker_text_cut();
    uint64_t value = e->operation == UPTI_MARKER_API_NAME_CATEGORY ? e->domain : e->range_id;
    uint32_t n = plan->num_buffers;
    const upti_plan_buffer_t *pb = plan->buffers;
    if (upti_likely(n == 1)) { /* the common case: one buffer, no loop */
        write_marker_record(pb, s, e, len, value);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        write_marker_record(&pb[i], s, e, len, value);
}

/*
 * After callbacks ran: the records also go to the buffers of the contexts a
 * callback started during the call (op's plan now, `after`), besides those
 * of the plan the call began with. A call that a callback uses to open a
 * capture window (a range push, uptx_profiler_resume) is then the window's
 * first record, as the call that closes it is its last.
 */
static void write_marker_records_after(const upti_operation_plan_t *plan,
                                       const upti_operation_plan_t *after, upti_thread_state_t *s,
                                       const struct marker_event *e)
{
    if (plan->num_buffers > 0)
        write_marker_records(plan, s, e);
    if (after == NULL || after == plan)
        return;
    size_t len = e->message != NULL ? strnlen(e->message, UPTI_MARKER_TEXT_MAX) + 1 : 0;
    uint64_t value = e->operation == UPTI_MARKER_API_NAME_CATEGORY ? e->domain : e->range_id;
    for (uint32_t i = 0; i < after->num_buffers; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < plan->num_buffers && !seen; j++)
            seen = plan->buffers[j].buffer == after->buffers[i].buffer;
        if (!seen)
            write_marker_record(&after->buffers[i], s, e, len, value);
    }
}

/* Texts shorter than this many bytes (NUL excluded) can take marker_fast(). */
#define UPTI_SHORT_TEXT 32

/* Bytes of text before its NUL if fewer than UPTI_SHORT_TEXT, else UPTI_SHORT_TEXT.
 * Reads stop at the NUL. */
static inline __attribute__((always_inline)) size_t short_text_len(const char *text)
{
    size_t n = 0;
#pragma GCC unroll 32
    for (; n < UPTI_SHORT_TEXT; n++)
        if (text[n] == '\0')
            break;
    return n;
}

/*
 * The common case of a buffers-only marker call, without a call (no strnlen,
 * no slow path): one buffer, a text shorter than UPTI_SHORT_TEXT, room in
 * the thread's region without a wrap, a fresh correlation id and the
 * clock's fast path. Writes and commits the record (as upti_buffer_reserve()
 * and upti_buffer_commit_producer() would) and returns MARKER_DONE, or
 * MARKER_WAKE if the region holds p->watermark or more by its cached tail
 * (due for a check on the consumer: upti_buffer_commit_check; the rest of the commit
 * is marker_slow()'s); in every other case returns
 * MARKER_NOT_DONE having published nothing (at most unpublished bytes past
 * the region's head) and taken no correlation id.
 */
enum { MARKER_NOT_DONE, MARKER_DONE, MARKER_WAKE };
static inline __attribute__((always_inline)) int
marker_fast(const upti_operation_plan_t *plan, upti_thread_state_t *s, uint32_t op,
            const char *message, uint64_t value)
{
    upti_timestamp_t ts;
    if (upti_unlikely(!upti_now_thread(s, &ts)))
        return MARKER_NOT_DONE;
    if (upti_unlikely(plan->num_buffers != 1))
        return MARKER_NOT_DONE;
    struct upti_buffer *b = plan->buffer0.buffer;
    struct upti_producer *p = s->producers[plan->buffer0.index];
    if (upti_unlikely(p == NULL || atomic_load_explicit(&b->destroyed, memory_order_relaxed)))
        return MARKER_NOT_DONE;
    size_t n = 0; /* bytes of the text before its NUL */
    if (message != NULL) {
        n = short_text_len(message);
        if (upti_unlikely(n == UPTI_SHORT_TEXT))
            return MARKER_NOT_DONE;
    }
    /* No external id pushed on this context (the common case): a compact mark where the
     * buffer takes them, as write_marker_record decides. */
    uint64_t external = upti_external_id(s, plan->buffer0.context);
    int mark = external == 0 && b->compact_api;
    size_t len = (sizeof(upti_ring_record_t) + marker_body_size(mark, value) +
                  (message != NULL ? n + 1 : 0) + 7) & ~(size_t)7;
    size_t head = p->local_head, size = p->size;
    size_t pos = head & (size - 1);
    if (upti_unlikely(pos + len > p->limit || head + len - p->cached_tail > size))
        return MARKER_NOT_DONE;
    uint64_t corr = s->corr_next;
    if (upti_unlikely(corr == s->corr_end))
        return MARKER_NOT_DONE;
    head += len;
    /* Until the commit, what is written is unpublished scratch. */
    upti_ring_record_t *h = (upti_ring_record_t *)(p->data + pos);
    h->len = (uint32_t)len;
    h->kind = mark ? UPTI_RING_COMPACT_MARK : UPTI_RING_COMPACT_MARKER;
    put_marker_body(h + 1, mark, op, corr, ts, external, value, message, n, 1);
    s->corr_next = corr + 1;
    p->local_head = head;
    atomic_store_explicit(&p->head, head, memory_order_release);
    if (upti_unlikely(head - p->cached_tail >= p->watermark))
        return MARKER_WAKE;
    return MARKER_DONE;
}

/* What marker_fast() left undone: all the records (any number of buffers,
 * any text, the slow paths) if it returned MARKER_NOT_DONE, the end of the
 * commit if it returned MARKER_WAKE. */
static __attribute__((noinline)) void marker_slow(const upti_operation_plan_t *plan,
                                                  upti_thread_state_t *s, uint32_t op,
                                                  const char *message, uint64_t value, int done)
{
    if (done == MARKER_WAKE) {
        struct upti_buffer *b = plan->buffers[0].buffer;
        upti_buffer_commit_check(b, s->producers[b->index], s->producers[b->index]->local_head);
        return;
    }
    struct marker_event e = {.operation = op};
    e.timestamp = upti_now_thread_any(s);
    e.correlation_id = upti_next_correlation_id(s);
    e.message = message;
    e.range_id = value;
    e.domain = value;
    if (plan->num_buffers > 0)
        write_marker_records(plan, s, &e);
}

/*
 * One traced marker call. The wrapper only dispatches, without a frame of its
 * own: straight to the implementation when no context wants the operation
 * (or inside a UPTI callback), else to one of two functions per operation —
 * TO_BUFFERS, the hot path (buffers only, no callback service), and
 * WITH_CALLBACKS (its upti_runtime_call_t is large). A thread's first traced
 * call goes through FIRST_CALL, which creates its state (a call would give
 * the wrapper a frame). CALL_NEXT evaluates the call into the implementation
 * and stores its result in `ret` (a no-op statement for void functions).
 * Marker calls are instants: one clock read, taken before the call.
 */
#define TRACED_MARKER(OP, TO_BUFFERS, WITH_CALLBACKS, CALL_NEXT, FIRST_CALL)                    \
    do {                                                                                       \
        const upti_operation_plan_t *plan = upti_runtime_plan(g_plans, OP);                    \
        if (upti_likely(plan == NULL)) {                                                       \
            CALL_NEXT;                                                                         \
            break;                                                                             \
        }                                                                                      \
        upti_thread_state_t *s = upti_tls_state;                                               \
        if (upti_unlikely(s == NULL)) {                                                        \
            FIRST_CALL;                                                                        \
            break;                                                                             \
        }                                                                                      \
        if (s->in_callback) {                                                                  \
            CALL_NEXT;                                                                         \
            break;                                                                             \
        }                                                                                      \
        if (upti_unlikely(plan->num_callbacks != 0)) {                                         \
            WITH_CALLBACKS;                                                                    \
            break;                                                                             \
        }                                                                                      \
        TO_BUFFERS;                                                                            \
    } while (0)

/* How a result is declared (before the call), kept (`RET_KEEP_x call`), stored in
 * the payload and returned. */
#define RET_TYPE_INT int
#define RET_TYPE_U64 uint64_t
#define RET_TYPE_VOID void
#define RET_DECL_INT int ret = 0;
#define RET_DECL_U64 uint64_t ret = 0;
#define RET_DECL_VOID
#define RET_KEEP_INT ret =
#define RET_KEEP_U64 ret =
#define RET_KEEP_VOID
#define RET_PAYLOAD_INT payload.retval.int_retval = ret
#define RET_PAYLOAD_U64 payload.retval.uint64_retval = ret
#define RET_PAYLOAD_VOID (void)0
#define RET_RETURN_INT return ret;
#define RET_RETURN_U64 return ret;
#define RET_RETURN_VOID return;

/* Parameter lists: PROTO(PARAMS...) is the list or `void`; AND(PARAMS...) is
 * `, list` or nothing (after the wrappers' own leading parameters). */
#define PICK_SECOND(a, b, ...) b
#define PICK_SECOND_OF(...) PICK_SECOND(__VA_ARGS__)
#define PROTO(...) __VA_ARGS__ PICK_SECOND_OF(__VA_OPT__(, ), void, ~)
#define AND(...) __VA_OPT__(, ) __VA_ARGS__

#define OUT_OF_LINE static __attribute__((noinline))
#define PLAN_S const upti_operation_plan_t *plan, upti_thread_state_t *s

/* The TO_BUFFERS function (buffers only, no callback service). FAST: the
 * record, then a tail call into the implementation; every case marker_fast()
 * does not finish goes to the _slow twin (marker_slow(), then the call). The
 * timestamp is taken before the call either way. */
#define DEFINE_TO_BUFFERS_FAST(name, OP, R, PARAMS, ARGS, MESSAGE, VALUE)                       \
    OUT_OF_LINE RET_TYPE_##R name##_buf_slow(PLAN_S AND PARAMS, int done)                       \
    {                                                                                           \
        marker_slow(plan, s, UPTI_MARKER_API_##OP, MESSAGE, VALUE, done);                       \
        RET_DECL_##R RET_KEEP_##R g_next.name##_fn ARGS;                                        \
        RET_RETURN_##R                                                                          \
    }                                                                                           \
    OUT_OF_LINE RET_TYPE_##R name##_buf(PLAN_S AND PARAMS)                                      \
    {                                                                                           \
        RET_DECL_##R int done = marker_fast(plan, s, UPTI_MARKER_API_##OP, MESSAGE, VALUE);     \
        if (upti_likely(done == MARKER_DONE)) {                                                 \
            RET_KEEP_##R g_next.name##_fn ARGS;                                                 \
            RET_RETURN_##R                                                                      \
        }                                                                                       \
        RET_KEEP_##R name##_buf_slow(plan, s AND ARGS, done);                                   \
        RET_RETURN_##R                                                                          \
    }

/* AFTER_CALL: one clock read before the call, the record after it. */
#define DEFINE_TO_BUFFERS_AFTER_CALL(name, OP, R, PARAMS, ARGS, MESSAGE, VALUE)                 \
    OUT_OF_LINE RET_TYPE_##R name##_buf(PLAN_S AND PARAMS)                                      \
    {                                                                                           \
        RET_DECL_##R struct marker_event e = {.operation = UPTI_MARKER_API_##OP};               \
        e.timestamp = upti_now_thread_any(s);                                                   \
        e.correlation_id = upti_next_correlation_id(s);                                         \
        RET_KEEP_##R g_next.name##_fn ARGS;                                                     \
        e.message = MESSAGE;                                                                    \
        e.range_id = e.domain = VALUE;                                                          \
        if (upti_likely(plan->num_buffers > 0))                                                 \
            write_marker_records(plan, s, &e);                                                  \
        RET_RETURN_##R                                                                          \
    }

/* The WITH_CALLBACKS function: callbacks around the call, then buffers (those of
 * the plan the call began with, and of contexts a callback started). */
#define MARKER_WITH_CALLBACKS(OP, SET_ARGS, CALL_NEXT, SET_RETVAL, MESSAGE, VALUE)                \
    do {                                                                                        \
        struct marker_event e = {.operation = OP};                                              \
        upti_callback_tracing_marker_api_data_t payload = {.size = sizeof payload};             \
        SET_ARGS;                                                                               \
        upti_runtime_call_t call;                                                               \
        upti_runtime_call_enter(&call, plan, UPTI_TRACING_KIND_MARKER_API, OP, &payload);       \
        CALL_NEXT;                                                                              \
        SET_RETVAL;                                                                             \
        e.timestamp = call.start_timestamp;                                                     \
        e.correlation_id = call.correlation_id;                                                 \
        upti_call_exit_callbacks(&call, s);                                                     \
        e.message = MESSAGE;                                                                    \
        e.range_id = e.domain = VALUE;                                                          \
        write_marker_records_after(plan, upti_runtime_plan(g_plans, OP), s, &e);                \
    } while (0)

/* Every function of one operation: TO_BUFFERS, WITH_CALLBACKS, FIRST_CALL (creates
 * the thread's state, then starts over) and the wrapper installed in the table. */
#define DEFINE_MARKER_WRAPPERS(name, OP, R, PARAMS, ARGS, MESSAGE, VALUE, SET_ARGS, TO_BUFFERS)  \
    DEFINE_TO_BUFFERS_##TO_BUFFERS(name, OP, R, PARAMS, ARGS, MESSAGE, VALUE)                   \
    OUT_OF_LINE RET_TYPE_##R name##_cb(PLAN_S AND PARAMS)                                       \
    {                                                                                           \
        RET_DECL_##R MARKER_WITH_CALLBACKS(UPTI_MARKER_API_##OP, SET_ARGS,                      \
                                           RET_KEEP_##R g_next.name##_fn ARGS,                  \
                                           RET_PAYLOAD_##R, MESSAGE, VALUE);                    \
        RET_RETURN_##R                                                                          \
    }                                                                                           \
    static RET_TYPE_##R traced_##name(PROTO PARAMS);                                            \
    OUT_OF_LINE RET_TYPE_##R name##_first(PROTO PARAMS)                                         \
    {                                                                                           \
        (void)upti_thread_state_slow();                                                         \
        RET_DECL_##R RET_KEEP_##R traced_##name ARGS;                                           \
        RET_RETURN_##R                                                                          \
    }                                                                                           \
    static RET_TYPE_##R traced_##name(PROTO PARAMS)                                             \
    {                                                                                           \
        RET_DECL_##R TRACED_MARKER(UPTI_MARKER_API_##OP,                                        \
                                   RET_KEEP_##R name##_buf(plan, s AND ARGS),                   \
                                   RET_KEEP_##R name##_cb(plan, s AND ARGS),                    \
                                   RET_KEEP_##R g_next.name##_fn ARGS,                          \
                                   RET_KEEP_##R name##_first ARGS);                             \
        RET_RETURN_##R                                                                          \
    }

MARKER_OPERATIONS(DEFINE_MARKER_WRAPPERS)

/* uptx_profiler_pause and uptx_profiler_resume: no argument, no result; one wrapper serves
 * both, each with its own next-layer call. */
static void next_profiler_pause(void)
{
    g_next.profiler_pause_fn();
}

static void next_profiler_resume(void)
{
    g_next.profiler_resume_fn();
}

OUT_OF_LINE void profiler_cb(PLAN_S, uint32_t op, void (*next)(void))
{
    MARKER_WITH_CALLBACKS(op, (void)0, next(), (void)0, NULL, 0);
}

static void traced_profiler(uint32_t op, void (*next)(void))
{
    TRACED_MARKER(op, (marker_slow(plan, s, op, NULL, 0, MARKER_NOT_DONE), next()),
                  profiler_cb(plan, s, op, next), next(),
                  ((void)upti_thread_state_slow(), traced_profiler(op, next)));
}

static void traced_profiler_pause(void)
{
    traced_profiler(UPTI_MARKER_API_PROFILER_PAUSE, next_profiler_pause);
}

static void traced_profiler_resume(void)
{
    traced_profiler(UPTI_MARKER_API_PROFILER_RESUME, next_profiler_resume);
}

#define INSTALL(field, wrapper)                                                                  \
    do {                                                                                         \
        g_next.field = __atomic_load_n(&table->field, __ATOMIC_RELAXED);                         \
        __atomic_store_n(&table->field, wrapper, __ATOMIC_RELEASE);                              \
    } while (0)
#define INSTALL_OPERATION(name, ...) INSTALL(name##_fn, traced_##name);
/* 1 if table (of table->size bytes) holds entry field (as <uptx/uptx.h> checks it). */
#define HAS_ENTRY(table, field) \
    ((table)->size >= offsetof(uptx_dispatch_table_t, field) + sizeof((table)->field))

void upti_marker_install_wrappers(void *raw)
{
    uptx_dispatch_table_t *table = raw;
    if (table == NULL || table->size < offsetof(uptx_dispatch_table_t, profiler_pause_fn)) {
        upti_log_error("uptx dispatch table is older than this UPTI: markers are not traced");
        return;
    }
    g_plans = upti_plans(UPTI_TRACING_KIND_MARKER_API);
    MARKER_OPERATIONS(INSTALL_OPERATION)
    /* Version 2's entries, each where the table reaches it (never against
     * sizeof: a later header's larger table must not hide these). */
    if (HAS_ENTRY(table, profiler_pause_fn))
        INSTALL(profiler_pause_fn, traced_profiler_pause);
    if (HAS_ENTRY(table, profiler_resume_fn))
        INSTALL(profiler_resume_fn, traced_profiler_resume);
}

/* ---- texts longer than UPTI_MARKER_TEXT_MAX ---- */

static _Atomic uint64_t g_texts_cut;

void upti_marker_text_cut(void)
{
    atomic_fetch_add_explicit(&g_texts_cut, 1, memory_order_relaxed);
}

UPTI_API upti_status_t upti_get_marker_texts_truncated(uint64_t *count)
{
    if (count == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    *count = atomic_load_explicit(&g_texts_cut, memory_order_relaxed);
    return UPTI_STATUS_SUCCESS;
}

void upti_report_marker_texts_cut(void)
{
    uint64_t n = atomic_load(&g_texts_cut);
    if (n != 0)
        upti_log_error("%llu marker text%s longer than %d bytes (UPTI_MARKER_TEXT_MAX) %s cut",
                       (unsigned long long)n, n == 1 ? "" : "s", UPTI_MARKER_TEXT_MAX,
                       n == 1 ? "was" : "were");
}

/* fork() without exec (fork.h): the child's count starts from 0. */
void upti_marker_fork_child(void)
{
    atomic_store(&g_texts_cut, 0);
}

/* ---- argument printing ---- */
