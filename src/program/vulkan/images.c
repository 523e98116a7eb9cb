/* SPDX-License-Identifier: MIT */
/* Images and the bytes their copies move: the texel size of each image's
 * format (uncompressed color, depth and stencil formats of Vulkan 1.0; 0 for
 * the others: compressed, multi-planar, extension formats), followed from
 * vkCreateImage to vkDestroyImage. */
#include "devtime.h"

#include <stdlib.h>

typedef struct image_t {
    VkImage image;
    uint32_t texel; /* bytes per texel, 0 if unknown */
} image_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uvk_handle_map_t g_images; /* image_t, by VkImage */

/* Bytes per texel of f (ranges of VkFormat's core values), 0 if unknown. */
static uint32_t format_bytes(VkFormat f)
{
    static const struct {
        VkFormat first, last;
        uint32_t bytes;
    } k_ranges[] = {
        {VK_FORMAT_R4G4_UNORM_PACK8, VK_FORMAT_R4G4_UNORM_PACK8, 1},
        {VK_FORMAT_R4G4B4A4_UNORM_PACK16, VK_FORMAT_A1R5G5B5_UNORM_PACK16, 2},
        {VK_FORMAT_R8_UNORM, VK_FORMAT_R8_SRGB, 1},
        {VK_FORMAT_R8G8_UNORM, VK_FORMAT_R8G8_SRGB, 2},
        {VK_FORMAT_R8G8B8_UNORM, VK_FORMAT_B8G8R8_SRGB, 3},
        {VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_A2B10G10R10_SINT_PACK32, 4},
        {VK_FORMAT_R16_UNORM, VK_FORMAT_R16_SFLOAT, 2},
        {VK_FORMAT_R16G16_UNORM, VK_FORMAT_R16G16_SFLOAT, 4},
        {VK_FORMAT_R16G16B16_UNORM, VK_FORMAT_R16G16B16_SFLOAT, 6},
        {VK_FORMAT_R16G16B16A16_UNORM, VK_FORMAT_R16G16B16A16_SFLOAT, 8},
        {VK_FORMAT_R32_UINT, VK_FORMAT_R32_SFLOAT, 4},
        {VK_FORMAT_R32G32_UINT, VK_FORMAT_R32G32_SFLOAT, 8},
        {VK_FORMAT_R32G32B32_UINT, VK_FORMAT_R32G32B32_SFLOAT, 12},
        {VK_FORMAT_R32G32B32A32_UINT, VK_FORMAT_R32G32B32A32_SFLOAT, 16},
        {VK_FORMAT_R64_UINT, VK_FORMAT_R64_SFLOAT, 8},
        {VK_FORMAT_R64G64_UINT, VK_FORMAT_R64G64_SFLOAT, 16},
        {VK_FORMAT_R64G64B64_UINT, VK_FORMAT_R64G64B64_SFLOAT, 24},
        {VK_FORMAT_R64G64B64A64_UINT, VK_FORMAT_R64G64B64A64_SFLOAT, 32},
        {VK_FORMAT_B10G11R11_UFLOAT_PACK32, VK_FORMAT_E5B9G9R9_UFLOAT_PACK32, 4},
        {VK_FORMAT_D16_UNORM, VK_FORMAT_D16_UNORM, 2},
        {VK_FORMAT_X8_D24_UNORM_PACK32, VK_FORMAT_D32_SFLOAT, 4},
        {VK_FORMAT_S8_UINT, VK_FORMAT_S8_UINT, 1},
    };
    for (size_t i = 0; i < sizeof k_ranges / sizeof k_ranges[0]; i++)
        if (f >= k_ranges[i].first && f <= k_ranges[i].last)
            return k_ranges[i].bytes;
    return 0;
}

uint32_t uvk_image_texel_bytes(VkImage image)
{
    pthread_mutex_lock(&g_lock);
    const image_t *i = uvk_handle_map_get(&g_images, (uint64_t)image);
    uint32_t bytes = i != NULL ? i->texel : 0;
    pthread_mutex_unlock(&g_lock);
    return bytes;
}

VkResult uvk_dt_vkCreateImage(const upti_vulkan_dispatch_t *n, VkDevice device, const VkImageCreateInfo *info,
                              const VkAllocationCallbacks *alloc, VkImage *image)
{
    VkResult r = n->vkCreateImage(device, info, alloc, image);
    image_t *i = uvk_created(r, sizeof *i);
    if (i != NULL) {
        i->image = *image;
        i->texel = format_bytes(info->format);
        /* Not kept: its copies' bytes are unknown (0). */
        uvk_handle_map_keep(&g_images, &g_lock, (uint64_t)i->image, i);
    }
    return r;
}

void uvk_dt_vkDestroyImage(const upti_vulkan_dispatch_t *n, VkDevice device, VkImage image,
                           const VkAllocationCallbacks *alloc)
{
    if (uvk_tracing && image != VK_NULL_HANDLE) {
        pthread_mutex_lock(&g_lock);
        free(uvk_handle_map_remove(&g_images, (uint64_t)image));
        pthread_mutex_unlock(&g_lock);
    }
    n->vkDestroyImage(device, image, alloc);
}
