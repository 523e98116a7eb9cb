/* SPDX-License-Identifier: MIT */
/* A device's clock measured by the layer, for devices without
 * VK_EXT_calibrated_timestamps (device_clock.c).
 *
 * The probe: a command buffer of the layer's, recorded once, that resets a
 * query and writes one timestamp into it (bottom of pipe), submitted with a
 * fence of the layer's on queue 0 of a family the program created (a
 * compute one if it can). A try reads UPTI's clock just before the submit
 * and just after the fence wait returns: the device wrote its timestamp
 * between the two, so the midpoint maps it with an error of at most half
 * the window (plus a tick). A measurement keeps the tightest of a few tries.
 *
 * When: at vkCreateDevice (the program has no queue yet), then again at
 * vkQueueWaitIdle of the probe's queue and vkDeviceWaitIdle, where the
 * program's call makes the queue idle and the layer's use of it safe (the
 * program synchronizes host access to it for the call), at most once per
 * UPTI_VK_CLOCK_PROBE_INTERVAL_MS (default 100 ms). Between
 * measurements the mapping does not follow the clocks' drift. How many
 * measurements were made: metadata of the trace (vulkan.clock_measurements).
 */
#include "devtime.h"

#include <stdio.h>
#include <string.h>

#define UVK_PROBE_TRIES 5
#define UVK_PROBE_WAIT_NS 1000000000ull

/* The least time between two measurements of a device's clock, ns (read once). */
static uint64_t probe_interval(void)
{
    static _Atomic int64_t ms = -1;
    return uvk_env_once(UPTI_ENV_VK_CLOCK_PROBE_INTERVAL_MS, &ms) * 1000000;
}

/* Measurements of any device's clock so far: metadata of the trace (vulkan.clock_measurements). */
static void count_measurement(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t measurements;
    char text[32];
    pthread_mutex_lock(&lock);
    snprintf(text, sizeof text, "%llu", (unsigned long long)++measurements);
    upti_runtime_set_metadata("vulkan.clock_measurements", text);
    pthread_mutex_unlock(&lock);
}

/* The family of the probe's queue: one that ci creates (with no flags, so
   that vkGetDeviceQueue reaches it), with timestamps, a compute one if any;
   UINT32_MAX if none. */
static uint32_t probe_family(const VkDeviceCreateInfo *ci, const VkQueueFamilyProperties *fams, uint32_t nfams)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < ci->queueCreateInfoCount; i++) {
        const VkDeviceQueueCreateInfo *q = &ci->pQueueCreateInfos[i];
        uint32_t f = q->queueFamilyIndex;
        if (q->flags != 0 || q->queueCount == 0 || f >= nfams || fams[f].timestampValidBits == 0)
            continue;
        if ((fams[f].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0)
            return f;
        if (best == UINT32_MAX)
            best = f;
    }
    return best;
}

/* One measurement, the tightest of tries; 1 if a try succeeded. */
static int measure(uvk_object_t *o, int tries)
{
    uvk_device_state_t *s = &o->dt;
    uvk_probe_t *p = &s->probe;
    const upti_vulkan_dispatch_t *n = &o->next;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &p->cb};
    uint64_t best_window = UINT64_MAX, best_ticks = 0, before_best = 0;
    for (int i = 0; i < tries; i++) {
        uint64_t ticks = 0;
        upti_timestamp_t before = uvk_now();
        if (n->vkQueueSubmit(p->queue, 1, &si, p->fence) != VK_SUCCESS)
            break;
        VkResult r = n->vkWaitForFences(o->device, 1, &p->fence, VK_TRUE, UVK_PROBE_WAIT_NS);
        upti_timestamp_t after = uvk_now();
        if (r != VK_SUCCESS || n->vkResetFences(o->device, 1, &p->fence) != VK_SUCCESS) {
            p->stuck = 1; /* a fence that did not signal cannot be submitted again */
            break;
        }
        if (n->vkGetQueryPoolResults(o->device, p->queries, 0, 1, sizeof ticks, &ticks, sizeof ticks,
                                     VK_QUERY_RESULT_64_BIT) != VK_SUCCESS)
            continue;
        if (after - before < best_window) {
            best_window = after - before;
            best_ticks = ticks;
            before_best = before;
        }
    }
    if (best_window == UINT64_MAX)
        return 0;
    p->map = uvk_tick_map_bracket(uvk_tick_mask(s->valid_bits), s->period, best_ticks, before_best,
                                  before_best + best_window, &p->bound);
    p->at = before_best;
    p->measurements++;
    count_measurement();
    return 1;
}

int uvk_probe_create(uvk_object_t *o, const VkDeviceCreateInfo *ci, PFN_vkSetDeviceLoaderData set_loader_data,
                     const VkQueueFamilyProperties *fams, uint32_t nfams)
{
    uvk_device_state_t *s = &o->dt;
    uvk_probe_t *p = &s->probe;
    const upti_vulkan_dispatch_t *n = &o->next;
    VkDevice dev = o->device;
    uint32_t family = probe_family(ci, fams, nfams);
    if (family == UINT32_MAX || n->vkGetDeviceQueue == NULL || n->vkCreateCommandPool == NULL ||
        n->vkCmdWriteTimestamp == NULL || n->vkCmdResetQueryPool == NULL)
        return 0;
    n->vkGetDeviceQueue(dev, family, 0, &p->queue);
    if (p->queue == VK_NULL_HANDLE)
        return 0;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = family};
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 1};
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    int ok = n->vkCreateCommandPool(dev, &pi, NULL, &p->pool) == VK_SUCCESS;
    if (ok) {
        ai.commandPool = p->pool;
        ok = n->vkAllocateCommandBuffers(dev, &ai, &p->cb) == VK_SUCCESS;
    }
    /* The queue and the command buffer are dispatchable objects the loader did
       not hand out: the layers below ours find their tables through them. */
    if (ok && set_loader_data != NULL)
        ok = set_loader_data(dev, p->queue) == VK_SUCCESS && set_loader_data(dev, p->cb) == VK_SUCCESS;
    ok = ok && n->vkCreateQueryPool(dev, &qi, NULL, &p->queries) == VK_SUCCESS;
    ok = ok && n->vkCreateFence(dev, &fi, NULL, &p->fence) == VK_SUCCESS;
    ok = ok && n->vkBeginCommandBuffer(p->cb, &bi) == VK_SUCCESS;
    if (ok) {
        n->vkCmdResetQueryPool(p->cb, p->queries, 0, 1);
        n->vkCmdWriteTimestamp(p->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->queries, 0);
        ok = n->vkEndCommandBuffer(p->cb) == VK_SUCCESS;
    }
    if (ok && fams[family].timestampValidBits < s->valid_bits)
        s->valid_bits = fams[family].timestampValidBits;
    if (ok && measure(o, UVK_PROBE_TRIES))
        return 1;
    uvk_probe_destroy(o);
    return 0;
}

void uvk_probe_refresh(uvk_object_t *o, VkQueue queue)
{
    uvk_device_state_t *s = &o->dt;
    if (!s->measured || (queue != VK_NULL_HANDLE && queue != s->probe.queue))
        return;
    pthread_mutex_lock(&uvk_dt_lock);
    if (!s->probe.stuck && uvk_now() - s->probe.at >= probe_interval())
        measure(o, UVK_PROBE_TRIES);
    pthread_mutex_unlock(&uvk_dt_lock);
}

void uvk_probe_destroy(uvk_object_t *o)
{
    uvk_probe_t *p = &o->dt.probe;
    const upti_vulkan_dispatch_t *n = &o->next;
    if (p->fence != VK_NULL_HANDLE)
        n->vkDestroyFence(o->device, p->fence, NULL);
    if (p->queries != VK_NULL_HANDLE)
        n->vkDestroyQueryPool(o->device, p->queries, NULL);
    if (p->pool != VK_NULL_HANDLE)
        n->vkDestroyCommandPool(o->device, p->pool, NULL); /* frees p->cb */
    memset(p, 0, sizeof *p);
    o->dt.measured = 0;
}
