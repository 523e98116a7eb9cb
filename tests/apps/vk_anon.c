/* SPDX-License-Identifier: MIT */
/* vk_anon: pipelines of shaders without a source name (plain Vulkan, no
 * UPTI), as programs that compile shaders at run time make them.
 *
 *   vk_anon
 *
 * Strips every debug instruction (OpSource, OpString, OpName, OpLine, ...)
 * from vk_vadd.comp and vk_compute.comp (compiled with -g) at run time and
 * records, in one command buffer, one dispatch (1 group) of each of four
 * compute pipelines, in this order:
 *   1. vk_vadd.comp stripped      (no name in the module: main@HASH)
 *   2. vk_compute.comp stripped   (another module: another HASH)
 *   3. vk_vadd.comp as compiled   (OpSource: vk_vadd.comp:main)
 *   4. vk_compute.comp stripped, the pipeline named "anon_named" with
 *      vkSetDebugUtilsObjectNameEXT (the object name wins)
 * Submits it once and waits. Prints a deterministic line; exits 0 if the
 * results are right, 1 if not, 2 on a Vulkan error, 77 without a device.
 */
#include "vk_common.h"
#include "vk_compute.spv.h"
#include "vk_vadd.spv.h"

#define COUNT 64u

/* SPIR-V opcodes that only carry debug information (SPIR-V specification, "Debug Instructions"). */
static int is_debug(uint32_t op)
{
    return (op >= 2 && op <= 8) /* OpSourceContinued .. OpLine */ || op == 317 /* OpNoLine */ ||
           op == 330 /* OpModuleProcessed */;
}

/* A copy of the module spv (words) without its debug instructions, in out; returns its size in bytes. */
static size_t strip(const uint32_t *spv, size_t words, uint32_t *out)
{
    memcpy(out, spv, 5 * sizeof *spv); /* the header */
    size_t n = 5;
    for (size_t i = 5; i < words;) {
        uint32_t count = spv[i] >> 16;
        if (count == 0 || count > words - i) {
            fprintf(stderr, "vk_anon: malformed SPIR-V\n");
            exit(2);
        }
        if (!is_debug(spv[i] & 0xffff)) {
            memcpy(out + n, spv + i, count * sizeof *spv);
            n += count;
        }
        i += count;
    }
    return n * sizeof *out;
}

int main(void)
{
    vkc_t c;
    vkc_init_extension(&c, "vk_anon", VK_API_VERSION_1_1, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    VkQueue queue;
    VkDevice dev = vkc_device(&c, &queue);
    PFN_vkSetDebugUtilsObjectNameEXT set_name =
        (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(dev, "vkSetDebugUtilsObjectNameEXT");
    if (set_name == NULL) {
        fprintf(stderr, "vk_anon: vkSetDebugUtilsObjectNameEXT missing\n");
        return 2;
    }
    const VkDeviceSize size = COUNT * sizeof(uint32_t);
    vkc_buffer_t buf[3];
    for (int i = 0; i < 3; i++)
        buf[i] = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    uint32_t *p;
    for (int b = 0; b < 2; b++) {
        VKC_CHECK(vkMapMemory(dev, buf[b].memory, 0, size, 0, (void **)&p));
        for (uint32_t i = 0; i < COUNT; i++)
            p[i] = i;
        vkUnmapMemory(dev, buf[b].memory);
    }
    static uint32_t vadd_stripped[sizeof vk_vadd_spv / 4], compute_stripped[sizeof vk_compute_spv / 4];
    size_t vadd_bytes = strip(vk_vadd_spv, sizeof vk_vadd_spv / 4, vadd_stripped);
    size_t compute_bytes = strip(vk_compute_spv, sizeof vk_compute_spv / 4, compute_stripped);
    const VkBuffer bufs[3] = {buf[0].buffer, buf[1].buffer, buf[2].buffer};
    const VkBuffer out[2] = {buf[0].buffer, buf[2].buffer}; /* vk_compute: buf[2] = buf[0] * 2 + i */
    vkc_pipeline_t pl[4];
    vkc_pipeline(dev, vadd_stripped, vadd_bytes, 3, bufs, sizeof(uint32_t), &pl[0]);
    vkc_pipeline(dev, compute_stripped, compute_bytes, 2, out, sizeof(uint32_t), &pl[1]);
    vkc_pipeline(dev, vk_vadd_spv, sizeof vk_vadd_spv, 3, bufs, sizeof(uint32_t), &pl[2]);
    vkc_pipeline(dev, compute_stripped, compute_bytes, 2, out, sizeof(uint32_t), &pl[3]);
    VkDebugUtilsObjectNameInfoEXT ni = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
                                        .objectType = VK_OBJECT_TYPE_PIPELINE,
                                        .objectHandle = (uint64_t)pl[3].pipeline,
                                        .pObjectName = "anon_named"};
    VKC_CHECK(set_name(dev, &ni));

    VkCommandPool pool;
    VkCommandBuffer cb = vkc_begin(&c, dev, &pool);
    uint32_t count = COUNT;
    for (int i = 0; i < 4; i++) {
        vkc_bind(cb, &pl[i], count);
        vkCmdDispatch(cb, 1, 1, 1);
        vkc_barrier(cb);
    }
    VKC_CHECK(vkEndCommandBuffer(cb));
    VkFence fence = vkc_fence(dev);
    vkc_submit_wait(dev, queue, cb, fence);

    unsigned wrong = 0;
    VKC_CHECK(vkMapMemory(dev, buf[2].memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++)
        wrong += p[i] != 3 * i; /* the last writer: vk_compute's i * 2 + i */
    vkUnmapMemory(dev, buf[2].memory);

    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    for (int i = 0; i < 4; i++)
        vkc_destroy_pipeline(dev, &pl[i]);
    for (int i = 0; i < 3; i++)
        vkc_free_buffer(dev, &buf[i]);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(c.instance, NULL);
    printf("vk_anon: 4 dispatches of %u values, %s\n", COUNT, wrong ? "WRONG" : "ok");
    return wrong ? 1 : 0;
}
