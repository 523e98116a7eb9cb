/* Device times of Vulkan dispatches, copies and barriers: KERNEL_DISPATCH
 * and MEMORY_COPY records.
 *
 * Recording: while some context wants their kind, each vkCmdDispatch*,
 * buffer copy, fill and update, image copy and pipeline barrier recorded
 * into a command buffer is bracketed by the layer's own commands,
 * into a timestamp query pool the layer owns (one per command buffer):
 *   vkCmdResetQueryPool(2 queries), vkCmdWriteTimestamp(TOP_OF_PIPE),
 *   the dispatch, vkCmdWriteTimestamp(BOTTOM_OF_PIPE).
 * The reset is recorded too, so a command buffer may be submitted any number
 * of times: each execution writes its own pair.
 *
 * Submission: after the program's vkQueueSubmit, the layer submits nothing
 * but a fence of its own (vkQueueSubmit with no batch signals it once all
 * earlier work on the queue is done) and keeps a pending entry per
 * instrumented command buffer: the dispatches' descriptions as recorded, the
 * submit time, the fence.
 *
 * Completion, never waiting in the program's way: at vkWaitForFences,
 * vkGetFenceStatus, vkQueueWaitIdle, vkDeviceWaitIdle and each vkQueueSubmit,
 * pending entries whose fence has signalled are read
 * (vkGetQueryPoolResults without WAIT) and emitted. Only a command buffer
 * submitted again before its previous execution was read makes the layer
 * wait for that execution first (its queries are about to be overwritten).
 * vkFreeCommandBuffers, vkDestroyCommandPool, vkDestroyDevice and exit wait
 * for what is left.
 *
 * Clock: device ticks x timestampPeriod, masked to timestampValidBits, are
 * mapped with VK_EXT_calibrated_timestamps (enabled by the layer on devices
 * that have it) onto CLOCK_MONOTONIC, then onto UPTI's clock by reading
 * both host clocks back to back; recalibrated at each read. A device without
 * the extension gets dispatch records without device times (0) and one
 * "upti:" line.
 */
#include "devtime.h"

#include <upti/buffer_tracing.h>
#include <upti/names.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUERY_PAIRS 256 /* timed dispatches per command buffer recording */

const upti_operation_plan_t *const *uvk_kernel_plans;
const upti_operation_plan_t *const *uvk_copy_plans;

/* One device operation as recorded: a dispatch, a copy or a barrier. */
typedef struct dispatch_t {
    VkQueryPool pool;
    upti_tracing_kind_t kind; /* KERNEL_DISPATCH or MEMORY_COPY */
    upti_memory_direction_t direction;
    uint64_t bytes;
    uint32_t op;
    uint32_t query; /* first of its pair; UINT32_MAX: not timed */
    uint32_t groups[3];
    uint32_t base[3];
    char name[64]; /* the pipeline's entry point, "" if unknown */
    upti_timestamp_t recorded;
    upti_runtime_correlation_t corr;
} dispatch_t;

typedef struct cb_state_t {
    VkCommandBuffer cb;
    VkCommandPool cmd_pool;
    uvk_object_t *dev;
    VkQueryPool pool;
    char pipeline_name[64];
    uint32_t n, cap;
    dispatch_t *d;
    struct pending_t *inflight; /* the submission of its last execution, not yet read */
    int warned_full;
    struct cb_state_t *next;
} cb_state_t;

/* One vkQueueSubmit's instrumented dispatches (of all its command buffers). */
typedef struct pending_t {
    uvk_object_t *dev;
    VkQueue queue;
    VkFence fence;
    upti_timestamp_t submitted;
    uint32_t n;
    dispatch_t *d;
    struct pending_t *next;
} pending_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* Written under g_lock; read without it only to skip the lock when empty. */
static cb_state_t *g_cbs;
static pending_t *g_pending;
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Pipelines: compute pipeline -> its entry point's name. */
typedef struct pipeline_t {
    VkPipeline pipeline;
    char name[64];
    struct pipeline_t *next;
} pipeline_t;
static pipeline_t *g_pipelines;

static upti_timestamp_t now(void)
{
    upti_timestamp_t t = 0;
    upti_get_timestamp(&t);
    return t;
}

static int wanted(upti_tracing_kind_t kind, uint32_t op)
{
    const upti_operation_plan_t *const *plans = __atomic_load_n(
        kind == UPTI_TRACING_KIND_KERNEL_DISPATCH ? &uvk_kernel_plans : &uvk_copy_plans, __ATOMIC_ACQUIRE);
    return plans != NULL && upti_runtime_plan(plans, op) != NULL;
}

/* --- device state --- */

void uvk_dt_device_created(uvk_object_t *o, VkPhysicalDevice phys, const upti_vulkan_dispatch_t *inst,
                           int calibrated)
{
    uvk_device_state_t *s = &o->dt;
    memset(s, 0, sizeof *s);
    VkPhysicalDeviceProperties props;
    inst->vkGetPhysicalDeviceProperties(phys, &props);
    s->period = props.limits.timestampPeriod;
    s->agent = uvk_agent_of(phys);
    uint32_t nf = 0;
    inst->vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, NULL);
    VkQueueFamilyProperties fams[32];
    if (nf > 32)
        nf = 32;
    inst->vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, fams);
    s->valid_bits = 64;
    s->timestamps = props.limits.timestampComputeAndGraphics ? 1 : 0;
    for (uint32_t i = 0; i < nf; i++)
        if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
            if (fams[i].timestampValidBits == 0)
                s->timestamps = 0;
            else if (fams[i].timestampValidBits < s->valid_bits)
                s->valid_bits = fams[i].timestampValidBits;
        }
    s->calibrated = calibrated && o->next.vkGetCalibratedTimestampsEXT != NULL;
    if (!s->timestamps)
        upti_runtime_warn("vulkan: a compute queue family of this device has no timestamps; "
                          "its dispatches are traced without device times");
    else if (!s->calibrated)
        upti_runtime_warn("vulkan: the device has no VK_EXT_calibrated_timestamps; "
                          "its dispatches are traced without device times");
}

/* Device ns of a tick count, and the offset from device ns to UPTI's clock. */
static int calibrate(uvk_object_t *o, int64_t *offset)
{
    uvk_device_state_t *s = &o->dt;
    if (!s->calibrated)
        return 0;
    VkCalibratedTimestampInfoEXT info[2] = {
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_DEVICE_EXT},
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT},
    };
    uint64_t ts[2], deviation = 0;
    if (o->next.vkGetCalibratedTimestampsEXT(o->device, 2, info, ts, &deviation) != VK_SUCCESS)
        return 0;
    /* CLOCK_MONOTONIC -> UPTI's clock (CLOCK_MONOTONIC_RAW): the closest of a few back-to-back reads. */
    int64_t best = 0;
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        upti_timestamp_t u = now();
        clock_gettime(CLOCK_MONOTONIC, &b);
        uint64_t an = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
        uint64_t bn = (uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec;
        if (bn - an < best_gap) {
            best_gap = bn - an;
            best = (int64_t)u - (int64_t)(an + (bn - an) / 2);
        }
    }
    uint64_t mask = s->valid_bits >= 64 ? UINT64_MAX : ((1ull << s->valid_bits) - 1);
    int64_t dev_ns = (int64_t)((double)(ts[0] & mask) * s->period);
    *offset = (int64_t)ts[1] - dev_ns + best;
    s->deviation = deviation;
    return 1;
}

/* --- command buffers --- */

static cb_state_t *cb_find(VkCommandBuffer cb)
{
    for (cb_state_t *s = g_cbs; s != NULL; s = s->next)
        if (s->cb == cb)
            return s;
    return NULL;
}

static void emit_pending(pending_t *p, const uint64_t *ticks, int64_t offset, int timed);

/* Reads and emits p if its fence has signalled (or, wait: after waiting for
   it); unlinks and frees it then. Returns 1 if done. Under g_lock. */
static int complete(pending_t *p, int wait)
{
    uvk_object_t *o = p->dev;
    VkResult fence_state = VK_SUCCESS;
    if (p->fence != VK_NULL_HANDLE) {
        VkResult r = wait ? o->next.vkWaitForFences(o->device, 1, &p->fence, VK_TRUE, 5000000000ull)
                          : o->next.vkGetFenceStatus(o->device, p->fence);
        if (r == VK_NOT_READY || r == VK_TIMEOUT)
            return 0;
        fence_state = r;
    }
    uint64_t *ticks = calloc(2 * (size_t)p->n + 2, sizeof *ticks);
    int64_t offset = 0;
    int timed = ticks != NULL && calibrate(o, &offset);
    for (uint32_t i = 0; timed && i < p->n; i++) {
        if (p->d[i].query == UINT32_MAX)
            continue;
        if (o->next.vkGetQueryPoolResults(o->device, p->d[i].pool, p->d[i].query, 2, 2 * sizeof(uint64_t),
                                          &ticks[2 * i], sizeof(uint64_t), VK_QUERY_RESULT_64_BIT) != VK_SUCCESS)
            p->d[i].query = UINT32_MAX;
    }
    emit_pending(p, ticks, offset, timed);
    free(ticks);
    for (cb_state_t *s = g_cbs; s != NULL; s = s->next)
        if (s->inflight == p)
            s->inflight = NULL;
    for (pending_t **pp = &g_pending; *pp != NULL; pp = &(*pp)->next)
        if (*pp == p) {
            STORE(*pp, p->next);
            break;
        }
    /* A signalled fence is reset and kept for a later submission. */
    if (p->fence != VK_NULL_HANDLE && fence_state == VK_SUCCESS && o->dt.nspare < 8 &&
        o->next.vkResetFences(o->device, 1, &p->fence) == VK_SUCCESS)
        o->dt.spare[o->dt.nspare++] = p->fence;
    else if (p->fence != VK_NULL_HANDLE)
        o->next.vkDestroyFence(o->device, p->fence, NULL);
    free(p->d);
    free(p);
    return 1;
}

static void emit_pending(pending_t *p, const uint64_t *ticks, int64_t offset, int timed)
{
    uvk_device_state_t *s = &p->dev->dt;
    uint64_t mask = s->valid_bits >= 64 ? UINT64_MAX : ((1ull << s->valid_bits) - 1);
    for (uint32_t i = 0; i < p->n; i++) {
        const dispatch_t *d = &p->d[i];
        upti_timestamp_t start = 0, end = 0;
        if (timed && d->query != UINT32_MAX) {
            start = (uint64_t)((int64_t)((double)(ticks[2 * i] & mask) * s->period) + offset);
            end = (uint64_t)((int64_t)((double)(ticks[2 * i + 1] & mask) * s->period) + offset);
        }
        upti_runtime_record_t rec;
        memset(&rec, 0, sizeof rec);
        rec.size = sizeof rec;
        rec.kind = d->kind;
        rec.operation = d->op;
        rec.phase = UPTI_CALLBACK_PHASE_NONE;
        rec.correlation = &d->corr;
        if (d->kind == UPTI_TRACING_KIND_MEMORY_COPY) {
            upti_buffer_tracing_memory_copy_record_t c;
            memset(&c, 0, sizeof c);
            c.size = sizeof c;
            c.agent_id = s->agent;
            c.queue_id = (uint64_t)(uintptr_t)p->queue;
            c.runtime_context = (uint64_t)(uintptr_t)p->dev->device;
            c.direction = d->direction;
            if (d->direction != UPTI_MEMORY_DIRECTION_HOST_TO_DEVICE && d->direction != UPTI_MEMORY_DIRECTION_NONE)
                c.src_agent_id = s->agent;
            if (d->direction != UPTI_MEMORY_DIRECTION_DEVICE_TO_HOST && d->direction != UPTI_MEMORY_DIRECTION_NONE)
                c.dst_agent_id = s->agent;
            c.bytes = d->bytes;
            c.queued_timestamp = d->recorded;
            c.submit_timestamp = p->submitted;
            c.start_timestamp = start;
            c.end_timestamp = end;
            rec.record = &c;
            upti_runtime_emit(&rec);
            continue;
        }
        upti_buffer_tracing_kernel_dispatch_record_t r;
        memset(&r, 0, sizeof r);
        r.size = sizeof r;
        r.agent_id = s->agent;
        r.queue_id = (uint64_t)(uintptr_t)p->queue;
        r.runtime_context = (uint64_t)(uintptr_t)p->dev->device;
        r.kernel_name = d->name[0] != '\0' ? d->name : "<vulkan dispatch>";
        r.work_dim = 3;
        for (int k = 0; k < 3; k++) {
            r.global_offset[k] = d->base[k];
            r.global_size[k] = d->groups[k];
        }
        r.queued_timestamp = d->recorded;
        r.submit_timestamp = p->submitted;
        r.start_timestamp = start;
        r.end_timestamp = end;
        rec.record = &r;
        rec.string_offset = offsetof(upti_buffer_tracing_kernel_dispatch_record_t, kernel_name);
        upti_runtime_emit(&rec);
    }
}

/* Completes what has finished (dev NULL: on every device). Under g_lock. */
static void poll_locked(uvk_object_t *dev, int wait)
{
    for (pending_t *p = g_pending, *next; p != NULL; p = next) {
        next = p->next;
        if (dev == NULL || p->dev == dev)
            complete(p, wait);
    }
}

static void poll(uvk_object_t *dev)
{
    if (LOAD(g_pending) == NULL)
        return;
    pthread_mutex_lock(&g_lock);
    poll_locked(dev, 0);
    pthread_mutex_unlock(&g_lock);
}

static void cb_forget_locked(cb_state_t *s)
{
    if (s->inflight != NULL)
        complete(s->inflight, 1); /* its queries are read before the pool goes */
    if (s->pool != VK_NULL_HANDLE)
        s->dev->next.vkDestroyQueryPool(s->dev->device, s->pool, NULL);
    for (cb_state_t **pp = &g_cbs; *pp != NULL; pp = &(*pp)->next)
        if (*pp == s) {
            STORE(*pp, s->next);
            break;
        }
    free(s->d);
    free(s);
}

/* --- the wrapped commands --- */

static uvk_object_t *object_of(const upti_vulkan_dispatch_t *n)
{
    return (uvk_object_t *)((char *)n - offsetof(uvk_object_t, next));
}

VkResult uvk_dt_vkCreateComputePipelines(const upti_vulkan_dispatch_t *n, VkDevice device,
                                         VkPipelineCache cache, uint32_t count,
                                         const VkComputePipelineCreateInfo *infos,
                                         const VkAllocationCallbacks *alloc, VkPipeline *pipelines)
{
    VkResult r = n->vkCreateComputePipelines(device, cache, count, infos, alloc, pipelines);
    if (r != VK_SUCCESS || !uvk_tracing)
        return r;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < count; i++) {
        pipeline_t *p = malloc(sizeof *p);
        if (p == NULL)
            break;
        p->pipeline = pipelines[i];
        snprintf(p->name, sizeof p->name, "%s", infos[i].stage.pName != NULL ? infos[i].stage.pName : "");
        p->next = g_pipelines;
        g_pipelines = p;
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

void uvk_dt_vkDestroyPipeline(const upti_vulkan_dispatch_t *n, VkDevice device, VkPipeline pipeline,
                              const VkAllocationCallbacks *alloc)
{
    if (uvk_tracing && pipeline != VK_NULL_HANDLE) {
        pthread_mutex_lock(&g_lock);
        for (pipeline_t **pp = &g_pipelines; *pp != NULL; pp = &(*pp)->next)
            if ((*pp)->pipeline == pipeline) {
                pipeline_t *dead = *pp;
                *pp = dead->next;
                free(dead);
                break;
            }
        pthread_mutex_unlock(&g_lock);
    }
    n->vkDestroyPipeline(device, pipeline, alloc);
}

VkResult uvk_dt_vkAllocateCommandBuffers(const upti_vulkan_dispatch_t *n, VkDevice device,
                                         const VkCommandBufferAllocateInfo *info, VkCommandBuffer *cbs)
{
    VkResult r = n->vkAllocateCommandBuffers(device, info, cbs);
    if (r != VK_SUCCESS || !uvk_tracing)
        return r;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < info->commandBufferCount; i++) {
        cb_state_t *s = calloc(1, sizeof *s);
        if (s == NULL)
            break;
        s->cb = cbs[i];
        s->cmd_pool = info->commandPool;
        s->dev = object_of(n);
        s->next = g_cbs;
        STORE(g_cbs, s);
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

void uvk_dt_vkFreeCommandBuffers(const upti_vulkan_dispatch_t *n, VkDevice device, VkCommandPool pool,
                                 uint32_t count, const VkCommandBuffer *cbs)
{
    if (LOAD(g_cbs) != NULL) {
        pthread_mutex_lock(&g_lock);
        for (uint32_t i = 0; i < count; i++) {
            cb_state_t *s = cbs[i] != VK_NULL_HANDLE ? cb_find(cbs[i]) : NULL;
            if (s != NULL)
                cb_forget_locked(s);
        }
        pthread_mutex_unlock(&g_lock);
    }
    n->vkFreeCommandBuffers(device, pool, count, cbs);
}

void uvk_dt_vkDestroyCommandPool(const upti_vulkan_dispatch_t *n, VkDevice device, VkCommandPool pool,
                                 const VkAllocationCallbacks *alloc)
{
    if (LOAD(g_cbs) != NULL && pool != VK_NULL_HANDLE) {
        pthread_mutex_lock(&g_lock);
        for (cb_state_t *s = g_cbs, *next; s != NULL; s = next) {
            next = s->next;
            if (s->cmd_pool == pool && s->dev == object_of(n))
                cb_forget_locked(s);
        }
        pthread_mutex_unlock(&g_lock);
    }
    n->vkDestroyCommandPool(device, pool, alloc);
}

VkResult uvk_dt_vkBeginCommandBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                                     const VkCommandBufferBeginInfo *info)
{
    if (LOAD(g_cbs) != NULL) {
        pthread_mutex_lock(&g_lock);
        cb_state_t *s = cb_find(cb);
        if (s != NULL) {
            /* A new recording: the last execution's queries are read first. */
            if (s->inflight != NULL)
                complete(s->inflight, 1);
            s->n = 0;
            s->pipeline_name[0] = '\0';
        }
        pthread_mutex_unlock(&g_lock);
    }
    return n->vkBeginCommandBuffer(cb, info);
}

void uvk_dt_vkCmdBindPipeline(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkPipelineBindPoint point,
                              VkPipeline pipeline)
{
    if (point == VK_PIPELINE_BIND_POINT_COMPUTE && LOAD(g_cbs) != NULL) {
        pthread_mutex_lock(&g_lock);
        cb_state_t *s = cb_find(cb);
        if (s != NULL) {
            s->pipeline_name[0] = '\0';
            for (pipeline_t *p = g_pipelines; p != NULL; p = p->next)
                if (p->pipeline == pipeline)
                    memcpy(s->pipeline_name, p->name, sizeof s->pipeline_name);
        }
        pthread_mutex_unlock(&g_lock);
    }
    n->vkCmdBindPipeline(cb, point, pipeline);
}

/* Where a dispatch's second timestamp goes (pool NULL: nowhere). */
typedef struct slot_t {
    VkQueryPool pool;
    uint32_t query;
} slot_t;

/* Describes an operation about to be recorded and writes its first timestamp. */
static slot_t op_begin(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, upti_tracing_kind_t kind, uint32_t op,
                       const uint32_t groups[3], const uint32_t base[3], upti_memory_direction_t direction,
                       uint64_t bytes)
{
    slot_t slot = {VK_NULL_HANDLE, 0};
    if (!wanted(kind, op) || LOAD(g_cbs) == NULL)
        return slot;
    pthread_mutex_lock(&g_lock);
    cb_state_t *s = cb_find(cb);
    dispatch_t *d = NULL;
    if (s != NULL && s->n == s->cap) {
        uint32_t cap = s->cap ? 2 * s->cap : 16;
        dispatch_t *grown = realloc(s->d, cap * sizeof *grown);
        if (grown != NULL) {
            s->d = grown;
            s->cap = cap;
        }
    }
    if (s != NULL && s->n < s->cap) {
        d = &s->d[s->n];
        memset(d, 0, sizeof *d);
        d->kind = kind;
        d->op = op;
        d->direction = direction;
        d->bytes = bytes;
        if (groups != NULL)
            memcpy(d->groups, groups, sizeof d->groups);
        if (base != NULL)
            memcpy(d->base, base, sizeof d->base);
        memcpy(d->name, s->pipeline_name, sizeof d->name);
        d->recorded = now();
        upti_runtime_capture_correlation(NULL, &d->corr);
        d->query = UINT32_MAX;
        uvk_device_state_t *ds = &s->dev->dt;
        if (ds->timestamps && s->pool == VK_NULL_HANDLE) {
            VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                        .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                        .queryCount = 2 * QUERY_PAIRS};
            if (n->vkCreateQueryPool(s->dev->device, &qi, NULL, &s->pool) != VK_SUCCESS)
                s->pool = VK_NULL_HANDLE;
        }
        if (ds->timestamps && s->pool != VK_NULL_HANDLE && s->n < QUERY_PAIRS) {
            d->pool = s->pool;
            d->query = 2 * s->n;
            n->vkCmdResetQueryPool(cb, s->pool, d->query, 2);
            n->vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s->pool, d->query);
            slot.pool = s->pool;
            slot.query = d->query + 1;
        } else if (ds->timestamps && s->n >= QUERY_PAIRS && !s->warned_full) {
            s->warned_full = 1;
            upti_runtime_warn("vulkan: more than 256 device operations in one command buffer recording; "
                              "the rest are traced without device times");
        }
        s->n++;
    }
    pthread_mutex_unlock(&g_lock);
    return slot;
}

static slot_t dispatch_begin(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t op,
                             const uint32_t groups[3], const uint32_t base[3])
{
    return op_begin(n, cb, UPTI_TRACING_KIND_KERNEL_DISPATCH, op, groups, base, UPTI_MEMORY_DIRECTION_NONE, 0);
}

static slot_t copy_begin(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t op,
                         upti_memory_direction_t direction, uint64_t bytes)
{
    return op_begin(n, cb, UPTI_TRACING_KIND_MEMORY_COPY, op, NULL, NULL, direction, bytes);
}

/* The second timestamp, after the operation (the command buffer is the program's to sync). */
static void dispatch_end(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, slot_t slot)
{
    if (slot.pool != VK_NULL_HANDLE)
        n->vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, slot.pool, slot.query);
}

void uvk_dt_vkCmdDispatch(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z)
{
    const uint32_t groups[3] = {x, y, z};
    slot_t d = dispatch_begin(n, cb, UPTI_KERNEL_DISPATCH_VK_DISPATCH, groups, NULL);
    n->vkCmdDispatch(cb, x, y, z);
    dispatch_end(n, cb, d);
}

static void dispatch_base(const upti_vulkan_dispatch_t *n, PFN_vkCmdDispatchBase fn, VkCommandBuffer cb,
                          uint32_t bx, uint32_t by, uint32_t bz, uint32_t x, uint32_t y, uint32_t z)
{
    const uint32_t groups[3] = {x, y, z}, base[3] = {bx, by, bz};
    slot_t d = dispatch_begin(n, cb, UPTI_KERNEL_DISPATCH_VK_DISPATCH_BASE, groups, base);
    fn(cb, bx, by, bz, x, y, z);
    dispatch_end(n, cb, d);
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
    static const uint32_t unknown[3] = {0, 0, 0}; /* in the buffer, read by the device */
    slot_t d = dispatch_begin(n, cb, UPTI_KERNEL_DISPATCH_VK_DISPATCH_INDIRECT, unknown, NULL);
    n->vkCmdDispatchIndirect(cb, buffer, offset);
    dispatch_end(n, cb, d);
}

/* --- copies, fills, updates, barriers (MEMORY_COPY) --- */

#define D2D UPTI_MEMORY_DIRECTION_DEVICE_TO_DEVICE

void uvk_dt_vkCmdCopyBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkBuffer src, VkBuffer dst,
                            uint32_t count, const VkBufferCopy *regions)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < count; i++)
        bytes += regions[i].size;
    slot_t d = copy_begin(n, cb, UPTI_MEMORY_COPY_COPY_BUFFER, D2D, bytes);
    n->vkCmdCopyBuffer(cb, src, dst, count, regions);
    dispatch_end(n, cb, d);
}

static void copy_buffer2(const upti_vulkan_dispatch_t *n, PFN_vkCmdCopyBuffer2 fn, VkCommandBuffer cb,
                         const VkCopyBufferInfo2 *info)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; info != NULL && i < info->regionCount; i++)
        bytes += info->pRegions[i].size;
    slot_t d = copy_begin(n, cb, UPTI_MEMORY_COPY_COPY_BUFFER, D2D, bytes);
    fn(cb, info);
    dispatch_end(n, cb, d);
}

void uvk_dt_vkCmdCopyBuffer2(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, const VkCopyBufferInfo2 *info)
{
    copy_buffer2(n, n->vkCmdCopyBuffer2, cb, info);
}

void uvk_dt_vkCmdCopyBuffer2KHR(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, const VkCopyBufferInfo2 *info)
{
    copy_buffer2(n, n->vkCmdCopyBuffer2KHR, cb, info);
}

/* VK_WHOLE_SIZE (the rest of the buffer) counts 0 bytes: the layer does not follow buffer sizes. */
void uvk_dt_vkCmdFillBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkBuffer dst, VkDeviceSize offset,
                            VkDeviceSize size, uint32_t data)
{
    slot_t d = copy_begin(n, cb, UPTI_MEMORY_COPY_FILL_BUFFER, UPTI_MEMORY_DIRECTION_HOST_TO_DEVICE,
                          size == VK_WHOLE_SIZE ? 0 : size);
    n->vkCmdFillBuffer(cb, dst, offset, size, data);
    dispatch_end(n, cb, d);
}

void uvk_dt_vkCmdUpdateBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkBuffer dst,
                              VkDeviceSize offset, VkDeviceSize size, const void *data)
{
    slot_t d = copy_begin(n, cb, UPTI_MEMORY_COPY_WRITE_BUFFER, UPTI_MEMORY_DIRECTION_HOST_TO_DEVICE, size);
    n->vkCmdUpdateBuffer(cb, dst, offset, size, data);
    dispatch_end(n, cb, d);
}

/* Image copies: bytes are not counted (the layer does not follow image formats). */
void uvk_dt_vkCmdCopyImage(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkImage src, VkImageLayout sl,
                           VkImage dst, VkImageLayout dl, uint32_t count, const VkImageCopy *regions)
{
    slot_t d = copy_begin(n, cb, UPTI_MEMORY_COPY_COPY_IMAGE, D2D, 0);
    n->vkCmdCopyImage(cb, src, sl, dst, dl, count, regions);
    dispatch_end(n, cb, d);
}

void uvk_dt_vkCmdCopyBufferToImage(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkBuffer src, VkImage dst,
                                   VkImageLayout dl, uint32_t count, const VkBufferImageCopy *regions)
{
    slot_t d = copy_begin(n, cb, UPTI_MEMORY_COPY_COPY_BUFFER_TO_IMAGE, D2D, 0);
    n->vkCmdCopyBufferToImage(cb, src, dst, dl, count, regions);
    dispatch_end(n, cb, d);
}

void uvk_dt_vkCmdCopyImageToBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkImage src,
                                   VkImageLayout sl, VkBuffer dst, uint32_t count, const VkBufferImageCopy *regions)
{
    slot_t d = copy_begin(n, cb, UPTI_MEMORY_COPY_COPY_IMAGE_TO_BUFFER, D2D, 0);
    n->vkCmdCopyImageToBuffer(cb, src, sl, dst, count, regions);
    dispatch_end(n, cb, d);
}

void uvk_dt_vkCmdPipelineBarrier(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkPipelineStageFlags src,
                                 VkPipelineStageFlags dst, VkDependencyFlags flags, uint32_t nm,
                                 const VkMemoryBarrier *m, uint32_t nb, const VkBufferMemoryBarrier *b, uint32_t ni,
                                 const VkImageMemoryBarrier *im)
{
    slot_t d = copy_begin(n, cb, UPTI_MEMORY_COPY_BARRIER, UPTI_MEMORY_DIRECTION_NONE, 0);
    n->vkCmdPipelineBarrier(cb, src, dst, flags, nm, m, nb, b, ni, im);
    dispatch_end(n, cb, d);
}

/* The program's submission, made by call(ctx) with the layer's bookkeeping
   around it: cbs are the command buffers it executes, in order. */
static VkResult submit_traced(const upti_vulkan_dispatch_t *n, VkQueue queue, const VkCommandBuffer *cbs,
                              uint32_t ncb, VkResult (*call)(void *ctx), void *ctx)
{
    uvk_object_t *o = object_of(n);
    pthread_mutex_lock(&g_lock);
    poll_locked(o, 0);
    /* A command buffer whose last execution is unread: read it before this one overwrites it. */
    uint32_t total = 0;
    for (uint32_t i = 0; i < ncb; i++) {
        cb_state_t *s = cb_find(cbs[i]);
        if (s != NULL && s->inflight != NULL)
            complete(s->inflight, 1);
        if (s != NULL)
            total += s->n;
    }
    pthread_mutex_unlock(&g_lock);
    upti_timestamp_t submitted = now();
    VkResult r = call(ctx);
    if (r != VK_SUCCESS || total == 0)
        return r;
    pending_t *p = calloc(1, sizeof *p);
    dispatch_t *d = p != NULL ? malloc(total * sizeof *d) : NULL;
    if (d == NULL) {
        free(p);
        return r;
    }
    p->dev = o;
    p->queue = queue;
    p->submitted = submitted;
    p->d = d;
    /* One fence of the layer's after the program's batches: signalled when they are done. */
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    pthread_mutex_lock(&g_lock);
    p->fence = o->dt.nspare > 0 ? o->dt.spare[--o->dt.nspare] : VK_NULL_HANDLE;
    pthread_mutex_unlock(&g_lock);
    if (p->fence == VK_NULL_HANDLE && n->vkCreateFence(o->device, &fi, NULL, &p->fence) != VK_SUCCESS)
        p->fence = VK_NULL_HANDLE;
    else if (n->vkQueueSubmit(queue, 0, NULL, p->fence) != VK_SUCCESS) {
        n->vkDestroyFence(o->device, p->fence, NULL);
        p->fence = VK_NULL_HANDLE;
    }
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < ncb; i++) {
        cb_state_t *s = cb_find(cbs[i]);
        if (s == NULL || s->n == 0 || p->n + s->n > total)
            continue;
        memcpy(&p->d[p->n], s->d, s->n * sizeof *d);
        p->n += s->n;
        s->inflight = p;
    }
    if (p->fence == VK_NULL_HANDLE) {
        /* Without a fence of its own the layer cannot know when to read: no device times. */
        for (uint32_t i = 0; i < p->n; i++)
            p->d[i].query = UINT32_MAX;
    }
    p->next = g_pending;
    STORE(g_pending, p);
    pthread_mutex_unlock(&g_lock);
    return r;
}

typedef struct submit_args_t {
    const upti_vulkan_dispatch_t *n;
    PFN_vkQueueSubmit2 submit2;
    VkQueue queue;
    uint32_t count;
    const VkSubmitInfo *submits;
    const VkSubmitInfo2 *submits2;
    VkFence fence;
} submit_args_t;

static VkResult call_submit(void *ctx)
{
    submit_args_t *a = ctx;
    return a->n->vkQueueSubmit(a->queue, a->count, a->submits, a->fence);
}

static VkResult call_submit2(void *ctx)
{
    submit_args_t *a = ctx;
    return a->submit2(a->queue, a->count, a->submits2, a->fence);
}

VkResult uvk_dt_vkQueueSubmit(const upti_vulkan_dispatch_t *n, VkQueue queue, uint32_t count,
                              const VkSubmitInfo *submits, VkFence fence)
{
    if (LOAD(g_cbs) == NULL)
        return n->vkQueueSubmit(queue, count, submits, fence);
    uint32_t ncb = 0;
    for (uint32_t i = 0; i < count; i++)
        ncb += submits[i].commandBufferCount;
    VkCommandBuffer *cbs = malloc((ncb + 1) * sizeof *cbs);
    if (cbs == NULL)
        return n->vkQueueSubmit(queue, count, submits, fence);
    ncb = 0;
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < submits[i].commandBufferCount; j++)
            cbs[ncb++] = submits[i].pCommandBuffers[j];
    submit_args_t a = {n, NULL, queue, count, submits, NULL, fence};
    VkResult r = submit_traced(n, queue, cbs, ncb, call_submit, &a);
    free(cbs);
    return r;
}

static VkResult submit2(const upti_vulkan_dispatch_t *n, PFN_vkQueueSubmit2 fn, VkQueue queue, uint32_t count,
                        const VkSubmitInfo2 *submits, VkFence fence)
{
    if (LOAD(g_cbs) == NULL)
        return fn(queue, count, submits, fence);
    uint32_t ncb = 0;
    for (uint32_t i = 0; i < count; i++)
        ncb += submits[i].commandBufferInfoCount;
    VkCommandBuffer *cbs = malloc((ncb + 1) * sizeof *cbs);
    if (cbs == NULL)
        return fn(queue, count, submits, fence);
    ncb = 0;
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < submits[i].commandBufferInfoCount; j++)
            cbs[ncb++] = submits[i].pCommandBufferInfos[j].commandBuffer;
    submit_args_t a = {n, fn, queue, count, NULL, submits, fence};
    VkResult r = submit_traced(n, queue, cbs, ncb, call_submit2, &a);
    free(cbs);
    return r;
}

VkResult uvk_dt_vkQueueSubmit2(const upti_vulkan_dispatch_t *n, VkQueue queue, uint32_t count,
                               const VkSubmitInfo2 *submits, VkFence fence)
{
    return submit2(n, n->vkQueueSubmit2, queue, count, submits, fence);
}

VkResult uvk_dt_vkQueueSubmit2KHR(const upti_vulkan_dispatch_t *n, VkQueue queue, uint32_t count,
                                  const VkSubmitInfo2 *submits, VkFence fence)
{
    return submit2(n, n->vkQueueSubmit2KHR, queue, count, submits, fence);
}

VkResult uvk_dt_vkWaitForFences(const upti_vulkan_dispatch_t *n, VkDevice device, uint32_t count,
                                const VkFence *fences, VkBool32 all, uint64_t timeout)
{
    VkResult r = n->vkWaitForFences(device, count, fences, all, timeout);
    poll(object_of(n));
    return r;
}

VkResult uvk_dt_vkGetFenceStatus(const upti_vulkan_dispatch_t *n, VkDevice device, VkFence fence)
{
    VkResult r = n->vkGetFenceStatus(device, fence);
    poll(object_of(n));
    return r;
}

VkResult uvk_dt_vkQueueWaitIdle(const upti_vulkan_dispatch_t *n, VkQueue queue)
{
    VkResult r = n->vkQueueWaitIdle(queue);
    poll(object_of(n));
    return r;
}

VkResult uvk_dt_vkDeviceWaitIdle(const upti_vulkan_dispatch_t *n, VkDevice device)
{
    VkResult r = n->vkDeviceWaitIdle(device);
    poll(object_of(n));
    return r;
}

void uvk_dt_device_destroying(uvk_object_t *o)
{
    pthread_mutex_lock(&g_lock);
    poll_locked(o, 1);
    for (cb_state_t *s = g_cbs, *next; s != NULL; s = next) {
        next = s->next;
        if (s->dev == o)
            cb_forget_locked(s);
    }
    while (o->dt.nspare > 0)
        o->next.vkDestroyFence(o->device, o->dt.spare[--o->dt.nspare], NULL);
    pthread_mutex_unlock(&g_lock);
}

void uvk_dt_drain_all(void)
{
    pthread_mutex_lock(&g_lock);
    poll_locked(NULL, 1);
    pthread_mutex_unlock(&g_lock);
}
