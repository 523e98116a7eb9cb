/* SPDX-License-Identifier: MIT */
/* Vulkan calls whose VkResult is not VK_SUCCESS, each once, and what they return
 * as the program sees it (stdout, "name: value"): tests/integration/cli/test_results.py
 * checks that each API record carries the same value.
 *   vkGetFenceStatus   unsignaled fence          -> VK_NOT_READY (1), a status, not an error
 *   vkWaitForFences    unsignaled, timeout 0     -> VK_TIMEOUT (2)
 *   vkAllocateMemory   2^62 bytes                -> an error (< 0; the driver's code)
 *   vkResetFences      the fence                 -> VK_SUCCESS
 *   vkDestroyFence                               -> void: no result */
#include "vk_common.h"

int main(void)
{
    vkc_t c;
    vkc_init(&c, "vk_results");
    VkQueue queue;
    VkDevice dev = vkc_device(&c, &queue);
    VkFence fence = vkc_fence(dev);
    printf("vkGetFenceStatus: %d\n", (int)vkGetFenceStatus(dev, fence));
    printf("vkWaitForFences: %d\n", (int)vkWaitForFences(dev, 1, &fence, VK_TRUE, 0));
    /* More than any machine has (a heap size times 4 may still be granted: lavapipe
     * allocates lazily). */
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = (VkDeviceSize)1 << 62,
                                .memoryTypeIndex = 0};
    VkDeviceMemory mem = VK_NULL_HANDLE;
    VkResult r = vkAllocateMemory(dev, &mai, NULL, &mem);
    printf("vkAllocateMemory: %s\n", r < 0 ? "error" : "allocated");
    fprintf(stderr, "vkAllocateMemory: %d\n", (int)r); /* its code: the driver's choice */
    if (r == VK_SUCCESS)
        vkFreeMemory(dev, mem, NULL);
    printf("vkResetFences: %d\n", (int)vkResetFences(dev, 1, &fence));
    vkDestroyFence(dev, fence, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(c.instance, NULL);
    return 0;
}
