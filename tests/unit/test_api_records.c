/* SPDX-License-Identifier: MIT */
/* API records written by upti_runtime_call_exit, in its inline case (one buffer, room
 * in the thread's region) and out of it: through a 4096-byte LOSSLESS region that
 * wraps many times, into two contexts' buffers for an operation both trace, and with
 * the calls' stack popped either way. Exact counts per buffer and operation, ids
 * strictly increasing in call order, start <= end, the thread's id, every other field
 * (size, kind, result, the external id pushed on the thread for half the calls). The
 * inline case writes the compact record (test_compact_api.c), expanded at delivery:
 * results of every form. */
#include <upti/buffer_tracing.h>
#include <upti/names.h>
#include <upti/runtime.h>
#include <upti/upti.h>

#include <stdint.h>

#include "check.h"
#include "test_tool.h"
#include "unit_tests.h"

enum { OP_BOTH = 1, OP_ONE = 2, CALLS_ONE = 1000, CALLS_BOTH = 500 };
typedef struct seen_t {
    int count[3]; /* by operation */
    uint64_t last_id;
    int out_of_order, bad_times, bad_thread, bad_fields;
} seen_t;
static upti_context_id_t g_ctx[2];
static upti_buffer_id_t g_buf[2];
static seen_t g_seen[2];
static upti_thread_id_t g_tid;

/* The result of a call, by its index among the calls of its operation. */
static int64_t result_of(uint64_t index)
{
    switch (index % 5) {
    case 0: return (int64_t)index;
    case 1: return -(int64_t)index;
    case 2: return UPTI_API_RESULT_NONE;
    case 3: return ((int64_t)1 << 40) + (int64_t)index;
    default: return INT64_MAX;
    }
}

static void on_buffer(upti_context_id_t ctx, upti_buffer_id_t id, upti_record_header_t **headers, size_t n,
                      void *data, uint64_t drops)
{
    (void)ctx, (void)id;
    seen_t *seen = data;
    CHECK_EQ_U64(drops, 0);
    for (size_t i = 0; i < n; i++) {
        if (headers[i]->kind != UPTI_TRACING_KIND_OPENCL_API)
            continue;
        const upti_buffer_tracing_api_record_t *r = headers[i]->payload;
        if (r->operation != OP_BOTH && r->operation != OP_ONE)
            continue;
        seen->count[r->operation]++;
        seen->out_of_order += r->correlation_id.internal <= seen->last_id;
        seen->last_id = r->correlation_id.internal;
        seen->bad_times += r->start_timestamp == 0 || r->start_timestamp > r->end_timestamp;
        seen->bad_thread += r->thread_id != g_tid;
        /* traced_call(): result = result_of(its index among the calls of op); the
           external id (pushed on context 0 for OP_ONE's odd calls) = that index + 1. */
        uint64_t index = (uint64_t)seen->count[r->operation] - 1;
        uint64_t external = seen == &g_seen[0] && r->operation == OP_ONE && index % 2 ? index + 1 : 0;
        seen->bad_fields += r->size != sizeof *r || r->kind != UPTI_TRACING_KIND_OPENCL_API ||
                            r->result != result_of(index) ||
                            r->correlation_id.external.value != external;
    }
}

static int init(upti_client_finalize_t fin, void *tool_data)
{
    (void)fin, (void)tool_data;
    for (int k = 0; k < 2; k++) {
        CHECK_STATUS(upti_create_context(&g_ctx[k]), UPTI_STATUS_SUCCESS);
        upti_buffer_options_t o = {.size = sizeof o, .region_size = 4096, .watermark = 4096,
                                   .policy = UPTI_BUFFER_POLICY_LOSSLESS, .callback = on_buffer,
                                   .callback_data = &g_seen[k]};
        CHECK_STATUS(upti_create_buffer_with_options(g_ctx[k], &o, &g_buf[k]), UPTI_STATUS_SUCCESS);
        const uint32_t ops[] = {OP_BOTH, OP_ONE};
        CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx[k], UPTI_TRACING_KIND_OPENCL_API, ops, k == 0 ? 2 : 1,
                                                           g_buf[k]),
                     UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_start_context(g_ctx[k]), UPTI_STATUS_SUCCESS);
    }
    return 0;
}
TEST_CONFIGURE(configure, init, NULL)

static void traced_call(const upti_operation_plan_t *plan, uint32_t op, int64_t index)
{
    int payload = 0;
    upti_runtime_call_t call;
    upti_runtime_call_enter(&call, plan, UPTI_TRACING_KIND_OPENCL_API, op, &payload);
    upti_runtime_call_exit_result(&call, result_of((uint64_t)index));
}

UNIT_TEST(api_records)
{
    CHECK_STATUS(upti_get_thread_id(&g_tid), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    const upti_operation_plan_t *const *plans = NULL;
    CHECK_STATUS(upti_runtime_get_operation_plans(UPTI_TRACING_KIND_OPENCL_API, &plans, NULL), UPTI_STATUS_SUCCESS);
    const upti_operation_plan_t *one = upti_runtime_plan(plans, OP_ONE), *both = upti_runtime_plan(plans, OP_BOTH);
    CHECK(one != NULL && both != NULL);
    CHECK(!upti_runtime_plan_has_callbacks(one) && !upti_runtime_plan_has_callbacks(both));
    /* One buffer, 64 KB of records through a 4 KB region, an external id pushed for every
       other call; then two buffers. */
    for (int i = 0; i < CALLS_ONE; i++) {
        if (i % 2)
            CHECK_STATUS(upti_push_external_correlation_id(g_ctx[0], (upti_user_data_t){.value = (uint64_t)i + 1}),
                         UPTI_STATUS_SUCCESS);
        traced_call(one, OP_ONE, i);
        if (i % 2)
            CHECK_STATUS(upti_pop_external_correlation_id(g_ctx[0], NULL), UPTI_STATUS_SUCCESS);
    }
    for (int i = 0; i < CALLS_BOTH; i++)
        traced_call(both, OP_BOTH, i);
    /* The stack is popped: a capture now sees no call in progress. */
    upti_runtime_correlation_t c;
    upti_timestamp_t t;
    upti_runtime_capture_current(&c, &t);
    CHECK_EQ_U64(c.internal, 0);
    for (int k = 0; k < 2; k++)
        CHECK_STATUS(upti_flush_buffer(g_buf[k]), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_seen[0].count[OP_ONE], CALLS_ONE);
    CHECK_EQ_U64(g_seen[0].count[OP_BOTH], CALLS_BOTH);
    CHECK_EQ_U64(g_seen[1].count[OP_ONE], 0);
    CHECK_EQ_U64(g_seen[1].count[OP_BOTH], CALLS_BOTH);
    for (int k = 0; k < 2; k++) {
        CHECK_EQ_U64(g_seen[k].out_of_order, 0);
        CHECK_EQ_U64(g_seen[k].bad_times, 0);
        CHECK_EQ_U64(g_seen[k].bad_thread, 0);
        CHECK_EQ_U64(g_seen[k].bad_fields, 0);
    }
    return test_result("api_records");
}
