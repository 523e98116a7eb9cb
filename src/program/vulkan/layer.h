/* SPDX-License-Identifier: MIT */
/* Internal interface of libupti-vulkan: shared by the generated wrappers
 * (vulkan_wrappers.c) and the hand-written layer (layer.c, objects.c). */
#ifndef UPTI_VULKAN_LAYER_H
#define UPTI_VULKAN_LAYER_H

#include "../sdk/layer_records.h"
#include "tick_map.h"

#include <upti/runtime.h>
#include <upti/vulkan.h>

#include <vulkan/vk_layer.h>

#include <stdatomic.h>
#include <stddef.h>

/* The layer's name, as its manifest and vkEnumerate*LayerProperties say it. */
#define UVK_LAYER_NAME "VK_LAYER_UPTI_trace"

/* The table registered with UPTI: tools may chain its entries; initially the wrappers. */
extern upti_vulkan_dispatch_t uvk_registered;
/* UPTI's VULKAN_API plans, indexed by operation; all NULL until registration. */
extern const upti_operation_plan_t *const *uvk_api_plans;
/* 1 once a tool (or a subscriber) is present: vk*GetProcAddr then hand out trampolines. */
extern int uvk_tracing;

/* --- registration (layer.c) --- */
void uvk_register_slow(void);
extern _Atomic int uvk_reg_state; /* 0 not yet, 1 in progress, 2 done */
/* Delivers a record the layer made (a label, a module or pipeline, an
 * allocation) to UPTI: one description of it, for every emitter. corr NULL:
 * the current call's; string_offset: a const char * member copied with it, or 0. */
static inline void uvk_emit(upti_tracing_kind_t kind, uint32_t op, upti_callback_phase_t phase,
                            const upti_runtime_correlation_t *corr, void *record, size_t string_offset)
{
    upti_layer_emit(kind, op, phase, corr, record, string_offset, NULL);
}

static inline void uvk_ensure_registered(void)
{
    if (__builtin_expect(atomic_load_explicit(&uvk_reg_state, memory_order_acquire) == 2, 1))
        return;
    uvk_register_slow();
}

/* The agent of a physical device (0 if unknown). */
upti_agent_id_t uvk_agent_of(VkPhysicalDevice phys);

/* --- commands recorded with work on the device that the layer does not time --- */
/* 1 once a command buffer was begun whose operations share timestamps (command_buffers.c). */
extern int uvk_shared_timestamps;
/* Such a command is recorded into cb: the next operation recorded into it
   writes its own start timestamp, shares none with the one before
   (command_buffers.c). */
void uvk_cmd_untimed(VkCommandBuffer cb);
/* uvk_cmd_untimed once operations may share timestamps: called by the
   wrapper of every vkCmd* that does work on the device (all but those that
   only set state) and by the timed ones when they are recorded untimed
   (a load and a branch otherwise: on GPUs, without a tool). */
static inline void uvk_cmd_device_work(VkCommandBuffer cb)
{
    if (__builtin_expect(__atomic_load_n(&uvk_shared_timestamps, __ATOMIC_RELAXED), 0))
        uvk_cmd_untimed(cb);
}

/* --- the generated commands (vulkan_wrappers.c) --- */
typedef enum uvk_level_t { UVK_GLOBAL, UVK_INSTANCE, UVK_DEVICE } uvk_level_t;

typedef struct uvk_command_t {
    const char *name;
    uint32_t op;                    /* UPTI_VULKAN_API_* */
    uvk_level_t level;              /* by the command's first parameter */
    size_t offset;                  /* of its entry in upti_vulkan_dispatch_t */
    PFN_vkVoidFunction trampoline;  /* calls through uvk_registered */
} uvk_command_t;

/* The command called name, or NULL if the layer does not wrap it. */
const uvk_command_t *uvk_command_find(const char *name);
/* The i-th command in name order, NULL past the end. */
const uvk_command_t *uvk_command_at(size_t i);
/* 1 for the commands that return a VkResult, by operation. */
extern const unsigned char uvk_returns_result[UPTI_VULKAN_API_LAST];
/* Puts each command's wrapper into t. */
void uvk_fill_wrappers(upti_vulkan_dispatch_t *t);

/* --- dispatchable objects (objects.c) ---
 * Every dispatchable handle starts with the loader's dispatch pointer, shared
 * by an instance and its physical devices, and by a device, its queues and
 * command buffers: the layer's state is keyed on it. */
/* The layer's means of measuring a device's clock without
   VK_EXT_calibrated_timestamps (clock_probe.c): a command buffer that writes
   one timestamp, submitted on one of the device's queues. */
typedef struct uvk_probe_t {
    VkQueue queue;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkQueryPool queries;
    VkFence fence;
    uvk_tick_map_t map;       /* of the tightest try of the last measurement */
    uint64_t bound;           /* ns: how far map can be off (half its window, plus a tick) */
    uint64_t at;              /* when it was measured, UPTI's clock */
    uint32_t measurements;
    int stuck;                /* a try's fence did not signal: no more tries */
} uvk_probe_t;

/* What the layer knows of a device's timestamps (device_clock.c). */
typedef struct uvk_device_state_t {
    upti_agent_id_t agent;
    VkPhysicalDevice phys;
    float period;         /* ns per tick */
    uint32_t valid_bits;  /* the least of its compute queue families' (and the probe's) */
    int timestamps;       /* every compute queue family has them */
    int calibrated;       /* VK_EXT_calibrated_timestamps is enabled */
    int measured;         /* no calibrated timestamps: probe measures the clock (under uvk_dt_lock) */
    VkPhysicalDeviceMemoryProperties memory; /* for the buffers query results are copied into */
    int cpu;                                 /* VK_PHYSICAL_DEVICE_TYPE_CPU (lavapipe) */
    VkQueueFlags family_flags[32];           /* of its queue families (the first 32) */
    uint32_t family_valid_bits[32];          /* their timestampValidBits (0: no timestamps there) */
    uint32_t nfamilies;
    /* Host query reset (the layer enabled it, or the program did), for the
       queries of command buffers of queue families without graphics or compute. */
    PFN_vkResetQueryPool reset_pool;
    uvk_probe_t probe;
    uint64_t deviation;   /* of the last calibration, ns */
    uvk_tick_map_t map;   /* calibrated: the last calibration's mapping ... */
    uint64_t map_at;      /* ... made then (UPTI's clock; 0: none yet) */
    uint32_t mapped_measurements; /* measured: probe.measurements when last recorded in the metadata */
    VkFence spare[8];     /* the layer's signalled fences, reset for reuse (under uvk_dt_lock) */
    uint32_t nspare;
    /* Timeline semaphores (the layer enabled them, or the program did): one
       per queue, signalled by the last batch of each traced submission with
       the queue's next value. */
    PFN_vkGetSemaphoreCounterValue get_counter;
    PFN_vkWaitSemaphores wait_semaphores;
    /* The queues the layer traced submissions to: their unread submissions
       and their timeline semaphores (devtime.h; under uvk_dt_lock). */
    struct uvk_queue_rec_t **queues;
    uint32_t nqueues, capqueues;
} uvk_device_state_t;

typedef struct uvk_object_t {
    _Atomic(void *) key;
    int is_device;
    VkInstance instance;                /* an instance's own handle */
    uint32_t api_version;               /* instances: the program's apiVersion (1.0 if it gave none) */
    int properties2;                    /* instances: VK_KHR_get_physical_device_properties2 enabled */
    VkDevice device;                    /* a device's own handle */
    PFN_vkGetInstanceProcAddr next_gipa;
    PFN_vkGetDeviceProcAddr next_gdpa;  /* devices */
    unsigned added_extensions;          /* devices: those the layer enabled, not the program (layer.c) */
    upti_vulkan_dispatch_t next;        /* the next layer's entries */
    uvk_device_state_t dt;              /* devices */
} uvk_object_t;

static inline void *uvk_key(const void *handle)
{
    return *(void *const *)handle;
}
/* The object of a dispatch key, or NULL. Lock-free. */
uvk_object_t *uvk_object_find(void *key);
/* A fresh, zeroed object, not yet findable; NULL if the table is full. */
uvk_object_t *uvk_object_add(void);
/* Makes o findable under key, once its fields are written. */
void uvk_object_publish(uvk_object_t *o, void *key);
/* Forgets the object of key. */
void uvk_object_remove(void *key);
/* The objects' slots (objects.c), and how many are handed out. */
#define UVK_MAX_OBJECTS 256
extern uvk_object_t uvk_objects[UVK_MAX_OBJECTS];
extern _Atomic unsigned uvk_objects_used;
/* uvk_object_table past the newest object. */
const upti_vulkan_dispatch_t *uvk_object_table_slow(const void *handle);
/* The next layer's table for any dispatchable handle (never NULL: unknown
   handles get a table of NULL entries). The newest object (a program's
   device, usually) is tried inline: every wrapped call looks its table up. */
static inline const upti_vulkan_dispatch_t *uvk_object_table(const void *handle)
{
    unsigned n = atomic_load_explicit(&uvk_objects_used, memory_order_acquire);
    if (__builtin_expect(handle != NULL && n > 0, 1) &&
        atomic_load_explicit(&uvk_objects[n - 1].key, memory_order_acquire) == uvk_key(handle))
        return &uvk_objects[n - 1].next;
    return uvk_object_table_slow(handle);
}
/* The newest object's table if handle is of it, else NULL (no call: the vkCmd*
   wrappers then go to a copy of themselves that looks the table up in full). */
static inline const upti_vulkan_dispatch_t *uvk_object_table_newest(const void *handle)
{
    unsigned n = atomic_load_explicit(&uvk_objects_used, memory_order_acquire);
    if (__builtin_expect(handle != NULL && n > 0, 1) &&
        atomic_load_explicit(&uvk_objects[n - 1].key, memory_order_acquire) == uvk_key(handle))
        return &uvk_objects[n - 1].next;
    return NULL;
}
#define uvk_device_table(h) uvk_object_table((const void *)(h))
#define uvk_instance_table(h) uvk_object_table((const void *)(h))

#endif
