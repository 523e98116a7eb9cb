/* SPDX-License-Identifier: MIT */
/* How the layer times the command buffers of a queue family: a pure function
 * of the family's properties, apart so that the unit tests reach it without
 * a Vulkan device (tests/unit/test_vk_families.c). */
#ifndef UPTI_VULKAN_FAMILY_QUERIES_H
#define UPTI_VULKAN_FAMILY_QUERIES_H

#include <vulkan/vulkan_core.h>

#include <stdint.h>

typedef enum uvk_family_queries_t {
    UVK_QUERIES_RECORDED, /* reset and copied by commands the layer records into the command buffers */
    UVK_QUERIES_HOST,     /* reset from the host, read with vkGetQueryPoolResults (uvk_cb_t.host_reset) */
    UVK_QUERIES_NONE      /* none: the family's timestampValidBits is 0 (uvk_cb_t.no_timestamps) */
} uvk_family_queries_t;

/* Of family among a device's nfamilies queue families (their queueFlags and
   timestampValidBits); a family out of range (UINT32_MAX: a command pool the
   layer did not see) is taken to be of graphics or compute. read: 1 under
   UPTI_VK_QUERIES=host. A family without timestamps can have none written
   (vkCmdWriteTimestamp, VUID-vkCmdWriteTimestamp-timestampValidBits-00829);
   one without graphics or compute can neither reset nor copy queries in a
   command buffer (vkCmdResetQueryPool, vkCmdCopyQueryPoolResults). */
static inline uvk_family_queries_t uvk_family_queries(const VkQueueFlags *flags, const uint32_t *valid_bits,
                                                      uint32_t nfamilies, uint32_t family, int read)
{
    if (family >= nfamilies)
        return read ? UVK_QUERIES_HOST : UVK_QUERIES_RECORDED;
    if (valid_bits[family] == 0)
        return UVK_QUERIES_NONE;
    if (read || (flags[family] & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) == 0)
        return UVK_QUERIES_HOST;
    return UVK_QUERIES_RECORDED;
}

#endif
