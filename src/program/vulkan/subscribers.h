/* SPDX-License-Identifier: MIT */
/* UPTI's subscriber domains (callback.h) on Vulkan (subscribers.c). */
#ifndef UPTI_VULKAN_SUBSCRIBERS_H
#define UPTI_VULKAN_SUBSCRIBERS_H

#include "devtime.h"

#include <upti/callback.h>
#include <upti/runtime_callback.h>

/* uvk_sub_domains (devtime.h): the enabled-domain word, 0 until uvk_sub_init. */

static inline int uvk_sub_wants(upti_callback_domain_t domain)
{
    return (__atomic_load_n(uvk_sub_domains, __ATOMIC_RELAXED) & (1u << domain)) != 0;
}

/* Registers the layer as a subscriber provider (at registration). */
void uvk_sub_init(void);
/* An operation's details (no device times). */
void uvk_sub_details(const uvk_op_t *o, upti_gpu_op_details_t *d);
/* GPU_OPERATION_APPENDED ENTER or EXIT of o, recorded into cb of device. */
void uvk_sub_appended(const uvk_op_t *o, upti_callback_phase_kind_t phase, VkCommandBuffer cb, VkDevice device);
/* GPU_OPERATION_DISPATCHED or COMPLETED of one execution of o on queue. */
void uvk_sub_device_op(upti_callback_domain_t domain, const uvk_op_t *o, const upti_gpu_op_details_t *details,
                       VkQueue queue, VkDevice device, VkPhysicalDevice phys);
/* MODULE_LOADED or MODULE_UNLOADED of a shader module (operation CODE_OBJECT LOAD) or a
   pipeline (KERNEL_SYMBOL) at the command api_id; id = its handle. */
void uvk_sub_module(upti_callback_domain_t domain, uint32_t api_id, uint32_t operation, VkDevice device,
                    uint64_t id, const char *name);

#endif
