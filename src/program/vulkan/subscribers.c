/* SPDX-License-Identifier: MIT */
/* UPTI's subscriber domains (callback.h) on Vulkan.
 *
 * The layer is a subscriber provider. When the enabled domains change it
 * asks for the VULKAN_API callback service of the subscribers' internal
 * context, for the commands some domain needs: their calls then get
 * correlation ids (those of buffer records) and ENTER/EXIT callbacks here:
 *
 *   VULKAN_API ENTER/EXIT   DRIVER_API (every command), HOST_SYNCHRONIZATION
 *                           (vkWaitForFences, vkQueueWaitIdle,
 *                           vkDeviceWaitIdle), CONTEXT_CREATED (vkCreateDevice
 *                           EXIT: context = the VkDevice, device = the
 *                           VkPhysicalDevice)
 *
 * The other domains come from the layer's own paths, not from UPTI's device
 * kinds (those are shared with OpenCL's provider on the same context):
 *
 *   a timed vkCmd* recorded      GPU_OPERATION_APPENDED ENTER/EXIT (command_buffers.c)
 *   each execution submitted     GPU_OPERATION_DISPATCHED (submissions.c, at the submit)
 *   each execution read          GPU_OPERATION_COMPLETED with device times (submissions.c)
 *   shader modules, pipelines    MODULE_LOADED / MODULE_UNLOADED (pipelines.c)
 *
 * One operation's correlation id is its recording vkCmd*'s in all three
 * GPU_OPERATION domains; DISPATCHED and COMPLETED come once per execution,
 * after APPENDED (the recording) and in that order (COMPLETED is read only
 * after the submission that DISPATCHED reported).
 */
#include "subscribers.h"

#include <upti/names.h>

#include <string.h>

static const uint32_t g_none;
const uint32_t *uvk_sub_domains = &g_none;

#define DOM(x) (1u << UPTI_CB_DOMAIN_DRIVER_##x)

/* --- delivery --- */

static upti_callback_gpu_op_data_t op_data(upti_callback_domain_t domain, upti_callback_phase_kind_t phase,
                                           uint64_t corr, uint32_t api_id)
{
    return upti_layer_gpu_op_data(UPTI_TRACING_KIND_VULKAN_API, domain, phase, corr, api_id);
}

/* The command that records an operation of (kind, op) (its core name). */
static uint32_t recording_command(upti_tracing_kind_t kind, uint32_t op)
{
    if (kind == UPTI_TRACING_KIND_KERNEL_DISPATCH)
        return op == UPTI_KERNEL_DISPATCH_VK_DISPATCH_BASE       ? UPTI_VULKAN_API_vkCmdDispatchBase
               : op == UPTI_KERNEL_DISPATCH_VK_DISPATCH_INDIRECT ? UPTI_VULKAN_API_vkCmdDispatchIndirect
                                                                 : UPTI_VULKAN_API_vkCmdDispatch;
    switch (op) {
    case UPTI_MEMORY_COPY_FILL_BUFFER: return UPTI_VULKAN_API_vkCmdFillBuffer;
    case UPTI_MEMORY_COPY_WRITE_BUFFER: return UPTI_VULKAN_API_vkCmdUpdateBuffer;
    case UPTI_MEMORY_COPY_COPY_IMAGE: return UPTI_VULKAN_API_vkCmdCopyImage;
    case UPTI_MEMORY_COPY_COPY_BUFFER_TO_IMAGE: return UPTI_VULKAN_API_vkCmdCopyBufferToImage;
    case UPTI_MEMORY_COPY_COPY_IMAGE_TO_BUFFER: return UPTI_VULKAN_API_vkCmdCopyImageToBuffer;
    case UPTI_MEMORY_COPY_BARRIER: return UPTI_VULKAN_API_vkCmdPipelineBarrier;
    default: return UPTI_VULKAN_API_vkCmdCopyBuffer;
    }
}

void uvk_sub_details(const uvk_op_t *o, upti_gpu_op_details_t *d)
{
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    d->operation = o->op;
    if (o->kind == UPTI_TRACING_KIND_KERNEL_DISPATCH) {
        d->kind = UPTI_GPU_OPERATION_KIND_KERNEL;
        d->operation_id = o->kernel_id;
        d->name = o->name;
        d->work_dim = 3;
        for (int i = 0; i < 3; i++)
            d->global_size[i] = o->groups[i];
    } else {
        d->kind = o->op == UPTI_MEMORY_COPY_FILL_BUFFER ? UPTI_GPU_OPERATION_KIND_MEMORY_FILL
                  : o->op == UPTI_MEMORY_COPY_BARRIER   ? UPTI_GPU_OPERATION_KIND_BARRIER
                                                        : UPTI_GPU_OPERATION_KIND_MEMORY_COPY;
        upti_get_tracing_operation_name(o->kind, o->op, &d->name);
        d->bytes = o->bytes;
    }
}

static __thread void *t_appended[UPTI_MAX_SUBSCRIBERS];

void uvk_sub_appended(const uvk_op_t *o, upti_callback_phase_kind_t phase, VkCommandBuffer cb, VkDevice device)
{
    if (phase == UPTI_CB_PHASE_API_ENTER)
        memset(t_appended, 0, sizeof t_appended);
    upti_gpu_op_details_t details;
    uvk_sub_details(o, &details);
    upti_callback_gpu_op_data_t d = op_data(UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED, phase, o->corr.internal,
                                            recording_command(o->kind, o->op));
    d.queue_handle = (uint64_t)(uintptr_t)cb; /* not on a queue yet: its command buffer */
    d.context_handle = (uint64_t)(uintptr_t)device;
    d.operation_count = 1;
    d.operation_details = &details;
    upti_layer_notify(&d, t_appended);
}

void uvk_sub_device_op(upti_callback_domain_t domain, const uvk_op_t *o, const upti_gpu_op_details_t *details,
                       VkQueue queue, VkDevice device, VkPhysicalDevice phys)
{
    upti_callback_gpu_op_data_t d =
        op_data(domain, UPTI_CB_PHASE_API_EXIT, o->corr.internal, recording_command(o->kind, o->op));
    d.queue_handle = (uint64_t)(uintptr_t)queue;
    d.device_handle = (uint64_t)(uintptr_t)phys;
    d.context_handle = (uint64_t)(uintptr_t)device;
    d.return_code = details->status;
    d.operation_count = 1;
    d.operation_details = details;
    upti_layer_notify(&d, NULL);
}

void uvk_sub_module(upti_callback_domain_t domain, uint32_t api_id, uint32_t operation, VkDevice device,
                    uint64_t id, const char *name)
{
    upti_runtime_correlation_t corr;
    upti_runtime_capture_correlation(NULL, &corr);
    upti_gpu_op_details_t m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    m.kind = UPTI_GPU_OPERATION_KIND_OTHER;
    m.operation = operation; /* CODE_OBJECT LOAD (a shader module) or KERNEL_SYMBOL (a pipeline) */
    m.operation_id = id;
    m.name = name;
    upti_callback_gpu_op_data_t d = op_data(domain, UPTI_CB_PHASE_API_EXIT, corr.internal, api_id);
    d.context_handle = (uint64_t)(uintptr_t)device;
    d.operation_count = 1;
    d.operation_details = &m;
    upti_layer_notify(&d, NULL);
}

/* --- VULKAN_API: DRIVER_API, HOST_SYNCHRONIZATION, CONTEXT_CREATED --- */

static int is_host_sync(uint32_t op)
{
    return op == UPTI_VULKAN_API_vkWaitForFences || op == UPTI_VULKAN_API_vkQueueWaitIdle ||
           op == UPTI_VULKAN_API_vkDeviceWaitIdle;
}

/* The commands that record the layer's timed operations: traced while a GPU_OPERATION domain is on. */
static int records_operation(uint32_t op)
{
    switch (op) {
    case UPTI_VULKAN_API_vkCmdDispatch:
    case UPTI_VULKAN_API_vkCmdDispatchBase:
    case UPTI_VULKAN_API_vkCmdDispatchBaseKHR:
    case UPTI_VULKAN_API_vkCmdDispatchIndirect:
    case UPTI_VULKAN_API_vkCmdCopyBuffer:
    case UPTI_VULKAN_API_vkCmdCopyBuffer2:
    case UPTI_VULKAN_API_vkCmdCopyBuffer2KHR:
    case UPTI_VULKAN_API_vkCmdFillBuffer:
    case UPTI_VULKAN_API_vkCmdUpdateBuffer:
    case UPTI_VULKAN_API_vkCmdCopyImage:
    case UPTI_VULKAN_API_vkCmdCopyBufferToImage:
    case UPTI_VULKAN_API_vkCmdCopyImageToBuffer:
    case UPTI_VULKAN_API_vkCmdCopyImage2:
    case UPTI_VULKAN_API_vkCmdCopyImage2KHR:
    case UPTI_VULKAN_API_vkCmdCopyBufferToImage2:
    case UPTI_VULKAN_API_vkCmdCopyBufferToImage2KHR:
    case UPTI_VULKAN_API_vkCmdCopyImageToBuffer2:
    case UPTI_VULKAN_API_vkCmdCopyImageToBuffer2KHR:
    case UPTI_VULKAN_API_vkCmdPipelineBarrier:
        return 1;
    default:
        return 0;
    }
}

static int is_module_call(uint32_t op)
{
    return op == UPTI_VULKAN_API_vkCreateShaderModule || op == UPTI_VULKAN_API_vkDestroyShaderModule ||
           op == UPTI_VULKAN_API_vkCreateComputePipelines || op == UPTI_VULKAN_API_vkDestroyPipeline;
}

#define MAX_DEPTH 8
enum { SLOT_API, SLOT_SYNC, SLOTS };
static __thread void *t_instance[MAX_DEPTH][SLOTS][UPTI_MAX_SUBSCRIBERS];
static __thread int t_depth;

/* The queue or device handle a command is called on, and the call's VkResult. */
static void call_handles(uint32_t op, const upti_callback_tracing_vulkan_api_data_t *pl,
                         upti_callback_gpu_op_data_t *d)
{
    if (op == UPTI_VULKAN_API_vkQueueWaitIdle)
        d->queue_handle = (uint64_t)(uintptr_t)pl->args.vkQueueWaitIdle.queue;
    else if (op == UPTI_VULKAN_API_vkWaitForFences)
        d->context_handle = (uint64_t)(uintptr_t)pl->args.vkWaitForFences.device;
    else if (op == UPTI_VULKAN_API_vkDeviceWaitIdle)
        d->context_handle = (uint64_t)(uintptr_t)pl->args.vkDeviceWaitIdle.device;
}

static void api_cb(upti_callback_tracing_record_t rec, upti_user_data_t *user_data, void *data)
{
    (void)data;
    const upti_callback_tracing_vulkan_api_data_t *pl = rec.payload;
    uint32_t op = rec.operation, word = __atomic_load_n(uvk_sub_domains, __ATOMIC_RELAXED);
    if (op == 0 || op >= UPTI_VULKAN_API_LAST || pl == NULL)
        return;
    uint64_t corr = rec.correlation_id.internal;
    if (rec.phase == UPTI_CALLBACK_PHASE_ENTER) {
        if (t_depth >= MAX_DEPTH) {
            user_data->ptr = NULL;
            return;
        }
        void *(*inst)[UPTI_MAX_SUBSCRIBERS] = t_instance[t_depth++];
        user_data->ptr = inst;
        memset(inst, 0, sizeof t_instance[0]);
        upti_callback_gpu_op_data_t d = op_data(UPTI_CB_DOMAIN_DRIVER_API, UPTI_CB_PHASE_API_ENTER, corr, op);
        call_handles(op, pl, &d);
        if (word & DOM(API))
            upti_layer_notify(&d, inst[SLOT_API]);
        if ((word & DOM(HOST_SYNCHRONIZATION)) && is_host_sync(op)) {
            d.domain = UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION;
            upti_layer_notify(&d, inst[SLOT_SYNC]);
        }
        return;
    }
    if (rec.phase != UPTI_CALLBACK_PHASE_EXIT || user_data->ptr == NULL)
        return;
    void *(*inst)[UPTI_MAX_SUBSCRIBERS] = user_data->ptr;
    upti_callback_gpu_op_data_t d = op_data(UPTI_CB_DOMAIN_DRIVER_API, UPTI_CB_PHASE_API_EXIT, corr, op);
    call_handles(op, pl, &d);
    if (uvk_returns_result[op])
        d.return_code = (int32_t)pl->retval.VkResult_retval;
    if ((word & DOM(HOST_SYNCHRONIZATION)) && is_host_sync(op)) {
        d.domain = UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION;
        upti_layer_notify(&d, inst[SLOT_SYNC]);
    }
    if (op == UPTI_VULKAN_API_vkCreateDevice && (word & DOM(CONTEXT_CREATED)) &&
        pl->retval.VkResult_retval == VK_SUCCESS && pl->args.vkCreateDevice.pDevice != NULL) {
        upti_callback_gpu_op_data_t c = op_data(UPTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED, UPTI_CB_PHASE_API_EXIT, corr, op);
        c.context_handle = (uint64_t)(uintptr_t)*pl->args.vkCreateDevice.pDevice;
        c.device_handle = (uint64_t)(uintptr_t)pl->args.vkCreateDevice.physicalDevice;
        upti_layer_notify(&c, NULL);
    }
    d.domain = UPTI_CB_DOMAIN_DRIVER_API;
    if (word & DOM(API))
        upti_layer_notify(&d, inst[SLOT_API]);
    t_depth--;
}

/* --- the provider --- */

static void domains_changed(uint32_t word, void *data)
{
    (void)data;
    uint8_t api[UPTI_VULKAN_API_LAST];
    int any = 0;
    for (uint32_t op = 0; op < UPTI_VULKAN_API_LAST; op++) {
        int want = op != 0 && (word & DOM(API)) != 0;
        want |= (word & DOM(HOST_SYNCHRONIZATION)) && is_host_sync(op);
        want |= (word & DOM(CONTEXT_CREATED)) && op == UPTI_VULKAN_API_vkCreateDevice;
        /* Correlation ids for the operations and modules the layer reports itself. */
        want |= (word & UVK_SUB_GPU_OPS) && records_operation(op);
        want |= (word & (DOM(MODULE_LOADED) | DOM(MODULE_UNLOADED))) && is_module_call(op);
        api[op] = (uint8_t)want;
        any |= want;
    }
    upti_runtime_subscriber_service(UPTI_TRACING_KIND_VULKAN_API, any ? api : NULL, api_cb, NULL);
}

void uvk_sub_init(void)
{
    uvk_sub_domains = upti_runtime_subscriber_domains();
    if (uvk_sub_domains == NULL)
        uvk_sub_domains = &g_none;
    upti_layer_serve_subscribers("vulkan", domains_changed, "vulkan: cannot serve subscribers (callback.h)");
}
