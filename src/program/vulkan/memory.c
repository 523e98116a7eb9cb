/* SPDX-License-Identifier: MIT */
/* Device memory of Vulkan programs: MEMORY_ALLOCATION records for
 * vkAllocateMemory (ALLOCATE) and vkFreeMemory (FREE, with the size it had). */
#include "devtime.h"

#include <upti/buffer_tracing.h>
#include <upti/names.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const upti_operation_plan_t *const *uvk_alloc_plans;

/* Live allocations: handle -> size (for FREE records). */
typedef struct allocation_t {
    VkDeviceMemory memory;
    uint64_t bytes;
    uint32_t type_index;
} allocation_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uvk_handle_map_t g_live; /* allocation_t, by VkDeviceMemory */

static int wanted(uint32_t op)
{
    const upti_operation_plan_t *const *plans = __atomic_load_n(&uvk_alloc_plans, __ATOMIC_ACQUIRE);
    return plans != NULL && upti_runtime_plan(plans, op) != NULL;
}

static void emit(uint32_t op, uvk_object_t *dev, VkDeviceMemory memory, uint64_t bytes, uint32_t type_index)
{
    upti_buffer_tracing_memory_allocation_record_t r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    upti_get_timestamp(&r.timestamp);
    r.agent_id = dev->dt.agent;
    r.runtime_context = (uint64_t)(uintptr_t)dev->device;
    r.type = UPTI_MEMORY_ALLOCATION_TYPE_DEVICE_MEMORY;
    r.handle = (uint64_t)memory;
    r.bytes = bytes;
    r.flags = type_index; /* the memory type index */
    uvk_emit(UPTI_TRACING_KIND_MEMORY_ALLOCATION, op, UPTI_CALLBACK_PHASE_NONE, NULL, &r, 0);
}

static uvk_object_t *object_of(const upti_vulkan_dispatch_t *n)
{
    return (uvk_object_t *)((char *)n - offsetof(uvk_object_t, next));
}

VkResult uvk_dt_vkAllocateMemory(const upti_vulkan_dispatch_t *n, VkDevice device, const VkMemoryAllocateInfo *info,
                                 const VkAllocationCallbacks *alloc, VkDeviceMemory *memory)
{
    VkResult r = n->vkAllocateMemory(device, info, alloc, memory);
    if (r != VK_SUCCESS || !uvk_tracing)
        return r;
    allocation_t *a = malloc(sizeof *a);
    if (a != NULL) {
        a->memory = *memory;
        a->bytes = info->allocationSize;
        a->type_index = info->memoryTypeIndex;
        /* Not kept: its free is then not recorded. */
        uvk_handle_map_keep(&g_live, &g_lock, (uint64_t)a->memory, a);
    }
    if (wanted(UPTI_MEMORY_ALLOCATION_ALLOCATE))
        emit(UPTI_MEMORY_ALLOCATION_ALLOCATE, object_of(n), *memory, info->allocationSize, info->memoryTypeIndex);
    return r;
}

void uvk_dt_vkFreeMemory(const upti_vulkan_dispatch_t *n, VkDevice device, VkDeviceMemory memory,
                         const VkAllocationCallbacks *alloc)
{
    allocation_t *found = NULL;
    if (uvk_tracing && memory != VK_NULL_HANDLE) {
        pthread_mutex_lock(&g_lock);
        found = uvk_handle_map_remove(&g_live, (uint64_t)memory);
        pthread_mutex_unlock(&g_lock);
    }
    n->vkFreeMemory(device, memory, alloc);
    if (found != NULL && wanted(UPTI_MEMORY_ALLOCATION_FREE))
        emit(UPTI_MEMORY_ALLOCATION_FREE, object_of(n), memory, found->bytes, found->type_index);
    free(found);
}
