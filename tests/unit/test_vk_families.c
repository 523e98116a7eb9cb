/* SPDX-License-Identifier: MIT */
/* src/program/vulkan/family_queries.h: how the Vulkan layer times the command
 * buffers of a queue family. A graphics or compute family: queries reset and
 * copied by commands recorded into them; a transfer (or video) family: reset
 * from the host and read with vkGetQueryPoolResults; a family whose
 * timestampValidBits is 0: no timestamps at all (writing one there is
 * invalid, VUID-vkCmdWriteTimestamp-timestampValidBits-00829), whatever its
 * flags; a pool the layer did not see: graphics or compute. */
#include "../../src/program/vulkan/family_queries.h"

#include "check.h"
#include "unit_tests.h"

UNIT_TEST(vk_families)
{
    /* A device like many discrete GPUs: graphics+compute, compute, transfer,
       then a transfer family and a video decode family without timestamps. */
    const VkQueueFlags flags[] = {
        VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT,
        VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT,
        VK_QUEUE_TRANSFER_BIT,
        VK_QUEUE_TRANSFER_BIT | VK_QUEUE_SPARSE_BINDING_BIT,
        VK_QUEUE_VIDEO_DECODE_BIT_KHR,
        VK_QUEUE_COMPUTE_BIT,
    };
    const uint32_t bits[] = {64, 64, 36, 0, 0, 0};
    const uint32_t n = 6;
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, 0, 0), UVK_QUERIES_RECORDED);
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, 1, 0), UVK_QUERIES_RECORDED);
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, 2, 0), UVK_QUERIES_HOST);
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, 3, 0), UVK_QUERIES_NONE);
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, 4, 0), UVK_QUERIES_NONE);
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, 5, 0), UVK_QUERIES_NONE);
    /* UPTI_VK_QUERIES=host: every family with timestamps reads from the host. */
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, 0, 1), UVK_QUERIES_HOST);
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, 2, 1), UVK_QUERIES_HOST);
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, 3, 1), UVK_QUERIES_NONE);
    /* A command pool the layer did not see. */
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, UINT32_MAX, 0), UVK_QUERIES_RECORDED);
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, UINT32_MAX, 1), UVK_QUERIES_HOST);
    CHECK_EQ_U64(uvk_family_queries(flags, bits, n, n, 0), UVK_QUERIES_RECORDED);
    return test_result("vk_families");
}
