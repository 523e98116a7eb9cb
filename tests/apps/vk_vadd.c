/* SPDX-License-Identifier: MIT */
/* vk_vadd: a plain Vulkan vector add (no UPTI) for the Vulkan tests.
 *
 *   vk_vadd
 *
 * c = a + b over 8192 uints (a[i] = i, b[i] = 3i + 1) by vk_vadd.comp: one
 * command buffer (vkCmdDispatch of 128 groups, a barrier, vkCmdCopyBuffer
 * of c, 32768 bytes, into a host-visible buffer), submitted once and waited
 * for with a fence, then vkQueueWaitIdle and vkDeviceWaitIdle. Prints a
 * deterministic summary; exits 0 if every value
 * is right, 1 if not, 2 on a Vulkan error, 77 without a device.
 */
#include "vk_common.h"
#include "vk_vadd.spv.h"

#define COUNT 8192u

int main(void)
{
    vkc_t c;
    vkc_init(&c, "vk_vadd");
    VkQueue queue;
    VkDevice dev = vkc_device(&c, &queue);
    const VkDeviceSize size = COUNT * sizeof(uint32_t);
    vkc_buffer_t a = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    vkc_buffer_t b = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    vkc_buffer_t sum = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkc_buffer_t back = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, VKC_HOST);
    uint32_t *p;
    VKC_CHECK(vkMapMemory(dev, a.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++)
        p[i] = i;
    vkUnmapMemory(dev, a.memory);
    VKC_CHECK(vkMapMemory(dev, b.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++)
        p[i] = 3 * i + 1;
    vkUnmapMemory(dev, b.memory);

    vkc_pipeline_t pl;
    const VkBuffer bufs[3] = {a.buffer, b.buffer, sum.buffer};
    vkc_pipeline(dev, vk_vadd_spv, sizeof vk_vadd_spv, 3, bufs, sizeof(uint32_t), &pl);
    VkCommandPool pool;
    VkCommandBuffer cb = vkc_begin(&c, dev, &pool);
    vkc_bind(cb, &pl, COUNT);
    vkCmdDispatch(cb, COUNT / 64, 1, 1);
    vkc_barrier(cb);
    VkBufferCopy region = {0, 0, size};
    vkCmdCopyBuffer(cb, sum.buffer, back.buffer, 1, &region);
    VKC_CHECK(vkEndCommandBuffer(cb));
    VkFence fence = vkc_fence(dev);
    vkc_submit_wait(dev, queue, cb, fence);
    /* Nothing left to wait for: the host synchronisations a subscriber sees all the same. */
    VKC_CHECK(vkQueueWaitIdle(queue));
    VKC_CHECK(vkDeviceWaitIdle(dev));

    unsigned wrong = 0;
    unsigned long long total = 0;
    VKC_CHECK(vkMapMemory(dev, back.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++) {
        wrong += p[i] != 4 * i + 1;
        total += p[i];
    }
    vkUnmapMemory(dev, back.memory);

    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    vkc_destroy_pipeline(dev, &pl);
    vkc_free_buffer(dev, &a);
    vkc_free_buffer(dev, &b);
    vkc_free_buffer(dev, &sum);
    vkc_free_buffer(dev, &back);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(c.instance, NULL);
    printf("vk_vadd: %u values, sum %llu, %s\n", COUNT, total, wrong ? "WRONG" : "ok");
    return wrong ? 1 : 0;
}
