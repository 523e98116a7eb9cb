/* SPDX-License-Identifier: MIT */
/* Test tool for the Vulkan layer's subscriber domains (callback.h;
 * layer_tool.h). Subscribes to every DRIVER_* domain in initialize and writes one
 * line per notification to $UPTI_VK_TEST_OUT (check_vulkan.py, case
 * subscriber):
 *
 *   SUB DOMAIN PHASE corr=C api=NAME ops=N [kind=K name=N bytes=B
 *       submit=S start=T end=E op_id=I] queue=Q ctx=X dev=D rc=R tid=T
 */
#include <upti/upti.h>
#include <upti/vulkan.h>

#include "layer_tool.h"

#include <inttypes.h>

static void on_event(upti_callback_domain_t domain, uint32_t api_group, uint32_t api_id, void *backend_context,
                     const void *cb_data, void *user_data, void **instance)
{
    (void)backend_context, (void)user_data, (void)instance;
    const upti_callback_gpu_op_data_t *d = cb_data;
    const char *api = "-";
    if (api_id != 0)
        upti_get_tracing_operation_name((upti_tracing_kind_t)api_group, api_id, &api);
    const char *dom = upti_get_callback_domain_name(domain), *phase = upti_get_callback_phase_kind_name(d->phase);
    upti_thread_id_t tid = 0;
    upti_get_thread_id(&tid);
    char op[512] = "";
    if (d->operation_count == 1 && d->operation_details != NULL) {
        const upti_gpu_op_details_t *o = d->operation_details;
        snprintf(op, sizeof op,
                 " kind=%d name=%s bytes=%" PRIu64 " submit=%" PRIu64 " start=%" PRIu64 " end=%" PRIu64
                 " op_id=%" PRIx64,
                 (int)o->kind, o->name != NULL ? o->name : "-", o->bytes, o->submit_timestamp, o->start_timestamp,
                 o->end_timestamp, o->operation_id);
    }
    pthread_mutex_lock(&g_lock);
    if (g_out != NULL)
        fprintf(g_out,
                "SUB %s %s corr=%" PRIu64 " api=%s ops=%u%s queue=%" PRIx64 " ctx=%" PRIx64 " dev=%" PRIx64
                " rc=%d tid=%" PRIu64 "\n",
                dom, phase, d->correlation_id, api, d->operation_count, op, d->queue_handle, d->context_handle,
                d->device_handle, (int)d->return_code, tid);
    pthread_mutex_unlock(&g_lock);
}

static int initialize(void)
{
    upti_callback_subscriber_t sub;
    if (upti_callback_subscribe(&sub, on_event, NULL) != UPTI_STATUS_SUCCESS)
        return 1;
    for (int d = UPTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED; d <= UPTI_CB_DOMAIN_DRIVER_API; d++)
        if (upti_callback_enable_domain(sub, (upti_callback_domain_t)d, 1, 1) != UPTI_STATUS_SUCCESS)
            return 1;
    return 0;
}

const layer_tool_t layer_tool = {
    .out_variable = "UPTI_VK_TEST_OUT", .client_name = "vk-sub-test",
    .api_kind = UPTI_TRACING_KIND_VULKAN_API, .initialize = initialize,
};
