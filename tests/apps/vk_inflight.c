/* SPDX-License-Identifier: MIT */
/* vk_inflight: many submissions in flight on one queue (plain Vulkan, no
 * UPTI), for the Vulkan layer's test vulkan.inflight (check_inflight.py).
 *
 *   vk_inflight [timeline_off]
 *     timeline_off  the device is created with timeline semaphores off (a
 *                   VkPhysicalDeviceTimelineSemaphoreFeatures saying so): the
 *                   layer learns completion from fences of its own; else the
 *                   program turns them on (VK_KHR_timeline_semaphore) for its
 *                   last phase
 *
 * Allocates CBS (504) command buffers (the layer's map of command buffers,
 * at most half full, is then 1024 slots almost half full), frees every
 * third one in reverse order (one vkFreeCommandBuffers each: removals,
 * some of which shift the keys after them back), allocates half as many
 * again (one call), and records each of the LIVE (420) command buffers now
 * allocated, live[j] (in allocation order, reallocated ones in their
 * slots), with SIMULTANEOUS_USE: it binds vk_compute.comp (out[i] = in[i]
 * * 2 + i) and makes ONE vkCmdDispatch of (j + 1, 1, 1) groups, which names
 * it. Submits each once, without a fence, then vkQueueWaitIdle (the pass).
 *
 * Then ROUNDS (5) rounds of RING (80) submits each of a ring of them
 * (ring[i] = live[5 * i]), back to back on one queue, one command buffer
 * per vkQueueSubmit; submit s (0..399, over all rounds) runs
 * ring[(60 * round + position) % RING] (each round starts 60 further on:
 * a command buffer is submitted again 80 submits after its last time), and
 * carries a fence of the program's where s % 13 == 12, none otherwise (the
 * layer adds its timeline semaphore). Per round, after position 39 a gate
 * is submitted (vkCmdWaitEvents on an event the host sets; no dispatch),
 * which holds what follows on the device until a thread of the program sets
 * the event GATE_MS (100 ms) later, while submits go on: every submission
 * after it is unread at once. In even rounds the program, after position
 * 71, waits for the fence of the first fenced submit at position >= 44
 * (with unread submissions before and after it on the queue), and resets
 * it. In odd rounds it does not: the next round's first submit resubmits
 * ring[(60 * round + 60) % RING], whose last execution (position 60, behind
 * the gate, after 20 unread ones) the layer must wait for. The thread is
 * joined and the event reset before the next gate. The rounds end with
 * vkQueueWaitIdle.
 *
 * Then (but with timeline_off) the last phase: behind a gate, live[0] with a
 * fence, live[1] with another, live[2] signalling a timeline semaphore of
 * the program's; the program waits for that semaphore (vkWaitSemaphoresKHR,
 * which the layer does not follow) and resets the second fence: the layer
 * reads live[1]'s submission there, after live[0]'s, unread too. Then
 * vkQueueWaitIdle. At the end the fences are destroyed (those not waited
 * for are signalled by then) and every command buffer freed.
 *
 * Prints a deterministic summary (the output buffer's sum, checked: every
 * element < LIVE * 64 written by the largest dispatch). Exits 0 on success, 1
 * on a wrong result, 2 on a Vulkan error, 77 without a Vulkan device.
 */
#include "vk_common.h"
#include "vk_compute.spv.h"

#include <pthread.h>
#include <time.h>

#define CBS 504 /* a multiple of 6 */
#define LIVE (CBS - CBS / 6)
#define RING 80
#define ROUNDS 5
#define FENCE_EVERY 13
#define GATE_POSITION 40 /* the gate goes before this position of each round */
#define WAIT_AFTER 72    /* in even rounds the fence wait comes before this position */
#define WAIT_FROM 44     /* ... for the first fenced submit at or after this one */
#define GATE_MS 100
#define COUNT (LIVE * 64u)

/* The thread that opens the gate. */
typedef struct opener_t {
    pthread_t thread;
    VkDevice dev;
    VkEvent event;
    VkResult r;
} opener_t;

static void *open_gate(void *arg)
{
    opener_t *o = arg;
    struct timespec ts = {0, GATE_MS * 1000000L};
    nanosleep(&ts, NULL);
    o->r = vkSetEvent(o->dev, o->event);
    return NULL;
}

static VkDevice make_device(const vkc_t *c, int timeline_off, VkQueue *queue)
{
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = c->family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &priority};
    VkPhysicalDeviceTimelineSemaphoreFeatures tsf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES, .timelineSemaphore = !timeline_off};
    const char *timeline_ext = VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME;
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = &tsf,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = 1,
                              .ppEnabledExtensionNames = &timeline_ext};
    VkDevice dev;
    VKC_CHECK(vkCreateDevice(c->phys, &dci, NULL, &dev));
    vkGetDeviceQueue(dev, c->family, 0, queue);
    return dev;
}

static void submit(VkQueue queue, VkCommandBuffer cb, VkFence fence)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    VKC_CHECK(vkQueueSubmit(queue, 1, &si, fence));
}

/* The last phase: behind the gate (opened by a thread after GATE_MS), live[0] with fence a,
   live[1] with fence b, live[2] signalling the program's timeline semaphore; a wait for the
   semaphore (which the layer does not follow), then fence b reset: b's submission, unread with
   the one before it, is done. Then vkQueueWaitIdle. */
static void semaphore_wait(VkDevice dev, VkQueue queue, VkCommandBuffer gate, const VkCommandBuffer *live,
                           opener_t *opener)
{
    PFN_vkWaitSemaphoresKHR wait_semaphores =
        (PFN_vkWaitSemaphoresKHR)vkGetDeviceProcAddr(dev, "vkWaitSemaphoresKHR");
    if (wait_semaphores == NULL) {
        fprintf(stderr, "vk_inflight: no vkWaitSemaphoresKHR\n");
        exit(2);
    }
    VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
    VkSemaphore timeline;
    VKC_CHECK(vkCreateSemaphore(dev, &sci, NULL, &timeline));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence a, b;
    VKC_CHECK(vkCreateFence(dev, &fci, NULL, &a));
    VKC_CHECK(vkCreateFence(dev, &fci, NULL, &b));
    VKC_CHECK(vkResetEvent(dev, opener->event));
    submit(queue, gate, VK_NULL_HANDLE);
    if (pthread_create(&opener->thread, NULL, open_gate, opener) != 0) {
        fprintf(stderr, "vk_inflight: pthread_create failed\n");
        exit(2);
    }
    submit(queue, live[0], a);
    submit(queue, live[1], b);
    uint64_t value = 1;
    VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                         .signalSemaphoreValueCount = 1,
                                         .pSignalSemaphoreValues = &value};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &tsi, .commandBufferCount = 1,
                       .pCommandBuffers = &live[2], .signalSemaphoreCount = 1, .pSignalSemaphores = &timeline};
    VKC_CHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                              .pSemaphores = &timeline, .pValues = &value};
    VKC_CHECK(wait_semaphores(dev, &wi, UINT64_MAX));
    VKC_CHECK(vkResetFences(dev, 1, &b));
    VKC_CHECK(vkQueueWaitIdle(queue));
    if (pthread_join(opener->thread, NULL) != 0)
        exit(2);
    VKC_CHECK(opener->r);
    vkDestroyFence(dev, a, NULL);
    vkDestroyFence(dev, b, NULL);
    vkDestroySemaphore(dev, timeline, NULL);
}

int main(int argc, char **argv)
{
    int timeline_off = argc > 1 && strcmp(argv[1], "timeline_off") == 0;
    vkc_t c;
    vkc_init(&c, "vk_inflight");
    VkQueue queue;
    VkDevice dev = make_device(&c, timeline_off, &queue);

    const VkDeviceSize size = COUNT * sizeof(uint32_t);
    vkc_buffer_t in = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    vkc_buffer_t out = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    uint32_t *p;
    VKC_CHECK(vkMapMemory(dev, in.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++)
        p[i] = i * 3u + 7u;
    vkUnmapMemory(dev, in.memory);
    VKC_CHECK(vkMapMemory(dev, out.memory, 0, size, 0, (void **)&p));
    memset(p, 0, size);
    vkUnmapMemory(dev, out.memory);
    vkc_pipeline_t pl;
    const VkBuffer bufs[2] = {in.buffer, out.buffer};
    vkc_pipeline(dev, vk_compute_spv, sizeof vk_compute_spv, 2, bufs, sizeof(uint32_t), &pl);

    /* CBS command buffers; every third freed, last first; half of those allocated again. */
    VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = c.family};
    VkCommandPool pool;
    VKC_CHECK(vkCreateCommandPool(dev, &cpci, NULL, &pool));
    VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = pool,
                                        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = CBS};
    static VkCommandBuffer cbs[CBS];
    VKC_CHECK(vkAllocateCommandBuffers(dev, &cbai, cbs));
    for (int i = CBS - 3; i >= 0; i -= 3) {
        vkFreeCommandBuffers(dev, pool, 1, &cbs[i]);
        cbs[i] = VK_NULL_HANDLE;
    }
    VkCommandBuffer again[CBS / 6];
    cbai.commandBufferCount = CBS / 6;
    VKC_CHECK(vkAllocateCommandBuffers(dev, &cbai, again));
    VkCommandBuffer live[CBS];
    uint32_t nlive = 0;
    for (int i = 0; i < CBS; i++) {
        if (i % 6 == 0)
            cbs[i] = again[i / 6];
        if (cbs[i] != VK_NULL_HANDLE)
            live[nlive++] = cbs[i];
    }

    if (nlive != LIVE) {
        fprintf(stderr, "vk_inflight: %u command buffers live, expected %u\n", nlive, LIVE);
        return 2;
    }

    /* One dispatch each, its group count naming it; each submitted once. */
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
    uint32_t count = COUNT;
    for (uint32_t j = 0; j < LIVE; j++) {
        VKC_CHECK(vkBeginCommandBuffer(live[j], &begin));
        vkCmdBindPipeline(live[j], VK_PIPELINE_BIND_POINT_COMPUTE, pl.pipeline);
        vkCmdBindDescriptorSets(live[j], VK_PIPELINE_BIND_POINT_COMPUTE, pl.layout, 0, 1, &pl.set, 0, NULL);
        vkCmdPushConstants(live[j], pl.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof count, &count);
        vkCmdDispatch(live[j], j + 1, 1, 1);
        VKC_CHECK(vkEndCommandBuffer(live[j]));
    }
    for (uint32_t j = 0; j < LIVE; j++)
        submit(queue, live[j], VK_NULL_HANDLE);
    VKC_CHECK(vkQueueWaitIdle(queue));
    VkCommandBuffer ring[RING];
    for (uint32_t i = 0; i < RING; i++)
        ring[i] = live[5 * i];

    /* The gate: waits for the event the host sets. */
    VkEventCreateInfo eci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent event;
    VKC_CHECK(vkCreateEvent(dev, &eci, NULL, &event));
    cbai.commandBufferCount = 1;
    VkCommandBuffer gate;
    VKC_CHECK(vkAllocateCommandBuffers(dev, &cbai, &gate));
    VKC_CHECK(vkBeginCommandBuffer(gate, &begin));
    vkCmdWaitEvents(gate, 1, &event, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, NULL, 0,
                    NULL, 0, NULL);
    VKC_CHECK(vkEndCommandBuffer(gate));

    VkFence fences[ROUNDS * RING / FENCE_EVERY + 1];
    uint32_t nfences = 0;
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    opener_t opener = {.dev = dev, .event = event};
    int opening = 0;
    uint32_t waited = 0;
    for (uint32_t r = 0; r < ROUNDS; r++) {
        VkFence wait_for = VK_NULL_HANDLE;
        for (uint32_t pos = 0; pos < RING; pos++) {
            if (pos == GATE_POSITION) {
                if (opening) {
                    /* The last gate was passed: a later submission was waited for. */
                    if (pthread_join(opener.thread, NULL) != 0)
                        exit(2);
                    VKC_CHECK(opener.r);
                    VKC_CHECK(vkResetEvent(dev, event));
                }
                submit(queue, gate, VK_NULL_HANDLE);
                if (pthread_create(&opener.thread, NULL, open_gate, &opener) != 0) {
                    fprintf(stderr, "vk_inflight: pthread_create failed\n");
                    return 2;
                }
                opening = 1;
            }
            if (pos == WAIT_AFTER && wait_for != VK_NULL_HANDLE) {
                VKC_CHECK(vkWaitForFences(dev, 1, &wait_for, VK_TRUE, UINT64_MAX));
                VKC_CHECK(vkResetFences(dev, 1, &wait_for));
                waited++;
            }
            uint32_t s = r * RING + pos;
            VkFence fence = VK_NULL_HANDLE;
            if (s % FENCE_EVERY == FENCE_EVERY - 1) {
                VKC_CHECK(vkCreateFence(dev, &fci, NULL, &fences[nfences]));
                fence = fences[nfences++];
                if (r % 2 == 0 && pos >= WAIT_FROM && pos < WAIT_AFTER && wait_for == VK_NULL_HANDLE)
                    wait_for = fence;
            }
            submit(queue, ring[(60 * r + pos) % RING], fence);
        }
    }
    VKC_CHECK(vkQueueWaitIdle(queue));
    if (pthread_join(opener.thread, NULL) != 0)
        return 2;
    VKC_CHECK(opener.r);
    if (!timeline_off)
        semaphore_wait(dev, queue, gate, live, &opener);

    uint64_t sum = 0;
    unsigned wrong = 0;
    VKC_CHECK(vkMapMemory(dev, out.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++) {
        wrong += p[i] != (i * 3u + 7u) * 2u + i;
        sum += p[i];
    }
    vkUnmapMemory(dev, out.memory);

    for (uint32_t i = 0; i < nfences; i++)
        vkDestroyFence(dev, fences[i], NULL);
    vkFreeCommandBuffers(dev, pool, 1, &gate);
    vkFreeCommandBuffers(dev, pool, CBS, cbs);
    vkDestroyCommandPool(dev, pool, NULL);
    vkDestroyEvent(dev, event, NULL);
    vkc_destroy_pipeline(dev, &pl);
    vkc_free_buffer(dev, &in);
    vkc_free_buffer(dev, &out);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(c.instance, NULL);
    printf("vk_inflight: %u command buffers (%u allocated), then %u submits of %u, %u fences, %u waited; %u values, "
           "sum %llu, %s\n",
           LIVE, CBS, ROUNDS * RING, RING, nfences, waited, COUNT, (unsigned long long)sum, wrong ? "WRONG" : "ok");
    return wrong ? 1 : 0;
}
