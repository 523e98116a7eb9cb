/* SPDX-License-Identifier: MIT */
/* Command buffers followed by the layer, and the device operations recorded
 * into them.
 *
 * Recording: while some context wants their kind, each vkCmdDispatch*,
 * buffer copy, fill and update, image copy and pipeline barrier recorded
 * into a command buffer is bracketed by the layer's own commands,
 * into timestamp query pools the layer owns (UVK_POOL_QUERIES queries
 * each, as many per command buffer as its longest recording needs, kept for
 * its next recordings), filled in order:
 *   vkCmdWriteTimestamp(TOP_OF_PIPE), the operation,
 *   vkCmdWriteTimestamp(BOTTOM_OF_PIPE; TOP_OF_PIPE on a CPU device, op_begin).
 * An operation's times are two consecutive queries, start and end.
 *
 * Shared timestamps: a CPU device (lavapipe) executes a command buffer's
 * commands one after the other, so where nothing that does work on the
 * device lies between two timed operations, the end timestamp of the first
 * is the start of the second: the second writes only its end (one
 * vkCmdWriteTimestamp instead of two; on lavapipe each took some 256
 * instructions and 30 ns). Commands that only set state (binding a
 * pipeline, descriptor sets, push constants) do no device work; every other
 * command the layer does not time (a draw, a clear, the program's own
 * queries, events, vkCmdExecuteCommands, a render pass, an operation whose
 * kind nobody wants) clears the command buffer's uvk_cb_t.share
 * (uvk_cmd_untimed, called by the generated wrappers, whichever thread
 * records it), and the next operation writes its own start then, at the
 * start of a recording and of each of the layer's reset runs and pools
 * (below).
 * GPUs overlap dispatches that no barrier orders: there, and under
 * UPTI_VK_TIMESTAMPS=pairs, every operation writes both.
 *
 * The queries are reset by the command buffer itself: before the first
 * timestamp of each run of UVK_RESET_QUERIES queries, the layer records one
 * vkCmdResetQueryPool of the run's queries (before an operation's own
 * start timestamp, so that the reset's work is no operation's). So a
 * command buffer may be submitted any number of times, each execution
 * writing its own queries (a submission of it waits for its previous
 * execution to be read first, submissions.c), and vkQueueSubmit resets
 * nothing from the host (on lavapipe a host vkResetQueryPool took some 530
 * instructions per submit; a reset per pair some 250 per operation recorded).
 *
 * A queue family without graphics or compute can neither reset nor copy
 * queries in a command buffer; on a CPU device the times are read from a
 * buffer the command buffer copies them into at its end: query_pools.c.
 *
 * Secondary command buffers are instrumented the same way, in their own
 * pools. vkCmdExecuteCommands copies a secondary's operations, as recorded
 * so far, into the primary's list and remembers the secondary: a submission
 * of the primary then gives a record per operation of each secondary it
 * executes, read from the secondary's queries. A secondary that continues
 * a render pass (where queries cannot be reset) is traced without device
 * times, said once on stderr.
 *
 * A command buffer is externally synchronized (the Vulkan spec): while a
 * thread records into it, no other thread records into it, submits it or
 * frees it. So the thread that records needs uvk_dt_lock only to find the
 * layer's state of the command buffer in the list (which other threads
 * change); it keeps the last one found (uvk_cb_recording), valid until any
 * command buffer is forgotten, and records without the lock.
 */
#include "subscribers.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t uvk_dt_lock = PTHREAD_MUTEX_INITIALIZER;
uvk_cb_t *uvk_dt_cbs;

/* Bumped (under uvk_dt_lock) before a followed command buffer's state is
   freed, and when command buffers are allocated (a handle this thread
   found unfollowed may now be followed): every thread's last found state
   below is then found again. */
static unsigned long cb_generation;
/* The state of the command buffer this thread last recorded into, and the
   generation it was found in (one thread-local object: one TLS look-up; not
   initial-exec, for which a layer loaded late finds no room). */
static __thread struct {
    VkCommandBuffer cb;
    uvk_cb_t *state;
    unsigned long generation;
} t_last;

int uvk_shared_timestamps;
int uvk_ops_recorded;

/* The followed command buffers by handle (under uvk_dt_lock). */
static uvk_handle_map_t cb_index;

uvk_cb_t *uvk_cb_find(VkCommandBuffer cb)
{
    return uvk_handle_map_get(&cb_index, (uint64_t)(uintptr_t)cb);
}

/* Remembers s as the state of cb for this thread's next commands (under uvk_dt_lock). */
static void remember_locked(VkCommandBuffer cb, uvk_cb_t *s)
{
    t_last.cb = cb;
    t_last.state = s;
    t_last.generation = __atomic_load_n(&cb_generation, __ATOMIC_RELAXED);
}

/* uvk_cb_recording's look-up under uvk_dt_lock. A command buffer the layer
   does not follow (allocated before a tool was there) is remembered too, so
   that its next commands do not take the lock each. */
static __attribute__((noinline)) uvk_cb_t *cb_recording_slow(VkCommandBuffer cb)
{
    pthread_mutex_lock(&uvk_dt_lock);
    uvk_cb_t *s = uvk_cb_find(cb);
    remember_locked(cb, s);
    pthread_mutex_unlock(&uvk_dt_lock);
    return s;
}

/* The state of cb, which the calling thread records into (NULL if the layer
   does not follow it): the one this thread found last if no command buffer
   was forgotten since, else found under uvk_dt_lock. The state stays while
   the thread records (external synchronization): used without the lock. A
   command buffer forgotten by another thread, its handle then reused for
   one this thread records into, reached this thread through the program's
   own synchronization, which orders the bump before the load here. */
static inline uvk_cb_t *uvk_cb_recording(VkCommandBuffer cb)
{
    if (t_last.cb == cb && t_last.generation == __atomic_load_n(&cb_generation, __ATOMIC_ACQUIRE))
        return t_last.state;
    return cb_recording_slow(cb);
}

void uvk_cmd_untimed(VkCommandBuffer cb)
{
    uvk_cb_t *s = UVK_LOAD(uvk_dt_cbs) != NULL ? uvk_cb_recording(cb) : NULL;
    if (s != NULL)
        s->share = 0;
}

void uvk_cb_forget_locked(uvk_cb_t *s)
{
    __atomic_add_fetch(&cb_generation, 1, __ATOMIC_RELEASE);
    if (s->inflight != NULL)
        uvk_pending_wait(s->inflight); /* its queries are read before the pool goes */
    uvk_pending_drop_cb(s); /* a submission still unread (not done within the wait) reads nothing of s's */
    for (uint32_t k = 0; k < s->npools; k++)
        uvk_qpool_destroy(s->dev, &s->pools[k]);
    free(s->pools);
    uvk_handle_map_remove(&cb_index, (uint64_t)(uintptr_t)s->cb);
    if (s->next != NULL)
        s->next->prev = s->prev;
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        UVK_STORE(uvk_dt_cbs, s->next);
    if (uvk_dt_cbs == NULL)
        uvk_handle_map_clear(&cb_index);
    free(s->d);
    free(s->executed);
    free(s);
}

VkResult uvk_dt_vkAllocateCommandBuffers(const upti_vulkan_dispatch_t *n, VkDevice device,
                                         const VkCommandBufferAllocateInfo *info, VkCommandBuffer *cbs)
{
    VkResult r = n->vkAllocateCommandBuffers(device, info, cbs);
    if (r != VK_SUCCESS || !uvk_tracing)
        return r;
    pthread_mutex_lock(&uvk_dt_lock);
    __atomic_add_fetch(&cb_generation, 1, __ATOMIC_RELEASE);
    for (uint32_t i = 0; i < info->commandBufferCount; i++) {
        uvk_cb_t *s = calloc(1, sizeof *s);
        if (s == NULL)
            break;
        s->cb = cbs[i];
        s->cmd_pool = info->commandPool;
        s->dev = uvk_object_of(n);
        s->secondary = info->level == VK_COMMAND_BUFFER_LEVEL_SECONDARY;
        uvk_family_queries_t q = uvk_cmd_pool_queries_locked(s->dev, info->commandPool);
        s->host_reset = q == UVK_QUERIES_HOST;
        s->no_timestamps = q == UVK_QUERIES_NONE;
        if (uvk_handle_map_put(&cb_index, (uint64_t)(uintptr_t)s->cb, s) != 0) {
            free(s);
            break;
        }
        s->next = uvk_dt_cbs;
        if (s->next != NULL)
            s->next->prev = s;
        UVK_STORE(uvk_dt_cbs, s);
    }
    pthread_mutex_unlock(&uvk_dt_lock);
    return r;
}

void uvk_dt_vkFreeCommandBuffers(const upti_vulkan_dispatch_t *n, VkDevice device, VkCommandPool pool,
                                 uint32_t count, const VkCommandBuffer *cbs)
{
    if (UVK_LOAD(uvk_dt_cbs) != NULL) {
        pthread_mutex_lock(&uvk_dt_lock);
        for (uint32_t i = 0; i < count; i++) {
            uvk_cb_t *s = cbs[i] != VK_NULL_HANDLE ? uvk_cb_find(cbs[i]) : NULL;
            if (s != NULL)
                uvk_cb_forget_locked(s);
            uvk_object_name_forget(VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)cbs[i]);
        }
        pthread_mutex_unlock(&uvk_dt_lock);
    }
    n->vkFreeCommandBuffers(device, pool, count, cbs);
}

void uvk_dt_vkDestroyCommandPool(const upti_vulkan_dispatch_t *n, VkDevice device, VkCommandPool pool,
                                 const VkAllocationCallbacks *alloc)
{
    if (pool != VK_NULL_HANDLE) {
        pthread_mutex_lock(&uvk_dt_lock);
        uvk_cmd_pool_forget_locked(uvk_object_of(n), pool);
        for (uvk_cb_t *s = uvk_dt_cbs, *next; s != NULL; s = next) {
            next = s->next;
            if (s->cmd_pool == pool && s->dev == uvk_object_of(n)) {
                uvk_object_name_forget(VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)s->cb);
                uvk_cb_forget_locked(s);
            }
        }
        pthread_mutex_unlock(&uvk_dt_lock);
    }
    n->vkDestroyCommandPool(device, pool, alloc);
}

VkResult uvk_dt_vkBeginCommandBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                                     const VkCommandBufferBeginInfo *info)
{
    if (UVK_LOAD(uvk_dt_cbs) != NULL) {
        pthread_mutex_lock(&uvk_dt_lock);
        uvk_cb_t *s = uvk_cb_find(cb);
        if (s != NULL) {
            /* A new recording: the last execution's queries are read first. */
            if (s->inflight != NULL)
                uvk_pending_wait(s->inflight);
            s->n = 0;
            s->queries = 0;
            s->cur = 0;
            s->reset_to = s->host_reset ? UVK_POOL_QUERIES : 0; /* host_reset: reset at each submission */
            for (uint32_t k = 0; k < s->npools; k++)
                s->pools[k].used = 0;
            s->shares = s->dev->dt.cpu && uvk_timestamps_paired() == 0;
            s->share = 0;
            s->nexec = 0;
            s->pipeline_name[0] = '\0';
            s->pipeline_name_len = 0;
            s->pipeline = VK_NULL_HANDLE;
            s->in_render_pass = 0;
            s->untimed = (s->secondary && info != NULL &&
                          (info->flags & VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT) != 0) ||
                         (s->host_reset && s->dev->dt.reset_pool == NULL) || s->no_timestamps;
            remember_locked(cb, s);
        }
        pthread_mutex_unlock(&uvk_dt_lock);
    }
    return n->vkBeginCommandBuffer(cb, info);
}

/* The recording's queries copied into their pools' results buffers, made
   visible to the host, as the command buffer's last commands. An operation
   whose pool has no buffer, or a recording that cannot take the copy (still
   inside a render pass, which the program must end first), is read from its
   pool instead. */
VkResult uvk_dt_vkEndCommandBuffer(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb)
{
    uvk_cb_t *s = UVK_LOAD(uvk_dt_cbs) != NULL ? uvk_cb_recording(cb) : NULL;
    if (s != NULL && s->queries > 0) {
        int copied = 0;
        for (uint32_t k = 0; !s->in_render_pass && k < s->npools && s->pools[k].used > 0; k++) {
            if (s->pools[k].buffer == VK_NULL_HANDLE)
                continue;
            n->vkCmdCopyQueryPoolResults(cb, s->pools[k].pool, 0, s->pools[k].used, s->pools[k].buffer, 0,
                                         sizeof(uint64_t),
                                         VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
            copied = 1;
        }
        if (copied) {
            VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                 .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                 .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
            n->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &b, 0, NULL,
                                    0, NULL);
        } else {
            for (uint32_t i = 0; i < s->n; i++)
                if (!s->d[i].secondary)
                    s->d[i].ticks = NULL;
        }
    }
    return n->vkEndCommandBuffer(cb);
}

void uvk_dt_vkCmdBindPipeline(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, VkPipelineBindPoint point,
                              VkPipeline pipeline)
{
    if (point == VK_PIPELINE_BIND_POINT_COMPUTE && UVK_LOAD(uvk_dt_cbs) != NULL) {
        uvk_cb_t *s = uvk_cb_recording(cb);
        if (s != NULL) {
            s->pipeline_name_len = uvk_pipeline_name(pipeline, s->pipeline_name);
            s->pipeline = pipeline;
        }
    }
    n->vkCmdBindPipeline(cb, point, pipeline);
}

/* grow when s->d is full. */
static __attribute__((noinline)) uvk_op_t *grow_slow(uvk_cb_t *s)
{
    uint32_t cap = s->cap ? 2 * s->cap : 16;
    uvk_op_t *grown = realloc(s->d, cap * sizeof *grown);
    if (grown == NULL)
        return NULL;
    s->d = grown;
    s->cap = cap;
    return &s->d[s->n];
}

/* Room for one more operation in s->d; NULL if memory runs out. */
static inline uvk_op_t *grow(uvk_cb_t *s)
{
    if (__builtin_expect(s->n < s->cap, 1))
        return &s->d[s->n];
    return grow_slow(s);
}

/* Whether s, a primary being recorded, has executed the secondary sec already. Under uvk_dt_lock. */
static int executed_before(const uvk_cb_t *s, VkCommandBuffer sec)
{
    for (uint32_t k = 0; k < s->nexec; k++)
        if (s->executed[k] == sec)
            return 1;
    return 0;
}

/* A secondary executed again by one primary copies its queries into its
   results buffer again (its vkEndCommandBuffer's copy): the layer orders
   that copy after the previous one with a transfer barrier recorded just
   before it, or the two writes of the buffer race (the one that lands last,
   which the layer reads, may be the earlier execution's). The program's
   vkCmdExecuteCommands is split there; "again" holds a flag per secondary. */
static void execute_split(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t count,
                          const VkCommandBuffer *secondaries, const unsigned char *again)
{
    VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                         .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                         .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
    uint32_t first = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (!again[i])
            continue;
        if (i > first)
            n->vkCmdExecuteCommands(cb, i - first, secondaries + first);
        n->vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &b, 0, NULL,
                                0, NULL);
        first = i;
    }
    n->vkCmdExecuteCommands(cb, count - first, secondaries + first);
}

void uvk_dt_vkCmdExecuteCommands(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t count,
                                 const VkCommandBuffer *secondaries)
{
    unsigned char again_small[64];
    unsigned char *again = NULL;
    int split = 0;
    if (UVK_LOAD(uvk_dt_cbs) != NULL && count > 0 && secondaries != NULL) {
        pthread_mutex_lock(&uvk_dt_lock);
        uvk_cb_t *s = uvk_cb_find(cb);
        if (s != NULL && !s->in_render_pass) /* inside one, secondaries are untimed: nothing copied */
            again = count <= sizeof again_small ? again_small : calloc(count, 1);
        if (again == again_small)
            memset(again, 0, sizeof again_small);
        for (uint32_t i = 0; s != NULL && i < count; i++) {
            uvk_cb_t *sec = uvk_cb_find(secondaries[i]);
            if (sec == NULL || sec->n == 0)
                continue;
            if (again != NULL && sec->queries > 0 && !sec->host_reset && executed_before(s, sec->cb))
                split = again[i] = 1;
            if (s->nexec == s->capexec) {
                uint32_t cap = s->capexec ? 2 * s->capexec : 4;
                VkCommandBuffer *grown = realloc(s->executed, cap * sizeof *grown);
                if (grown == NULL)
                    continue;
                s->executed = grown;
                s->capexec = cap;
            }
            s->executed[s->nexec++] = sec->cb;
            for (uint32_t k = 0; k < sec->n; k++) {
                uvk_op_t *d = grow(s);
                if (d == NULL)
                    break;
                *d = sec->d[k];
                d->secondary = 1;
                s->n++;
            }
        }
        pthread_mutex_unlock(&uvk_dt_lock);
    }
    uvk_cmd_device_work(cb); /* the secondaries' work lies between the primary's operations */
    if (split)
        execute_split(n, cb, count, secondaries, again);
    else
        n->vkCmdExecuteCommands(cb, count, secondaries);
    if (again != again_small)
        free(again);
}

/* pools[k], created when a recording first reaches it; NULL if it cannot be (said once). */
static inline uvk_qpool_t *pool_at(const upti_vulkan_dispatch_t *n, uvk_cb_t *s, uint32_t k)
{
    return k < s->npools ? &s->pools[k] : uvk_qpool_add(n, s, k);
}

/* queries_of for an operation that writes its own start timestamp. */
static __attribute__((noinline)) uvk_qpool_t *queries_fresh(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                                                            uvk_cb_t *s, uint32_t *query)
{
    uvk_qpool_t *q = pool_at(n, s, s->cur);
    if (q == NULL)
        return NULL;
    uint32_t used = q->used;
    if (used + 2 > UVK_POOL_QUERIES) { /* the pool is full: the next one */
        q = pool_at(n, s, ++s->cur);
        if (q == NULL) {
            s->cur--;
            return NULL;
        }
        used = 0;
        s->reset_to = s->host_reset ? UVK_POOL_QUERIES : 0;
    }
    if (used + 2 > s->reset_to) { /* the run's first query: its queries reset (before the start timestamp) */
        n->vkCmdResetQueryPool(cb, q->pool, s->reset_to, UVK_RESET_QUERIES);
        s->reset_to += UVK_RESET_QUERIES;
    }
    *query = used;
    q->used = used + 2;
    s->queries += 2;
    n->vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, q->pool, used);
    return q;
}

/* The queries of an operation about to be recorded into s: its start query
   in *query (the previous operation's end where shared, else a timestamp
   written now), its end the next one; NULL if it cannot be timed. The
   shared case inline. */
static inline __attribute__((always_inline)) uvk_qpool_t *queries_of(const upti_vulkan_dispatch_t *n,
                                                                     VkCommandBuffer cb, uvk_cb_t *s,
                                                                     uint32_t *query)
{
    if (s->share) {
        uvk_qpool_t *q = &s->pools[s->cur]; /* the last operation's pool: it exists */
        uint32_t used = q->used;
        if (used < s->reset_to) {
            /* Shared: nothing with device work since the last operation's end (used - 1), which is reset. */
            *query = used - 1;
            q->used = used + 1;
            s->queries++;
            return q;
        }
    }
    return queries_fresh(n, cb, s, query);
}

/* Said once each: operations the layer cannot time where they are recorded. */
static __attribute__((noinline, cold)) void warn_untimed(const uvk_cb_t *s)
{
    static _Atomic int in_pass, continuing, no_reset, no_timestamps;
    if (s->no_timestamps) {
        if (atomic_exchange(&no_timestamps, 1) == 0)
            upti_runtime_warn("vulkan: a command buffer of a queue family without timestamps "
                              "(timestampValidBits 0): its operations are traced without device times");
    } else if (s->host_reset && s->dev->dt.reset_pool == NULL) {
        if (atomic_exchange(&no_reset, 1) == 0)
            upti_runtime_warn("vulkan: a command buffer of a queue family without graphics or compute, on a "
                              "device without hostQueryReset: the layer cannot reset its queries, its operations "
                              "are traced without device times");
    } else if (s->in_render_pass) {
        if (atomic_exchange(&in_pass, 1) == 0)
            upti_runtime_warn("vulkan: an operation recorded inside a render pass, where the layer cannot "
                              "reset its queries, is traced without device times");
    } else if (atomic_exchange(&continuing, 1) == 0) {
        upti_runtime_warn("vulkan: a secondary command buffer continues a render pass, where the layer "
                          "cannot reset its queries; its operations are traced without device times");
    }
}

/* uvk_op_begin_wanted, inlined into it and into the vkCmdDispatch wrapper (the most recorded command). */
static inline __attribute__((always_inline)) void op_begin(uvk_slot_t *slot, const upti_vulkan_dispatch_t *n,
                                                           VkCommandBuffer cb, upti_tracing_kind_t kind, uint32_t op,
                                                           const uint32_t groups[3], const uint32_t base[3],
                                                           upti_memory_direction_t direction, uint64_t bytes,
                                                           const char *name)
{
    slot->pool = VK_NULL_HANDLE;
    slot->appended = 0;
    uvk_cb_t *s = uvk_cb_recording(cb);
    uvk_op_t *d = s != NULL ? grow(s) : NULL;
    if (d == NULL) {
        if (s != NULL)
            s->share = 0; /* recorded untimed */
        return;
    }
    /* Every field written but the name's tail, which nothing reads past its end
       (no memset: this runs for every operation recorded). */
    d->pool = VK_NULL_HANDLE;
    d->ticks = NULL;
    d->kind = kind;
    d->direction = direction;
    d->bytes = bytes;
    d->op = op;
    d->query = UINT32_MAX;
    for (int k = 0; k < 3; k++) {
        d->groups[k] = groups != NULL ? groups[k] : 0;
        d->base[k] = base != NULL ? base[k] : 0;
    }
    d->kernel_id = (uint64_t)s->pipeline;
    d->secondary = 0;
    d->cb_range = 0;
    if (name != NULL) {
        size_t len = strnlen(name, sizeof d->name - 1);
        memcpy(d->name, name, len);
        d->name[len] = '\0';
    } else if (s->pipeline_name_len < UVK_NAME_SHORT) {
        memcpy(d->name, s->pipeline_name, UVK_NAME_SHORT); /* a fixed size, inline: its '\0' among them */
    } else {
        memcpy(d->name, s->pipeline_name, s->pipeline_name_len + 1);
    }
    /* The recording call's correlation, and its start as the time recorded (the time now if untraced). */
    upti_runtime_capture_current(&d->corr, &d->recorded);
    const uvk_device_state_t *ds = &s->dev->dt;
    if (ds->timestamps && !s->untimed && !s->in_render_pass) {
        uint32_t query;
        uvk_qpool_t *q = queries_of(n, cb, s, &query);
        if (q != NULL) {
            d->pool = q->pool;
            d->query = query;
            d->ticks = q->results != NULL ? q->results + query : NULL;
            slot->pool = q->pool;
            slot->query = query + 1;
            /* A CPU device has run the operation by the time its next command starts
               (lavapipe: a dispatch, a copy, a fill, a barrier return once done), so
               its end is the top of the next command. At any other stage lavapipe
               flushes llvmpipe first, waking its rasterizer threads for nothing
               (4 futex calls per timestamp): the program's submits wait behind them.
               A label's end stays after what precedes it, draws included. */
            slot->end_stage = ds->cpu && kind != UPTI_TRACING_KIND_MARKER_API
                                  ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT
                                  : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT;
            if (s->shares) { /* its end, written next, may be the next operation's start */
                s->share = 1;
                /* From now on untimed commands are followed (seen first by this thread, its own
                   store; by any other that records into s after it, through the program's
                   synchronization of s). */
                if (__builtin_expect(!UVK_LOAD(uvk_shared_timestamps), 0))
                    UVK_STORE(uvk_shared_timestamps, 1);
            }
        } else {
            s->share = 0;
        }
    } else {
        s->share = 0; /* its work is untimed */
        if (ds->timestamps)
            warn_untimed(s);
    }
    s->n++;
    if (__builtin_expect(!UVK_LOAD(uvk_ops_recorded), 0))
        UVK_STORE(uvk_ops_recorded, 1);
    if (kind != UPTI_TRACING_KIND_MARKER_API && uvk_sub_wants(UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED)) {
        slot->appended = 1;
        slot->device = s->dev->device;
        slot->op = *d;
        uvk_sub_appended(&slot->op, UPTI_CB_PHASE_API_ENTER, cb, slot->device);
    }
}

void uvk_op_begin_wanted(uvk_slot_t *slot, const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                         upti_tracing_kind_t kind, uint32_t op, const uint32_t groups[3], const uint32_t base[3],
                         upti_memory_direction_t direction, uint64_t bytes, const char *name)
{
    op_begin(slot, n, cb, kind, op, groups, base, direction, bytes, name);
}

/* vkCmdDispatch while dispatches are wanted (timed_commands.c): one function, no call per phase. */
void uvk_dispatch_timed(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z)
{
    const uint32_t groups[3] = {x, y, z};
    uvk_slot_t d;
    op_begin(&d, n, cb, UPTI_TRACING_KIND_KERNEL_DISPATCH, UPTI_KERNEL_DISPATCH_VK_DISPATCH, groups, NULL,
             UPTI_MEMORY_DIRECTION_NONE, 0, NULL);
    n->vkCmdDispatch(cb, x, y, z);
    uvk_op_end(n, cb, &d);
}

void uvk_op_end_appended(VkCommandBuffer cb, const uvk_slot_t *slot)
{
    uvk_sub_appended(&slot->op, UPTI_CB_PHASE_API_EXIT, cb, slot->device);
}

/* --- render passes: the layer's queries cannot be reset inside one --- */

static void render_pass(VkCommandBuffer cb, int inside)
{
    if (UVK_LOAD(uvk_dt_cbs) == NULL)
        return;
    uvk_cb_t *s = uvk_cb_recording(cb);
    if (s != NULL) {
        s->in_render_pass = inside;
        s->share = 0; /* draws and the pass's loads and stores */
    }
}

void uvk_dt_vkCmdBeginRenderPass(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                                 const VkRenderPassBeginInfo *info, VkSubpassContents contents)
{
    render_pass(cb, 1);
    n->vkCmdBeginRenderPass(cb, info, contents);
}

void uvk_dt_vkCmdBeginRenderPass2(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                                  const VkRenderPassBeginInfo *info, const VkSubpassBeginInfo *sub)
{
    render_pass(cb, 1);
    n->vkCmdBeginRenderPass2(cb, info, sub);
}

void uvk_dt_vkCmdBeginRenderPass2KHR(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb,
                                     const VkRenderPassBeginInfo *info, const VkSubpassBeginInfo *sub)
{
    render_pass(cb, 1);
    n->vkCmdBeginRenderPass2KHR(cb, info, sub);
}

void uvk_dt_vkCmdBeginRendering(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, const VkRenderingInfo *info)
{
    render_pass(cb, 1);
    n->vkCmdBeginRendering(cb, info);
}

void uvk_dt_vkCmdBeginRenderingKHR(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, const VkRenderingInfo *info)
{
    render_pass(cb, 1);
    n->vkCmdBeginRenderingKHR(cb, info);
}

void uvk_dt_vkCmdEndRenderPass(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb)
{
    n->vkCmdEndRenderPass(cb);
    render_pass(cb, 0);
}

void uvk_dt_vkCmdEndRenderPass2(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, const VkSubpassEndInfo *info)
{
    n->vkCmdEndRenderPass2(cb, info);
    render_pass(cb, 0);
}

void uvk_dt_vkCmdEndRenderPass2KHR(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb, const VkSubpassEndInfo *info)
{
    n->vkCmdEndRenderPass2KHR(cb, info);
    render_pass(cb, 0);
}

void uvk_dt_vkCmdEndRendering(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb)
{
    n->vkCmdEndRendering(cb);
    render_pass(cb, 0);
}

void uvk_dt_vkCmdEndRenderingKHR(const upti_vulkan_dispatch_t *n, VkCommandBuffer cb)
{
    n->vkCmdEndRenderingKHR(cb);
    render_pass(cb, 0);
}
