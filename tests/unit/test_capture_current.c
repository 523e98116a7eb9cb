/* SPDX-License-Identifier: MIT */
/* upti_runtime_capture_current: inside a traced call, the call's correlation
 * id and the start time of its API record (exactly); outside any call, no
 * internal id and the time now (between two reads of UPTI's clock); inside a
 * nested call, the innermost one's; with an external id pushed, that id too. */
#include <upti/buffer_tracing.h>
#include <upti/external_correlation.h>
#include <upti/names.h>
#include <upti/runtime.h>
#include <upti/upti.h>

#include <stdatomic.h>

#include "check.h"
#include "test_tool.h"
#include "unit_tests.h"

enum { OP_OUTER = 1, OP_INNER = 2, OP_EXT = 3 };
static upti_context_id_t g_ctx;
static upti_buffer_id_t g_buffer;
static _Atomic int g_records;
static upti_buffer_tracing_api_record_t g_rec[3]; /* by operation - 1 */

static void on_buffer(upti_context_id_t ctx, upti_buffer_id_t id, upti_record_header_t **headers, size_t n,
                      void *data, uint64_t drops)
{
    (void)ctx, (void)id, (void)data;
    CHECK_EQ_U64(drops, 0);
    for (size_t i = 0; i < n; i++) {
        const upti_buffer_tracing_api_record_t *r = headers[i]->payload;
        if (headers[i]->kind == UPTI_TRACING_KIND_OPENCL_API && r->operation >= OP_OUTER &&
            r->operation <= OP_EXT) {
            g_rec[r->operation - 1] = *r;
            g_records++;
        }
    }
}

static int init(upti_client_finalize_t fin, void *tool_data)
{
    (void)fin, (void)tool_data;
    CHECK_STATUS(upti_create_context(&g_ctx), UPTI_STATUS_SUCCESS);
    upti_buffer_options_t o = {.size = sizeof o, .policy = UPTI_BUFFER_POLICY_LOSSLESS, .callback = on_buffer};
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &o, &g_buffer), UPTI_STATUS_SUCCESS);
    const uint32_t ops[] = {OP_OUTER, OP_INNER, OP_EXT};
    CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_OPENCL_API, ops, 3, g_buffer),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(g_ctx), UPTI_STATUS_SUCCESS);
    return 0;
}
TEST_CONFIGURE(configure, init, NULL)

UNIT_TEST(capture_current)
{
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    const upti_operation_plan_t *const *plans = NULL;
    CHECK_STATUS(upti_runtime_get_operation_plans(UPTI_TRACING_KIND_OPENCL_API, &plans, NULL), UPTI_STATUS_SUCCESS);
    const upti_operation_plan_t *outer_plan = upti_runtime_plan(plans, OP_OUTER);
    const upti_operation_plan_t *inner_plan = upti_runtime_plan(plans, OP_INNER);
    CHECK(outer_plan != NULL && inner_plan != NULL);
    upti_thread_id_t tid = 0;
    CHECK_STATUS(upti_get_thread_id(&tid), UPTI_STATUS_SUCCESS);

    /* No call in progress: the time now, no internal id. */
    upti_runtime_correlation_t c;
    upti_timestamp_t before = 0, at = 0, after = 0;
    CHECK_STATUS(upti_get_timestamp(&before), UPTI_STATUS_SUCCESS);
    upti_runtime_capture_current(&c, &at);
    CHECK_STATUS(upti_get_timestamp(&after), UPTI_STATUS_SUCCESS);
    CHECK(before <= at && at <= after);
    CHECK_EQ_U64(c.internal, 0);
    CHECK_EQ_U64(c.num_external, 0);
    CHECK_EQ_U64(c.thread_id, tid);

    /* In a call, and in a call nested in it: the innermost call's id and start. */
    int payload = 0;
    upti_runtime_call_t outer, inner;
    upti_runtime_call_enter(&outer, outer_plan, UPTI_TRACING_KIND_OPENCL_API, OP_OUTER, &payload);
    upti_runtime_correlation_t c_outer, c_inner, c_after;
    upti_timestamp_t t_outer = 0, t_inner = 0, t_after = 0;
    upti_runtime_capture_current(&c_outer, &t_outer);
    upti_runtime_call_enter(&inner, inner_plan, UPTI_TRACING_KIND_OPENCL_API, OP_INNER, &payload);
    upti_runtime_capture_current(&c_inner, &t_inner);
    upti_runtime_call_exit(&inner);
    upti_runtime_capture_current(&c_after, &t_after); /* the outer call again */
    upti_runtime_call_exit(&outer);

    /* An external id pushed: captured with the call's id and start. */
    const upti_operation_plan_t *ext_plan = upti_runtime_plan(plans, OP_EXT);
    CHECK(ext_plan != NULL);
    CHECK_STATUS(upti_push_external_correlation_id(g_ctx, (upti_user_data_t){.value = 77}), UPTI_STATUS_SUCCESS);
    upti_runtime_call_t ext;
    upti_runtime_correlation_t c_ext;
    upti_timestamp_t t_ext = 0;
    upti_runtime_call_enter(&ext, ext_plan, UPTI_TRACING_KIND_OPENCL_API, OP_EXT, &payload);
    upti_runtime_capture_current(&c_ext, &t_ext);
    upti_runtime_call_exit(&ext);
    upti_user_data_t popped = {0};
    CHECK_STATUS(upti_pop_external_correlation_id(g_ctx, &popped), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(c_ext.internal, g_rec[2].correlation_id.internal);
    CHECK_EQ_U64(c_ext.num_external, 1);
    CHECK_EQ_U64(c_ext.external[0].value, 77);
    CHECK_EQ_U64(t_ext, g_rec[2].start_timestamp);

    CHECK_EQ_U64(g_records, 3);
    CHECK(c_outer.internal != 0);
    CHECK(c_inner.internal != 0 && c_inner.internal != c_outer.internal);
    CHECK_EQ_U64(c_outer.internal, g_rec[0].correlation_id.internal);
    CHECK_EQ_U64(c_inner.internal, g_rec[1].correlation_id.internal);
    CHECK_EQ_U64(c_after.internal, c_outer.internal);
    CHECK_EQ_U64(c_inner.thread_id, tid);
    CHECK_EQ_U64(t_outer, g_rec[0].start_timestamp);
    CHECK_EQ_U64(t_after, g_rec[0].start_timestamp);
    CHECK_EQ_U64(t_inner, g_rec[1].start_timestamp);
    CHECK(g_rec[0].start_timestamp <= g_rec[1].start_timestamp);
    return test_result("capture_current");
}
