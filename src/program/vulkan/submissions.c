/* SPDX-License-Identifier: MIT */
/* Submissions of instrumented command buffers, their completion and the
 * KERNEL_DISPATCH / MEMORY_COPY records.
 *
 * Submission: the program's fence, where it gives one, says when the
 * submission is done: the layer adds nothing to it. Without one, where the
 * device has timeline semaphores, the layer adds to the last batch of the
 * program's vkQueueSubmit / vkQueueSubmit2 a signal of a timeline semaphore
 * of its own (one per queue) with the queue's next value, on a copy of the
 * program's batches; it is read at host syncs with
 * vkGetSemaphoreCounterValue. Elsewhere (no timeline semaphores, or a batch
 * chaining structures the layer would have to rewrite other than
 * VkTimelineSemaphoreSubmitInfo), after the program's submission the layer
 * submits nothing but a fence of its own (vkQueueSubmit with no batch
 * signals it once all earlier work on the queue is done). It keeps a pending
 * entry per submission: the operations' descriptions as recorded, the submit
 * time, the fence or the semaphore and value, the command buffers it marks
 * inflight; entries are linked in their queue's list (uvk_queue_rec_t,
 * oldest first) and in one list of all, so a poll looks at each queue's
 * oldest only and a read entry leaves both in O(1).
 *
 * Completion, never waiting in the program's way: at vkWaitForFences,
 * vkGetFenceStatus, vkQueueWaitIdle, vkDeviceWaitIdle and each vkQueueSubmit,
 * pending entries whose fence or semaphore has signalled are read
 * (vkGetQueryPoolResults without WAIT; on a CPU device from the buffers the
 * command buffers copied their queries into, query_pools.c) and emitted.
 * vkResetFences and
 * vkDestroyFence read the entries the program's fences mark first (the fence
 * must be done with by then, and its state goes). Only a command buffer
 * (or a secondary it executes) submitted again before its previous
 * execution was read makes the layer wait for that execution first (its
 * queries are about to be overwritten), reading its queue's older
 * submissions before it (uvk_pending_wait). vkFreeCommandBuffers,
 * vkDestroyCommandPool, vkDestroyDevice and exit wait for what is left.
 */
#include "subscribers.h"

#include <upti/buffer_tracing.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long the layer waits for a submission it must read before the program
   goes on (UPTI_VK_COMPLETION_WAIT_MS, default 5 s; read once), ns. */
static uint64_t completion_wait_ns(void)
{
    static _Atomic int64_t ms = -1;
    return uvk_env_once(UPTI_ENV_VK_COMPLETION_WAIT_MS, &ms) * 1000000;
}

const upti_operation_plan_t *const *uvk_kernel_plans;
const upti_operation_plan_t *const *uvk_copy_plans;
uvk_pending_t *uvk_dt_pending;

static void emit_pending(uvk_pending_t *p, const uint64_t *ticks, const uvk_tick_map_t *map);

/* Read entries kept for later submissions, with their room for operations
   (no allocation per submission in a steady state). Under uvk_dt_lock. */
#define UVK_SPARE_PENDING 64 /* as many as a queue commonly has in flight (allocating each cost some 500 instructions) */
static uvk_pending_t *spare_pending;
static uint32_t nspare_pending;

/* An entry with room for n operations, zeroed but for that room; NULL if memory is short. Under uvk_dt_lock. */
static uvk_pending_t *pending_get(uint32_t n)
{
    uvk_pending_t *p = spare_pending;
    if (p != NULL) {
        spare_pending = p->next;
        nspare_pending--;
    } else if ((p = calloc(1, sizeof *p)) == NULL) {
        return NULL;
    }
    uvk_op_t *d = p->d;
    uint32_t cap = p->cap;
    uvk_cb_t **cbs = p->cbs;
    uint32_t capcbs = p->capcbs;
    if (cap < n) {
        free(d);
        cap = n < 8 ? 8 : n;
        if ((d = malloc(cap * sizeof *d)) == NULL)
            cap = 0;
    }
    memset(p, 0, sizeof *p);
    p->d = d;
    p->cap = cap;
    p->cbs = cbs;
    p->capcbs = capcbs;
    if (d == NULL) {
        free(p->cbs);
        free(p);
        return NULL;
    }
    return p;
}

/* Keeps p for a later submission, or frees it. Under uvk_dt_lock. */
static void pending_put(uvk_pending_t *p)
{
    if (nspare_pending < UVK_SPARE_PENDING && p->cap <= 2 * UVK_POOL_QUERIES) {
        p->next = spare_pending;
        spare_pending = p;
        nspare_pending++;
        return;
    }
    free(p->d);
    free(p->cbs);
    free(p);
}

/* The last of uvk_dt_pending (the newest). */
static uvk_pending_t *pending_tail;

/* Appends p to uvk_dt_pending and to its queue's list. Under uvk_dt_lock. */
static void pending_link(uvk_pending_t *p)
{
    p->next = NULL;
    p->prev = pending_tail;
    if (pending_tail != NULL)
        pending_tail->next = p;
    else
        UVK_STORE(uvk_dt_pending, p);
    pending_tail = p;
    p->qnext = NULL;
    p->qprev = p->q->tail;
    if (p->q->tail != NULL)
        p->q->tail->qnext = p;
    else
        p->q->head = p;
    p->q->tail = p;
}

/* Takes p out of both lists. Under uvk_dt_lock. */
static void pending_unlink(uvk_pending_t *p)
{
    if (p->next != NULL)
        p->next->prev = p->prev;
    else
        pending_tail = p->prev;
    if (p->prev != NULL)
        p->prev->next = p->next;
    else
        UVK_STORE(uvk_dt_pending, p->next);
    if (p->qnext != NULL)
        p->qnext->qprev = p->qprev;
    else
        p->q->tail = p->qprev;
    if (p->qprev != NULL)
        p->qprev->qnext = p->qnext;
    else
        p->q->head = p->qnext;
}

/* The record of queue on o, made at its first traced submission; NULL if memory is short. Under uvk_dt_lock. */
static uvk_queue_rec_t *queue_rec(uvk_object_t *o, VkQueue queue)
{
    uvk_device_state_t *s = &o->dt;
    for (uint32_t i = 0; i < s->nqueues; i++)
        if (s->queues[i]->queue == queue)
            return s->queues[i];
    if (s->nqueues == s->capqueues) {
        uint32_t cap = s->capqueues != 0 ? 2 * s->capqueues : 4;
        uvk_queue_rec_t **grown = realloc(s->queues, cap * sizeof *grown);
        if (grown == NULL)
            return NULL;
        s->queues = grown;
        s->capqueues = cap;
    }
    uvk_queue_rec_t *q = calloc(1, sizeof *q);
    if (q == NULL)
        return NULL;
    q->queue = queue;
    s->queues[s->nqueues++] = q;
    return q;
}

/* Destroys o's queue records and their semaphores (their submissions were read). Under uvk_dt_lock. */
static void queue_recs_free(uvk_object_t *o)
{
    uvk_device_state_t *s = &o->dt;
    for (uint32_t i = 0; i < s->nqueues; i++) {
        if (s->queues[i]->semaphore != VK_NULL_HANDLE)
            o->next.vkDestroySemaphore(o->device, s->queues[i]->semaphore, NULL);
        free(s->queues[i]);
    }
    free(s->queues);
    s->queues = NULL;
    s->nqueues = s->capqueues = 0;
}

/* Reads and emits p if its fence has signalled (or, wait: after waiting for
   it; UVK_FENCE_SIGNALLED: the program's fence is known to have signalled);
   unlinks and frees it then. Returns 1 if done. Under uvk_dt_lock. */
int uvk_pending_complete(uvk_pending_t *p, int wait)
{
    uvk_object_t *o = p->dev;
    VkResult fence_state = p->fence_lost ? VK_NOT_READY : VK_SUCCESS;
    if (p->fence_lost) {
        /* Given up on (fences_released, uvk_dt_device_destroying): read without device times. */
    } else if (p->semaphore != VK_NULL_HANDLE) {
        VkResult r;
        if (p->value <= p->q->reached) {
            r = VK_SUCCESS; /* an earlier read or wait saw the semaphore past p's value */
        } else if (wait) {
            VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                                      .pSemaphores = &p->semaphore, .pValues = &p->value};
            r = o->dt.wait_semaphores(o->device, &wi, completion_wait_ns());
            if (r == VK_SUCCESS)
                p->q->reached = p->value;
        } else {
            uint64_t value = 0;
            r = o->dt.get_counter(o->device, p->semaphore, &value);
            if (r == VK_SUCCESS && value > p->q->reached)
                p->q->reached = value;
            if (r == VK_SUCCESS && value < p->value)
                r = VK_NOT_READY;
        }
        if (r == VK_NOT_READY || r == VK_TIMEOUT)
            return 0;
        if (r != VK_SUCCESS)
            p->fence_lost = 1; /* the device is lost: no times to read */
    } else if (p->fence != VK_NULL_HANDLE) {
        VkResult r = wait ? o->next.vkWaitForFences(o->device, 1, &p->fence, VK_TRUE, completion_wait_ns())
                          : o->next.vkGetFenceStatus(o->device, p->fence);
        if (r == VK_NOT_READY || r == VK_TIMEOUT)
            return 0;
        fence_state = r;
        if (r != VK_SUCCESS)
            p->fence_lost = 1;
    } else if (p->program_fence != VK_NULL_HANDLE) {
        VkResult r = wait == UVK_FENCE_SIGNALLED ? VK_SUCCESS
                     : wait ? o->next.vkWaitForFences(o->device, 1, &p->program_fence, VK_TRUE, completion_wait_ns())
                            : o->next.vkGetFenceStatus(o->device, p->program_fence);
        if (r == VK_NOT_READY || r == VK_TIMEOUT)
            return 0;
        if (r != VK_SUCCESS)
            p->fence_lost = 1; /* the device is lost: no times to read */
    }
    if (p->fence_lost)
        for (uint32_t i = 0; i < p->n; i++)
            p->d[i].query = UINT32_MAX;
    /* ticks: each operation's start and end; then room for the queries of a run read at once. */
    uint64_t ticks_small[4 * 32 + 2];
    uint64_t *ticks = p->n <= 32 ? ticks_small : malloc((4 * (size_t)p->n + 2) * sizeof *ticks);
    if (ticks != NULL)
        memset(ticks, 0, (2 * (size_t)p->n + 2) * sizeof *ticks);
    uint64_t *run = ticks != NULL ? ticks + 2 * (size_t)p->n + 2 : NULL;
    uvk_tick_map_t map;
    int timed = ticks != NULL && uvk_dt_calibrate(o, &map);
    for (uint32_t i = 0; timed && i < p->n;) {
        if (p->d[i].query == UINT32_MAX) {
            i++;
            continue;
        }
        if (p->d[i].ticks != NULL) {
            /* Copied by the command buffer into the pool's results buffer (query_pools.c). */
            ticks[2 * i] = p->d[i].ticks[0];
            ticks[2 * i + 1] = p->d[i].ticks[1];
            i++;
            continue;
        }
        /* A run of operations whose queries follow each other in one pool (a
           command buffer's, in recording order; one's end may be the next
           one's start, command_buffers.c): one read for all. */
        uint32_t j = i + 1;
        while (j < p->n && p->d[j].pool == p->d[i].pool && p->d[j - 1].query != UINT32_MAX &&
               (p->d[j].query == p->d[j - 1].query + 1 || p->d[j].query == p->d[j - 1].query + 2))
            j++;
        uint32_t first = p->d[i].query, count = p->d[j - 1].query + 2 - first; /* at most 2 * (j - i) */
        if (j - i > 1 &&
            o->next.vkGetQueryPoolResults(o->device, p->d[i].pool, first, count, count * sizeof(uint64_t), run,
                                          sizeof(uint64_t), VK_QUERY_RESULT_64_BIT) == VK_SUCCESS) {
            for (; i < j; i++) {
                ticks[2 * i] = run[p->d[i].query - first];
                ticks[2 * i + 1] = run[p->d[i].query + 1 - first];
            }
            continue;
        }
        /* One operation, or a run not all of whose queries are available: each pair on its own. */
        for (; i < j; i++)
            if (o->next.vkGetQueryPoolResults(o->device, p->d[i].pool, p->d[i].query, 2, 2 * sizeof(uint64_t),
                                              &ticks[2 * i], sizeof(uint64_t), VK_QUERY_RESULT_64_BIT) != VK_SUCCESS)
                p->d[i].query = UINT32_MAX;
    }
    emit_pending(p, ticks, timed ? &map : NULL);
    if (ticks != ticks_small)
        free(ticks);
    for (uint32_t i = 0; i < p->ncbs; i++) {
        p->cbs[i]->listed--;
        if (p->cbs[i]->inflight == p)
            p->cbs[i]->inflight = NULL;
    }
    pending_unlink(p);
    /* A signalled fence is reset and kept for a later submission. */
    if (p->fence != VK_NULL_HANDLE && fence_state == VK_SUCCESS && o->dt.nspare < 8 &&
        o->next.vkResetFences(o->device, 1, &p->fence) == VK_SUCCESS)
        o->dt.spare[o->dt.nspare++] = p->fence;
    else if (p->fence != VK_NULL_HANDLE)
        o->next.vkDestroyFence(o->device, p->fence, NULL);
    pending_put(p);
    return 1;
}

/* A command buffer submitted again, recorded again or freed while an execution of it is
   unread waits for that one (p), which need not be its queue's oldest: the older ones are
   read first (they are done when p is: a fence or semaphore signal follows all the queue's
   earlier work), else p's records would come out before theirs. With the layer's semaphore,
   one wait for p's value answers for them all (reached). One wait of at most 5 s in all, as
   for p alone: what is not done by then stays unread (its queries may be overwritten). */
void uvk_pending_wait(uvk_pending_t *p)
{
    uvk_queue_rec_t *q = p->q;
    if (q->head != p && p->semaphore != VK_NULL_HANDLE && !p->fence_lost && p->value > q->reached) {
        VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                                  .pSemaphores = &p->semaphore, .pValues = &p->value};
        VkResult r = p->dev->dt.wait_semaphores(p->dev->device, &wi, completion_wait_ns());
        if (r == VK_TIMEOUT)
            return;
        if (r == VK_SUCCESS)
            q->reached = p->value;
    }
    while (q->head != p)
        if (!uvk_pending_complete(q->head, 1))
            return; /* an older one not done within the wait: neither is p */
    uvk_pending_complete(p, 1);
}

/* Emits p's records; map: of its ticks onto UPTI's clock, NULL if untimed. */
static void emit_pending(uvk_pending_t *p, const uint64_t *ticks, const uvk_tick_map_t *map)
{
    int timed = map != NULL;
    uvk_device_state_t *s = &p->dev->dt;
    upti_timestamp_t range_lo = 0, range_hi = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        const uvk_op_t *d = &p->d[i];
        upti_timestamp_t start = 0, end = 0;
        if (timed && d->query != UINT32_MAX) {
            start = uvk_tick_map_apply(map, ticks[2 * i]);
            end = uvk_tick_map_apply(map, ticks[2 * i + 1]);
        }
        if (d->kind == UPTI_TRACING_KIND_MARKER_API && d->cb_range) {
            /* A named command buffer: from its first operation's start to its last one's end. */
            if (d->op == UPTI_MARKER_API_RANGE_START) {
                range_lo = range_hi = 0;
                for (uint32_t j = i + 1; j < p->n && !p->d[j].cb_range; j++) {
                    if (!timed || p->d[j].query == UINT32_MAX || p->d[j].kind == UPTI_TRACING_KIND_MARKER_API)
                        continue; /* labels are points, not work */
                    upti_timestamp_t a = uvk_tick_map_apply(map, ticks[2 * j]);
                    upti_timestamp_t b = uvk_tick_map_apply(map, ticks[2 * j + 1]);
                    if (range_lo == 0 || a < range_lo)
                        range_lo = a;
                    if (b > range_hi)
                        range_hi = b;
                }
                if (range_lo == 0)
                    range_lo = range_hi = p->submitted;
            }
            uvk_label_emit(p->queue, 2, d->op, d->name, d->op == UPTI_MARKER_API_RANGE_START ? range_lo : range_hi,
                           &d->corr);
            continue;
        }
        if (d->kind == UPTI_TRACING_KIND_MARKER_API) {
            /* A command-buffer label: when the work before it was done (its second timestamp). */
            uvk_label_emit(p->queue, 1, d->op, d->name, end != 0 ? end : p->submitted, &d->corr);
            continue;
        }
        if (d->kind == UPTI_TRACING_KIND_MEMORY_COPY) {
            upti_buffer_tracing_memory_copy_record_t c;
            UPTI_LAYER_DEVICE_OP(c, s->agent, p->queue, p->dev->device);
            UPTI_LAYER_DEVICE_OP_TIMES(c, d->recorded, p->submitted, start, end);
            c.direction = d->direction;
            if (d->direction != UPTI_MEMORY_DIRECTION_HOST_TO_DEVICE && d->direction != UPTI_MEMORY_DIRECTION_NONE)
                c.src_agent_id = s->agent;
            if (d->direction != UPTI_MEMORY_DIRECTION_DEVICE_TO_HOST && d->direction != UPTI_MEMORY_DIRECTION_NONE)
                c.dst_agent_id = s->agent;
            c.bytes = d->bytes;
            uvk_emit(d->kind, d->op, UPTI_CALLBACK_PHASE_NONE, &d->corr, &c, 0);
            continue;
        }
        upti_buffer_tracing_kernel_dispatch_record_t r;
        UPTI_LAYER_DEVICE_OP(r, s->agent, p->queue, p->dev->device);
        UPTI_LAYER_DEVICE_OP_TIMES(r, d->recorded, p->submitted, start, end);
        r.kernel_id = d->kernel_id;
        r.kernel_name = d->name[0] != '\0' ? d->name : "<vulkan dispatch>";
        r.work_dim = 3;
        for (int k = 0; k < 3; k++) {
            r.global_offset[k] = d->base[k];
            r.global_size[k] = d->groups[k];
        }
        uvk_emit(d->kind, d->op, UPTI_CALLBACK_PHASE_NONE, &d->corr, &r,
                 offsetof(upti_buffer_tracing_kernel_dispatch_record_t, kernel_name));
    }
    if (!uvk_sub_wants(UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED))
        return;
    for (uint32_t i = 0; i < p->n; i++) {
        const uvk_op_t *d = &p->d[i];
        if (d->kind == UPTI_TRACING_KIND_MARKER_API)
            continue;
        upti_gpu_op_details_t done;
        uvk_sub_details(d, &done);
        done.submit_timestamp = p->submitted;
        if (timed && d->query != UINT32_MAX) {
            done.start_timestamp = uvk_tick_map_apply(map, ticks[2 * i]);
            done.end_timestamp = uvk_tick_map_apply(map, ticks[2 * i + 1]);
        }
        uvk_sub_device_op(UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED, d, &done, p->queue, p->dev->device, s->phys);
    }
}

/* Completes what has finished (dev NULL: on every device), oldest first on
   each queue (labels nest in submission order); a queue's later submissions
   wait for its unfinished one. Looks at the oldest submission of each of
   dev's queues only (and at what follows those that are done). Under
   uvk_dt_lock. */
static void poll_locked(uvk_object_t *dev, int wait)
{
    if (dev != NULL) {
        for (uint32_t i = 0; i < dev->dt.nqueues; i++) {
            uvk_queue_rec_t *q = dev->dt.queues[i];
            while (q->head != NULL && uvk_pending_complete(q->head, wait))
                ;
        }
        return;
    }
    /* Every device's, oldest first: a queue is blocked by its first unfinished one. */
    for (uvk_pending_t *p = uvk_dt_pending, *next; p != NULL; p = next) {
        next = p->next;
        if (!p->q->blocked && !uvk_pending_complete(p, wait))
            p->q->blocked = 1;
    }
    for (uvk_pending_t *p = uvk_dt_pending; p != NULL; p = p->next)
        p->q->blocked = 0;
}

static void poll(uvk_object_t *dev)
{
    if (UVK_LOAD(uvk_dt_pending) == NULL)
        return;
    pthread_mutex_lock(&uvk_dt_lock);
    poll_locked(dev, 0);
    pthread_mutex_unlock(&uvk_dt_lock);
}

/* The start (op RANGE_START) or end of a named command buffer's execution. */
static void cb_range(uvk_op_t *d, uint32_t op, const char *name, const upti_runtime_correlation_t *corr)
{
    memset(d, 0, sizeof *d);
    d->kind = UPTI_TRACING_KIND_MARKER_API;
    d->op = op;
    d->query = UINT32_MAX;
    d->cb_range = 1;
    snprintf(d->name, sizeof d->name, "%s", name);
    d->corr = *corr;
}

/* A timed operation of a secondary command buffer in a submission: its query, its place. */
typedef struct sec_query_t {
    VkQueryPool pool;
    uint32_t query;
    uint32_t i;
} sec_query_t;

static int sec_query_cmp(const void *a, const void *b)
{
    const sec_query_t *x = a, *y = b;
    if (x->pool != y->pool)
        return (uint64_t)x->pool < (uint64_t)y->pool ? -1 : 1;
    if (x->query != y->query)
        return x->query < y->query ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* A secondary command buffer executed more than once in one submission
   writes the same queries each time: only its last execution's times can be
   read, the earlier ones are traced without device times. The secondaries'
   operations sorted by query: those that share one are next to each other
   (a secondary may hold any number of operations). */
static void untime_repeated_secondaries(uvk_pending_t *p)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < p->n; i++)
        m += p->d[i].secondary && p->d[i].query != UINT32_MAX;
    if (m < 2)
        return;
    sec_query_t *q = malloc(m * sizeof *q);
    if (q == NULL) {
        /* No room to sort: none is timed rather than times read twice. */
        for (uint32_t i = 0; i < p->n; i++)
            if (p->d[i].secondary)
                p->d[i].query = UINT32_MAX;
        return;
    }
    m = 0;
    for (uint32_t i = 0; i < p->n; i++)
        if (p->d[i].secondary && p->d[i].query != UINT32_MAX)
            q[m++] = (sec_query_t){p->d[i].pool, p->d[i].query, i};
    qsort(q, m, sizeof *q, sec_query_cmp);
    int repeated = 0;
    for (uint32_t k = 0; k + 1 < m; k++)
        if (q[k].pool == q[k + 1].pool && q[k].query == q[k + 1].query) {
            p->d[q[k].i].query = UINT32_MAX; /* a later execution writes it again */
            repeated = 1;
        }
    free(q);
    static _Atomic int warned;
    if (repeated && atomic_exchange(&warned, 1) == 0)
        upti_runtime_warn("vulkan: a secondary command buffer executed more than once in one submission; "
                          "its earlier executions are traced without device times");
}

/* The program's submission, made by call(ctx) with the layer's bookkeeping
   around it: cbs are the command buffers it executes, in order. */
typedef VkResult (*submit_call_t)(void *ctx, VkSemaphore semaphore, uint64_t value, int *attached);

/* The layer's timeline semaphore of queue q (of o), created at its first
   use, and the value its next signal takes; NULL without timeline
   semaphores. Under uvk_dt_lock. */
static VkSemaphore queue_timeline(uvk_object_t *o, uvk_queue_rec_t *q, uint64_t *value)
{
    if (o->dt.get_counter == NULL)
        return VK_NULL_HANDLE;
    if (q->semaphore == VK_NULL_HANDLE) {
        VkSemaphoreTypeCreateInfo ti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE, .initialValue = 0};
        VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti};
        if (o->next.vkCreateSemaphore(o->device, &ci, NULL, &q->semaphore) != VK_SUCCESS) {
            q->semaphore = VK_NULL_HANDLE;
            return VK_NULL_HANDLE;
        }
        q->value = 0;
    }
    *value = ++q->value;
    return q->semaphore;
}

/* Resets from the host the queries s's recording writes, before an
   execution (its previous one was read), where s cannot reset them itself
   (uvk_cb_t.host_reset). Under uvk_dt_lock. */
static void reset_queries(uvk_cb_t *s)
{
    if (!s->host_reset || s->dev->dt.reset_pool == NULL)
        return;
    for (uint32_t k = 0; k < s->npools && s->pools[k].used > 0; k++)
        s->dev->dt.reset_pool(s->dev->device, s->pools[k].pool, 0, s->pools[k].used);
}

/* Makes s's inflight p, and keeps s in p's list (room made by publish_locked). Under uvk_dt_lock. */
static void mark_inflight(uvk_pending_t *p, uvk_cb_t *s)
{
    p->cbs[p->ncbs++] = s;
    s->listed++;
    s->inflight = p;
}

void uvk_pending_drop_cb(uvk_cb_t *s)
{
    if (s->listed == 0)
        return;
    for (uvk_pending_t *p = uvk_dt_pending; p != NULL && s->listed > 0; p = p->next)
        for (uint32_t i = 0; i < p->ncbs;) {
            if (p->cbs[i] != s) {
                i++;
                continue;
            }
            for (uint32_t j = 0; j < p->n; j++)
                for (uint32_t k = 0; k < s->npools && p->d[j].query != UINT32_MAX; k++)
                    if (p->d[j].pool == s->pools[k].pool)
                        p->d[j].query = UINT32_MAX;
            p->cbs[i] = p->cbs[--p->ncbs];
            s->listed--;
        }
    s->inflight = NULL;
    static _Atomic int warned;
    if (atomic_exchange(&warned, 1) == 0)
        upti_runtime_warn("vulkan: a command buffer was freed or submitted again while the submission that "
                          "executed it was not finished within the layer's wait (UPTI_VK_COMPLETION_WAIT_MS, "
                          "default 5 s; another of its batches waits, say); that execution's operations are "
                          "traced without device times");
}

/* Makes p findable for completion: the command buffers it executes point to
   it, and it joins the pending lists. Under uvk_dt_lock. */
static void publish_locked(uvk_pending_t *p, const VkCommandBuffer *cbs, uint32_t ncb)
{
    p->ncbs = 0;
    /* Room to list them all first: one not listed could be submitted again (its queries
       overwritten) or freed (its pools destroyed) before p is read. */
    size_t want = 0;
    for (uint32_t i = 0; i < ncb; i++) {
        uvk_cb_t *s = uvk_cb_find(cbs[i]);
        if (s != NULL && s->n != 0)
            want += 1 + (size_t)s->nexec;
    }
    if (want > p->capcbs) {
        uvk_cb_t **grown = want <= UINT32_MAX ? realloc(p->cbs, want * sizeof *grown) : NULL;
        if (grown != NULL) {
            p->cbs = grown;
            p->capcbs = (uint32_t)want;
        } else {
            /* Memory is short: p reads no queries, and no command buffer waits for it. */
            for (uint32_t i = 0; i < p->n; i++)
                p->d[i].query = UINT32_MAX;
            ncb = 0;
        }
    }
    for (uint32_t i = 0; i < ncb; i++) {
        uvk_cb_t *s = uvk_cb_find(cbs[i]);
        if (s == NULL || s->n == 0)
            continue;
        mark_inflight(p, s);
        for (uint32_t k = 0; k < s->nexec; k++) {
            uvk_cb_t *sec = uvk_cb_find(s->executed[k]);
            if (sec != NULL)
                mark_inflight(p, sec);
        }
    }
    untime_repeated_secondaries(p);
    if (p->fence == VK_NULL_HANDLE && p->semaphore == VK_NULL_HANDLE && p->program_fence == VK_NULL_HANDLE) {
        /* Without a fence or semaphore the layer cannot know when to read: no device times. */
        for (uint32_t i = 0; i < p->n; i++)
            p->d[i].query = UINT32_MAX;
    }
    pending_link(p);
}

/* The program's submission, made by call(ctx) with the layer's bookkeeping
   around it: cbs are the command buffers it executes, in order. Two holds
   of uvk_dt_lock in the common case: before the call (completions, the
   operations copied into a pending entry kept from an earlier submission;
   the queries are reset by the command buffers themselves, but for those
   that cannot) and after it (the entry published). */
static VkResult submit_traced(const upti_vulkan_dispatch_t *n, VkQueue queue, VkFence fence,
                              const VkCommandBuffer *cbs, uint32_t ncb, submit_call_t call, void *ctx)
{
    uvk_object_t *o = uvk_object_of(n);
    pthread_mutex_lock(&uvk_dt_lock);
    poll_locked(o, 0);
    /* A command buffer whose last execution is unread: read it before this one overwrites it. */
    uint32_t total = 0;
    for (uint32_t i = 0; i < ncb; i++) {
        uvk_cb_t *s = uvk_cb_find(cbs[i]);
        if (s == NULL)
            continue;
        if (s->inflight != NULL)
            uvk_pending_wait(s->inflight);
        uvk_pending_drop_cb(s); /* not done within the wait: this execution overwrites its queries */
        reset_queries(s);
        for (uint32_t k = 0; k < s->nexec; k++) {
            uvk_cb_t *sec = uvk_cb_find(s->executed[k]);
            if (sec != NULL && sec->inflight != NULL)
                uvk_pending_wait(sec->inflight);
            if (sec != NULL) {
                uvk_pending_drop_cb(sec);
                reset_queries(sec);
            }
        }
        total += s->n;
    }
    uvk_pending_t *p = NULL;
    uint64_t value = 0;
    VkSemaphore semaphore = VK_NULL_HANDLE;
    uvk_queue_rec_t *q = total > 0 ? queue_rec(o, queue) : NULL;
    if (q != NULL) {
        /* The program's fence tells when the submission is done; without one,
           the queue's timeline semaphore, signalled by the program's last batch. */
        if (fence == VK_NULL_HANDLE)
            semaphore = queue_timeline(o, q, &value);
        /* A named command buffer's execution is a range around its operations. */
        int ranges = uvk_dt_wanted(UPTI_TRACING_KIND_MARKER_API, UPTI_MARKER_API_RANGE_START);
        upti_runtime_correlation_t submit_corr;
        if (ranges)
            upti_runtime_capture_correlation(NULL, &submit_corr);
        p = pending_get(total + (ranges ? 2 * ncb : 0));
        for (uint32_t i = 0; p != NULL && i < ncb; i++) {
            uvk_cb_t *s = uvk_cb_find(cbs[i]);
            if (s == NULL || s->n == 0 || p->n + s->n + (ranges ? 2 : 0) > p->cap)
                continue;
            char name[UVK_NAME_MAX];
            int named = ranges && uvk_object_name(VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)cbs[i], name);
            if (named)
                cb_range(&p->d[p->n++], UPTI_MARKER_API_RANGE_START, name, &submit_corr);
            memcpy(&p->d[p->n], s->d, s->n * sizeof *p->d);
            p->n += s->n;
            if (named)
                cb_range(&p->d[p->n++], UPTI_MARKER_API_RANGE_STOP, name, &submit_corr);
        }
    }
    pthread_mutex_unlock(&uvk_dt_lock);
    upti_timestamp_t submitted = uvk_now();
    int attached = 0;
    VkResult r = call(ctx, semaphore, value, &attached);
    if (p == NULL)
        return r;
    if (r != VK_SUCCESS) {
        pthread_mutex_lock(&uvk_dt_lock);
        pending_put(p);
        pthread_mutex_unlock(&uvk_dt_lock);
        return r;
    }
    p->dev = o;
    p->queue = queue;
    p->q = q;
    p->program_fence = fence;
    p->submitted = submitted;
    if (attached) {
        p->semaphore = semaphore;
        p->value = value;
    } else if (fence == VK_NULL_HANDLE) {
        /* One fence of the layer's after the program's batches: signalled when they are done. */
        VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        pthread_mutex_lock(&uvk_dt_lock);
        p->fence = o->dt.nspare > 0 ? o->dt.spare[--o->dt.nspare] : VK_NULL_HANDLE;
        pthread_mutex_unlock(&uvk_dt_lock);
        if (p->fence == VK_NULL_HANDLE && n->vkCreateFence(o->device, &fi, NULL, &p->fence) != VK_SUCCESS)
            p->fence = VK_NULL_HANDLE;
        else if (n->vkQueueSubmit(queue, 0, NULL, p->fence) != VK_SUCCESS) {
            n->vkDestroyFence(o->device, p->fence, NULL);
            p->fence = VK_NULL_HANDLE;
        }
    }
    /* DISPATCHED before p can be read (and COMPLETED reported): it is not yet published. */
    if (uvk_sub_wants(UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED))
        for (uint32_t i = 0; i < p->n; i++) {
            if (p->d[i].kind == UPTI_TRACING_KIND_MARKER_API)
                continue;
            upti_gpu_op_details_t details;
            uvk_sub_details(&p->d[i], &details);
            details.submit_timestamp = submitted;
            uvk_sub_device_op(UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED, &p->d[i], &details, queue, o->device,
                              o->dt.phys);
        }
    pthread_mutex_lock(&uvk_dt_lock);
    publish_locked(p, cbs, ncb);
    pthread_mutex_unlock(&uvk_dt_lock);
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

#define UVK_SUBMIT_MAX 16 /* batches and signals the layer copies on the stack to add its own */

/* Copies the program's count batches of size bytes each into batches, or
   no_batch where it submits none (the layer's signal needs a batch); returns
   how many batches are there. */
static uint32_t copy_batches(void *batches, const void *theirs, uint32_t count, size_t size, const void *no_batch)
{
    if (count == 0) {
        memcpy(batches, no_batch, size);
        return 1;
    }
    memcpy(batches, theirs, count * size);
    return count;
}

/* The program's vkQueueSubmit, its last batch also signalling semaphore with
   value (*attached = 1) where it chains nothing but, maybe, a
   VkTimelineSemaphoreSubmitInfo (then replaced by a copy with the layer's
   value added). */
static VkResult call_submit(void *ctx, VkSemaphore semaphore, uint64_t value, int *attached)
{
    submit_args_t *a = ctx;
    *attached = 0;
    if (semaphore == VK_NULL_HANDLE || a->count > UVK_SUBMIT_MAX)
        return a->n->vkQueueSubmit(a->queue, a->count, a->submits, a->fence);
    VkSubmitInfo batches[UVK_SUBMIT_MAX + 1];
    VkSemaphore signals[UVK_SUBMIT_MAX + 1];
    uint64_t values[UVK_SUBMIT_MAX + 1];
    VkTimelineSemaphoreSubmitInfo ti = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    static const VkSubmitInfo no_batch = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
    uint32_t count = copy_batches(batches, a->submits, a->count, sizeof *batches, &no_batch);
    VkSubmitInfo *last = &batches[count - 1];
    const VkBaseInStructure *chained = last->pNext;
    if (chained != NULL && chained->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO) {
        const VkTimelineSemaphoreSubmitInfo *theirs = (const VkTimelineSemaphoreSubmitInfo *)chained;
        ti = *theirs;
        if (theirs->signalSemaphoreValueCount != last->signalSemaphoreCount)
            ti.signalSemaphoreValueCount = 0; /* binary signals only: their values are ignored */
        chained = chained->pNext;
    }
    uint32_t ns = last->signalSemaphoreCount;
    if (chained != NULL || ns >= UVK_SUBMIT_MAX)
        return a->n->vkQueueSubmit(a->queue, a->count, a->submits, a->fence);
    for (uint32_t i = 0; i < ns; i++) {
        signals[i] = last->pSignalSemaphores[i];
        values[i] = ti.signalSemaphoreValueCount != 0 ? ti.pSignalSemaphoreValues[i] : 0;
    }
    signals[ns] = semaphore;
    values[ns] = value;
    ti.pNext = NULL;
    ti.signalSemaphoreValueCount = ns + 1;
    ti.pSignalSemaphoreValues = values;
    last->pNext = &ti;
    last->signalSemaphoreCount = ns + 1;
    last->pSignalSemaphores = signals;
    *attached = 1;
    return a->n->vkQueueSubmit(a->queue, count, batches, a->fence);
}

/* The program's vkQueueSubmit2, its last batch also signalling semaphore with value (*attached = 1). */
static VkResult call_submit2(void *ctx, VkSemaphore semaphore, uint64_t value, int *attached)
{
    submit_args_t *a = ctx;
    *attached = 0;
    if (semaphore == VK_NULL_HANDLE || a->count > UVK_SUBMIT_MAX)
        return a->submit2(a->queue, a->count, a->submits2, a->fence);
    VkSubmitInfo2 batches[UVK_SUBMIT_MAX + 1];
    VkSemaphoreSubmitInfo signals[UVK_SUBMIT_MAX + 1];
    static const VkSubmitInfo2 no_batch = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    uint32_t count = copy_batches(batches, a->submits2, a->count, sizeof *batches, &no_batch);
    VkSubmitInfo2 *last = &batches[count - 1];
    uint32_t ns = last->signalSemaphoreInfoCount;
    if (ns >= UVK_SUBMIT_MAX)
        return a->submit2(a->queue, a->count, a->submits2, a->fence);
    if (ns > 0)
        memcpy(signals, last->pSignalSemaphoreInfos, ns * sizeof *signals);
    signals[ns] = (VkSemaphoreSubmitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                          .semaphore = semaphore, .value = value,
                                          .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
    last->signalSemaphoreInfoCount = ns + 1;
    last->pSignalSemaphoreInfos = signals;
    *attached = 1;
    return a->submit2(a->queue, count, batches, a->fence);
}

/* The submission of a (the program's batches), traced: the command buffers
   of its batches gathered for submit_traced, made by call. */
static VkResult submit_gathered(submit_args_t *a, submit_call_t call)
{
    uint32_t ncb = 0;
    for (uint32_t i = 0; i < a->count; i++)
        ncb += a->submits != NULL ? a->submits[i].commandBufferCount : a->submits2[i].commandBufferInfoCount;
    VkCommandBuffer cbs_small[16] = {0};
    VkCommandBuffer *cbs = ncb <= 16 ? cbs_small : malloc(ncb * sizeof *cbs);
    if (cbs == NULL) {
        int attached;
        return call(a, VK_NULL_HANDLE, 0, &attached); /* untraced */
    }
    ncb = 0;
    for (uint32_t i = 0; i < a->count; i++) {
        if (a->submits != NULL) {
            for (uint32_t j = 0; j < a->submits[i].commandBufferCount; j++)
                cbs[ncb++] = a->submits[i].pCommandBuffers[j];
        } else {
            for (uint32_t j = 0; j < a->submits2[i].commandBufferInfoCount; j++)
                cbs[ncb++] = a->submits2[i].pCommandBufferInfos[j].commandBuffer;
        }
    }
    VkResult r = submit_traced(a->n, a->queue, a->fence, cbs, ncb, call, a);
    if (cbs != cbs_small)
        free(cbs);
    return r;
}

VkResult uvk_dt_vkQueueSubmit(const upti_vulkan_dispatch_t *n, VkQueue queue, uint32_t count,
                              const VkSubmitInfo *submits, VkFence fence)
{
    if (UVK_LOAD(uvk_dt_cbs) == NULL || !UVK_LOAD(uvk_ops_recorded))
        return n->vkQueueSubmit(queue, count, submits, fence);
    submit_args_t a = {n, NULL, queue, count, submits, NULL, fence};
    return submit_gathered(&a, call_submit);
}

static VkResult submit2(const upti_vulkan_dispatch_t *n, PFN_vkQueueSubmit2 fn, VkQueue queue, uint32_t count,
                        const VkSubmitInfo2 *submits, VkFence fence)
{
    if (UVK_LOAD(uvk_dt_cbs) == NULL || !UVK_LOAD(uvk_ops_recorded))
        return fn(queue, count, submits, fence);
    submit_args_t a = {n, fn, queue, count, NULL, submits, fence};
    return submit_gathered(&a, call_submit2);
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

/* The unread submission of o that the program's fence marks, NULL if none
   (a fence marks one submission at a time: it is reset or destroyed before
   it is submitted again, fences_released). Under uvk_dt_lock. */
static uvk_pending_t *marked_by(uvk_object_t *o, VkFence fence)
{
    if (fence == VK_NULL_HANDLE)
        return NULL;
    for (uvk_pending_t *p = uvk_dt_pending; p != NULL; p = p->next)
        if (p->program_fence == fence && p->dev == o)
            return p;
    return NULL;
}

VkResult uvk_dt_vkWaitForFences(const upti_vulkan_dispatch_t *n, VkDevice device, uint32_t count,
                                const VkFence *fences, VkBool32 all, uint64_t timeout)
{
    VkResult r = n->vkWaitForFences(device, count, fences, all, timeout);
    uvk_object_t *o = uvk_object_of(n);
    if (r == VK_SUCCESS && UVK_LOAD(uvk_dt_pending) != NULL) {
        /* The program waited for these submissions: read them now, so that their
           records are out when the wait returns (those marked by a layer's fence
           or semaphore, which follows the program's at once, after waiting for it). */
        pthread_mutex_lock(&uvk_dt_lock);
        for (uint32_t i = 0; i < count; i++) {
            uvk_pending_t *p = marked_by(o, fences[i]);
            if (p == NULL || (!all && o->next.vkGetFenceStatus(o->device, fences[i]) != VK_SUCCESS))
                continue;
            /* Its queue's older submissions are done too (a fence signals after all the
               queue's earlier work): read first, in submission order. */
            while (p->q->head != p && uvk_pending_complete(p->q->head, 0))
                ;
            uvk_pending_complete(p, UVK_FENCE_SIGNALLED);
        }
        pthread_mutex_unlock(&uvk_dt_lock);
    }
    poll(o);
    return r;
}

/* The program resets or destroys fences: a submission that one of them
   marks is done by then (a fence must not be in use for either), and is
   read now, before the fence's state is gone, after its queue's older ones.
   One that is not done (the program broke that rule) is emitted without
   device times. */
static void fences_released(uvk_object_t *o, uint32_t count, const VkFence *fences)
{
    if (UVK_LOAD(uvk_dt_pending) == NULL || fences == NULL)
        return;
    pthread_mutex_lock(&uvk_dt_lock);
    for (uint32_t i = 0; i < count; i++) {
        uvk_pending_t *p = marked_by(o, fences[i]);
        if (p == NULL || p->fence != VK_NULL_HANDLE || p->semaphore != VK_NULL_HANDLE)
            continue;
        /* Its queue's older submissions are done too (the program may have learnt that p is
           done from a wait the layer does not follow, vkWaitSemaphores): read first. */
        while (p->q->head != p && uvk_pending_complete(p->q->head, 0))
            ;
        if (!uvk_pending_complete(p, 0)) {
            p->fence_lost = 1;
            uvk_pending_complete(p, 0);
        }
    }
    pthread_mutex_unlock(&uvk_dt_lock);
}

VkResult uvk_dt_vkResetFences(const upti_vulkan_dispatch_t *n, VkDevice device, uint32_t count, const VkFence *fences)
{
    fences_released(uvk_object_of(n), count, fences);
    return n->vkResetFences(device, count, fences);
}

void uvk_dt_vkDestroyFence(const upti_vulkan_dispatch_t *n, VkDevice device, VkFence fence,
                           const VkAllocationCallbacks *allocator)
{
    if (fence != VK_NULL_HANDLE)
        fences_released(uvk_object_of(n), 1, &fence);
    n->vkDestroyFence(device, fence, allocator);
}

VkResult uvk_dt_vkGetFenceStatus(const upti_vulkan_dispatch_t *n, VkDevice device, VkFence fence)
{
    VkResult r = n->vkGetFenceStatus(device, fence);
    poll(uvk_object_of(n));
    return r;
}

/* The queue (or the device) is idle: what was submitted before is read with
   the clock's current mapping, then a measured clock is measured again. */
static VkResult waited_idle(const upti_vulkan_dispatch_t *n, VkResult r, VkQueue queue)
{
    poll(uvk_object_of(n));
    if (r == VK_SUCCESS)
        uvk_probe_refresh(uvk_object_of(n), queue);
    return r;
}

VkResult uvk_dt_vkQueueWaitIdle(const upti_vulkan_dispatch_t *n, VkQueue queue)
{
    return waited_idle(n, n->vkQueueWaitIdle(queue), queue);
}

VkResult uvk_dt_vkDeviceWaitIdle(const upti_vulkan_dispatch_t *n, VkDevice device)
{
    return waited_idle(n, n->vkDeviceWaitIdle(device), VK_NULL_HANDLE);
}

void uvk_dt_device_destroying(uvk_object_t *o)
{
    pthread_mutex_lock(&uvk_dt_lock);
    poll_locked(o, 1);
    for (uvk_cb_t *s = uvk_dt_cbs, *next; s != NULL; s = next) {
        next = s->next;
        if (s->dev == o)
            uvk_cb_forget_locked(s);
    }
    uvk_cmd_pools_forget_locked(o);
    /* What did not finish within the wait is emitted without device times:
       its queue records go with the device. */
    for (uint32_t i = 0; i < o->dt.nqueues; i++)
        while (o->dt.queues[i]->head != NULL) {
            uvk_pending_t *p = o->dt.queues[i]->head;
            p->fence_lost = 1;
            uvk_pending_complete(p, 0);
        }
    queue_recs_free(o);
    while (o->dt.nspare > 0)
        o->next.vkDestroyFence(o->device, o->dt.spare[--o->dt.nspare], NULL);
    uvk_probe_destroy(o);
    pthread_mutex_unlock(&uvk_dt_lock);
}

void uvk_dt_drain_all(void)
{
    pthread_mutex_lock(&uvk_dt_lock);
    poll_locked(NULL, 1);
    pthread_mutex_unlock(&uvk_dt_lock);
}
