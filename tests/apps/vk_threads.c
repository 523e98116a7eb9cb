/* SPDX-License-Identifier: MIT */
/* vk_threads: several threads recording and submitting Vulkan work to
 * several queues (plain Vulkan, no UPTI), for the Vulkan tests.
 *
 *   vk_threads [THREADS [SUBMITS]]   (default 3 threads, 4 submits each)
 *
 * Each thread makes its own device on the shared instance (lavapipe has
 * one queue per device: a device per thread gives a queue per thread),
 * records one command buffer (vector add of its own numbers: vk_vadd.comp,
 * 16 groups) and submits it SUBMITS times, each waited for with a fence.
 * Prints a deterministic line per thread (in thread order, after joining);
 * exits 0 if every result is right, 1 if not, 2 on a Vulkan error, 77
 * without a device.
 */
#include "vk_common.h"
#include "vk_vadd.spv.h"

#include <pthread.h>

#define COUNT 1024u
#define MAX_THREADS 8

static vkc_t g_c;
static int g_submits;

typedef struct worker_t {
    pthread_t thread;
    uint32_t index;
    unsigned wrong;
    unsigned long long sum;
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    VkQueue queue;
    VkDevice dev = vkc_device(&g_c, &queue);
    const VkDeviceSize size = COUNT * sizeof(uint32_t);
    vkc_buffer_t a = vkc_buffer(&g_c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    vkc_buffer_t b = vkc_buffer(&g_c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    vkc_buffer_t c = vkc_buffer(&g_c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    uint32_t *p;
    VKC_CHECK(vkMapMemory(dev, a.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++)
        p[i] = i * (w->index + 1);
    vkUnmapMemory(dev, a.memory);
    VKC_CHECK(vkMapMemory(dev, b.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++)
        p[i] = w->index;
    vkUnmapMemory(dev, b.memory);
    vkc_pipeline_t pl;
    const VkBuffer bufs[3] = {a.buffer, b.buffer, c.buffer};
    vkc_pipeline(dev, vk_vadd_spv, sizeof vk_vadd_spv, 3, bufs, sizeof(uint32_t), &pl);
    VkCommandPool pool;
    VkCommandBuffer cb = vkc_begin(&g_c, dev, &pool);
    vkc_bind(cb, &pl, COUNT);
    vkCmdDispatch(cb, COUNT / 64, 1, 1);
    VKC_CHECK(vkEndCommandBuffer(cb));
    VkFence fence = vkc_fence(dev);
    for (int s = 0; s < g_submits; s++)
        vkc_submit_wait(dev, queue, cb, fence);
    VKC_CHECK(vkMapMemory(dev, c.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++) {
        w->wrong += p[i] != i * (w->index + 1) + w->index;
        w->sum += p[i];
    }
    vkUnmapMemory(dev, c.memory);
    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    vkc_destroy_pipeline(dev, &pl);
    vkc_free_buffer(dev, &a);
    vkc_free_buffer(dev, &b);
    vkc_free_buffer(dev, &c);
    vkDestroyDevice(dev, NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 3;
    g_submits = argc > 2 ? atoi(argv[2]) : 4;
    if (threads < 1 || threads > MAX_THREADS)
        threads = 3;
    if (g_submits < 1)
        g_submits = 1;
    vkc_init(&g_c, "vk_threads");
    worker_t w[MAX_THREADS];
    memset(w, 0, sizeof w);
    for (int t = 0; t < threads; t++) {
        w[t].index = (uint32_t)t;
        if (pthread_create(&w[t].thread, NULL, work, &w[t]) != 0) {
            fprintf(stderr, "vk_threads: pthread_create failed\n");
            return 2;
        }
    }
    unsigned wrong = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(w[t].thread, NULL);
        printf("vk_threads: thread %d: %d submits, sum %llu, %s\n", t, g_submits, w[t].sum,
               w[t].wrong ? "WRONG" : "ok");
        wrong += w[t].wrong;
    }
    vkDestroyInstance(g_c.instance, NULL);
    return wrong ? 1 : 0;
}
