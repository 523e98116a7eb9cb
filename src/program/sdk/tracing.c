/* SPDX-License-Identifier: MIT */
/* Traced calls (ENTER/EXIT callbacks, API records) and records reported later. */
#include "internal.h"
#include "ring.h"

#include <upti/runtime_callback.h>

#include <string.h>

/* The plan of a call that is not traced (entered inside a UPTI callback, or on one of UPTI's
   own threads): no callback, no buffer, not one_api_record. Its call->plan points here, not
   to NULL, so that upti_runtime_call_exit_result() tests one flag of the plan for its fast
   path, not the pointer first. */
static const upti_operation_plan_t untraced_plan = {.one_api_record = false};

/* Whether call (entered) is traced. */
static inline bool call_traced(const upti_runtime_call_t *call)
{
    return call->plan != &untraced_plan;
}

static upti_callback_tracing_record_t callback_record(const upti_runtime_call_t *call,
                                                      uint32_t ctx, upti_thread_state_t *s,
                                                      upti_callback_phase_t phase)
{
    return (upti_callback_tracing_record_t){
        .size = sizeof(upti_callback_tracing_record_t),
        .context_id = {ctx + 1},
        .thread_id = call->thread_id,
        .correlation_id = {call->correlation_id, {upti_external_id(s, ctx)}},
        .kind = call->kind,
        .operation = call->operation,
        .phase = phase,
        .payload = call->payload,
    };
}

/* The ENTER callbacks of a call, then its start time, apart: a call traced by buffers only
   saves no registers for them. */
static __attribute__((noinline)) void enter_callbacks(upti_runtime_call_t *call, const upti_operation_plan_t *plan,
                                                      upti_thread_state_t *s)
{
    s->in_callback++;
    for (uint32_t i = 0; i < plan->num_callbacks; i++) {
        const upti_plan_callback_t *cb = &plan->callbacks[i];
        call->user_data[i].value = 0;
        cb->callback(callback_record(call, cb->context, s, UPTI_CALLBACK_PHASE_ENTER), &call->user_data[i],
                     cb->data);
    }
    s->in_callback--;
    call->start_timestamp = upti_now_thread_any(s);
}

/* The start time where the clock takes its slow path (a call apart, as the callbacks). */
static __attribute__((noinline)) void enter_slow_clock(upti_runtime_call_t *call, upti_thread_state_t *s)
{
    call->start_timestamp = upti_now_thread_slow(s);
}

/* A thread's first traced call: its state made, then the call entered. */
static __attribute__((noinline)) void enter_first(upti_runtime_call_t *call, const upti_operation_plan_t *plan,
                                                  upti_tracing_kind_t kind, uint32_t operation, void *payload)
{
    (void)upti_thread_state();
    upti_runtime_call_enter(call, plan, kind, operation, payload);
}

UPTI_API void upti_runtime_call_enter(upti_runtime_call_t *call, const upti_operation_plan_t *plan,
                                      upti_tracing_kind_t kind, uint32_t operation, void *payload)
{
    upti_thread_state_t *s = upti_tls_state;
    if (upti_unlikely(s == NULL)) { /* a call apart: no registers saved in the common case */
        enter_first(call, plan, kind, operation, payload);
        return;
    }
    /* Calls a tool makes inside a UPTI callback, or UPTI's own threads make, are not traced. */
    if (upti_unlikely(s->in_callback)) {
        call->plan = &untraced_plan;
        return;
    }
    call->plan = plan;
    call->kind = kind;
    call->operation = operation;
    call->payload = payload;
    call->correlation_id = upti_next_correlation_id(s);
    call->thread_id = s->tid;
    call->parent = s->current_call;
    s->current_call = call;
    if (upti_unlikely(plan->num_callbacks > 0)) {
        enter_callbacks(call, plan, s); /* and the start time */
        return;
    }
    if (upti_unlikely(!upti_now_thread(s, &call->start_timestamp)))
        enter_slow_clock(call, s);
}

void upti_call_exit_callbacks(upti_runtime_call_t *call, upti_thread_state_t *s)
{
    const upti_operation_plan_t *plan = call->plan;
    s->current_call = call->parent;
    if (plan->num_callbacks > 0) {
        s->in_callback++;
        for (uint32_t i = 0; i < plan->num_callbacks; i++) {
            const upti_plan_callback_t *cb = &plan->callbacks[i];
            cb->callback(callback_record(call, cb->context, s, UPTI_CALLBACK_PHASE_EXIT),
                         &call->user_data[i], cb->data);
        }
        s->in_callback--;
    }
}

/* An API record of call into pb's buffer; r: room reserved for it there. */
static inline void api_record(upti_buffer_tracing_api_record_t *r, const upti_runtime_call_t *call,
                              const upti_thread_state_t *s, const upti_plan_buffer_t *pb, upti_timestamp_t end,
                              int64_t result)
{
    *r = (upti_buffer_tracing_api_record_t){
        .size = sizeof *r,
        .kind = call->kind,
        .operation = call->operation,
        .correlation_id = {call->correlation_id, {upti_external_id(s, pb->context)}},
        .thread_id = call->thread_id,
        .start_timestamp = call->start_timestamp,
        .end_timestamp = end,
        .result = result,
    };
}

/* upti_runtime_call_exit past its end time: pops the call, runs EXIT callbacks, writes
   the API records. */
static __attribute__((noinline)) void exit_rest(upti_runtime_call_t *call, upti_timestamp_t end, int64_t result)
{
    if (!call_traced(call))
        return;
    const upti_operation_plan_t *plan = call->plan;
    upti_thread_state_t *s = upti_thread_state();
    if (plan->num_callbacks == 0)
        s->current_call = call->parent;
    else
        upti_call_exit_callbacks(call, s);
    /* Marker integrations report their own records (upti_runtime_emit). */
    if (call->kind == UPTI_TRACING_KIND_MARKER_API)
        return;
    for (uint32_t i = 0; i < plan->num_buffers; i++) {
        const upti_plan_buffer_t *pb = &plan->buffers[i];
        upti_buffer_tracing_api_record_t *r =
            upti_buffer_reserve(pb->buffer, s, call->kind, sizeof *r);
        if (r == NULL)
            continue;
        api_record(r, call, s, pb, end, result);
        upti_buffer_commit(pb->buffer, s);
    }
}

/* exit_rest where the clock takes its slow path. */
static __attribute__((noinline)) void exit_slow_clock(upti_runtime_call_t *call, int64_t result)
{
    if (!call_traced(call))
        return; /* no end time wanted: not read (clock_gettime where the TSC is not used) */
    exit_rest(call, upti_now_thread_slow(upti_thread_state()), result);
}

/*
 * The API record of a call traced by one buffer only (plan->one_api_record), written and
 * committed without a call: room in the thread's region of the buffer, without a wrap.
 * What upti_buffer_reserve_fast(), api_record() and upti_buffer_commit_producer() do, in
 * fewer instructions: the producer's head kept in a register from the reservation to the
 * commit; the kind, operation and correlation id copied from the call as one run of 16
 * bytes; the buffer found again through the producer at the commit, not kept in a
 * register that would have to be saved. The record is the compact one (<upti/ring.h>:
 * 48 bytes with its header, where the public record takes 72), expanded where it is
 * read (buffer.c's delivery, the collector's conversion); a call with an external id
 * pushed gets the public record from exit_rest(), as does every call of a shared buffer
 * whose file is of version 1 (no one_api_record: context.c). False, having published
 * nothing and left the call in progress, where exit_rest() is needed.
 */
static inline bool exit_one_record(const upti_runtime_call_t *call, const upti_operation_plan_t *plan,
                                   upti_thread_state_t *s, upti_timestamp_t end, int64_t result)
{
    struct upti_buffer *b = plan->buffer0.buffer;
    struct upti_producer *p = s->producers[plan->buffer0.index];
    if (upti_unlikely(p == NULL || atomic_load_explicit(&b->destroyed, memory_order_relaxed)))
        return false;
    enum { LEN = sizeof(upti_ring_record_t) + sizeof(upti_ring_compact_api_t) };
    size_t head = p->local_head, size = p->size;
    size_t pos = head & (size - 1);
    /* No external id pushed on any context: the common case, one test. */
    if (upti_unlikely(pos + LEN > p->limit || head + LEN - p->cached_tail > size ||
                      s->external_mask != 0))
        return false;
    head += LEN;
    upti_ring_record_t *h = (upti_ring_record_t *)(p->data + pos);
    upti_ring_compact_api_t *r = (upti_ring_compact_api_t *)(h + 1);
    /* kind, operation, correlation id (asserted below). */
    memcpy(r, (const char *)call + offsetof(upti_runtime_call_t, kind), 16);
    h->len = LEN;
    h->kind = UPTI_RING_COMPACT_API;
    r->start_timestamp = call->start_timestamp;
    r->end_timestamp = end;
    r->result = result;
    s->current_call = call->parent;
    p->local_head = head;
    atomic_store_explicit(&p->head, head, memory_order_release);
    /* The cached tail is stale (it only moves forward): confirmed apart before waking anyone. */
    if (upti_unlikely(head - p->cached_tail >= p->watermark))
        upti_buffer_commit_check(p->buffer, p, head);
    return true;
}

/* The run exit_one_record() copies: at the same offsets from kind in the call (runtime.h)
   and the compact record (<upti/ring.h>), 16 bytes. */
#define CALL_AT(f) (offsetof(upti_runtime_call_t, f) - offsetof(upti_runtime_call_t, kind))
_Static_assert(CALL_AT(operation) == 4 && offsetof(upti_ring_compact_api_t, operation) == 4 &&
                   CALL_AT(correlation_id) == 8 &&
                   offsetof(upti_ring_compact_api_t, correlation_id) == 8 &&
                   offsetof(upti_ring_compact_api_t, kind) == 0,
               "kind, operation, correlation id: one run of 16 bytes in the call and the record");
#undef CALL_AT
_Static_assert(sizeof(upti_ring_compact_api_t) % 8 == 0, "compact API records fill 8-byte units");
_Static_assert(sizeof(upti_buffer_tracing_api_record_t) % 8 == 0, "API records fill 8-byte units");

UPTI_API void upti_runtime_call_exit(upti_runtime_call_t *call)
{
    upti_runtime_call_exit_result(call, UPTI_API_RESULT_NONE);
}

UPTI_API void upti_runtime_call_exit_result(upti_runtime_call_t *call, int64_t result)
{
    /* Not traced: untraced_plan, whose one_api_record is false (exit_rest returns; on the
       slow clock, exit_slow_clock returns before reading it). */
    const upti_operation_plan_t *plan = call->plan;
    /* Entered on this thread, so its state exists. */
    upti_thread_state_t *s = upti_tls_state;
    upti_timestamp_t end;
    if (upti_unlikely(!upti_now_thread(s, &end))) {
        exit_slow_clock(call, result);
        return;
    }
    /* Inline, without a call that needs registers saved: a call traced by one buffer only
       whose record fits this thread's region (a traced vkCmdDispatch or clEnqueue*). */
    if (upti_likely(plan->one_api_record) && upti_likely(exit_one_record(call, plan, s, end, result)))
        return;
    exit_rest(call, end, result);
}

static void capture_external(upti_thread_state_t *s, upti_runtime_correlation_t *out);

/* upti_runtime_capture_correlation with s, call found. */
static inline void capture(upti_thread_state_t *s, const upti_runtime_call_t *call, upti_runtime_correlation_t *out)
{
    memset(out, 0, sizeof *out);
    out->thread_id = s->tid;
    if (call == NULL || !call_traced(call))
        return;
    out->internal = call->correlation_id;
    if (s->external_mask != 0)
        capture_external(s, out);
}

/* The external ids of the contexts that pushed one on this thread, into out. */
static __attribute__((noinline)) void capture_external(upti_thread_state_t *s, upti_runtime_correlation_t *out)
{
    uint32_t mask = s->external_mask;
    while (mask != 0 && out->num_external < 4) {
        uint32_t ctx = (uint32_t)__builtin_ctz(mask);
        mask &= mask - 1;
        out->context_index[out->num_external] = ctx;
        out->external[out->num_external].value = upti_external_id(s, ctx);
        out->num_external++;
    }
    /* external[] holds 4 (a runtime-integration struct on the wrappers' stacks,
     * sized once for the ABI): a fifth context with an id pushed gets none on
     * the device records of this call. Said once, not silently. */
    static _Atomic bool warned;
    if (mask != 0 && !atomic_exchange(&warned, true))
        upti_log_warning("more than 4 contexts pushed an external correlation id on one thread: "
                       "device records carry the first 4 contexts' ids only");
}

UPTI_API void upti_runtime_capture_correlation(const upti_runtime_call_t *call,
                                               upti_runtime_correlation_t *out)
{
    upti_thread_state_t *s = upti_thread_state();
    capture(s, call != NULL ? call : s->current_call, out);
}

/* upti_runtime_capture_current in full. */
static __attribute__((noinline)) void capture_current_slow(upti_runtime_correlation_t *out, upti_timestamp_t *start)
{
    upti_thread_state_t *s = upti_thread_state();
    const upti_runtime_call_t *call = s->current_call;
    capture(s, call, out);
    *start = call != NULL && call_traced(call) && s->in_callback == 0 ? call->start_timestamp
                                                                        : upti_now_thread_any(s);
}

UPTI_API void upti_runtime_capture_current(upti_runtime_correlation_t *out, upti_timestamp_t *start)
{
    /* The common case (a traced vkCmd*: a call in progress, no external id pushed) without a call
       that needs registers saved; the call in progress's own start: one clock read fewer per
       operation it records. */
    upti_thread_state_t *s = upti_tls_state;
    if (upti_likely(s != NULL && s->external_mask == 0)) {
        const upti_runtime_call_t *call = s->current_call;
        memset(out, 0, sizeof *out);
        out->thread_id = s->tid;
        if (call != NULL && call_traced(call)) {
            out->internal = call->correlation_id;
            if (s->in_callback == 0) {
                *start = call->start_timestamp;
                return;
            }
        }
        if (upti_likely(upti_now_thread(s, start)))
            return;
    }
    capture_current_slow(out, start);
}

static uint64_t captured_external(const upti_runtime_correlation_t *corr, uint32_t ctx)
{
    for (uint32_t i = 0; i < corr->num_external; i++)
        if (corr->context_index[i] == ctx)
            return corr->external[i].value;
    return 0;
}

void upti_write_record(struct upti_buffer *buffer, upti_thread_state_t *s, uint32_t ctx,
                       const void *record, size_t size, size_t string_offset,
                       const upti_runtime_correlation_t *corr)
{
    const char *str = NULL;
    size_t str_len = 0;
    if (string_offset != 0) {
        memcpy(&str, (const char *)record + string_offset, sizeof str);
        if (str != NULL)
            str_len = strnlen(str, UPTI_MAX_RECORD_STRING - 1) + 1;
    }
    size_t body = (size + 7) & ~(size_t)7;
    const upti_record_prefix_t *prefix = record;
    uint8_t *dst = upti_buffer_reserve(buffer, s, prefix->kind, body + str_len);
    if (dst == NULL)
        return;
    memcpy(dst, record, size);
    upti_record_prefix_t *out = (upti_record_prefix_t *)dst;
    out->correlation_id.internal = corr->internal;
    out->correlation_id.external.value = captured_external(corr, ctx);
    if (string_offset != 0) {
        char *copy = NULL;
        if (str != NULL) {
            copy = (char *)dst + body;
            memcpy(copy, str, str_len - 1);
            copy[str_len - 1] = '\0';
        }
        memcpy(dst + string_offset, &copy, sizeof copy);
    }
    upti_buffer_commit(buffer, s);
}

UPTI_API void upti_runtime_emit(const upti_runtime_record_t *record)
{
    upti_runtime_record_t copy; /* read by its size: an older integration's gets defaults */
    if (upti_struct_copy(&copy, sizeof copy, record) != UPTI_STATUS_SUCCESS)
        return;
    const upti_runtime_record_t *rec = &copy;
    if (rec->record == NULL || rec->kind <= UPTI_TRACING_KIND_NONE ||
        rec->kind >= UPTI_TRACING_KIND_LAST ||
        rec->operation >= upti_kind_info(rec->kind)->operation_count)
        return;
    const upti_operation_plan_t *now = upti_runtime_plan(upti_plans(rec->kind), rec->operation);
    /* Buffers: the contexts active when the work started, if the integration says. */
    const upti_operation_plan_t *plan = now;
    if (rec->size >= offsetof(upti_runtime_record_t, started_plan) + sizeof rec->started_plan &&
        rec->started_plan != NULL && rec->started_plan != now && !upti_contexts_finalized())
        plan = rec->started_plan;
    if (plan == NULL && now == NULL)
        return;
    upti_thread_state_t *s = upti_thread_state();
    upti_runtime_correlation_t here;
    const upti_runtime_correlation_t *corr = rec->correlation;
    if (corr == NULL) {
        upti_runtime_capture_correlation(NULL, &here);
        /* Not inside a traced call (an NVTX marker, say): the record is its own origin. */
        if (here.internal == 0)
            here.internal = upti_next_correlation_id(s);
        corr = &here;
    }
    upti_record_prefix_t *prefix = rec->record;
    prefix->kind = rec->kind;
    prefix->operation = rec->operation;
    prefix->correlation_id.internal = corr->internal;
    prefix->thread_id = corr->thread_id;
    if (now != NULL && now->num_callbacks > 0) {
        s->in_callback++;
        for (uint32_t i = 0; i < now->num_callbacks; i++) {
            const upti_plan_callback_t *cb = &now->callbacks[i];
            prefix->correlation_id.external.value = captured_external(corr, cb->context);
            upti_callback_tracing_record_t r = {
                .size = sizeof r,
                .context_id = {cb->context + 1},
                .thread_id = corr->thread_id,
                .correlation_id = prefix->correlation_id,
                .kind = rec->kind,
                .operation = rec->operation,
                .phase = rec->phase,
                .payload = rec->record,
            };
            upti_user_data_t user_data = {0};
            cb->callback(r, &user_data, cb->data);
        }
        s->in_callback--;
    }
    if (plan == NULL)
        return;
    if (rec->kind == UPTI_TRACING_KIND_MARKER_API && plan->num_buffers > 0 &&
        rec->string_offset != 0) {
        const char *text = NULL;
        memcpy(&text, (const char *)rec->record + rec->string_offset, sizeof text);
        if (text != NULL && strnlen(text, UPTI_MARKER_TEXT_MAX + 1) > UPTI_MARKER_TEXT_MAX)
            upti_marker_text_cut(); /* once per call, whatever the number of buffers */
    }
    for (uint32_t i = 0; i < plan->num_buffers; i++)
        upti_write_record(plan->buffers[i].buffer, s, plan->buffers[i].context, rec->record,
                          prefix->size, rec->string_offset, corr);
    if (plan->num_callbacks == 0 || rec->kind != UPTI_TRACING_KIND_MARKER_API)
        return;
    /* A marker callback that started a context (a capture window opened by this
     * very marker) gets the record into that context's buffers too: the
     * record that opens a window is its first. */
    const upti_operation_plan_t *after = upti_runtime_plan(upti_plans(rec->kind), rec->operation);
    if (after == NULL || after == plan)
        return;
    for (uint32_t i = 0; i < after->num_buffers; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < plan->num_buffers && !seen; j++)
            seen = plan->buffers[j].buffer == after->buffers[i].buffer;
        if (!seen)
            upti_write_record(after->buffers[i].buffer, s, after->buffers[i].context, rec->record,
                              prefix->size, rec->string_offset, corr);
    }
}

UPTI_API void upti_runtime_warn(const char *message)
{
    if (message != NULL) {
        upti_log_warning("%s", message);
        upti_runtime_subscriber_internal(UPTI_CB_DOMAIN_INTERNAL_EVENT, UPTI_CB_PHASE_INTERNAL_EVENT,
                                         UPTI_INTERNAL_EVENT_TYPE_WARNING, message, 0);
    }
}
