/* SPDX-License-Identifier: MIT */
/* Contexts, their services, and the per-operation plans that wrappers read. */
#include "internal.h"
#include "fork.h"
#include "ring.h"

#include <stdlib.h>
#include <string.h>

struct service {
    uint8_t *operations; /* operations[op] != 0: wanted; NULL: not configured */
    upti_callback_tracing_cb_t callback; /* callback services */
    void *callback_data;
    struct upti_buffer *buffer;          /* buffer services */
};

struct context {
    bool valid;
    _Atomic bool active;
    int tool;
    struct service callback[UPTI_TRACING_KIND_LAST];
    struct service buffered[UPTI_TRACING_KIND_LAST];
};

/* A plan built for the contexts that call back (callback_mask) and those that
 * record (buffer_mask) an operation of a kind; kept forever so wrappers never
 * see freed memory. The operations of a kind that the same contexts trace the
 * same way share it: a tool that traces every operation of every kind made a
 * plan per operation before (4,500 allocations and 62 page faults in each
 * traced process's start), one per kind now. */
struct cached_plan {
    uint32_t callback_mask, buffer_mask;
    struct cached_plan *next;
    upti_operation_plan_t plan;
};

static struct context g_contexts[UPTI_MAX_CONTEXTS];
static uint32_t g_num_contexts;
static bool g_contexts_final; /* finalization stopped everything for good */
/* The contexts' lock: g_contexts, their services, the plans (lock order: internal.h). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static const upti_operation_plan_t **g_plans[UPTI_TRACING_KIND_LAST];

/* Copies of plans in a runtime's own memory (upti_runtime_api_t.plans): count
 * plans of kind from operation first, kept equal to g_plans by rebuild_plans. */
struct plan_mirror {
    upti_tracing_kind_t kind;
    uint32_t first, count;
    const upti_operation_plan_t **dest;
    struct plan_mirror *next;
};
static struct plan_mirror *g_mirrors; /* under g_lock */
static struct cached_plan *g_plan_cache[UPTI_TRACING_KIND_LAST]; /* under g_lock */
static pthread_once_t g_plans_once = PTHREAD_ONCE_INIT;

static void allocate_plans(void)
{
    for (int k = 1; k < UPTI_TRACING_KIND_LAST; k++) {
        uint32_t n = upti_kind_info((upti_tracing_kind_t)k)->operation_count;
        g_plans[k] = calloc(n ? n : 1, sizeof *g_plans[k]);
        if (g_plans[k] == NULL) {
            upti_log_error("out of memory for operation plans");
            abort();
        }
    }
}

const upti_operation_plan_t *const *upti_plans(upti_tracing_kind_t kind)
{
    pthread_once(&g_plans_once, allocate_plans);
    return g_plans[kind];
}

static bool valid_kind(upti_tracing_kind_t kind)
{
    return kind > UPTI_TRACING_KIND_NONE && kind < UPTI_TRACING_KIND_LAST;
}

static struct context *lookup(upti_context_id_t id)
{
    uint32_t n = __atomic_load_n(&g_num_contexts, __ATOMIC_ACQUIRE);
    if (id.handle == 0 || id.handle > n || !g_contexts[id.handle - 1].valid)
        return NULL;
    return &g_contexts[id.handle - 1];
}

/* Builds (or finds) the plan of kind for the contexts in callback_mask (their
 * callbacks) and in buffer_mask (their buffers). */
static const upti_operation_plan_t *plan_for(upti_tracing_kind_t kind, uint32_t callback_mask,
                                             uint32_t buffer_mask)
{
    for (struct cached_plan *c = g_plan_cache[kind]; c != NULL; c = c->next)
        if (c->callback_mask == callback_mask && c->buffer_mask == buffer_mask)
            return &c->plan;
    struct cached_plan *c = calloc(1, sizeof *c);
    upti_plan_callback_t *cbs = calloc((size_t)__builtin_popcount(callback_mask) + 1, sizeof *cbs);
    upti_plan_buffer_t *bufs = calloc((size_t)__builtin_popcount(buffer_mask) + 1, sizeof *bufs);
    if (c == NULL || cbs == NULL || bufs == NULL) {
        free(c), free(cbs), free(bufs);
        upti_log_error("out of memory for an operation plan: tracing of one operation is lost");
        return NULL;
    }
    for (uint32_t i = 0; i < UPTI_MAX_CONTEXTS; i++) {
        struct context *ctx = &g_contexts[i];
        if (callback_mask & (1u << i))
            cbs[c->plan.num_callbacks++] = (upti_plan_callback_t){i, ctx->callback[kind].callback,
                                                                  ctx->callback[kind].callback_data};
        if (buffer_mask & (1u << i))
            bufs[c->plan.num_buffers++] = (upti_plan_buffer_t){
                i, ctx->buffered[kind].buffer->index, ctx->buffered[kind].buffer};
    }
    c->callback_mask = callback_mask;
    c->buffer_mask = buffer_mask;
    c->plan.callbacks = cbs;
    c->plan.buffers = bufs;
    if (c->plan.num_buffers > 0)
        c->plan.buffer0 = bufs[0];
    c->plan.one_api_record = c->plan.num_callbacks == 0 && c->plan.num_buffers == 1 &&
                             kind != UPTI_TRACING_KIND_MARKER_API && bufs[0].buffer->compact_api;
    c->next = g_plan_cache[kind];
    g_plan_cache[kind] = c;
    return &c->plan;
}

/* Rebuilds the plans of kind (0: of every kind) from the active contexts, and
 * the mirrors of those plans. Caller holds g_lock. A subscriber's domains are
 * enabled a kind at a time: rebuilding every kind each time cost an OpenCL
 * program's first call some 0.1 ms (four rebuilds of all operations of all
 * kinds). */
static void rebuild_plans_of(int kind)
{
    pthread_once(&g_plans_once, allocate_plans);
    uint32_t active = 0;
    for (uint32_t i = 0; i < g_num_contexts; i++)
        if (atomic_load(&g_contexts[i].active))
            active |= 1u << i;
    int first = kind != 0 ? kind : 1, end = kind != 0 ? kind + 1 : UPTI_TRACING_KIND_LAST;
    for (int k = first; k < end; k++) {
        uint32_t ops = upti_kind_info((upti_tracing_kind_t)k)->operation_count;
        for (uint32_t op = 1; op < ops; op++) {
            uint32_t callback_mask = 0, buffer_mask = 0;
            for (uint32_t i = 0; i < g_num_contexts; i++) {
                if (!(active & (1u << i)))
                    continue;
                const struct context *ctx = &g_contexts[i];
                if (ctx->callback[k].operations && ctx->callback[k].operations[op])
                    callback_mask |= 1u << i;
                if (ctx->buffered[k].operations && ctx->buffered[k].operations[op])
                    buffer_mask |= 1u << i;
            }
            const upti_operation_plan_t *plan =
                callback_mask | buffer_mask
                    ? plan_for((upti_tracing_kind_t)k, callback_mask, buffer_mask)
                    : NULL;
            __atomic_store_n(&g_plans[k][op], plan, __ATOMIC_RELEASE);
        }
    }
    for (struct plan_mirror *m = g_mirrors; m != NULL; m = m->next)
        if (kind == 0 || (int)m->kind == kind)
            for (uint32_t i = 0; i < m->count; i++)
                __atomic_store_n(&m->dest[i], g_plans[m->kind][m->first + i], __ATOMIC_RELEASE);
}

static void rebuild_plans(void) { rebuild_plans_of(0); }

bool upti_plans_mirror(upti_tracing_kind_t kind, uint32_t first, uint32_t count,
                       const upti_operation_plan_t **dest)
{
    pthread_once(&g_plans_once, allocate_plans);
    struct plan_mirror *m = malloc(sizeof *m);
    if (m == NULL)
        return false;
    *m = (struct plan_mirror){kind, first, count, dest, NULL};
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < count; i++)
        __atomic_store_n(&dest[i], g_plans[kind][first + i], __ATOMIC_RELEASE);
    m->next = g_mirrors;
    g_mirrors = m;
    pthread_mutex_unlock(&g_lock);
    return true;
}

UPTI_API upti_status_t upti_create_context(upti_context_id_t *context_id)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (context_id == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    if (!upti_configuration_open())
        return UPTI_STATUS_ERROR_CONFIGURATION_LOCKED;
    pthread_mutex_lock(&g_lock);
    upti_status_t st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    if (g_num_contexts < UPTI_MAX_CONTEXTS) {
        struct context *ctx = &g_contexts[g_num_contexts];
        ctx->valid = true;
        ctx->tool = upti_current_tool();
        __atomic_store_n(&g_num_contexts, g_num_contexts + 1, __ATOMIC_RELEASE);
        context_id->handle = g_num_contexts;
        st = UPTI_STATUS_SUCCESS;
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

static upti_status_t set_active(upti_context_id_t id, bool active)
{
    struct context *ctx = lookup(id);
    if (ctx == NULL)
        return UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND;
    pthread_mutex_lock(&g_lock);
    upti_status_t st = UPTI_STATUS_SUCCESS;
    if (active && g_contexts_final)
        st = UPTI_STATUS_ERROR_FINALIZED;
    else if (atomic_load(&ctx->active) != active) {
        atomic_store(&ctx->active, active);
        rebuild_plans();
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

UPTI_API upti_status_t upti_start_context(upti_context_id_t context_id)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    return set_active(context_id, true);
}

UPTI_API upti_status_t upti_stop_context(upti_context_id_t context_id)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    return set_active(context_id, false);
}

UPTI_API upti_status_t upti_context_is_active(upti_context_id_t context_id, int *status)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (status == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    struct context *ctx = lookup(context_id);
    if (ctx == NULL)
        return UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND;
    *status = atomic_load(&ctx->active) ? 1 : 0;
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_context_is_valid(upti_context_id_t context_id, int *status)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (status == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    *status = lookup(context_id) != NULL;
    return UPTI_STATUS_SUCCESS;
}

/* Validates a service request and builds its operation filter. */
static upti_status_t make_filter(upti_tracing_kind_t kind, const uint32_t *operations,
                                 size_t count, uint8_t **filter)
{
    if (!valid_kind(kind))
        return UPTI_STATUS_ERROR_KIND_NOT_FOUND;
    const upti_kind_info_t *info = upti_kind_info(kind);
    uint32_t n = info->operation_count;
    for (size_t i = 0; operations != NULL && i < count; i++)
        if (upti_operation_name_of(info, operations[i]) == NULL)
            return UPTI_STATUS_ERROR_OPERATION_NOT_FOUND;
    uint8_t *f = calloc(n ? n : 1, 1);
    if (f == NULL)
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    if (operations == NULL || count == 0)
        memset(f + 1, 1, n > 1 ? n - 1 : 0);
    else
        for (size_t i = 0; i < count; i++)
            f[operations[i]] = 1;
    *filter = f;
    return UPTI_STATUS_SUCCESS;
}

/* Installs a callback or buffer service (target filled in by the caller) with its
 * operation filter; once per (context, kind). */
static upti_status_t install_service(struct context *ctx, struct service *services,
                                     upti_tracing_kind_t kind, const uint32_t *operations,
                                     size_t count, struct service target)
{
    upti_status_t st = make_filter(kind, operations, count, &target.operations);
    if (st != UPTI_STATUS_SUCCESS)
        return st;
    pthread_mutex_lock(&g_lock);
    if (services[kind].operations != NULL) {
        st = UPTI_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED;
        free(target.operations);
    } else {
        services[kind] = target;
        if (atomic_load(&ctx->active))
            rebuild_plans();
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

/* The context a service is added to: CONFIGURATION_LOCKED once configuration
 * has closed, else CONTEXT_NOT_FOUND for an unknown id. */
static upti_status_t configurable_context(upti_context_id_t context_id, struct context **ctx)
{
    if (!upti_configuration_open())
        return UPTI_STATUS_ERROR_CONFIGURATION_LOCKED;
    *ctx = lookup(context_id);
    return *ctx != NULL ? UPTI_STATUS_SUCCESS : UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND;
}

UPTI_API upti_status_t upti_configure_callback_tracing_service(upti_context_id_t context_id,
                                                               upti_tracing_kind_t kind,
                                                               const uint32_t *operations,
                                                               size_t count,
                                                               upti_callback_tracing_cb_t callback,
                                                               void *callback_data)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    struct context *ctx = NULL;
    upti_status_t st = configurable_context(context_id, &ctx);
    if (st != UPTI_STATUS_SUCCESS)
        return st;
    if (callback == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    return install_service(ctx, ctx->callback, kind, operations, count,
                           (struct service){.callback = callback, .callback_data = callback_data});
}

UPTI_API upti_status_t upti_configure_buffer_tracing_service(upti_context_id_t context_id,
                                                             upti_tracing_kind_t kind,
                                                             const uint32_t *operations,
                                                             size_t count,
                                                             upti_buffer_id_t buffer_id)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    struct context *ctx = NULL;
    upti_status_t st = configurable_context(context_id, &ctx);
    if (st != UPTI_STATUS_SUCCESS)
        return st;
    struct upti_buffer *buffer = upti_buffer_lookup(buffer_id);
    if (buffer == NULL)
        return UPTI_STATUS_ERROR_BUFFER_NOT_FOUND;
    return install_service(ctx, ctx->buffered, kind, operations, count,
                           (struct service){.buffer = buffer});
}

void upti_stop_all_contexts(void)
{
    pthread_mutex_lock(&g_lock);
    g_contexts_final = true;
    for (uint32_t i = 0; i < g_num_contexts; i++)
        atomic_store(&g_contexts[i].active, false);
    rebuild_plans();
    pthread_mutex_unlock(&g_lock);
}

bool upti_contexts_finalized(void)
{
    pthread_mutex_lock(&g_lock);
    bool final = g_contexts_final;
    pthread_mutex_unlock(&g_lock);
    return final;
}

void upti_stop_tool_contexts(int tool)
{
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < g_num_contexts; i++)
        if (g_contexts[i].tool == tool)
            atomic_store(&g_contexts[i].active, false);
    rebuild_plans();
    pthread_mutex_unlock(&g_lock);
}

UPTI_API upti_status_t upti_runtime_get_operation_plans(upti_tracing_kind_t kind,
                                                        const upti_operation_plan_t *const **plans,
                                                        uint32_t *count)
{
    if (!valid_kind(kind) || plans == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    *plans = upti_plans(kind);
    if (count != NULL)
        *count = upti_kind_info(kind)->operation_count;
    return UPTI_STATUS_SUCCESS;
}

/* ---- the subscribers' internal context (subscriber.c) ---- */

static int g_subscriber_context = -1;

upti_status_t upti_subscriber_context_service(upti_tracing_kind_t kind, const uint8_t *filter,
                                              upti_callback_tracing_cb_t callback, void *data)
{
    if (!valid_kind(kind) || (filter != NULL && callback == NULL))
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    uint32_t n = upti_kind_info(kind)->operation_count;
    uint8_t *copy = NULL;
    if (filter != NULL) {
        copy = calloc(n ? n : 1, 1);
        if (copy == NULL)
            return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
        memcpy(copy, filter, n);
        copy[0] = 0;
    }
    pthread_mutex_lock(&g_lock);
    upti_status_t st = UPTI_STATUS_SUCCESS;
    if (g_subscriber_context < 0) {
        if (g_num_contexts < UPTI_MAX_CONTEXTS) {
            g_subscriber_context = (int)g_num_contexts;
            g_contexts[g_num_contexts].valid = true;
            g_contexts[g_num_contexts].tool = -2; /* no tool's: stopped only at finalization */
            __atomic_store_n(&g_num_contexts, g_num_contexts + 1, __ATOMIC_RELEASE);
        } else {
            st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
        }
    }
    if (st == UPTI_STATUS_SUCCESS) {
        struct context *ctx = &g_contexts[g_subscriber_context];
        /* Filters are read only under g_lock: the old one can go. */
        uint8_t *old = ctx->callback[kind].operations;
        ctx->callback[kind] = (struct service){copy, callback, data, NULL};
        copy = old;
        bool any = false;
        for (int k = 1; k < UPTI_TRACING_KIND_LAST; k++)
            any |= ctx->callback[k].operations != NULL;
        if (g_contexts_final)
            any = false;
        /* Only kind's filter changed, unless the context (de)activates. */
        bool was = atomic_exchange(&ctx->active, any);
        rebuild_plans_of(was == any ? (int)kind : 0);
    }
    pthread_mutex_unlock(&g_lock);
    free(copy);
    return st;
}

/* ---- fork() without exec (fork.h) ---- */

void upti_context_fork_prepare(void)
{
    pthread_mutex_lock(&g_lock);
}

void upti_context_fork_parent(void)
{
    pthread_mutex_unlock(&g_lock);
}

void upti_context_fork_child(void)
{
    pthread_mutex_unlock(&g_lock);
}
