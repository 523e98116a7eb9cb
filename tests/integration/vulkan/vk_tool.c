/* SPDX-License-Identifier: MIT */
/* Test tool for the Vulkan layer (layer_tool.h). Writes one line per
 * record or callback it sees to $UPTI_VK_TEST_OUT; check_vulkan.py asserts
 * on them. Built twice: plain, and with CHAIN (replaces vkCmdDispatch through
 * the intercept table and counts the calls it forwards).
 *
 *   API NAME corr=C tid=T start=S end=E          buffer record (VULKAN_API)
 *   CB ENTER|EXIT NAME corr=C tid=T [details]    callback, in call order
 *   KERNEL OP name=N kid=K corr=C agent=A queue=Q groups=X,Y,Z queued=.. submit=.. start=.. end=..
 *   COPY OP bytes=B dir=D src=A dst=A corr=C tid=T queue=Q queued=.. submit=.. start=.. end=..
 *   ALLOC OP type=T bytes=B handle=H corr=C agent=A
 *   CODE OP phase=LOAD|UNLOAD module=M kernel=K name=N    CODE_OBJECT
 *   MARK OP range=R ts=T corr=C tid=T msg=M      MARKER_API (labels)
 *   AGENT type=N name=NAME                       agents of runtime "vulkan"
 *   META KEY=VALUE                               the runtimes' metadata, at finalize
 *   TABLE version=V entries=N                    the registered table (CHAIN)
 *   CHAIN forwarded=N, FINALIZE
 */
#include <upti/upti.h>
#include <upti/vulkan.h>

#include "layer_tool.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static bool write_record(const upti_record_prefix_t *p, const char *op)
{
    if (p->kind == UPTI_TRACING_KIND_KERNEL_DISPATCH) {
        const upti_buffer_tracing_kernel_dispatch_record_t *r = (const void *)p;
        fprintf(g_out,
                "KERNEL %s name=%s kid=%" PRIx64 " corr=%" PRIu64 " tid=%" PRIu64 " agent=%" PRIu64
                " queue=%" PRIx64
                " groups=%" PRIu64 ",%" PRIu64 ",%" PRIu64 " queued=%" PRIu64 " submit=%" PRIu64
                " start=%" PRIu64 " end=%" PRIu64 "\n",
                op, r->kernel_name, r->kernel_id, r->correlation_id.internal, r->thread_id,
                r->agent_id.handle, r->queue_id, r->global_size[0], r->global_size[1], r->global_size[2],
                r->queued_timestamp, r->submit_timestamp, r->start_timestamp, r->end_timestamp);
    } else if (p->kind == UPTI_TRACING_KIND_MEMORY_COPY) {
        const upti_buffer_tracing_memory_copy_record_t *r = (const void *)p;
        fprintf(g_out,
                "COPY %s bytes=%" PRIu64 " dir=%d src=%" PRIu64 " dst=%" PRIu64 " corr=%" PRIu64 " tid=%" PRIu64
                " queue=%" PRIx64 " queued=%" PRIu64 " submit=%" PRIu64 " start=%" PRIu64 " end=%" PRIu64 "\n",
                op, r->bytes, (int)r->direction, r->src_agent_id.handle, r->dst_agent_id.handle,
                r->correlation_id.internal, r->thread_id, r->queue_id, r->queued_timestamp, r->submit_timestamp,
                r->start_timestamp, r->end_timestamp);
    } else if (p->kind == UPTI_TRACING_KIND_MEMORY_ALLOCATION) {
        const upti_buffer_tracing_memory_allocation_record_t *r = (const void *)p;
        fprintf(g_out, "ALLOC %s type=%d bytes=%" PRIu64 " handle=%" PRIx64 " corr=%" PRIu64 " agent=%" PRIu64 "\n",
                op, (int)r->type, r->bytes, r->handle, r->correlation_id.internal, r->agent_id.handle);
    } else if (p->kind == UPTI_TRACING_KIND_CODE_OBJECT) {
        const upti_buffer_tracing_code_object_record_t *r = (const void *)p;
        fprintf(g_out, "CODE %s phase=%s module=%" PRIx64 " kernel=%" PRIx64 " name=%s\n", op,
                r->phase == UPTI_CALLBACK_PHASE_LOAD ? "LOAD" : "UNLOAD", r->code_object_id, r->kernel_id,
                r->name);
    } else if (p->kind == UPTI_TRACING_KIND_MARKER_API) {
        const upti_buffer_tracing_marker_api_record_t *r = (const void *)p;
        fprintf(g_out, "MARK %s range=%" PRIx64 " ts=%" PRIu64 " corr=%" PRIu64 " tid=%" PRIu64 " msg=%s\n", op,
                r->range_id, r->start_timestamp, r->correlation_id.internal, r->thread_id,
                r->message != NULL && r->message[0] != '\0' ? r->message : "-");
    } else {
        return false;
    }
    return true;
}

/* Every call, at ENTER and EXIT, with a few arguments from the payload. */
static void api_cb(upti_callback_tracing_record_t rec, upti_user_data_t *user, void *data)
{
    (void)user, (void)data;
    const upti_callback_tracing_vulkan_api_data_t *d = rec.payload;
    char details[256] = "";
    int exit_phase = rec.phase == UPTI_CALLBACK_PHASE_EXIT;
    switch (rec.operation) {
    case UPTI_VULKAN_API_vkCmdDispatch:
        snprintf(details, sizeof details, " groups=%u,%u,%u", d->args.vkCmdDispatch.groupCountX,
                 d->args.vkCmdDispatch.groupCountY, d->args.vkCmdDispatch.groupCountZ);
        break;
    case UPTI_VULKAN_API_vkQueueSubmit:
        snprintf(details, sizeof details, " submits=%u cbs=%u", d->args.vkQueueSubmit.submitCount,
                 d->args.vkQueueSubmit.submitCount ? d->args.vkQueueSubmit.pSubmits[0].commandBufferCount : 0);
        if (exit_phase) {
            size_t n = strlen(details);
            snprintf(details + n, sizeof details - n, " ret=%d", (int)d->retval.VkResult_retval);
        }
        break;
    case UPTI_VULKAN_API_vkCreateDevice:
        if (exit_phase)
            snprintf(details, sizeof details, " ret=%d device=%s", (int)d->retval.VkResult_retval,
                     *d->args.vkCreateDevice.pDevice != VK_NULL_HANDLE ? "set" : "null");
        break;
    default:
        break;
    }
    upti_thread_id_t tid = 0;
    upti_get_thread_id(&tid);
    pthread_mutex_lock(&g_lock);
    if (g_out != NULL)
        fprintf(g_out, "CB %s %s corr=%" PRIu64 " tid=%" PRIu64 "%s\n", exit_phase ? "EXIT" : "ENTER",
                op_name(rec.kind, rec.operation), rec.correlation_id.internal, tid, details);
    pthread_mutex_unlock(&g_lock);
}

static upti_status_t agents_cb(const upti_agent_t **agents, size_t n, void *data)
{
    (void)data;
    for (size_t i = 0; i < n; i++)
        if (agents[i]->runtime != NULL && strcmp(agents[i]->runtime, "vulkan") == 0)
            fprintf(g_out, "AGENT type=%d handle=%s name=%s\n", (int)agents[i]->type,
                    agents[i]->runtime_handle != 0 ? "yes" : "no", agents[i]->name);
    return UPTI_STATUS_SUCCESS;
}

#ifdef CHAIN
static PFN_vkCmdDispatch g_saved;

static VKAPI_ATTR void VKAPI_CALL my_dispatch(VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z)
{
    __atomic_add_fetch(&g_forwarded, 1, __ATOMIC_RELAXED);
    g_saved(cb, x, y, z);
}

void layer_tool_on_table(upti_intercept_table_t type, uint64_t version, uint64_t instance, void **tables,
                         uint64_t num_tables, void *data)
{
    (void)instance, (void)data;
    if (type != UPTI_INTERCEPT_TABLE_VULKAN || num_tables < 1)
        return;
    upti_vulkan_dispatch_t *t = tables[0];
    fprintf(g_out, "TABLE version=%" PRIu64 " entries=%zu\n", version, sizeof *t / sizeof(void *));
    g_saved = t->vkCmdDispatch;
    t->vkCmdDispatch = my_dispatch;
}
#endif

static void configure_kinds(upti_context_id_t ctx, upti_buffer_id_t buf)
{
    upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_VULKAN_API, NULL, 0, buf);
    if (getenv("UPTI_VK_TEST_NO_KERNELS") == NULL) {
        /* UPTI_VK_TEST_NO_DISPATCHES: the rest, dispatches recorded untimed between timed copies. */
        if (getenv("UPTI_VK_TEST_NO_DISPATCHES") == NULL)
            upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_KERNEL_DISPATCH, NULL, 0, buf);
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MEMORY_COPY, NULL, 0, buf);
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MEMORY_ALLOCATION, NULL, 0, buf);
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_CODE_OBJECT, NULL, 0, buf);
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, buf);
    }
    upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_VULKAN_API, NULL, 0, api_cb, NULL);
}

static void metadata_cb(const char *key, const char *value, void *data)
{
    (void)data;
    fprintf(g_out, "META %s=%s\n", key, value);
}

static void finalize(void)
{
    upti_query_available_agents(agents_cb, NULL);
    upti_query_runtime_metadata(metadata_cb, NULL);
}

const layer_tool_t layer_tool = {
    .out_variable = "UPTI_VK_TEST_OUT", .client_name = "vk-test",
    .api_kind = UPTI_TRACING_KIND_VULKAN_API, .table = UPTI_INTERCEPT_TABLE_VULKAN,
    .write_record = write_record, .configure = configure_kinds, .finalize = finalize,
};
