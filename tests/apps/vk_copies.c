/* SPDX-License-Identifier: MIT */
/* vk_copies: every Vulkan copy kind once (plain Vulkan, no UPTI), for the
 * Vulkan tests.
 *
 *   vk_copies [copy2]
 *     copy2: the copies through Vulkan 1.3's vkCmdCopyBuffer2,
 *            vkCmdCopyBufferToImage2, vkCmdCopyImage2, vkCmdCopyImageToBuffer2
 *
 * One command buffer, submitted once and waited for with a fence:
 *   1 vkCmdFillBuffer      mid[0, 16384) = 0x01020304
 *   2 vkCmdUpdateBuffer    mid[4096, 4352) = 0, 1, 2, ... (256 bytes)
 *   3 vkCmdCopyBuffer      src[8192, 16384) -> mid[8192, 16384)
 *   4 vkCmdCopyBufferToImage  src[0, 16384) -> image 1 (64x64 R8G8B8A8_UINT)
 *   5 vkCmdCopyImage       image 1 -> image 2
 *   6 vkCmdCopyImageToBuffer  image 2 -> dst[0, 16384)
 *   7 vkCmdCopyBuffer      mid -> dst[16384, 32768)
 * with pipeline barriers between them (5: one global barrier after 3, the
 * image layout transitions before 4, before 5 (two images in one call),
 * before 6, and a global barrier before 7). Checks every byte of dst and
 * prints a deterministic summary; exits 0 if right, 1 if not, 2 on a
 * Vulkan error, 77 without a device.
 */
#include "vk_common.h"

#define SIDE 64u
#define IMAGE_BYTES (SIDE * SIDE * 4u)

typedef struct image_t {
    VkImage image;
    VkDeviceMemory memory;
} image_t;

static image_t make_image(const vkc_t *c, VkDevice dev)
{
    image_t im;
    VkImageCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
                             .imageType = VK_IMAGE_TYPE_2D,
                             .format = VK_FORMAT_R8G8B8A8_UINT,
                             .extent = {SIDE, SIDE, 1},
                             .mipLevels = 1,
                             .arrayLayers = 1,
                             .samples = VK_SAMPLE_COUNT_1_BIT,
                             .tiling = VK_IMAGE_TILING_OPTIMAL,
                             .usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
                             .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED};
    VKC_CHECK(vkCreateImage(dev, &ici, NULL, &im.image));
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(dev, im.image, &req);
    im.memory = vkc_allocate(c, dev, &req, 0);
    VKC_CHECK(vkBindImageMemory(dev, im.image, im.memory, 0));
    return im;
}

static VkImageMemoryBarrier layout(VkImage image, VkImageLayout from, VkImageLayout to)
{
    VkImageMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                              .oldLayout = from,
                              .newLayout = to,
                              .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                              .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                              .image = image,
                              .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
    return b;
}

static void transition(VkCommandBuffer cb, uint32_t n, const VkImageMemoryBarrier *b)
{
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, n,
                         b);
}

static int g_copy2;

static void copy_buffer(VkCommandBuffer cb, VkBuffer src, VkBuffer dst, VkBufferCopy region)
{
    if (!g_copy2) {
        vkCmdCopyBuffer(cb, src, dst, 1, &region);
        return;
    }
    VkBufferCopy2 r = {.sType = VK_STRUCTURE_TYPE_BUFFER_COPY_2, .srcOffset = region.srcOffset,
                       .dstOffset = region.dstOffset, .size = region.size};
    VkCopyBufferInfo2 info = {.sType = VK_STRUCTURE_TYPE_COPY_BUFFER_INFO_2, .srcBuffer = src, .dstBuffer = dst,
                              .regionCount = 1, .pRegions = &r};
    vkCmdCopyBuffer2(cb, &info);
}

static VkBufferImageCopy2 region2(const VkBufferImageCopy *r)
{
    VkBufferImageCopy2 c = {.sType = VK_STRUCTURE_TYPE_BUFFER_IMAGE_COPY_2, .bufferOffset = r->bufferOffset,
                            .imageSubresource = r->imageSubresource, .imageExtent = r->imageExtent};
    return c;
}

int main(int argc, char **argv)
{
    g_copy2 = argc > 1 && strcmp(argv[1], "copy2") == 0;
    vkc_t c;
    vkc_init_version(&c, "vk_copies", g_copy2 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_1);
    VkQueue queue;
    VkDevice dev = vkc_device(&c, &queue);
    const VkBufferUsageFlags xfer = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vkc_buffer_t src = vkc_buffer(&c, dev, 16384, xfer, VKC_HOST);
    vkc_buffer_t mid = vkc_buffer(&c, dev, 16384, xfer, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkc_buffer_t dst = vkc_buffer(&c, dev, 32768, xfer, VKC_HOST);
    image_t im1 = make_image(&c, dev), im2 = make_image(&c, dev);
    uint8_t *p;
    VKC_CHECK(vkMapMemory(dev, src.memory, 0, 16384, 0, (void **)&p));
    for (uint32_t i = 0; i < 16384; i++)
        p[i] = (uint8_t)(i * 7 + 3);
    vkUnmapMemory(dev, src.memory);
    uint8_t update[256];
    for (int i = 0; i < 256; i++)
        update[i] = (uint8_t)i;

    VkCommandPool pool;
    VkCommandBuffer cb = vkc_begin(&c, dev, &pool);
    vkCmdFillBuffer(cb, mid.buffer, 0, 16384, 0x01020304u);
    vkCmdUpdateBuffer(cb, mid.buffer, 4096, sizeof update, update);
    VkBufferCopy half = {8192, 8192, 8192};
    copy_buffer(cb, src.buffer, mid.buffer, half);
    vkc_barrier(cb);
    VkImageMemoryBarrier b = layout(im1.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
    transition(cb, 1, &b);
    VkBufferImageCopy whole = {.bufferOffset = 0,
                               .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
                               .imageExtent = {SIDE, SIDE, 1}};
    VkBufferImageCopy2 whole2 = region2(&whole);
    if (g_copy2) {
        VkCopyBufferToImageInfo2 info = {.sType = VK_STRUCTURE_TYPE_COPY_BUFFER_TO_IMAGE_INFO_2,
                                         .srcBuffer = src.buffer, .dstImage = im1.image,
                                         .dstImageLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                         .regionCount = 1, .pRegions = &whole2};
        vkCmdCopyBufferToImage2(cb, &info);
    } else {
        vkCmdCopyBufferToImage(cb, src.buffer, im1.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &whole);
    }
    VkImageMemoryBarrier two[2] = {
        layout(im1.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL),
        layout(im2.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)};
    transition(cb, 2, two);
    VkImageCopy ic = {.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
                      .dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
                      .extent = {SIDE, SIDE, 1}};
    if (g_copy2) {
        VkImageCopy2 ic2 = {.sType = VK_STRUCTURE_TYPE_IMAGE_COPY_2, .srcSubresource = ic.srcSubresource,
                            .dstSubresource = ic.dstSubresource, .extent = ic.extent};
        VkCopyImageInfo2 info = {.sType = VK_STRUCTURE_TYPE_COPY_IMAGE_INFO_2, .srcImage = im1.image,
                                 .srcImageLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, .dstImage = im2.image,
                                 .dstImageLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, .regionCount = 1,
                                 .pRegions = &ic2};
        vkCmdCopyImage2(cb, &info);
    } else {
        vkCmdCopyImage(cb, im1.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, im2.image,
                       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &ic);
    }
    b = layout(im2.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    transition(cb, 1, &b);
    if (g_copy2) {
        VkCopyImageToBufferInfo2 info = {.sType = VK_STRUCTURE_TYPE_COPY_IMAGE_TO_BUFFER_INFO_2,
                                         .srcImage = im2.image, .srcImageLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                         .dstBuffer = dst.buffer, .regionCount = 1, .pRegions = &whole2};
        vkCmdCopyImageToBuffer2(cb, &info);
    } else {
        vkCmdCopyImageToBuffer(cb, im2.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst.buffer, 1, &whole);
    }
    vkc_barrier(cb);
    VkBufferCopy back = {0, 16384, 16384};
    copy_buffer(cb, mid.buffer, dst.buffer, back);
    VKC_CHECK(vkEndCommandBuffer(cb));
    VkFence fence = vkc_fence(dev);
    vkc_submit_wait(dev, queue, cb, fence);

    unsigned wrong = 0;
    unsigned long long sum = 0;
    VKC_CHECK(vkMapMemory(dev, dst.memory, 0, 32768, 0, (void **)&p));
    for (uint32_t i = 0; i < 32768; i++) {
        uint8_t want;
        if (i < 16384) /* through both images */
            want = (uint8_t)(i * 7 + 3);
        else if (i - 16384 >= 8192) /* copied from src */
            want = (uint8_t)((i - 16384) * 7 + 3);
        else if (i - 16384 >= 4096 && i - 16384 < 4352) /* updated */
            want = (uint8_t)(i - 16384 - 4096);
        else /* filled, little-endian 0x01020304 */
            want = (uint8_t)(4 - (i % 4));
        wrong += p[i] != want;
        sum += p[i];
    }
    vkUnmapMemory(dev, dst.memory);

    vkDestroyFence(dev, fence, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    vkDestroyImage(dev, im1.image, NULL);
    vkFreeMemory(dev, im1.memory, NULL);
    vkDestroyImage(dev, im2.image, NULL);
    vkFreeMemory(dev, im2.memory, NULL);
    vkc_free_buffer(dev, &src);
    vkc_free_buffer(dev, &mid);
    vkc_free_buffer(dev, &dst);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(c.instance, NULL);
    printf("vk_copies: 7 copies, 32768 bytes checked, sum %llu, %s\n", sum, wrong ? "WRONG" : "ok");
    return wrong ? 1 : 0;
}
