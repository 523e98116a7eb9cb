/* Device times of Vulkan dispatches (devtime.c): the layer's query pools,
 * fences and KERNEL_DISPATCH records. */
#ifndef UPTI_VULKAN_DEVTIME_H
#define UPTI_VULKAN_DEVTIME_H

#include "layer.h"

/* UPTI's KERNEL_DISPATCH plans; NULL until registration found a tool. */
extern const upti_operation_plan_t *const *uvk_kernel_plans;
/* UPTI's MEMORY_COPY plans; NULL until registration found a tool. */
extern const upti_operation_plan_t *const *uvk_copy_plans;

/* UPTI's MEMORY_ALLOCATION plans (memory.c); NULL until registration found a tool. */
extern const upti_operation_plan_t *const *uvk_alloc_plans;

/* A device was created: its timestamp properties (inst: the instance's next
   entries; calibrated: the layer enabled VK_EXT_calibrated_timestamps). */
void uvk_dt_device_created(uvk_object_t *o, VkPhysicalDevice phys, const upti_vulkan_dispatch_t *inst,
                           int calibrated);
/* A device is about to be destroyed: waits for and emits its dispatches, frees the layer's objects. */
void uvk_dt_device_destroying(uvk_object_t *o);
/* Waits for and emits every pending dispatch (at exit). */
void uvk_dt_drain_all(void);

#endif
