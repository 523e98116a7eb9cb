/* SPDX-License-Identifier: MIT */
/* Device times of Vulkan operations: what the files that time them share.
 *
 *   device_clock.c     a device's timestamp properties; device ticks -> UPTI's clock
 *   tick_map.h         the arithmetic of that mapping (wrapping counters)
 *   clock_probe.c      a device's clock measured, without calibrated timestamps
 *   pipelines.c        compute pipelines and shader modules -> names
 *   command_buffers.c  command buffers followed: the operations recorded into
 *                      them (primary and secondary)
 *   family_queries.h   how a queue family's command buffers are timed
 *   query_pools.c      the layer's query pools, the buffers their times are
 *                      copied into, command pools' queue families
 *   timed_commands.c   the vkCmd* the layer brackets with timestamps
 *   images.c           images' texel sizes, for the bytes of image copies
 *   labels.c           VK_EXT_debug_utils labels as marker ranges
 *   subscribers.c      the subscriber domains (callback.h), subscribers.h
 *   submissions.c      submissions, their completion (fences, query reads)
 *                      and the KERNEL_DISPATCH / MEMORY_COPY records
 *
 * How it works is told at the top of command_buffers.c and submissions.c. */
#ifndef UPTI_VULKAN_DEVTIME_H
#define UPTI_VULKAN_DEVTIME_H

#include "env.h"
#include "family_queries.h"
#include "handle_map.h"
#include "layer.h"

#include <upti/buffer_tracing.h>
#include <upti/callback.h>
#include <upti/marker.h>
#include <upti/names.h>

#include <pthread.h>
#include <stdlib.h>

/* UPTI's KERNEL_DISPATCH plans; NULL until registration found a tool. */
extern const upti_operation_plan_t *const *uvk_kernel_plans;
/* UPTI's MEMORY_COPY plans; NULL until registration found a tool. */
extern const upti_operation_plan_t *const *uvk_copy_plans;

/* UPTI's CODE_OBJECT plans (pipelines.c), MARKER_API plans (labels.c); NULL until registration found a tool. */
extern const upti_operation_plan_t *const *uvk_code_plans;
extern const upti_operation_plan_t *const *uvk_marker_plans;

/* UPTI's MEMORY_ALLOCATION plans (memory.c); NULL until registration found a tool. */
extern const upti_operation_plan_t *const *uvk_alloc_plans;

/* A device was created: its timestamp properties (inst: the instance's next
   entries; ci: the program's create info, set_loader_data: the loader's
   callback for the layer's own dispatchable objects, NULL if none; wanted:
   device times are wanted; calibrated: the layer enabled
   VK_EXT_calibrated_timestamps, else its clock is measured (clock_probe.c);
   timeline: timeline semaphores are enabled on it; host_reset: hostQueryReset is). */
void uvk_dt_device_created(uvk_object_t *o, VkPhysicalDevice phys, const upti_vulkan_dispatch_t *inst,
                           const VkDeviceCreateInfo *ci, PFN_vkSetDeviceLoaderData set_loader_data, int wanted,
                           int calibrated, int timeline, int host_reset);
/* A device is about to be destroyed: waits for and emits its dispatches, frees the layer's objects. */
void uvk_dt_device_destroying(uvk_object_t *o);
/* Waits for and emits every pending dispatch (at exit). */
void uvk_dt_drain_all(void);

/* --- shared by the files above --- */

#define UVK_POOL_QUERIES 512 /* timestamps per query pool: a recording takes as many pools as it needs */
#define UVK_RESET_QUERIES 128 /* queries reset by one recorded vkCmdResetQueryPool (divides UVK_POOL_QUERIES) */
#define UVK_NAME_MAX 128
#define UVK_NAME_SHORT 32 /* a name shorter than this is copied as this many bytes (one inline copy) */

/* One of a command buffer's query pools, and on a CPU device the
   host-visible buffer its results are copied into by the command buffer
   itself at its end (vkCmdCopyQueryPoolResults): read without a driver call
   once the submission is done. */
typedef struct uvk_qpool_t {
    VkQueryPool pool;
    VkBuffer buffer;         /* VK_NULL_HANDLE if none: then read with vkGetQueryPoolResults */
    VkDeviceMemory memory;
    const uint64_t *results; /* buffer, mapped: UVK_POOL_QUERIES values */
    uint32_t used;           /* queries [0, used) written by the command buffer's recording */
} uvk_qpool_t;

/* One device operation as recorded: a dispatch, a copy or a barrier. */
typedef struct uvk_op_t {
    VkQueryPool pool;
    const uint64_t *ticks;    /* its pair's values in its pool's mapped results; NULL: read from the pool */
    upti_tracing_kind_t kind; /* KERNEL_DISPATCH or MEMORY_COPY */
    upti_memory_direction_t direction;
    uint64_t bytes;
    uint32_t op;
    uint32_t query; /* its start; query + 1 its end (the next operation's start where shared); UINT32_MAX: not timed */
    uint32_t groups[3];
    uint32_t base[3];
    uint64_t kernel_id; /* the bound VkPipeline */
    int secondary;  /* recorded into a secondary command buffer */
    int cb_range;   /* MARKER_API: the range of a named command buffer's execution (no queries) */
    char name[UVK_NAME_MAX]; /* the pipeline's name, "" if unknown */
    upti_timestamp_t recorded;
    upti_runtime_correlation_t corr;
} uvk_op_t;

/* A command buffer the layer follows. */
typedef struct uvk_cb_t {
    VkCommandBuffer cb;
    VkCommandPool cmd_pool;
    uvk_object_t *dev;
    int secondary;             /* VK_COMMAND_BUFFER_LEVEL_SECONDARY */
    int untimed;               /* a secondary continuing a render pass: no queries */
    int no_timestamps;         /* of a queue family whose timestampValidBits is 0: untimed, said once */
    int host_reset;            /* of a queue family without graphics or compute (or UPTI_VK_QUERIES=host):
                                  its queries are reset from the host at each submission and read with
                                  vkGetQueryPoolResults; untimed without hostQueryReset */
    uvk_qpool_t *pools;        /* the layer's query pools, kept across recordings, filled in order */
    uint32_t npools;
    uint32_t queries;          /* timestamps written by this recording, in all its pools */
    uint32_t cur;              /* the pool its next timestamps go to (== npools: not made yet) */
    uint32_t reset_to;         /* queries [0, reset_to) of pools[cur] reset by this recording */
    int shares;                /* consecutive operations share a timestamp (a CPU device: in order) */
    int share;                 /* shares, and the last command recorded is an operation's (its end
                                  timestamp): the next operation's start (cleared by uvk_cmd_untimed) */
    char pipeline_name[UVK_NAME_MAX];
    size_t pipeline_name_len;  /* strlen(pipeline_name) */
    VkPipeline pipeline;
    int in_render_pass;        /* queries cannot be reset there: operations untimed */
    uint32_t n, cap;           /* its operations, those of executed secondaries included */
    uvk_op_t *d;
    VkCommandBuffer *executed; /* secondaries it executes (their queries are theirs) */
    uint32_t nexec, capexec;
    struct uvk_pending_t *inflight; /* the submission of its last execution, not yet read */
    uint32_t listed;                /* unread submissions whose cbs list it (uvk_pending_t.cbs) */
    struct uvk_cb_t *prev, *next;   /* uvk_dt_cbs, newest first */
} uvk_cb_t;

/* A queue the layer traced submissions to (uvk_device_state_t.queues). */
typedef struct uvk_queue_rec_t {
    VkQueue queue;
    VkSemaphore semaphore; /* the layer's timeline semaphore of the queue, VK_NULL_HANDLE until used */
    uint64_t value;        /* the last value it was given to signal */
    uint64_t reached;      /* the highest value it was read at */
    struct uvk_pending_t *head, *tail; /* its unread submissions, oldest first (qnext) */
    int blocked;           /* poll_locked's: an older submission is not done */
} uvk_queue_rec_t;

/* One vkQueueSubmit's instrumented operations (of all its command buffers). */
typedef struct uvk_pending_t {
    uvk_object_t *dev;
    VkQueue queue;
    uvk_queue_rec_t *q;    /* queue's record */
    VkFence program_fence; /* the program's, if it gave one: signalled when the submission is done */
    int fence_lost;        /* the program reset or destroyed it unsignalled: the layer cannot know when */
    VkFence fence;         /* without one: the layer's, signalled after the submission (or NULL: ...) */
    VkSemaphore semaphore; /* ... the queue's timeline semaphore, signalled with value by its last batch */
    uint64_t value;
    upti_timestamp_t submitted;
    uint32_t n, cap;       /* its operations, and the room in d */
    uvk_op_t *d;
    uvk_cb_t **cbs;        /* the command buffers whose inflight it is (primaries, their secondaries) */
    uint32_t ncbs, capcbs;
    struct uvk_pending_t *prev, *next;   /* uvk_dt_pending: every device's, oldest first */
    struct uvk_pending_t *qprev, *qnext; /* its queue's, oldest first */
} uvk_pending_t;

/* Guards the command buffers, pending submissions and devices' spare fences. */
extern pthread_mutex_t uvk_dt_lock;
/* Written under uvk_dt_lock; read without it only to skip the lock when empty. */
extern uvk_cb_t *uvk_dt_cbs;
extern uvk_pending_t *uvk_dt_pending; /* the oldest unread submission */
/* Set once a command buffer recorded an operation (command_buffers.c): until then a
   submission has nothing for the layer to follow (read without the lock). */
extern int uvk_ops_recorded;
#define UVK_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define UVK_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* UPTI's environment variable id (upti_env_get), read at the first call and
   kept in *once (-1 until then): the layer reads its settings on hot paths. */
static inline uint64_t uvk_env_once(upti_env_id id, _Atomic int64_t *once)
{
    int64_t v = atomic_load_explicit(once, memory_order_relaxed);
    if (v < 0) {
        v = (int64_t)upti_env_get(id);
        atomic_store_explicit(once, v, memory_order_relaxed);
    }
    return (uint64_t)v;
}

static inline upti_timestamp_t uvk_now(void)
{
    upti_timestamp_t t = 0;
    upti_get_timestamp(&t);
    return t;
}

/* The layer's object of a device, from its table of next entries. */
static inline uvk_object_t *uvk_object_of(const upti_vulkan_dispatch_t *n)
{
    return (uvk_object_t *)((char *)n - offsetof(uvk_object_t, next));
}

/* Whether some context wants (kind, op): KERNEL_DISPATCH, MEMORY_COPY or MARKER_API. */
/* Subscribers' enabled-domain word (subscribers.c), and the GPU_OPERATION domains in it. */
extern const uint32_t *uvk_sub_domains;
#define UVK_SUB_GPU_OPS                                                                   \
    ((1u << UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED) |                               \
     (1u << UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED) |                             \
     (1u << UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED))
static inline int uvk_dt_wanted(upti_tracing_kind_t kind, uint32_t op)
{
    /* Subscribers' GPU_OPERATION domains (APPENDED, DISPATCHED, COMPLETED) want every operation. */
    if (kind != UPTI_TRACING_KIND_MARKER_API && (__atomic_load_n(uvk_sub_domains, __ATOMIC_RELAXED) & UVK_SUB_GPU_OPS) != 0)
        return 1;
    const upti_operation_plan_t *const *plans = __atomic_load_n(
        kind == UPTI_TRACING_KIND_KERNEL_DISPATCH ? &uvk_kernel_plans
        : kind == UPTI_TRACING_KIND_MEMORY_COPY   ? &uvk_copy_plans
                                                  : &uvk_marker_plans,
        __ATOMIC_ACQUIRE);
    return plans != NULL && upti_runtime_plan(plans, op) != NULL;
}

/* device_clock.c: *map maps the device's ticks onto UPTI's clock now
   (calibrated, or the last measurement); 0 if its clock cannot be mapped.
   Under uvk_dt_lock. */
int uvk_dt_calibrate(uvk_object_t *o, uvk_tick_map_t *map);

/* clock_probe.c: makes o's probe (on a queue of a family ci creates, of fams
   with timestamps) and measures the clock; 1 if done (o->dt.probe is set). */
int uvk_probe_create(uvk_object_t *o, const VkDeviceCreateInfo *ci, PFN_vkSetDeviceLoaderData set_loader_data,
                     const VkQueueFamilyProperties *fams, uint32_t nfams);
/* Measures o's clock again if its last measurement is old, where the
   program's call lets the layer use the probe's queue: queue is idle and
   externally synchronized (vkQueueWaitIdle), or VK_NULL_HANDLE: every queue
   of the device is (vkDeviceWaitIdle). */
void uvk_probe_refresh(uvk_object_t *o, VkQueue queue);
/* Destroys o's probe (under uvk_dt_lock). */
void uvk_probe_destroy(uvk_object_t *o);

/* pipelines.c: copies the name of a compute pipeline into out ("" if unknown); returns its length. */
size_t uvk_pipeline_name(VkPipeline pipeline, char out[UVK_NAME_MAX]);
/* The object name the program gave (type, handle) with vkSetDebugUtilsObjectNameEXT; 0 if none.
   Kept for pipelines, shader modules and command buffers. */
int uvk_object_name(VkObjectType type, uint64_t handle, char out[UVK_NAME_MAX]);
/* Forgets the name of an object that goes away. */
void uvk_object_name_forget(VkObjectType type, uint64_t handle);

/* labels.c: a label's RANGE_START or RANGE_STOP on queue (device_side: of a
   command buffer) at time t on UPTI's clock. */
void uvk_label_emit(VkQueue queue, int device_side, uint32_t op, const char *name, upti_timestamp_t t,
                    const upti_runtime_correlation_t *corr);

/* images.c: bytes per texel of an image's format (0 if unknown). */
uint32_t uvk_image_texel_bytes(VkImage image);

/* command_buffers.c (under uvk_dt_lock) */
uvk_cb_t *uvk_cb_find(VkCommandBuffer cb);
void uvk_cb_forget_locked(uvk_cb_t *s);

/* query_pools.c: query pool k of s (k == s->npools), created with its
   results buffer on a CPU device (not for a command buffer that resets from
   the host); NULL if it cannot be (said once). */
uvk_qpool_t *uvk_qpool_add(const upti_vulkan_dispatch_t *n, uvk_cb_t *s, uint32_t k);
/* 1 under UPTI_VK_TIMESTAMPS=pairs: every operation writes its own start
   and end timestamps, on a CPU device too (command_buffers.c). Read once. */
int uvk_timestamps_paired(void);
/* Destroys q (its query pool, its results buffer). */
void uvk_qpool_destroy(uvk_object_t *dev, uvk_qpool_t *q);
/* uvk_family_queries (family_queries.h) of the family of the program's command pool on dev. Under uvk_dt_lock. */
uvk_family_queries_t uvk_cmd_pool_queries_locked(uvk_object_t *dev, VkCommandPool pool);
/* Forgets a command pool the program destroys; all those of a device that goes away. Under uvk_dt_lock. */
void uvk_cmd_pool_forget_locked(uvk_object_t *dev, VkCommandPool pool);
void uvk_cmd_pools_forget_locked(uvk_object_t *dev);

/* Where an operation's second timestamp goes (pool NULL: nowhere). */
typedef struct uvk_slot_t {
    VkQueryPool pool;
    uint32_t query;
    VkPipelineStageFlagBits end_stage; /* of its end timestamp (command_buffers.c: TOP_OF_PIPE on a CPU device) */
    int appended;     /* a subscriber was told APPENDED ENTER: EXIT follows */
    VkDevice device;
    uvk_op_t op;      /* the operation, for APPENDED EXIT */
} uvk_slot_t;
/* uvk_op_begin for an operation the caller found wanted (uvk_dt_wanted, uvk_dt_cbs not empty). */
void uvk_op_begin_wanted(uvk_slot_t *slot, const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                         upti_tracing_kind_t kind, uint32_t op, const uint32_t groups[3], const uint32_t base[3],
                         upti_memory_direction_t direction, uint64_t bytes, const char *name);
/* Describes an operation about to be recorded into cb and writes its first
   timestamp into *slot (small unless a subscriber wants APPENDED: passed by
   pointer). name: a label's name, NULL for the bound pipeline's. */
static inline void uvk_op_begin(uvk_slot_t *slot, const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                                upti_tracing_kind_t kind, uint32_t op, const uint32_t groups[3],
                                const uint32_t base[3], upti_memory_direction_t direction, uint64_t bytes,
                                const char *name)
{
    if (uvk_dt_wanted(kind, op) && UVK_LOAD(uvk_dt_cbs) != NULL) {
        uvk_op_begin_wanted(slot, n, cb, kind, op, groups, base, direction, bytes, name);
    } else {
        slot->pool = VK_NULL_HANDLE;
        slot->appended = 0;
        uvk_cmd_device_work(cb); /* recorded untimed */
    }
}
/* vkCmdDispatch recorded with its timestamps (the caller found dispatches wanted). */
void uvk_dispatch_timed(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z);
/* Whether dispatch op is traced; if not, the caller calls straight through
   (the dispatch then counted as work the layer does not time). */
static inline int uvk_dispatch_wanted(uint32_t op, VkCommandBuffer cb)
{
    if (uvk_dt_wanted(UPTI_TRACING_KIND_KERNEL_DISPATCH, op) && UVK_LOAD(uvk_dt_cbs) != NULL)
        return 1;
    uvk_cmd_device_work(cb);
    return 0;
}
/* The most recorded command, inline in its generated wrapper (generate.py's
   INLINE_DEVTIME: no call between the wrapper and the test of the plans). */
static inline void uvk_dt_vkCmdDispatch(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t x, uint32_t y,
                                        uint32_t z)
{
    if (!uvk_dispatch_wanted(UPTI_KERNEL_DISPATCH_VK_DISPATCH, cb)) {
        n->vkCmdDispatch(cb, x, y, z);
        return;
    }
    uvk_dispatch_timed(n, cb, x, y, z);
}
/* Tells the subscriber of APPENDED that slot's operation is recorded. */
void uvk_op_end_appended(VkCommandBuffer cb, const uvk_slot_t *slot);
/* Writes the second timestamp, after the operation. */
static inline void uvk_op_end(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, const uvk_slot_t *slot)
{
    if (slot->pool != VK_NULL_HANDLE)
        n->vkCmdWriteTimestamp(cb, slot->end_stage, slot->pool, slot->query);
    if (__builtin_expect(slot->appended, 0))
        uvk_op_end_appended(cb, slot);
}

/* submissions.c: reads and emits p if done (wait: after waiting; UVK_FENCE_SIGNALLED:
   the program's fence of p is known to have signalled); under uvk_dt_lock. 1 if done. */
#define UVK_FENCE_SIGNALLED 2
int uvk_pending_complete(uvk_pending_t *p, int wait);
/* submissions.c: waits for p and reads it, after its queue's older submissions (done by
   then too), so that a queue's records come out in submission order; under uvk_dt_lock. */
void uvk_pending_wait(uvk_pending_t *p);
/* submissions.c: s is about to be freed (its query pools destroyed) or executed again (its
   queries overwritten) while unread submissions still list it (one did not finish within the
   wait): their operations read from s's pools become untimed and s leaves their lists. Under
   uvk_dt_lock. */
void uvk_pending_drop_cb(uvk_cb_t *s);

/* Room, zeroed, for what the layer keeps of an object the next layer has just
   created with result r: NULL where the call failed, nothing is traced or
   memory is short (the object then goes unfollowed). */
static inline void *uvk_created(VkResult r, size_t size)
{
    return r == VK_SUCCESS && uvk_tracing ? calloc(1, size) : NULL;
}

#endif
