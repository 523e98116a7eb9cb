/* SPDX-License-Identifier: MIT */
/* VK_EXT_debug_utils labels as marker ranges (MARKER_API RANGE_START /
 * RANGE_STOP records, message = the label's name, range ids of their own).
 *
 * Queue labels (vkQueueBegin/EndDebugUtilsLabelEXT) are host events: a
 * range from the begin call to the end call on the host clock, recorded at
 * once. Command-buffer labels (vkCmdBegin/EndDebugUtilsLabelEXT) happen on
 * the device: each is an operation of the command buffer (command_buffers.c)
 * with a timestamp written after what precedes it (BOTTOM_OF_PIPE), so every
 * execution of the command buffer gives a range on the device's times,
 * mapped onto UPTI's clock like dispatches (submissions.c), on the thread
 * that recorded it. Ranges nest per queue: a begin opens one, an end closes
 * the innermost open one of that queue (labels may span command buffers).
 * The executions of a command buffer the program named
 * (vkSetDebugUtilsObjectNameEXT) are ranges too (submissions.c), on a stack
 * of their own.
 */
#include "devtime.h"

#include <stdlib.h>
#include <string.h>

const upti_operation_plan_t *const *uvk_marker_plans;

/* Range ids of their own: uptx and NVTX count from 1. */
static _Atomic uint64_t g_next_range = 0x5600000000000000ull;

#define MAX_QUEUES 64
#define MAX_DEPTH 32
typedef struct queue_stack_t {
    VkQueue queue;
    int device_side; /* queue labels (0), command-buffer labels (1), named command buffers (2) */
    uint32_t depth;
    uint64_t ids[MAX_DEPTH];
} queue_stack_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static queue_stack_t g_stacks[MAX_QUEUES];
static uint32_t g_nstacks;

/* The range id a RANGE_START opens or a RANGE_STOP closes on queue (0: none open). */
static uint64_t range_id(VkQueue queue, int device_side, uint32_t op)
{
    uint64_t id = 0;
    pthread_mutex_lock(&g_lock);
    queue_stack_t *s = NULL;
    for (uint32_t i = 0; i < g_nstacks && s == NULL; i++)
        if (g_stacks[i].queue == queue && g_stacks[i].device_side == device_side)
            s = &g_stacks[i];
    if (s == NULL && g_nstacks < MAX_QUEUES) {
        s = &g_stacks[g_nstacks++];
        s->queue = queue;
        s->device_side = device_side;
        s->depth = 0;
    }
    if (s != NULL && op == UPTI_MARKER_API_RANGE_START) {
        id = atomic_fetch_add(&g_next_range, 1);
        if (s->depth < MAX_DEPTH)
            s->ids[s->depth] = id;
        s->depth++; /* deeper than MAX_DEPTH: counted, its stop finds no id */
    } else if (s != NULL && s->depth > 0) {
        s->depth--;
        id = s->depth < MAX_DEPTH ? s->ids[s->depth] : 0;
    }
    pthread_mutex_unlock(&g_lock);
    return id;
}

void uvk_label_emit(VkQueue queue, int device_side, uint32_t op, const char *name, upti_timestamp_t t,
                    const upti_runtime_correlation_t *corr)
{
    uint64_t id = range_id(queue, device_side, op);
    if (id == 0)
        return; /* an end without a begin */
    upti_buffer_tracing_marker_api_record_t r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    r.start_timestamp = t;
    r.end_timestamp = t;
    r.range_id = id;
    r.message = name;
    uvk_emit(UPTI_TRACING_KIND_MARKER_API, op, UPTI_CALLBACK_PHASE_NONE, corr, &r,
             offsetof(upti_buffer_tracing_marker_api_record_t, message));
}

/* --- command-buffer labels: operations of the command buffer --- */

static void cmd_label(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t op, const char *name)
{
    uvk_slot_t slot;
    uvk_op_begin(&slot, n, cb, UPTI_TRACING_KIND_MARKER_API, op, NULL, NULL, UPTI_MEMORY_DIRECTION_NONE,
                                   0, name);
    uvk_op_end(n, cb, &slot);
}

void uvk_dt_vkCmdBeginDebugUtilsLabelEXT(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                                         const VkDebugUtilsLabelEXT *label)
{
    n->vkCmdBeginDebugUtilsLabelEXT(cb, label);
    cmd_label(n, cb, UPTI_MARKER_API_RANGE_START, label != NULL && label->pLabelName != NULL ? label->pLabelName : "");
}

void uvk_dt_vkCmdEndDebugUtilsLabelEXT(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb)
{
    cmd_label(n, cb, UPTI_MARKER_API_RANGE_STOP, "");
    n->vkCmdEndDebugUtilsLabelEXT(cb);
}

/* --- queue labels: host events --- */

static int markers_wanted(uint32_t op)
{
    const upti_operation_plan_t *const *plans = __atomic_load_n(&uvk_marker_plans, __ATOMIC_ACQUIRE);
    return plans != NULL && upti_runtime_plan(plans, op) != NULL;
}

void uvk_dt_vkQueueBeginDebugUtilsLabelEXT(const upti_vulkan_dispatch_t *n, VkQueue queue,
                                           const VkDebugUtilsLabelEXT *label)
{
    if (markers_wanted(UPTI_MARKER_API_RANGE_START))
        uvk_label_emit(queue, 0, UPTI_MARKER_API_RANGE_START,
                       label != NULL && label->pLabelName != NULL ? label->pLabelName : "", uvk_now(), NULL);
    n->vkQueueBeginDebugUtilsLabelEXT(queue, label);
}

void uvk_dt_vkQueueEndDebugUtilsLabelEXT(const upti_vulkan_dispatch_t *n, VkQueue queue)
{
    n->vkQueueEndDebugUtilsLabelEXT(queue);
    if (markers_wanted(UPTI_MARKER_API_RANGE_STOP))
        uvk_label_emit(queue, 0, UPTI_MARKER_API_RANGE_STOP, "", uvk_now(), NULL);
}
