/* SPDX-License-Identifier: MIT */
/* libupti-opencl: UPTI's subscriber domains (callback.h) on OpenCL.
 *
 * The layer is UPTI's subscriber provider. When the set of enabled domains
 * changes it asks for callback-tracing services of the subscribers'
 * internal context: OPENCL_API for the calls some domain needs, the device
 * kinds (KERNEL_DISPATCH, MEMORY_COPY) for DISPATCHED/COMPLETED, CODE_OBJECT
 * for modules. The wrappers therefore see ordinary plans: nothing is added
 * to their fast path, and correlation ids are those of buffer records.
 *
 *   OPENCL_API ENTER/EXIT  DRIVER_API, APPENDED, HOST_SYNCHRONIZATION,
 *                          CONTEXT_CREATED (clCreateContext* EXIT)
 *   enqueue EXIT           clSetEventCallback(CL_SUBMITTED) on the event the
 *                          wrapper handed over (only while DISPATCHED is on)
 *   device record          COMPLETED (on the completion or syncing thread)
 *   CODE_OBJECT LOAD       MODULE_LOADED / MODULE_UNLOADED
 *
 * One enqueued operation's APPENDED EXIT, DISPATCHED and COMPLETED are
 * delivered in that order whatever order they arrive in (struct sub_op).
 */
#include "subscriber_hooks.h"
#include "fork.h"

#include <upti/names.h>
#include <upti/runtime_callback.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOM(x) (1u << UPTI_CB_DOMAIN_DRIVER_##x)
#define GPU_OPS (DOM(GPU_OPERATION_APPENDED) | DOM(GPU_OPERATION_DISPATCHED) | DOM(GPU_OPERATION_COMPLETED))
#define DEVICE_OPS (DOM(GPU_OPERATION_DISPATCHED) | DOM(GPU_OPERATION_COMPLETED))

int uocl_sub_want_events;
static _Atomic uint32_t g_domains;

/* ---- one enqueued operation, from ENTER to COMPLETED ---- */

struct sub_op {
    struct sub_op *hash_next;
    uint64_t corr;
    _Atomic int refs;
    pthread_mutex_t lock;
    int stage; /* 0 appending, 1 APPENDED EXIT delivered, 2 DISPATCHED delivered, 3 done */
    _Atomic int dispatched, completed;
    int dispatch_status;
    uint32_t api_id;
    uint64_t queue, device, context;
    upti_gpu_op_details_t details; /* from the arguments */
    upti_gpu_op_details_t done;    /* from the device record */
};

#define BUCKETS 1024
static struct sub_op *g_ops[BUCKETS];
static pthread_mutex_t g_ops_lock = PTHREAD_MUTEX_INITIALIZER;

static void ops_put(struct sub_op *op)
{
    pthread_mutex_lock(&g_ops_lock);
    op->hash_next = g_ops[op->corr % BUCKETS];
    g_ops[op->corr % BUCKETS] = op;
    pthread_mutex_unlock(&g_ops_lock);
}

static struct sub_op *ops_take(uint64_t corr)
{
    pthread_mutex_lock(&g_ops_lock);
    struct sub_op **link = &g_ops[corr % BUCKETS], *op;
    while ((op = *link) != NULL && op->corr != corr)
        link = &op->hash_next;
    if (op != NULL)
        *link = op->hash_next;
    pthread_mutex_unlock(&g_ops_lock);
    return op;
}

static void op_unref(struct sub_op *op)
{
    if (atomic_fetch_sub(&op->refs, 1) == 1) {
        pthread_mutex_destroy(&op->lock);
        free(op);
    }
}

static upti_callback_gpu_op_data_t op_data(upti_callback_domain_t domain, upti_callback_phase_kind_t phase,
                                           uint64_t corr, uint32_t api_id)
{
    return upti_layer_gpu_op_data(UPTI_TRACING_KIND_OPENCL_API, domain, phase, corr, api_id);
}

static void deliver_op(const struct sub_op *op, upti_callback_domain_t domain,
                       const upti_gpu_op_details_t *details, int status)
{
    upti_callback_gpu_op_data_t d = op_data(domain, UPTI_CB_PHASE_API_EXIT, op->corr, op->api_id);
    d.queue_handle = op->queue;
    d.device_handle = op->device;
    d.context_handle = op->context;
    d.return_code = status;
    d.operation_count = 1;
    d.operation_details = details;
    upti_layer_notify(&d, NULL);
}

/* Delivers whatever stage is due, in order. */
static void advance(struct sub_op *op)
{
    pthread_mutex_lock(&op->lock);
    for (;;) {
        if (op->stage == 1 && atomic_load(&op->dispatched)) {
            op->stage = 2;
            deliver_op(op, UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED, &op->details,
                       op->dispatch_status);
        } else if (op->stage == 2 && atomic_load(&op->completed)) {
            op->stage = 3;
            deliver_op(op, UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED, &op->done, op->done.status);
        } else {
            break;
        }
    }
    pthread_mutex_unlock(&op->lock);
}

static void CL_CALLBACK on_dispatched(cl_event event, cl_int status, void *data)
{
    (void)event;
    struct sub_op *op = data;
    op->dispatch_status = status < 0 ? status : 0;
    atomic_store(&op->dispatched, 1);
    advance(op);
    op_unref(op);
}

/* ---- the event of the enqueue in progress on this thread ---- */

static __thread cl_event t_event;

void uocl_sub_enqueued(cl_event event)
{
    if (t_event != NULL)
        uocl_next.clReleaseEvent(t_event);
    t_event = NULL;
    if (event != NULL && uocl_next.clRetainEvent(event) == CL_SUCCESS)
        t_event = event;
}

/* ---- per-call frames: instance slots and what ENTER learnt ---- */

#define MAX_DEPTH 8
enum { SLOT_API, SLOT_APPENDED, SLOT_SYNC, SLOTS };

typedef struct frame_t {
    void *instance[SLOTS][UPTI_MAX_SUBSCRIBERS];
    uint32_t api_id;
    int sync;
    int appended;
    struct sub_op *op;
    uocl_queue_info_t qi;
    int have_qi;
    cl_command_queue queue;
    upti_gpu_op_details_t details;
} frame_t;

static __thread frame_t t_frames[MAX_DEPTH];
static __thread int t_depth;

void uocl_sub_kernel(upti_gpu_op_details_t *d, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                     const size_t *global, const size_t *local)
{
    (void)offset;
    cl_program program = NULL;
    d->operation_id = (uint64_t)(uintptr_t)kernel;
    if (kernel != NULL)
        d->name = uocl_kernel_name(kernel, &program);
    d->work_dim = work_dim;
    for (cl_uint i = 0; i < 3; i++) {
        d->global_size[i] = i < work_dim ? (global != NULL ? global[i] : 1) : (work_dim ? 1 : 0);
        d->local_size[i] = (local != NULL && i < work_dim) ? local[i] : 0;
    }
}

static upti_gpu_operation_kind_t op_kind(uint32_t kind, uint32_t op)
{
    if (kind == UPTI_TRACING_KIND_KERNEL_DISPATCH)
        return UPTI_GPU_OPERATION_KIND_KERNEL;
    switch (op) {
    case UPTI_MEMORY_COPY_FILL_BUFFER:
    case UPTI_MEMORY_COPY_FILL_IMAGE:
    case UPTI_MEMORY_COPY_SVM_MEMFILL:
        return UPTI_GPU_OPERATION_KIND_MEMORY_FILL;
    case UPTI_MEMORY_COPY_MAP_BUFFER:
    case UPTI_MEMORY_COPY_MAP_IMAGE:
    case UPTI_MEMORY_COPY_SVM_MAP:
        return UPTI_GPU_OPERATION_KIND_MAP;
    case UPTI_MEMORY_COPY_UNMAP:
    case UPTI_MEMORY_COPY_SVM_UNMAP:
        return UPTI_GPU_OPERATION_KIND_UNMAP;
    case UPTI_MEMORY_COPY_MIGRATE:
    case UPTI_MEMORY_COPY_SVM_MIGRATE:
        return UPTI_GPU_OPERATION_KIND_MIGRATE;
    case UPTI_MEMORY_COPY_MARKER:
        return UPTI_GPU_OPERATION_KIND_MARKER;
    case UPTI_MEMORY_COPY_BARRIER:
        return UPTI_GPU_OPERATION_KIND_BARRIER;
    case UPTI_MEMORY_COPY_SVM_FREE:
        return UPTI_GPU_OPERATION_KIND_FREE;
    default:
        return UPTI_GPU_OPERATION_KIND_MEMORY_COPY;
    }
}

static const char *op_name(uint32_t kind, uint32_t op)
{
    const char *name = NULL;
    upti_get_tracing_operation_name((upti_tracing_kind_t)kind, op, &name);
    return name;
}

static int is_host_sync(uint32_t op, const upti_callback_tracing_opencl_api_data_t *pl)
{
    if (op == UPTI_OPENCL_API_clFinish || op == UPTI_OPENCL_API_clWaitForEvents)
        return 1;
    uint16_t off = uocl_api_info[op].blocking_off;
    if (off == 0 || pl == NULL)
        return 0;
    cl_bool blocking = CL_FALSE;
    memcpy(&blocking, (const char *)&pl->args + off, sizeof blocking);
    return blocking != CL_FALSE;
}

static void fill_queue(upti_callback_gpu_op_data_t *d, const frame_t *f)
{
    d->queue_handle = (uint64_t)(uintptr_t)f->queue;
    if (f->have_qi) {
        d->device_handle = (uint64_t)(uintptr_t)f->qi.device;
        d->context_handle = (uint64_t)(uintptr_t)f->qi.context;
    }
}

static void api_enter(frame_t *f, uint64_t corr, uint32_t op,
                      const upti_callback_tracing_opencl_api_data_t *pl, uint32_t word)
{
    const uocl_api_info_t *info = &uocl_api_info[op];
    memset(f->instance, 0, sizeof f->instance);
    f->api_id = op;
    f->sync = f->appended = f->have_qi = 0;
    f->op = NULL;
    f->queue = NULL;
    if (info->cmd_kind != 0 || op == UPTI_OPENCL_API_clFinish)
        memcpy(&f->queue, &pl->args, sizeof f->queue); /* the first parameter of each */
    if (f->queue != NULL)
        f->have_qi = uocl_queue_get(f->queue, &f->qi);
    upti_callback_gpu_op_data_t d = op_data(UPTI_CB_DOMAIN_DRIVER_API, UPTI_CB_PHASE_API_ENTER, corr, op);
    fill_queue(&d, f);
    if (word & DOM(API))
        upti_layer_notify(&d, f->instance[SLOT_API]);
    if (info->cmd_kind != 0 && (word & GPU_OPS)) {
        f->appended = 1;
        memset(&f->details, 0, sizeof f->details);
        f->details.size = sizeof f->details;
        f->details.kind = op_kind(info->cmd_kind, info->cmd_op);
        f->details.operation = info->cmd_op;
        uocl_sub_describe(op, &pl->args, &f->details);
        if (f->details.name == NULL)
            f->details.name = op_name(info->cmd_kind, info->cmd_op);
        d.domain = UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED;
        d.operation_count = 1;
        d.operation_details = &f->details;
        if (word & DOM(GPU_OPERATION_APPENDED))
            upti_layer_notify(&d, f->instance[SLOT_APPENDED]);
        if (word & DEVICE_OPS) {
            struct sub_op *o = calloc(1, sizeof *o);
            if (o != NULL) {
                o->corr = corr;
                atomic_init(&o->refs, 2); /* the table (COMPLETED) and this call */
                pthread_mutex_init(&o->lock, NULL);
                o->api_id = op;
                o->queue = d.queue_handle;
                o->device = d.device_handle;
                o->context = d.context_handle;
                o->details = f->details;
                ops_put(o);
                f->op = o;
            }
        }
        d.operation_count = 0;
        d.operation_details = NULL;
    }
    if ((word & DOM(HOST_SYNCHRONIZATION)) && is_host_sync(op, pl)) {
        f->sync = 1;
        d.domain = UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION;
        upti_layer_notify(&d, f->instance[SLOT_SYNC]);
    }
}

/* rc: the call's result (the payload's: its cl_int or errcode_ret), 0 for a call without one. */
static void api_exit(frame_t *f, uint64_t corr, uint32_t op,
                     const upti_callback_tracing_opencl_api_data_t *pl, int32_t rc)
{
    uint32_t word = atomic_load(&g_domains);
    upti_callback_gpu_op_data_t d = op_data(UPTI_CB_DOMAIN_DRIVER_API, UPTI_CB_PHASE_API_EXIT, corr, op);
    fill_queue(&d, f);
    d.return_code = rc;
    if (f->sync) {
        d.domain = UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION;
        upti_layer_notify(&d, f->instance[SLOT_SYNC]);
    }
    if (f->appended) {
        d.domain = UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED;
        d.operation_count = 1;
        d.operation_details = &f->details;
        upti_layer_notify(&d, f->instance[SLOT_APPENDED]);
        d.operation_count = 0;
        d.operation_details = NULL;
    }
    cl_event event = t_event;
    t_event = NULL;
    struct sub_op *o = f->op;
    if (o != NULL) {
        /* Commands on queues without profiling, or that failed, never complete for UPTI. */
        int tracked = rc == CL_SUCCESS && f->have_qi &&
                      (f->qi.forced_profiling || (f->qi.app_properties & CL_QUEUE_PROFILING_ENABLE));
        if (!tracked) {
            struct sub_op *mine = ops_take(corr);
            if (mine != NULL)
                op_unref(mine);
        }
        int registered = 0;
        if (rc == CL_SUCCESS && event != NULL && (word & DOM(GPU_OPERATION_DISPATCHED))) {
            atomic_fetch_add(&o->refs, 1);
            registered = uocl_next.clSetEventCallback(event, CL_SUBMITTED, on_dispatched, o) == CL_SUCCESS ||
                         uocl_next.clSetEventCallback(event, CL_RUNNING, on_dispatched, o) == CL_SUCCESS;
            if (!registered)
                atomic_fetch_sub(&o->refs, 1);
        }
        pthread_mutex_lock(&o->lock);
        o->stage = 1;
        pthread_mutex_unlock(&o->lock);
        if (!registered)
            atomic_store(&o->dispatched, 1);
        advance(o);
        op_unref(o);
        f->op = NULL;
    }
    if (event != NULL)
        uocl_next.clReleaseEvent(event);
    if ((op == UPTI_OPENCL_API_clCreateContext || op == UPTI_OPENCL_API_clCreateContextFromType) &&
        (word & DOM(CONTEXT_CREATED))) {
        cl_context ctx = NULL;
        memcpy(&ctx, &pl->retval, sizeof ctx);
        if (ctx != NULL) {
            upti_callback_gpu_op_data_t c = op_data(UPTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED,
                                                    UPTI_CB_PHASE_API_EXIT, corr, op);
            c.context_handle = (uint64_t)(uintptr_t)ctx;
            c.return_code = rc;
            if (op == UPTI_OPENCL_API_clCreateContext && pl->args.clCreateContext.num_devices == 1 &&
                pl->args.clCreateContext.devices != NULL)
                c.device_handle = (uint64_t)(uintptr_t)pl->args.clCreateContext.devices[0];
            upti_layer_notify(&c, NULL);
        }
    }
    d.domain = UPTI_CB_DOMAIN_DRIVER_API;
    upti_layer_notify(&d, f->instance[SLOT_API]);
}

static void api_cb(upti_callback_tracing_record_t rec, upti_user_data_t *user_data, void *data)
{
    (void)data;
    const upti_callback_tracing_opencl_api_data_t *pl = rec.payload;
    if (rec.operation == 0 || rec.operation >= UPTI_OPENCL_API_LAST || pl == NULL)
        return;
    if (rec.phase == UPTI_CALLBACK_PHASE_ENTER) {
        if (t_depth >= MAX_DEPTH) {
            user_data->ptr = NULL;
            return;
        }
        frame_t *f = &t_frames[t_depth++];
        user_data->ptr = f;
        api_enter(f, rec.correlation_id.internal, rec.operation, pl, atomic_load(&g_domains));
    } else if (rec.phase == UPTI_CALLBACK_PHASE_EXIT) {
        frame_t *f = user_data->ptr;
        if (f == NULL)
            return;
        int32_t rc = pl->result != UPTI_API_RESULT_NONE ? (int32_t)pl->result : 0;
        api_exit(f, rec.correlation_id.internal, rec.operation, pl, rc);
        t_depth--;
    }
}

/* ---- device records: COMPLETED ---- */

static void report_clock(uocl_device_t *dev)
{
    enum { MAX_REPORTED = 64 };
    static _Atomic(uocl_device_t *) reported[MAX_REPORTED];
    if (dev == NULL || atomic_load(&dev->clock_state) != 1)
        return;
    for (int i = 0; i < MAX_REPORTED; i++) {
        uocl_device_t *seen = atomic_load(&reported[i]);
        if (seen == dev)
            return;
        if (seen == NULL) {
            uocl_device_t *expected = NULL;
            if (!atomic_compare_exchange_strong(&reported[i], &expected, dev)) {
                if (expected == dev)
                    return;
                continue;
            }
            char message[160];
            snprintf(message, sizeof message,
                     "opencl: device %p clock mapped onto UPTI's clock (offset %lld ns)",
                     (void *)dev->id, (long long)dev->clock_offset);
            upti_runtime_subscriber_internal(UPTI_CB_DOMAIN_INTERNAL_EVENT, UPTI_CB_PHASE_INTERNAL_EVENT,
                                             UPTI_INTERNAL_EVENT_TYPE_INFO, message, 0);
            return;
        }
    }
}

/* What a KERNEL_DISPATCH or MEMORY_COPY record r tells alike: when it ran
   and its status (into details d), and where: its queue, context and agent. */
#define READ_DEVICE_OP(r, d, queue, context, agent)                                            \
    do {                                                                                       \
        (d)->submit_timestamp = (r)->submit_timestamp;                                         \
        (d)->start_timestamp = (r)->start_timestamp;                                           \
        (d)->end_timestamp = (r)->end_timestamp;                                               \
        (d)->status = (r)->status;                                                             \
        (queue) = (r)->queue_id;                                                               \
        (context) = (r)->runtime_context;                                                      \
        (agent) = (r)->agent_id;                                                               \
    } while (0)

static void device_cb(upti_callback_tracing_record_t rec, upti_user_data_t *user_data, void *data)
{
    (void)user_data;
    (void)data;
    if (rec.phase != UPTI_CALLBACK_PHASE_NONE || rec.payload == NULL)
        return;
    upti_gpu_op_details_t done;
    memset(&done, 0, sizeof done);
    done.size = sizeof done;
    done.kind = op_kind(rec.kind, rec.operation);
    done.operation = rec.operation;
    uint64_t queue, context;
    upti_agent_id_t agent;
    if (rec.kind == UPTI_TRACING_KIND_KERNEL_DISPATCH) {
        const upti_buffer_tracing_kernel_dispatch_record_t *r = rec.payload;
        done.operation_id = r->kernel_id;
        done.name = r->kernel_name;
        done.work_dim = r->work_dim;
        memcpy(done.global_size, r->global_size, sizeof done.global_size);
        memcpy(done.local_size, r->local_size, sizeof done.local_size);
        READ_DEVICE_OP(r, &done, queue, context, agent);
    } else {
        const upti_buffer_tracing_memory_copy_record_t *r = rec.payload;
        done.name = op_name(rec.kind, rec.operation);
        done.bytes = r->bytes;
        READ_DEVICE_OP(r, &done, queue, context, agent);
    }
    /* From the record, not the queue: the program may have released the
     * queue (and the handle be another queue's by now). */
    uocl_device_t *dev = uocl_device_of_agent(agent);
    /* Another runtime's operation (the Vulkan layer's records reach this
       context too): its own provider reports it. */
    if (dev == NULL && agent.handle != 0)
        return;
    if (dev != NULL && (atomic_load(&g_domains) & (1u << UPTI_CB_DOMAIN_INTERNAL_EVENT)))
        report_clock(dev);
    struct sub_op *o = ops_take(rec.correlation_id.internal);
    if (o == NULL) {
        /* Enqueued before COMPLETED was enabled: nothing to wait for. */
        struct sub_op tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.corr = rec.correlation_id.internal;
        tmp.queue = queue;
        tmp.context = context;
        tmp.device = dev != NULL ? (uint64_t)(uintptr_t)dev->id : 0;
        deliver_op(&tmp, UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED, &done, done.status);
        return;
    }
    /* Deferred, perhaps: keep only what outlives this callback (names are interned). */
    if (o->details.name != NULL)
        done.name = o->details.name;
    o->done = done;
    atomic_store(&o->completed, 1);
    advance(o);
    op_unref(o);
}

/* ---- code objects: MODULE_LOADED / MODULE_UNLOADED ---- */

__thread int uocl_sub_emitting_code_object;

static void code_cb(upti_callback_tracing_record_t rec, upti_user_data_t *user_data, void *data)
{
    (void)user_data;
    (void)data;
    const upti_buffer_tracing_code_object_record_t *r = rec.payload;
    if (r == NULL || rec.operation != UPTI_CODE_OBJECT_LOAD || !uocl_sub_emitting_code_object)
        return;
    upti_callback_domain_t domain = rec.phase == UPTI_CALLBACK_PHASE_UNLOAD
                                        ? UPTI_CB_DOMAIN_DRIVER_MODULE_UNLOADED
                                        : UPTI_CB_DOMAIN_DRIVER_MODULE_LOADED;
    uint32_t api_id = t_depth > 0 ? t_frames[t_depth - 1].api_id : 0;
    upti_gpu_op_details_t m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    m.kind = UPTI_GPU_OPERATION_KIND_OTHER;
    m.operation = rec.operation;
    m.operation_id = r->code_object_id;
    m.name = r->name;
    upti_callback_gpu_op_data_t d = op_data(domain, UPTI_CB_PHASE_API_EXIT, rec.correlation_id.internal, api_id);
    d.context_handle = r->runtime_context;
    d.operation_count = 1;
    d.operation_details = &m;
    upti_layer_notify(&d, NULL);
}

/* ---- the provider ---- */

static void domains_changed(uint32_t word, void *data)
{
    (void)data;
    atomic_store(&g_domains, word);
    __atomic_store_n(&uocl_sub_want_events, (word & DOM(GPU_OPERATION_DISPATCHED)) != 0, __ATOMIC_RELEASE);

    uint8_t api[UPTI_OPENCL_API_LAST];
    memset(api, 0, sizeof api);
    int any = 0;
    for (uint32_t op = 1; op < UPTI_OPENCL_API_LAST; op++) {
        const uocl_api_info_t *info = &uocl_api_info[op];
        int want = (word & DOM(API)) != 0;
        want |= info->cmd_kind != 0 && (word & GPU_OPS);
        want |= (word & DOM(HOST_SYNCHRONIZATION)) &&
                (op == UPTI_OPENCL_API_clFinish || op == UPTI_OPENCL_API_clWaitForEvents || info->blocking_off);
        want |= (word & DOM(CONTEXT_CREATED)) &&
                (op == UPTI_OPENCL_API_clCreateContext || op == UPTI_OPENCL_API_clCreateContextFromType);
        /* Module records then carry the build/release call's correlation id. */
        want |= (word & (DOM(MODULE_LOADED) | DOM(MODULE_UNLOADED))) &&
                (op == UPTI_OPENCL_API_clBuildProgram || op == UPTI_OPENCL_API_clLinkProgram ||
                 op == UPTI_OPENCL_API_clReleaseProgram);
        api[op] = (uint8_t)want;
        any |= want;
    }
    upti_runtime_subscriber_service(UPTI_TRACING_KIND_OPENCL_API, any ? api : NULL, api_cb, NULL);

    uint8_t all[64];
    memset(all, 1, sizeof all);
    int device = (word & DEVICE_OPS) != 0;
    upti_runtime_subscriber_service(UPTI_TRACING_KIND_KERNEL_DISPATCH, device ? all : NULL, device_cb, NULL);
    upti_runtime_subscriber_service(UPTI_TRACING_KIND_MEMORY_COPY, device ? all : NULL, device_cb, NULL);
    uint8_t code[UPTI_CODE_OBJECT_LAST] = {0};
    code[UPTI_CODE_OBJECT_LOAD] = 1;
    int modules = (word & (DOM(MODULE_LOADED) | DOM(MODULE_UNLOADED))) != 0;
    upti_runtime_subscriber_service(UPTI_TRACING_KIND_CODE_OBJECT, modules ? code : NULL, code_cb, NULL);
}

_Static_assert(UPTI_KERNEL_DISPATCH_LAST <= 64 && UPTI_MEMORY_COPY_LAST <= 64, "filter size");

void uocl_sub_init(void)
{
    upti_layer_serve_subscribers("opencl", domains_changed, "opencl: cannot serve subscribers (callback.h)");
}

void uocl_sub_thread_started(void)
{
    upti_runtime_subscriber_internal(UPTI_CB_DOMAIN_INTERNAL_THREADS, UPTI_CB_PHASE_INTERNAL_THREAD_START,
                                     UPTI_INTERNAL_THREAD_COMPLETION, "upti-opencl completion", 0);
}

void uocl_sub_thread_ended(void)
{
    upti_runtime_subscriber_internal(UPTI_CB_DOMAIN_INTERNAL_THREADS, UPTI_CB_PHASE_INTERNAL_THREAD_END,
                                     UPTI_INTERNAL_THREAD_COMPLETION, "upti-opencl completion", 0);
}

/* ---- fork() without exec (fork.c) ---- */

void uocl_sub_fork_prepare(void)
{
    pthread_mutex_lock(&g_ops_lock);
}

void uocl_sub_fork_parent(void)
{
    pthread_mutex_unlock(&g_ops_lock);
}

/* The operations in flight are the parent's (their COMPLETED is the
 * parent's to deliver): the child forgets them, and with them the locks of
 * those whose callbacks ran on other threads. */
void uocl_sub_fork_child(void)
{
    memset(g_ops, 0, sizeof g_ops);
    pthread_mutex_unlock(&g_ops_lock);
}
