/* SPDX-License-Identifier: MIT */
/* The layer's timestamp query pools (command_buffers.c records into them),
 * where their times are read from, and the program's command pools' queue
 * families, which decide how.
 *
 * Reading, on a CPU device (lavapipe): each query pool has a host-visible
 * buffer of the layer's, mapped once; at vkEndCommandBuffer the layer
 * records a vkCmdCopyQueryPoolResults of the recording's queries into it
 * (waiting for them) and a barrier that makes the copy visible to the host.
 * A finished submission's times are then read from memory, without a driver
 * call (submissions.c): lavapipe's vkGetQueryPoolResults waits for the
 * device to be idle (a round trip through its queue thread, some 20 us on a
 * loaded machine, which also slowed the program's next vkQueueSubmit). On a
 * GPU, where vkGetQueryPoolResults reads memory and a copy that waits for
 * the queries would hold the queue at the end of each command buffer, and
 * for a pool whose buffer cannot be made, the times are read with
 * vkGetQueryPoolResults.
 *
 * A queue family without graphics or compute can neither reset nor copy
 * queries in a command buffer: the command buffers of its pools have their
 * queries reset from the host in
 * vkQueueSubmit (hostQueryReset, which the layer enables where the device
 * has it; without it their operations are untimed, said once) and read
 * with vkGetQueryPoolResults. A queue family whose timestampValidBits is 0
 * takes no timestamps at all: its command buffers' operations are traced
 * without device times (said once). The layer follows vkCreateCommandPool
 * for that; a command buffer of a pool it did not see is taken to be of a
 * graphics or compute family.
 *
 * UPTI_VK_QUERIES (for testing) forces one way on every command buffer:
 * copy (into buffers, as on a CPU device), read (vkGetQueryPoolResults,
 * as on a GPU) or host (reset from the host, as for a family without
 * graphics or compute).
 */
#include "devtime.h"

#include <stdlib.h>
#include <string.h>

/* UPTI_VK_QUERIES: UPTI_ENV_VK_QUERIES_AUTO (the default), _COPY, _READ or _HOST. Read once. */
static int queries_mode(void)
{
    static _Atomic int64_t mode = -1;
    return (int)uvk_env_once(UPTI_ENV_VK_QUERIES, &mode);
}

int uvk_timestamps_paired(void)
{
    static _Atomic int64_t mode = -1;
    return uvk_env_once(UPTI_ENV_VK_TIMESTAMPS, &mode) == UPTI_ENV_VK_TIMESTAMPS_PAIRS;
}

/* A host-visible, coherent memory type among bits (cached if one is); UINT32_MAX if none. */
static uint32_t results_memory_type(const VkPhysicalDeviceMemoryProperties *m, uint32_t bits)
{
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t found = UINT32_MAX;
    for (uint32_t i = 0; i < m->memoryTypeCount && i < 32; i++) {
        VkMemoryPropertyFlags f = m->memoryTypes[i].propertyFlags;
        if ((bits & (1u << i)) == 0 || (f & want) != want)
            continue;
        if ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0)
            return i;
        if (found == UINT32_MAX)
            found = i;
    }
    return found;
}

/* Makes q's results buffer, mapped; leaves q->buffer VK_NULL_HANDLE if it cannot. */
static void qpool_results_create(uvk_object_t *dev, uvk_qpool_t *q)
{
    const upti_vulkan_dispatch_t *n = &dev->next;
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = UVK_POOL_QUERIES * sizeof(uint64_t),
                             .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void *mapped = NULL;
    if (n->vkCreateBuffer(dev->device, &bi, NULL, &buffer) != VK_SUCCESS)
        return;
    VkMemoryRequirements req;
    n->vkGetBufferMemoryRequirements(dev->device, buffer, &req);
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                               .memoryTypeIndex = results_memory_type(&dev->dt.memory, req.memoryTypeBits)};
    if (ai.memoryTypeIndex == UINT32_MAX || n->vkAllocateMemory(dev->device, &ai, NULL, &memory) != VK_SUCCESS ||
        n->vkBindBufferMemory(dev->device, buffer, memory, 0) != VK_SUCCESS ||
        n->vkMapMemory(dev->device, memory, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS) {
        n->vkDestroyBuffer(dev->device, buffer, NULL);
        if (memory != VK_NULL_HANDLE)
            n->vkFreeMemory(dev->device, memory, NULL);
        return;
    }
    q->buffer = buffer;
    q->memory = memory;
    q->results = mapped;
}

void uvk_qpool_destroy(uvk_object_t *dev, uvk_qpool_t *q)
{
    const upti_vulkan_dispatch_t *n = &dev->next;
    n->vkDestroyQueryPool(dev->device, q->pool, NULL);
    if (q->buffer != VK_NULL_HANDLE)
        n->vkDestroyBuffer(dev->device, q->buffer, NULL);
    if (q->memory != VK_NULL_HANDLE)
        n->vkFreeMemory(dev->device, q->memory, NULL); /* unmapped with it */
}

uvk_qpool_t *uvk_qpool_add(const upti_vulkan_dispatch_t *n, uvk_cb_t *s, uint32_t k)
{
    uvk_qpool_t *grown = realloc(s->pools, (k + 1) * sizeof *grown);
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = UVK_POOL_QUERIES};
    VkQueryPool pool = VK_NULL_HANDLE;
    if (grown != NULL)
        s->pools = grown;
    if (grown == NULL || n->vkCreateQueryPool(s->dev->device, &qi, NULL, &pool) != VK_SUCCESS) {
        static _Atomic int warned;
        if (atomic_exchange(&warned, 1) == 0)
            upti_runtime_warn("vulkan: the layer cannot create a query pool; operations recorded past its "
                              "last one are traced without device times");
        return NULL;
    }
    uvk_qpool_t *q = &s->pools[s->npools++];
    memset(q, 0, sizeof *q);
    q->pool = pool;
    int mode = queries_mode();
    if (!s->host_reset && (mode == UPTI_ENV_VK_QUERIES_COPY || (mode == UPTI_ENV_VK_QUERIES_AUTO && s->dev->dt.cpu)))
        qpool_results_create(s->dev, q);
    return q;
}

/* The program's command pools and their queue families (under uvk_dt_lock). */
typedef struct cmd_pool_t {
    VkCommandPool pool;
    uvk_object_t *dev;
    uint32_t family;
    struct cmd_pool_t *next;
} cmd_pool_t;
static cmd_pool_t *cmd_pools;

void uvk_cmd_pool_forget_locked(uvk_object_t *dev, VkCommandPool pool)
{
    for (cmd_pool_t **pp = &cmd_pools; *pp != NULL; pp = &(*pp)->next)
        if ((*pp)->pool == pool && (*pp)->dev == dev) {
            cmd_pool_t *gone = *pp;
            *pp = gone->next;
            free(gone);
            return;
        }
}

void uvk_cmd_pools_forget_locked(uvk_object_t *dev)
{
    for (cmd_pool_t **pp = &cmd_pools; *pp != NULL;) {
        cmd_pool_t *p = *pp;
        if (p->dev == dev) {
            *pp = p->next;
            free(p);
        } else {
            pp = &p->next;
        }
    }
}

VkResult uvk_dt_vkCreateCommandPool(const upti_vulkan_dispatch_t *n, VkDevice device,
                                    const VkCommandPoolCreateInfo *info, const VkAllocationCallbacks *alloc,
                                    VkCommandPool *pool)
{
    VkResult r = n->vkCreateCommandPool(device, info, alloc, pool);
    /* A pool not followed (memory short): its command buffers are taken to be of a graphics or compute family. */
    cmd_pool_t *p = uvk_created(r, sizeof *p);
    if (p != NULL) {
        pthread_mutex_lock(&uvk_dt_lock);
        *p = (cmd_pool_t){*pool, uvk_object_of(n), info->queueFamilyIndex, cmd_pools};
        cmd_pools = p;
        pthread_mutex_unlock(&uvk_dt_lock);
    }
    return r;
}

uvk_family_queries_t uvk_cmd_pool_queries_locked(uvk_object_t *dev, VkCommandPool pool)
{
    uint32_t family = UINT32_MAX;
    for (const cmd_pool_t *p = cmd_pools; p != NULL && family == UINT32_MAX; p = p->next)
        if (p->pool == pool && p->dev == dev)
            family = p->family;
    return uvk_family_queries(dev->dt.family_flags, dev->dt.family_valid_bits, dev->dt.nfamilies, family,
                              queries_mode() == UPTI_ENV_VK_QUERIES_HOST);
}
