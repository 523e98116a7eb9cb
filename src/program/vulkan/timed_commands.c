/* SPDX-License-Identifier: MIT */
/* The vkCmd* commands the layer brackets with timestamps (command_buffers.c):
 * dispatches (KERNEL_DISPATCH), and copies, fills, updates and pipeline
 * barriers (MEMORY_COPY) with their direction and bytes.
 *
 * A vkCmd* and its KHR alias get a wrapper each: the loader hands out two entry
 * points of one type.
 */
#include "devtime.h"

/* A dispatch the caller found wanted (uvk_dispatch_wanted). */
static void dispatch_begin(uvk_slot_t *slot, const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t op,
                             const uint32_t groups[3], const uint32_t base[3])
{
    uvk_op_begin_wanted(slot, n, cb, UPTI_TRACING_KIND_KERNEL_DISPATCH, op, groups, base, UPTI_MEMORY_DIRECTION_NONE,
                        0, NULL);
}

static void copy_begin(uvk_slot_t *slot, const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t op,
                         upti_memory_direction_t direction, uint64_t bytes)
{
    uvk_op_begin(slot, n, cb, UPTI_TRACING_KIND_MEMORY_COPY, op, NULL, NULL, direction, bytes, NULL);
}

static void dispatch_base(const upti_vulkan_dispatch_t *n, PFN_vkCmdDispatchBase fn, VkCommandBuffer cb,
                          uint32_t bx, uint32_t by, uint32_t bz, uint32_t x, uint32_t y, uint32_t z)
{
    if (!uvk_dispatch_wanted(UPTI_KERNEL_DISPATCH_VK_DISPATCH_BASE, cb)) {
        fn(cb, bx, by, bz, x, y, z);
        return;
    }
    const uint32_t groups[3] = {x, y, z}, base[3] = {bx, by, bz};
    uvk_slot_t d;
    dispatch_begin(&d, n, cb, UPTI_KERNEL_DISPATCH_VK_DISPATCH_BASE, groups, base);
    fn(cb, bx, by, bz, x, y, z);
    uvk_op_end(n, cb, &d);
}

void uvk_dt_vkCmdDispatchBase(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t bx, uint32_t by,
                              uint32_t bz, uint32_t x, uint32_t y, uint32_t z)
{
    dispatch_base(n, n->vkCmdDispatchBase, cb, bx, by, bz, x, y, z);
}

void uvk_dt_vkCmdDispatchBaseKHR(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t bx, uint32_t by,
                                 uint32_t bz, uint32_t x, uint32_t y, uint32_t z)
{
    dispatch_base(n, n->vkCmdDispatchBaseKHR, cb, bx, by, bz, x, y, z);
}

void uvk_dt_vkCmdDispatchIndirect(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkBuffer buffer,
                                  VkDeviceSize offset)
{
    if (!uvk_dispatch_wanted(UPTI_KERNEL_DISPATCH_VK_DISPATCH_INDIRECT, cb)) {
        n->vkCmdDispatchIndirect(cb, buffer, offset);
        return;
    }
    static const uint32_t unknown[3] = {0, 0, 0}; /* in the buffer, read by the device */
    uvk_slot_t d;
    dispatch_begin(&d, n, cb, UPTI_KERNEL_DISPATCH_VK_DISPATCH_INDIRECT, unknown, NULL);
    n->vkCmdDispatchIndirect(cb, buffer, offset);
    uvk_op_end(n, cb, &d);
}

/* --- copies, fills, updates, barriers (MEMORY_COPY) --- */

#define D2D UPTI_MEMORY_DIRECTION_DEVICE_TO_DEVICE

void uvk_dt_vkCmdCopyBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkBuffer src, VkBuffer dst,
                            uint32_t count, const VkBufferCopy *regions)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < count; i++)
        bytes += regions[i].size;
    uvk_slot_t d;
    copy_begin(&d, n, cb, UPTI_MEMORY_COPY_COPY_BUFFER, D2D, bytes);
    n->vkCmdCopyBuffer(cb, src, dst, count, regions);
    uvk_op_end(n, cb, &d);
}

/* VK_WHOLE_SIZE (the rest of the buffer) counts 0 bytes: the layer does not follow buffer sizes. */
void uvk_dt_vkCmdFillBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkBuffer dst, VkDeviceSize offset,
                            VkDeviceSize size, uint32_t data)
{
    uvk_slot_t d;
    copy_begin(&d, n, cb, UPTI_MEMORY_COPY_FILL_BUFFER, UPTI_MEMORY_DIRECTION_HOST_TO_DEVICE,
                          size == VK_WHOLE_SIZE ? 0 : size);
    n->vkCmdFillBuffer(cb, dst, offset, size, data);
    uvk_op_end(n, cb, &d);
}

void uvk_dt_vkCmdUpdateBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkBuffer dst,
                              VkDeviceSize offset, VkDeviceSize size, const void *data)
{
    uvk_slot_t d;
    copy_begin(&d, n, cb, UPTI_MEMORY_COPY_WRITE_BUFFER, UPTI_MEMORY_DIRECTION_HOST_TO_DEVICE, size);
    n->vkCmdUpdateBuffer(cb, dst, offset, size, data);
    uvk_op_end(n, cb, &d);
}

/* Image copies: the regions' texels times the image format's texel size
   (images.c; 0 bytes for a format the layer does not know). */
static uint64_t extent_bytes(VkExtent3D e, uint32_t layers, uint32_t texel)
{
    return (uint64_t)e.width * e.height * e.depth * (layers ? layers : 1) * texel;
}

/* name(image, count, regions): the bytes of count regions of type region_t,
   each with its extent and the image subresource it copies, in image. */
#define REGIONS_BYTES(name, region_t, extent, subresource)                                      \
    static uint64_t name(VkImage image, uint32_t count, const region_t *regions)                \
    {                                                                                           \
        uint32_t texel = uvk_image_texel_bytes(image);                                          \
        uint64_t bytes = 0;                                                                     \
        for (uint32_t i = 0; i < count; i++)                                                    \
            bytes += extent_bytes(regions[i].extent, regions[i].subresource.layerCount, texel); \
        return bytes;                                                                           \
    }
REGIONS_BYTES(image_bytes, VkImageCopy, extent, srcSubresource)
REGIONS_BYTES(buffer_image_bytes, VkBufferImageCopy, imageExtent, imageSubresource)
REGIONS_BYTES(image_bytes2, VkImageCopy2, extent, srcSubresource)
REGIONS_BYTES(buffer_image_bytes2, VkBufferImageCopy2, imageExtent, imageSubresource)

void uvk_dt_vkCmdCopyImage(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkImage src, VkImageLayout sl,
                           VkImage dst, VkImageLayout dl, uint32_t count, const VkImageCopy *regions)
{
    uvk_slot_t d;
    copy_begin(&d, n, cb, UPTI_MEMORY_COPY_COPY_IMAGE, D2D, image_bytes(src, count, regions));
    n->vkCmdCopyImage(cb, src, sl, dst, dl, count, regions);
    uvk_op_end(n, cb, &d);
}

void uvk_dt_vkCmdCopyBufferToImage(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkBuffer src, VkImage dst,
                                   VkImageLayout dl, uint32_t count, const VkBufferImageCopy *regions)
{
    uvk_slot_t d;
    copy_begin(&d, n, cb, UPTI_MEMORY_COPY_COPY_BUFFER_TO_IMAGE, D2D, buffer_image_bytes(dst, count, regions));
    n->vkCmdCopyBufferToImage(cb, src, dst, dl, count, regions);
    uvk_op_end(n, cb, &d);
}

void uvk_dt_vkCmdCopyImageToBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkImage src,
                                   VkImageLayout sl, VkBuffer dst, uint32_t count, const VkBufferImageCopy *regions)
{
    uvk_slot_t d;
    copy_begin(&d, n, cb, UPTI_MEMORY_COPY_COPY_IMAGE_TO_BUFFER, D2D, buffer_image_bytes(src, count, regions));
    n->vkCmdCopyImageToBuffer(cb, src, sl, dst, count, regions);
    uvk_op_end(n, cb, &d);
}

/* The Vulkan 1.3 (VK_KHR_copy_commands2) forms: one info structure, and a
   KHR alias of the same type. COPY2(cmd, info_t, op, bytes) defines the
   wrappers of cmd and cmdKHR, copies of op and bytes(info) bytes. */
#define COPY2(cmd, info_t, op, bytes)                                                                  \
    static void timed_##cmd(const upti_vulkan_dispatch_t *n, PFN_##cmd fn, VkCommandBuffer cb,         \
                            const info_t *info)                                                        \
    {                                                                                                  \
        uvk_slot_t d;                                                                                  \
        copy_begin(&d, n, cb, op, D2D, info != NULL ? bytes(info) : 0);                                \
        fn(cb, info);                                                                                  \
        uvk_op_end(n, cb, &d);                                                                         \
    }                                                                                                  \
    void uvk_dt_##cmd(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, const info_t *info)         \
    {                                                                                                  \
        timed_##cmd(n, n->cmd, cb, info);                                                              \
    }                                                                                                  \
    void uvk_dt_##cmd##KHR(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, const info_t *info)    \
    {                                                                                                  \
        timed_##cmd(n, n->cmd##KHR, cb, info);                                                         \
    }

static uint64_t copy_buffer2_bytes(const VkCopyBufferInfo2 *info)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < info->regionCount; i++)
        bytes += info->pRegions[i].size;
    return bytes;
}

static uint64_t copy_image2_bytes(const VkCopyImageInfo2 *info)
{
    return image_bytes2(info->srcImage, info->regionCount, info->pRegions);
}

static uint64_t buffer_to_image2_bytes(const VkCopyBufferToImageInfo2 *info)
{
    return buffer_image_bytes2(info->dstImage, info->regionCount, info->pRegions);
}

static uint64_t image_to_buffer2_bytes(const VkCopyImageToBufferInfo2 *info)
{
    return buffer_image_bytes2(info->srcImage, info->regionCount, info->pRegions);
}

COPY2(vkCmdCopyBuffer2, VkCopyBufferInfo2, UPTI_MEMORY_COPY_COPY_BUFFER, copy_buffer2_bytes)
COPY2(vkCmdCopyImage2, VkCopyImageInfo2, UPTI_MEMORY_COPY_COPY_IMAGE, copy_image2_bytes)
COPY2(vkCmdCopyBufferToImage2, VkCopyBufferToImageInfo2, UPTI_MEMORY_COPY_COPY_BUFFER_TO_IMAGE, buffer_to_image2_bytes)
COPY2(vkCmdCopyImageToBuffer2, VkCopyImageToBufferInfo2, UPTI_MEMORY_COPY_COPY_IMAGE_TO_BUFFER, image_to_buffer2_bytes)

void uvk_dt_vkCmdPipelineBarrier(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkPipelineStageFlags src,
                                 VkPipelineStageFlags dst, VkDependencyFlags flags, uint32_t nm,
                                 const VkMemoryBarrier *m, uint32_t nb, const VkBufferMemoryBarrier *b, uint32_t ni,
                                 const VkImageMemoryBarrier *im)
{
    uvk_slot_t d;
    copy_begin(&d, n, cb, UPTI_MEMORY_COPY_BARRIER, UPTI_MEMORY_DIRECTION_NONE, 0);
    n->vkCmdPipelineBarrier(cb, src, dst, flags, nm, m, nb, b, ni, im);
    uvk_op_end(n, cb, &d);
}

