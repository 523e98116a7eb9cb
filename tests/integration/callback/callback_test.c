/* SPDX-License-Identifier: MIT */
/* Subscriber callback API (callback.h) over an OpenCL program on PoCL, run
 * with OPENCL_LAYERS=libupti-opencl.so. Subscriber A (made in a tool's
 * initialize) enables every domain; subscriber B (made later, from main)
 * checks that UPTI calls inside a callback are refused and that its handle
 * dies with unsubscribe. Exact sequences are checked; exits 1 on a failure. */
#include "../../apps/ocl_common.h"

#include <upti/upti.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <upti/opencl.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_failures;
#define EXPECT(cond, ...)                                                        \
    do {                                                                         \
        if (!(cond)) {                                                           \
            printf("FAIL line %d: %s: ", __LINE__, #cond);                       \
            printf(__VA_ARGS__);                                                 \
            printf("\n");                                                        \
            g_failures++;                                                        \
        }                                                                        \
    } while (0)

/* ---- what subscriber A saw ---- */

typedef struct event_t {
    upti_callback_domain_t domain;
    upti_callback_phase_kind_t phase;
    uint32_t api_id, detail;
    uint64_t corr, count, queue, device, start, end;
    int32_t rc;
    upti_gpu_operation_kind_t op_kind;
    char name[64];
} event_t;

#define MAX_EVENTS 100000
static event_t g_events[MAX_EVENTS];
static int g_num_events;
static int g_instance_mismatch;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_a(upti_callback_domain_t domain, uint32_t api_group, uint32_t api_id, void *backend_context,
                 const void *cb_data, void *user_data, void **instance)
{
    (void)api_group;
    (void)backend_context;
    event_t e;
    int mismatch = 0;
    memset(&e, 0, sizeof e);
    e.domain = domain;
    e.api_id = api_id;
    if (domain == UPTI_CB_DOMAIN_INTERNAL_THREADS || domain == UPTI_CB_DOMAIN_INTERNAL_EVENT) {
        const upti_callback_internal_data_t *d = cb_data;
        e.phase = d->phase;
        e.detail = d->detail;
        e.count = d->count;
        snprintf(e.name, sizeof e.name, "%s", d->message ? d->message : "");
    } else {
        const upti_callback_gpu_op_data_t *d = cb_data;
        e.phase = d->phase;
        e.corr = d->correlation_id;
        e.queue = d->queue_handle;
        e.device = d->device_handle;
        e.rc = d->return_code;
        if (d->operation_count > 0) {
            e.op_kind = d->operation_details[0].kind;
            e.start = d->operation_details[0].start_timestamp;
            e.end = d->operation_details[0].end_timestamp;
            snprintf(e.name, sizeof e.name, "%s", d->operation_details[0].name ? d->operation_details[0].name : "");
        }
        /* The instance slot: what ENTER stored, EXIT finds. */
        if (instance != NULL && d->phase == UPTI_CB_PHASE_API_ENTER)
            *instance = (void *)(uintptr_t)(d->correlation_id * 8 + domain);
        else if (instance != NULL && d->phase == UPTI_CB_PHASE_API_EXIT &&
                 *instance != (void *)(uintptr_t)(d->correlation_id * 8 + domain))
            mismatch = 1;
    }
    /* Callbacks arrive from the API threads and UPTI's threads at once. */
    pthread_mutex_lock(&g_lock);
    g_instance_mismatch += mismatch;
    if (g_num_events < MAX_EVENTS)
        g_events[g_num_events++] = e;
    (*(int *)user_data)++;
    pthread_mutex_unlock(&g_lock);
}

/* ---- subscriber B: refusals inside a callback ---- */

static upti_callback_subscriber_t g_sub_b;
static upti_status_t g_inside_flush = UPTI_STATUS_SUCCESS, g_inside_enable = UPTI_STATUS_SUCCESS;
static _Atomic int g_b_calls;

static void on_b(upti_callback_domain_t domain, uint32_t api_group, uint32_t api_id, void *backend_context,
                 const void *cb_data, void *user_data, void **instance)
{
    (void)domain, (void)api_group, (void)api_id, (void)backend_context, (void)cb_data, (void)user_data;
    (void)instance;
    pthread_mutex_lock(&g_lock);
    int first = g_b_calls++ == 0;
    pthread_mutex_unlock(&g_lock);
    if (first) {
        g_inside_flush = upti_flush_buffer((upti_buffer_id_t){1});
        g_inside_enable = upti_callback_enable_domain(g_sub_b, UPTI_CB_DOMAIN_INTERNAL_EVENT, 1, 1);
        /* Name helpers are allowed. */
        if (upti_get_callback_domain_name(domain) == NULL || upti_get_callback_phase_kind_name(UPTI_CB_PHASE_API_EXIT) == NULL) {
            pthread_mutex_lock(&g_lock);
            g_b_calls = -1000;
            pthread_mutex_unlock(&g_lock);
        }
    }
}

/* ---- the tool part: buffers ---- */

static upti_buffer_id_t g_api_buffer, g_device_buffer;
static uint64_t g_record_corr[4096];
static int g_num_records;
static uint64_t g_drops_seen_by_buffer;
static _Atomic int g_slow_consumer;
static upti_callback_subscriber_t g_sub_a;
static int g_a_calls;

static void on_records(upti_context_id_t ctx, upti_buffer_id_t buffer, upti_record_header_t **headers, size_t n,
                       void *data, uint64_t drops)
{
    (void)ctx, (void)data;
    if (buffer.handle == g_api_buffer.handle) {
        g_drops_seen_by_buffer += drops;
        if (g_slow_consumer)
            usleep(200 * 1000); /* the producer overflows meanwhile */
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const upti_record_prefix_t *p = headers[i]->payload;
        if (g_num_records < 4096)
            g_record_corr[g_num_records++] = p->correlation_id.internal;
    }
}

static int initialize(upti_client_finalize_t fin, void *data)
{
    (void)fin, (void)data;
    /* Subscribed first, so the buffer thread's start is seen. */
    if (upti_callback_subscribe(&g_sub_a, on_a, &g_a_calls) != UPTI_STATUS_SUCCESS)
        return 1;
    for (int d = 1; d < UPTI_CB_DOMAIN_LAST; d++)
        if (upti_callback_enable_domain(g_sub_a, (upti_callback_domain_t)d, 1, 1) != UPTI_STATUS_SUCCESS)
            return 1;
    upti_context_id_t ctx;
    if (upti_create_context(&ctx) != UPTI_STATUS_SUCCESS ||
        upti_create_buffer(ctx, 4096, 1024, UPTI_BUFFER_POLICY_DISCARD, on_records, NULL, &g_api_buffer) ||
        upti_create_buffer(ctx, 1 << 20, 1 << 19, UPTI_BUFFER_POLICY_LOSSLESS, on_records, NULL,
                           &g_device_buffer) ||
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_OPENCL_API, NULL, 0, g_api_buffer) ||
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_KERNEL_DISPATCH, NULL, 0, g_device_buffer) ||
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MEMORY_COPY, NULL, 0, g_device_buffer) ||
        upti_start_context(ctx))
        return 1;
    return 0;
}

static upti_tool_configure_result_t *configure(uint32_t v, const char *s, uint32_t p, upti_client_id_t *id)
{
    (void)v, (void)s, (void)p;
    static upti_tool_configure_result_t r = {sizeof r, initialize, NULL, NULL};
    id->name = "callback_test";
    return &r;
}

/* ---- checks ---- */

/* The return_code of the last DRIVER_API EXIT of api_id (-12345 if none). */
static int32_t last_exit_rc(uint32_t api_id)
{
    int32_t rc = -12345;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_num_events; i++)
        if (g_events[i].domain == UPTI_CB_DOMAIN_DRIVER_API && g_events[i].phase == UPTI_CB_PHASE_API_EXIT &&
            g_events[i].api_id == api_id)
            rc = g_events[i].rc;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static int count(upti_callback_domain_t d, upti_callback_phase_kind_t ph, uint32_t api_id)
{
    int n = 0;
    for (int i = 0; i < g_num_events; i++)
        if (g_events[i].domain == d && g_events[i].phase == ph && (api_id == 0 || g_events[i].api_id == api_id))
            n++;
    return n;
}

static int has_record(uint64_t corr)
{
    for (int i = 0; i < g_num_records; i++)
        if (g_record_corr[i] == corr)
            return 1;
    return 0;
}

static void check_operations(int expected_ops)
{
    int ops = 0;
    for (int i = 0; i < g_num_events; i++) {
        const event_t *e = &g_events[i];
        if (e->domain != UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED || e->phase != UPTI_CB_PHASE_API_ENTER)
            continue;
        ops++;
        const event_t *seq[8];
        int n = 0;
        for (int j = i; j < g_num_events && n < 8; j++)
            if (g_events[j].corr == e->corr &&
                g_events[j].domain >= UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED &&
                g_events[j].domain <= UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED)
                seq[n++] = &g_events[j];
        EXPECT(n == 4, "%s corr %llu: %d GPU-operation callbacks", e->name, (unsigned long long)e->corr, n);
        if (n != 4)
            continue;
        EXPECT(seq[1]->domain == UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED &&
                   seq[1]->phase == UPTI_CB_PHASE_API_EXIT && seq[1]->rc == CL_SUCCESS,
               "%s: second is not APPENDED EXIT", e->name);
        EXPECT(seq[2]->domain == UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED, "%s: third is %s", e->name,
               upti_get_callback_domain_name(seq[2]->domain));
        EXPECT(seq[3]->domain == UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED, "%s: fourth is %s", e->name,
               upti_get_callback_domain_name(seq[3]->domain));
        EXPECT(seq[3]->start != 0 && seq[3]->start <= seq[3]->end, "%s: start %llu end %llu", e->name,
               (unsigned long long)seq[3]->start, (unsigned long long)seq[3]->end);
        EXPECT(e->queue != 0 && e->device != 0 && seq[3]->queue == e->queue, "%s: queue/device", e->name);
        EXPECT(seq[3]->op_kind == e->op_kind, "%s: kind", e->name);
        EXPECT(has_record(e->corr), "%s: no buffer record with correlation id %llu", e->name,
               (unsigned long long)e->corr);
        printf("op %-22s %-11s corr ok, APPENDED>EXIT>DISPATCHED>COMPLETED, %llu ns on device\n", e->name,
               upti_get_gpu_operation_kind_name(e->op_kind), (unsigned long long)(seq[3]->end - seq[3]->start));
    }
    EXPECT(ops == expected_ops, "%d operations appended, expected %d", ops, expected_ops);
}

/* The INTERNAL_THREADS events of phase ph, of the thread detail (any thread: -1). */
static int thread_events(upti_callback_phase_kind_t ph, long detail)
{
    int n = 0;
    for (int i = 0; i < g_num_events; i++)
        n += g_events[i].domain == UPTI_CB_DOMAIN_INTERNAL_THREADS && g_events[i].phase == ph &&
             (detail < 0 || g_events[i].detail == (uint32_t)detail);
    return n;
}

static void at_exit_check(void)
{
    pthread_mutex_lock(&g_lock);
    /* UPTI finalized before this ran: its buffer thread has ended. */
    int end = thread_events(UPTI_CB_PHASE_INTERNAL_THREAD_END, UPTI_INTERNAL_THREAD_BUFFER_DELIVERY);
    EXPECT(end == 1, "buffer thread END seen %d times", end);
    int completion_end = thread_events(UPTI_CB_PHASE_INTERNAL_THREAD_END, UPTI_INTERNAL_THREAD_COMPLETION);
    EXPECT(completion_end == 1, "OpenCL completion thread END seen %d times", completion_end);
    /* Counted here, not while the program runs: the completion thread is
     * detached and reports its START when it first gets to run. */
    int starts = thread_events(UPTI_CB_PHASE_INTERNAL_THREAD_START, -1);
    EXPECT(starts == 2, "internal thread starts %d (buffer delivery, completion)", starts);
    pthread_mutex_unlock(&g_lock);
    printf(g_failures == 0 ? "callback test: PASS\n" : "callback test: FAIL (%d)\n", g_failures);
    fflush(stdout);
    _exit(g_failures == 0 ? 0 : 1);
}

static const char *source = "__kernel void vadd(__global const int *a, __global const int *b, __global int *c)\n"
                            "{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n";
#define N 4096

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    atexit(at_exit_check);
    if (upti_force_configure(configure) != UPTI_STATUS_SUCCESS) {
        printf("FAIL upti_force_configure\n");
        return 1;
    }
    static int a[N], b[N], c[N];
    for (int i = 0; i < N; i++)
        a[i] = i, b[i] = 2 * i;
    cl_device_id dev = ocl_first_device(NULL);
    cl_context ctx = ocl_context(dev);
    cl_command_queue q = ocl_queue(ctx, dev);
    cl_program prog = ocl_build(ctx, dev, source);
    cl_int err;
    cl_kernel k = ocl_kernel(prog, "vadd");
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY, sizeof a, NULL, &err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY, sizeof b, NULL, &err);
    cl_mem dc = ocl_buffer(ctx, CL_MEM_READ_WRITE, sizeof c);

    /* B subscribes from main, at any time: DRIVER_API exits only. */
    EXPECT(upti_callback_subscribe(&g_sub_b, on_b, NULL) == UPTI_STATUS_SUCCESS, "subscribe B");
    EXPECT(upti_callback_enable_domain(g_sub_b, UPTI_CB_DOMAIN_DRIVER_API, 0, 1) == UPTI_STATUS_SUCCESS, "B");

    /* 6 operations: 2 writes, a fill, a kernel, a barrier, a blocking read. */
    CHECK(clEnqueueWriteBuffer(q, da, CL_FALSE, 0, sizeof a, a, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, db, CL_FALSE, 0, sizeof b, b, 0, NULL, NULL));
    int zero = 0;
    CHECK(clEnqueueFillBuffer(q, dc, &zero, sizeof zero, 0, sizeof c, 0, NULL, NULL));
    CHECK(clSetKernelArg(k, 0, sizeof da, &da));
    CHECK(clSetKernelArg(k, 1, sizeof db, &db));
    CHECK(clSetKernelArg(k, 2, sizeof dc, &dc));
    size_t global = N, local = 64;
    cl_event kev;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &kev));
    CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    CHECK(clFinish(q));
    CHECK(clReleaseEvent(kev));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += c[i] != 3 * i;
    EXPECT(bad == 0, "%d wrong results", bad);

    /* Unsubscribe B: its handle is dead; it sees nothing more. */
    EXPECT(upti_callback_unsubscribe(g_sub_b) == UPTI_STATUS_SUCCESS, "unsubscribe B");
    pthread_mutex_lock(&g_lock);
    int b_before = g_b_calls;
    pthread_mutex_unlock(&g_lock);
    EXPECT(upti_callback_enable_domain(g_sub_b, UPTI_CB_DOMAIN_DRIVER_API, 1, 1) != UPTI_STATUS_SUCCESS,
           "old handle accepted");
    EXPECT(upti_callback_unsubscribe(g_sub_b) != UPTI_STATUS_SUCCESS, "unsubscribed twice");
    upti_callback_subscriber_t again;
    EXPECT(upti_callback_subscribe(&again, on_b, NULL) == UPTI_STATUS_SUCCESS && again.handle != g_sub_b.handle,
           "slot reuse gives a new handle");
    EXPECT(upti_callback_disable_all_domains(g_sub_b) != UPTI_STATUS_SUCCESS, "old handle after reuse");
    EXPECT(upti_callback_unsubscribe(again) == UPTI_STATUS_SUCCESS, "unsubscribe again");

    /* Overflow the 4 KiB discard buffer of API records. */
    g_slow_consumer = 1;
    for (int i = 0; i < 400; i++) {
        cl_uint units;
        clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    }
    g_slow_consumer = 0;
    CHECK(clFinish(q));
    EXPECT(g_b_calls == b_before, "B called after unsubscribe (%d > %d)", g_b_calls, b_before);
    EXPECT(g_inside_flush == UPTI_STATUS_ERROR_CALLBACK_CONTEXT, "flush inside callback: %s",
           upti_get_status_name(g_inside_flush));
    EXPECT(g_inside_enable == UPTI_STATUS_ERROR_CALLBACK_CONTEXT, "enable inside callback: %s",
           upti_get_status_name(g_inside_enable));

    /* Failing calls: DRIVER_API's EXIT carries each one's status (last_exit_rc below), the
     * errcode_ret of clCreateBuffer even where the program passed NULL. */
    EXPECT(clSetKernelArg(k, 9, sizeof da, &da) == CL_INVALID_ARG_INDEX, "clSetKernelArg(9)");
    EXPECT(last_exit_rc(UPTI_OPENCL_API_clSetKernelArg) == CL_INVALID_ARG_INDEX, "clSetKernelArg EXIT rc %d",
           last_exit_rc(UPTI_OPENCL_API_clSetKernelArg));
    EXPECT(clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, NULL) == NULL, "clCreateBuffer(0)");
    EXPECT(last_exit_rc(UPTI_OPENCL_API_clCreateBuffer) == CL_INVALID_BUFFER_SIZE, "clCreateBuffer EXIT rc %d",
           last_exit_rc(UPTI_OPENCL_API_clCreateBuffer));
    EXPECT(clReleaseMemObject(NULL) == CL_INVALID_MEM_OBJECT, "clReleaseMemObject(NULL)");
    EXPECT(last_exit_rc(UPTI_OPENCL_API_clReleaseMemObject) == CL_INVALID_MEM_OBJECT,
           "clReleaseMemObject EXIT rc %d", last_exit_rc(UPTI_OPENCL_API_clReleaseMemObject));
    cl_uint units = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
    EXPECT(last_exit_rc(UPTI_OPENCL_API_clGetDeviceInfo) == CL_SUCCESS, "clGetDeviceInfo EXIT rc %d",
           last_exit_rc(UPTI_OPENCL_API_clGetDeviceInfo));

    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
    clReleaseKernel(k);
    CHECK(clReleaseProgram(prog));

    /* Completions are asynchronous: wait for the six. */
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&g_lock); /* callbacks still arrive from UPTI's threads */
        int completed = count(UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED, UPTI_CB_PHASE_API_EXIT, 0);
        pthread_mutex_unlock(&g_lock);
        if (completed >= 6)
            break;
        usleep(1000);
    }
    EXPECT(upti_flush_buffer(g_device_buffer) == UPTI_STATUS_SUCCESS, "flush");
    EXPECT(upti_flush_buffer(g_api_buffer) == UPTI_STATUS_SUCCESS, "flush");

    pthread_mutex_lock(&g_lock);
    check_operations(6);
    EXPECT(count(UPTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED, UPTI_CB_PHASE_API_EXIT, 0) == 1, "CONTEXT_CREATED");
    EXPECT(count(UPTI_CB_DOMAIN_DRIVER_MODULE_LOADED, UPTI_CB_PHASE_API_EXIT, 0) == 1, "MODULE_LOADED %d",
           count(UPTI_CB_DOMAIN_DRIVER_MODULE_LOADED, UPTI_CB_PHASE_API_EXIT, 0));
    EXPECT(count(UPTI_CB_DOMAIN_DRIVER_MODULE_UNLOADED, UPTI_CB_PHASE_API_EXIT, 0) == 1, "MODULE_UNLOADED");
    int finish = UPTI_OPENCL_API_clFinish, read = UPTI_OPENCL_API_clEnqueueReadBuffer;
    EXPECT(count(UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION, UPTI_CB_PHASE_API_ENTER, finish) == 2 &&
               count(UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION, UPTI_CB_PHASE_API_EXIT, finish) == 2,
           "one HOST_SYNCHRONIZATION pair per clFinish");
    EXPECT(count(UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION, UPTI_CB_PHASE_API_ENTER, read) == 1 &&
               count(UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION, UPTI_CB_PHASE_API_EXIT, read) == 1,
           "one HOST_SYNCHRONIZATION pair for the blocking read");
    EXPECT(count(UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION, UPTI_CB_PHASE_API_ENTER, 0) == 3, "3 syncs");
    int api_enter = count(UPTI_CB_DOMAIN_DRIVER_API, UPTI_CB_PHASE_API_ENTER, 0);
    EXPECT(api_enter > 400 && api_enter == count(UPTI_CB_DOMAIN_DRIVER_API, UPTI_CB_PHASE_API_EXIT, 0),
           "DRIVER_API %d enters", api_enter);
    EXPECT(g_instance_mismatch == 0, "%d instance slots lost between ENTER and EXIT", g_instance_mismatch);
    uint64_t dropped = 0;
    int warnings = 0, clock_info = 0;
    for (int i = 0; i < g_num_events; i++) {
        const event_t *e = &g_events[i];
        if (e->domain == UPTI_CB_DOMAIN_INTERNAL_EVENT && e->detail == UPTI_INTERNAL_EVENT_TYPE_WARNING &&
            e->count > 0)
            warnings++, dropped += e->count;
        clock_info += e->domain == UPTI_CB_DOMAIN_INTERNAL_EVENT && e->detail == UPTI_INTERNAL_EVENT_TYPE_INFO;
        if (e->domain == UPTI_CB_DOMAIN_INTERNAL_THREADS || e->domain == UPTI_CB_DOMAIN_INTERNAL_EVENT)
            printf("%s %s detail %u: %s\n", upti_get_callback_domain_name(e->domain), upti_get_callback_phase_kind_name(e->phase),
                   e->detail, e->name);
    }
    EXPECT(warnings > 0 && dropped == g_drops_seen_by_buffer, "drop warnings %d: %llu dropped, buffer saw %llu",
           warnings, (unsigned long long)dropped, (unsigned long long)g_drops_seen_by_buffer);
    EXPECT(clock_info == 1, "clock mapping INFO %d", clock_info);
    printf("records dropped %llu (INTERNAL_EVENT warnings %d), DRIVER_API calls %d, B callbacks %d\n",
           (unsigned long long)dropped, warnings, api_enter, g_b_calls);
    pthread_mutex_unlock(&g_lock);

    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
