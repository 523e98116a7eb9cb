/* SPDX-License-Identifier: MIT */
/* UPTI — the Vulkan runtime: what tools see of Vulkan calls.
 *
 * libupti-vulkan.so is a Vulkan layer, VK_LAYER_UPTI_trace; its manifest
 * (VkLayer_UPTI_trace.json) lies beside it. `upti run` enables it
 * (VK_ADD_LAYER_PATH and VK_INSTANCE_LAYERS); a program run by hand can do the
 * same. It wraps every command of the Vulkan core versions and of the
 * extensions that need no window-system headers, generated from the
 * registry (vk.xml), extension commands reached through vk*GetProcAddr
 * included, and reports:
 *  - VULKAN_API: every call. The callback payload is an
 *    upti_callback_tracing_vulkan_api_data_t: args.<command>.<parameter> as
 *    the application passed them, retval.<type>_retval at EXIT.
 *    Operations are UPTI_VULKAN_API_<command>, in registry order.
 * Every physical device of the first instance appears among the agents
 * (runtime "vulkan", runtime_handle = the VkPhysicalDevice).
 *
 * upti_at_intercept_table_registration(UPTI_INTERCEPT_TABLE_VULKAN) hands a
 * tool the layer's upti_vulkan_dispatch_t (one table): an entry replaced
 * there is what the application calls, and the saved original traces and
 * calls the next layer.
 *
 * <upti/vulkan_api.h> is generated from the registry.
 */
#ifndef UPTI_VULKAN_H
#define UPTI_VULKAN_H

#include <upti/vulkan_api.h>

/** The version the layer registers its table with ("vulkan"): VK_HEADER_VERSION of its registry. */
#define UPTI_VULKAN_TABLE_VERSION UPTI_VULKAN_REGISTRY_VERSION

#endif
