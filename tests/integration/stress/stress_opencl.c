/* SPDX-License-Identifier: MIT */
/* OpenCL tracing under load, through the real layer (OPENCL_LAYERS=libupti-opencl.so):
 * THREADS threads each make CALLS cheap OpenCL calls (clGetDeviceInfo and
 * clGetKernelInfo, alternating) and, after every EVERY of them, one
 * clEnqueueNDRangeKernel on the thread's own in-order queue; at most DEPTH
 * kernels of a thread are in flight (before the next enqueue it waits for the
 * one DEPTH enqueues back: clWaitForEvents + clReleaseEvent); one clFinish at
 * the end. This program is its own tool (upti_force_configure): one context,
 * one buffer, OPENCL_API + KERNEL_DISPATCH.
 *
 *   stress_opencl lossless|discard [--calls N] [--every N] [--depth N]
 *                 [--rss-check|--rss-report]
 *
 * lossless (64 KiB regions, producers wait): after every worker's clFinish
 * and one upti_flush_buffer, each thread's API records are exactly the calls
 * it counted itself, per operation, with increasing correlation ids and
 * ordered timestamps; each clEnqueueNDRangeKernel has exactly one
 * KERNEL_DISPATCH record, with the enqueue's correlation id and thread, the
 * thread's queue and kernel, the kernel's name, status 0 and ordered device
 * times; no drop is reported.
 * discard (16 KiB regions): once every worker has made its first call, the
 * buffer's callback waits until all workers are done, so the regions overflow
 * whatever the timing: delivered + sum(drop_count) == produced exactly, and
 * drops > 0. What is delivered is still checked record by record (order per
 * thread, no kernel record twice).
 * Both: the context is started only after the setup (context, program,
 * queues, one warm-up kernel per queue: nothing is traced, nothing arrives),
 * and stopped after the check; nothing more arrives afterwards, not even at
 * exit (the tool's finalize, after UPTI's final flush). The kernels really
 * ran: each thread's counter equals its enqueues (+1 warm-up).
 * Resident memory (--rss-check): the peak VmRSS while the workers run
 * (VmHWM after a reset through /proc/self/clear_refs, else sampled every 2 ms)
 * minus VmRSS just before they start stays below
 * (THREADS + 2) regions + RSS_CONSTANT (see below). --rss-report prints the
 * numbers without asserting (sanitizer builds: shadow memory, allocator
 * caches and ASan's quarantine are not UPTI's).
 * The counts of the summary line are exact; its seconds are informational,
 * nothing asserts on time.
 *
 * --depth 0 lifts the in-flight limit (no events, only the final clFinish):
 * the runtime then holds every queued command (about 55 MiB for 80,000 on
 * PoCL, with or without UPTI), so use it with --rss-report. */
#include <upti/opencl.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <upti/upti.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "test_tool.h"

#define THREADS 16
#define DEFAULT_CALLS 500000L
#define DEFAULT_EVERY 100L
#define DEFAULT_DEPTH 4L /* kernels in flight per thread */
#define MAX_DEPTH 64
#define LOSSLESS_REGION (64u * 1024u)
#define DISCARD_REGION (16u * 1024u)
/*
 * RSS_CONSTANT: what may become resident while the workers run besides the
 * buffer regions, which are at most THREADS + 2 (the 16 workers, the layer's
 * completion thread, which writes most KERNEL_DISPATCH records, and main).
 * Measured on Debian 12, PoCL 3.1, 2 cores, gcc RelWithDebInfo, peak minus
 * before: lossless 2.0 to 2.2 MiB (regions 17 x 64 KiB = 1.06 MiB), discard
 * 1.2 to 1.5 MiB (17 x 16 KiB = 0.27 MiB): about 1 MiB that is not the
 * regions, the same for 100,000, 500,000 and 2,000,000 calls per thread.
 * Without the layer (nothing traced) the same run grows by 0.7 MiB: stack
 * pages and TLS of 16 new threads, glibc's per-thread malloc arenas, PoCL's
 * commands in flight (DEPTH per thread). UPTI adds ~0.3 MiB: its per-thread
 * state and the layer's command pool (calloc'd 64 at a time, recycled).
 * 8 MiB is 8 times the measured 1 MiB and still catches a cost per record
 * or per kernel: the 7 MiB of headroom are 0.9 bytes per API record (8.2
 * million of them) or 92 bytes per kernel (80,000).
 */
#define RSS_CONSTANT (8ull << 20)

typedef struct per_thread_t {
    /* written by the worker */
    upti_thread_id_t tid;
    cl_command_queue queue;
    cl_kernel kernel;
    cl_mem counter;
    uint64_t made_device_info, made_kernel_info, made_enqueue, made_finish, made_wait, made_release;
    long bad_returns;
    /* written by the buffer callback (under g_lock) */
    uint64_t api_records, rec_device_info, rec_kernel_info, rec_enqueue, rec_finish, rec_wait,
        rec_release;
    uint64_t kernel_records;
    uint64_t last_api_corr;
    upti_timestamp_t last_api_end;
    uint64_t *enqueue_corr; /* correlation ids of the enqueue API records, in arrival order */
    uint64_t *kernel_corr;  /* correlation ids of the KERNEL_DISPATCH records */
    uint64_t cap;
    uint64_t errors;
} per_thread_t;

static int g_lossless;
static long g_calls = DEFAULT_CALLS, g_every = DEFAULT_EVERY, g_depth = DEFAULT_DEPTH;
static upti_context_id_t g_ctx;
static upti_buffer_id_t g_buffer;
static size_t g_region;
static per_thread_t g_threads[THREADS];
static cl_context g_cl_ctx;
static cl_device_id g_dev;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_delivered, g_dropped, g_callbacks, g_bad_records, g_unknown_thread;
static pthread_barrier_t g_barrier;
static pthread_cond_t g_done_cond = PTHREAD_COND_INITIALIZER;
static int g_workers_done;            /* under g_lock */
static _Atomic int g_workers_started; /* made their first call */
static _Atomic int g_workers_finished;

#define CL_OK(call)                                                                                \
    do {                                                                                           \
        cl_int e_ = (call);                                                                        \
        if (e_ != CL_SUCCESS) {                                                                    \
            fprintf(stderr, "FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, e_);        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static per_thread_t *find_thread(upti_thread_id_t tid)
{
    for (int i = 0; i < THREADS; i++)
        if (g_threads[i].tid == tid)
            return &g_threads[i];
    return NULL;
}

static void on_api(const upti_buffer_tracing_api_record_t *r)
{
    per_thread_t *t = find_thread(r->thread_id);
    if (t == NULL) {
        report_first(&g_unknown_thread, "API record of an unknown thread (tid, operation)",
                     r->thread_id, r->operation);
        return;
    }
    t->api_records++;
    if (r->correlation_id.internal <= t->last_api_corr)
        report_first(&t->errors, "API correlation ids do not increase (last, now)",
                     t->last_api_corr, r->correlation_id.internal);
    t->last_api_corr = r->correlation_id.internal;
    if (r->start_timestamp > r->end_timestamp || r->start_timestamp < t->last_api_end)
        report_first(&t->errors, "API timestamps (start, end)", r->start_timestamp,
                     r->end_timestamp);
    t->last_api_end = r->end_timestamp;
    switch (r->operation) {
    case UPTI_OPENCL_API_clGetDeviceInfo:
        t->rec_device_info++;
        break;
    case UPTI_OPENCL_API_clGetKernelInfo:
        t->rec_kernel_info++;
        break;
    case UPTI_OPENCL_API_clEnqueueNDRangeKernel:
        if (t->rec_enqueue < t->cap)
            t->enqueue_corr[t->rec_enqueue] = r->correlation_id.internal;
        t->rec_enqueue++;
        break;
    case UPTI_OPENCL_API_clFinish:
        t->rec_finish++;
        break;
    case UPTI_OPENCL_API_clWaitForEvents:
        t->rec_wait++;
        break;
    case UPTI_OPENCL_API_clReleaseEvent:
        t->rec_release++;
        break;
    default:
        report_first(&t->errors, "unexpected API operation", r->operation, 0);
    }
}

static void on_kernel(const upti_buffer_tracing_kernel_dispatch_record_t *r)
{
    per_thread_t *t = find_thread(r->thread_id);
    if (t == NULL) {
        report_first(&g_unknown_thread, "kernel record of an unknown thread (tid, corr)",
                     r->thread_id, r->correlation_id.internal);
        return;
    }
    if (t->kernel_records < t->cap)
        t->kernel_corr[t->kernel_records] = r->correlation_id.internal;
    t->kernel_records++;
    if (r->operation != UPTI_KERNEL_DISPATCH_NDRANGE || r->status != 0)
        report_first(&t->errors, "kernel record operation/status", r->operation,
                     (uint64_t)r->status);
    if (r->queue_id != (uint64_t)(uintptr_t)t->queue ||
        r->runtime_context != (uint64_t)(uintptr_t)g_cl_ctx ||
        r->kernel_id != (uint64_t)(uintptr_t)t->kernel)
        report_first(&t->errors, "kernel record: queue/context/kernel of another thread",
                     r->queue_id, r->kernel_id);
    if (r->kernel_name == NULL || strcmp(r->kernel_name, "count") != 0)
        report_first(&t->errors, "kernel record: name not copied", 0, 0);
    if (r->work_dim != 1 || r->global_size[0] != 1)
        report_first(&t->errors, "kernel record: work_dim/global", r->work_dim, r->global_size[0]);
    if (!(0 < r->queued_timestamp && r->queued_timestamp <= r->submit_timestamp &&
          r->submit_timestamp <= r->start_timestamp && r->start_timestamp <= r->end_timestamp))
        report_first(&t->errors, "kernel record: device times out of order (queued, end)",
                     r->queued_timestamp, r->end_timestamp);
    if (r->correlation_id.internal == 0)
        report_first(&t->errors, "kernel record without correlation id", 0, 0);
}

static void on_buffer(upti_context_id_t ctx, upti_buffer_id_t buffer,
                      upti_record_header_t **headers, size_t n, void *data, uint64_t drop_count)
{
    (void)data;
    pthread_mutex_lock(&g_lock);
    /* discard: make the regions overflow whatever the timing (see the top). */
    if (!g_lossless && atomic_load(&g_workers_started) == THREADS)
        while (!g_workers_done)
            pthread_cond_wait(&g_done_cond, &g_lock);
    g_callbacks++;
    if (ctx.handle != g_ctx.handle || buffer.handle != g_buffer.handle)
        report_first(&g_bad_records, "callback for another context or buffer", ctx.handle,
                     buffer.handle);
    g_dropped += drop_count;
    for (size_t i = 0; i < n; i++) {
        const upti_record_header_t *h = headers[i];
        const upti_record_prefix_t *p = h->payload;
        if (h->category != UPTI_BUFFER_CATEGORY_TRACING || p == NULL || p->kind != h->kind) {
            report_first(&g_bad_records, "record category/kind", h->category, h->kind);
            continue;
        }
        g_delivered++;
        if (h->kind == UPTI_TRACING_KIND_OPENCL_API &&
            p->size >= sizeof(upti_buffer_tracing_api_record_t))
            on_api(h->payload);
        else if (h->kind == UPTI_TRACING_KIND_KERNEL_DISPATCH &&
                 p->size >= sizeof(upti_buffer_tracing_kernel_dispatch_record_t))
            on_kernel(h->payload);
        else
            report_first(&g_bad_records, "record kind/size", h->kind, p->size);
    }
    pthread_mutex_unlock(&g_lock);
}

static int tool_init(upti_client_finalize_t fini, void *tool_data)
{
    (void)fini;
    (void)tool_data;
    CHECK_STATUS(upti_create_context(&g_ctx), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(
        upti_create_buffer(g_ctx, g_region, g_region / 2,
                           g_lossless ? UPTI_BUFFER_POLICY_LOSSLESS : UPTI_BUFFER_POLICY_DISCARD,
                           on_buffer, NULL, &g_buffer),
        UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_OPENCL_API, NULL, 0,
                                                       g_buffer),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_KERNEL_DISPATCH,
                                                       NULL, 0, g_buffer),
                 UPTI_STATUS_SUCCESS);
    /* Started by main once the setup is done. */
    return 0;
}

static uint64_t g_delivered_at_flush, g_dropped_at_flush;
static int g_checked;

static void tool_fini(void *tool_data)
{
    (void)tool_data;
    pthread_mutex_lock(&g_lock);
    uint64_t delivered = g_delivered, dropped = g_dropped;
    pthread_mutex_unlock(&g_lock);
    if (g_checked && (delivered != g_delivered_at_flush || dropped != g_dropped_at_flush)) {
        fprintf(stderr,
                "FAIL: after the check, %llu more records and %llu more drops arrived "
                "(by the final flush at exit)\n",
                (unsigned long long)(delivered - g_delivered_at_flush),
                (unsigned long long)(dropped - g_dropped_at_flush));
        _exit(1);
    }
}

TEST_CONFIGURE_AS(configure, "stress_opencl", tool_init, tool_fini)

/* ---- the workers ---- */

static void *worker(void *arg)
{
    per_thread_t *t = arg;
    upti_get_thread_id(&t->tid);
    pthread_barrier_wait(&g_barrier); /* every tid is known before any record */
    const size_t one = 1;
    cl_event inflight[MAX_DEPTH] = {NULL};
    long bad = 0;
    for (long i = 0; i < g_calls; i++) {
        if (i & 1) {
            cl_uint nargs = 0;
            bad += clGetKernelInfo(t->kernel, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL) !=
                       CL_SUCCESS ||
                   nargs != 1;
            t->made_kernel_info++;
        } else {
            cl_uint units = 0;
            bad += clGetDeviceInfo(g_dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units,
                                   NULL) != CL_SUCCESS ||
                   units == 0;
            t->made_device_info++;
        }
        if (i == 0)
            atomic_fetch_add(&g_workers_started, 1);
        if ((i + 1) % g_every == 0) {
            /* At most g_depth kernels of this thread in flight: the runtime's
               memory for queued commands stays small and constant (0: no
               limit, no events, the clFinish at the end waits for all). */
            cl_event *slot = g_depth > 0 ? &inflight[t->made_enqueue % (uint64_t)g_depth] : NULL;
            if (slot != NULL && *slot != NULL) {
                bad += clWaitForEvents(1, slot) != CL_SUCCESS;
                t->made_wait++;
                bad += clReleaseEvent(*slot) != CL_SUCCESS;
                t->made_release++;
                *slot = NULL;
            }
            bad += clEnqueueNDRangeKernel(t->queue, t->kernel, 1, NULL, &one, NULL, 0, NULL,
                                          slot) != CL_SUCCESS;
            t->made_enqueue++;
        }
    }
    bad += clFinish(t->queue) != CL_SUCCESS;
    t->made_finish++;
    for (long d = 0; d < g_depth; d++) {
        if (inflight[d] != NULL) {
            bad += clReleaseEvent(inflight[d]) != CL_SUCCESS;
            t->made_release++;
        }
    }
    t->bad_returns = bad;
    atomic_fetch_add(&g_workers_finished, 1);
    return NULL;
}

/* ---- resident memory ---- */

typedef struct mem_t {
    uint64_t rss, hwm; /* bytes */
} mem_t;

static mem_t read_mem(void)
{
    mem_t m = {0, 0};
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return m;
    char line[256];
    unsigned long long kb;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
            m.rss = kb * 1024;
        else if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
            m.hwm = kb * 1024;
    }
    fclose(f);
    return m;
}

/* Resets VmHWM to the current VmRSS (Linux >= 4.0); 0 if not possible. */
static int reset_hwm(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == NULL)
        return 0;
    int ok = fputs("5", f) >= 0;
    ok &= fclose(f) == 0;
    return ok;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s lossless|discard [--calls N] [--every N] [--depth N]\n"
            "       [--rss-check|--rss-report]\n",
            argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "lossless") != 0 && strcmp(argv[1], "discard") != 0))
        usage(argv[0]);
    g_lossless = strcmp(argv[1], "lossless") == 0;
    int rss_check = 1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            g_calls = atol(argv[++i]);
        else if (strcmp(argv[i], "--every") == 0 && i + 1 < argc)
            g_every = atol(argv[++i]);
        else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc)
            g_depth = atol(argv[++i]);
        else if (strcmp(argv[i], "--rss-check") == 0)
            rss_check = 1;
        else if (strcmp(argv[i], "--rss-report") == 0)
            rss_check = 0;
        else
            usage(argv[0]);
    }
    if (g_calls < 2 || g_every < 1 || g_depth < 0 || g_depth > MAX_DEPTH)
        usage(argv[0]);
    g_region = g_lossless ? LOSSLESS_REGION : DISCARD_REGION;
    const uint64_t enqueues = (uint64_t)(g_calls / g_every);

    /* The tool first: the layer registers at the first OpenCL call below. */
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);

    /* Setup, not traced (the context is not started yet). */
    static const char *source =
        "__kernel void count(__global int *x) { x[get_global_id(0)] += 1; }\n";
    cl_platform_id platform;
    cl_int err;
    CL_OK(clGetPlatformIDs(1, &platform, NULL));
    CL_OK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &g_dev, NULL));
    g_cl_ctx = clCreateContext(NULL, 1, &g_dev, NULL, NULL, &err);
    CL_OK(err);
    cl_program program = clCreateProgramWithSource(g_cl_ctx, 1, &source, NULL, &err);
    CL_OK(err);
    CL_OK(clBuildProgram(program, 1, &g_dev, "", NULL, NULL));
    const size_t one = 1;
    for (int i = 0; i < THREADS; i++) {
        per_thread_t *t = &g_threads[i];
        t->queue = clCreateCommandQueueWithProperties(g_cl_ctx, g_dev, NULL, &err);
        CL_OK(err);
        t->kernel = clCreateKernel(program, "count", &err);
        CL_OK(err);
        cl_int zero = 0;
        t->counter = clCreateBuffer(g_cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero,
                                    &zero, &err);
        CL_OK(err);
        CL_OK(clSetKernelArg(t->kernel, 0, sizeof t->counter, &t->counter));
        /* Warm-up: PoCL compiles the work-group function at the first enqueue. */
        CL_OK(clEnqueueNDRangeKernel(t->queue, t->kernel, 1, NULL, &one, NULL, 0, NULL, NULL));
        CL_OK(clFinish(t->queue));
        /* The callback's bookkeeping, allocated and touched before the baseline. */
        t->cap = enqueues + 1;
        t->enqueue_corr = calloc(t->cap, sizeof *t->enqueue_corr);
        t->kernel_corr = calloc(t->cap, sizeof *t->kernel_corr);
        CHECK(t->enqueue_corr != NULL && t->kernel_corr != NULL);
        if (t->enqueue_corr == NULL || t->kernel_corr == NULL)
            return 1;
        memset(t->enqueue_corr, 0xff, t->cap * sizeof *t->enqueue_corr);
        memset(t->kernel_corr, 0xff, t->cap * sizeof *t->kernel_corr);
    }
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    pthread_mutex_lock(&g_lock);
    CHECK_EQ_U64(g_delivered, 0); /* a stopped context produces nothing */
    CHECK_EQ_U64(g_dropped, 0);
    pthread_mutex_unlock(&g_lock);

    pthread_barrier_init(&g_barrier, NULL, THREADS);
    const mem_t before = read_mem();
    const int hwm_reset = reset_hwm();
    uint64_t sampled_peak = before.rss;
    const double t0 = now_s();
    CHECK_STATUS(upti_start_context(g_ctx), UPTI_STATUS_SUCCESS);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, &g_threads[i]) == 0);
    /* Sample the resident size while the workers run (the fallback peak). */
    while (atomic_load(&g_workers_finished) < THREADS) {
        mem_t m = read_mem();
        if (m.rss > sampled_peak)
            sampled_peak = m.rss;
        struct timespec ms2 = {0, 2 * 1000 * 1000};
        nanosleep(&ms2, NULL);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    const double t_workers = now_s() - t0;
    pthread_mutex_lock(&g_lock);
    g_workers_done = 1;
    pthread_cond_broadcast(&g_done_cond);
    pthread_mutex_unlock(&g_lock);
    /* Every worker's clFinish returned: the layer has emitted the records of
       its kernels (docs/opencl.md: clFinish reaps what completed). */
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    const double t_all = now_s() - t0;
    const mem_t after = read_mem();
    if (after.rss > sampled_peak)
        sampled_peak = after.rss;
    const uint64_t peak =
        hwm_reset ? (after.hwm > sampled_peak ? after.hwm : sampled_peak) : sampled_peak;

    pthread_mutex_lock(&g_lock);
    g_delivered_at_flush = g_delivered;
    g_dropped_at_flush = g_dropped;
    uint64_t produced = 0, api_delivered = 0, kernels_delivered = 0;
    for (int i = 0; i < THREADS; i++) {
        per_thread_t *t = &g_threads[i];
        CHECK_EQ_U64(t->bad_returns, 0);
        CHECK_EQ_U64(t->errors, 0);
        CHECK_EQ_U64(t->made_device_info + t->made_kernel_info, (uint64_t)g_calls);
        CHECK_EQ_U64(t->made_enqueue, enqueues);
        const uint64_t depth = (uint64_t)g_depth;
        CHECK_EQ_U64(t->made_wait, depth > 0 && enqueues > depth ? enqueues - depth : 0);
        CHECK_EQ_U64(t->made_release, depth > 0 ? enqueues : 0);
        uint64_t api_made = t->made_device_info + t->made_kernel_info + t->made_enqueue +
                            t->made_finish + t->made_wait + t->made_release;
        produced += api_made + t->made_enqueue; /* one KERNEL_DISPATCH record per enqueue */
        api_delivered += t->api_records;
        kernels_delivered += t->kernel_records;
        CHECK(t->api_records <= api_made);
        CHECK(t->kernel_records <= t->made_enqueue);
        /* Each kernel record at most once, whatever the policy. */
        uint64_t nk = t->kernel_records < t->cap ? t->kernel_records : t->cap;
        qsort(t->kernel_corr, nk, sizeof *t->kernel_corr, cmp_u64);
        uint64_t dups = 0;
        for (uint64_t k = 1; k < nk; k++)
            dups += t->kernel_corr[k] == t->kernel_corr[k - 1];
        CHECK_EQ_U64(dups, 0);
        if (g_lossless) {
            CHECK_EQ_U64(t->api_records, api_made);
            CHECK_EQ_U64(t->rec_device_info, t->made_device_info);
            CHECK_EQ_U64(t->rec_kernel_info, t->made_kernel_info);
            CHECK_EQ_U64(t->rec_enqueue, t->made_enqueue);
            CHECK_EQ_U64(t->rec_finish, t->made_finish);
            CHECK_EQ_U64(t->rec_wait, t->made_wait);
            CHECK_EQ_U64(t->rec_release, t->made_release);
            CHECK_EQ_U64(t->kernel_records, t->made_enqueue);
            /* The kernel records carry exactly the enqueues' correlation ids
               (enqueue_corr is in call order, so sorted). */
            uint64_t mismatched = 0;
            for (uint64_t k = 0; k < nk && k < t->rec_enqueue; k++)
                mismatched += t->kernel_corr[k] != t->enqueue_corr[k];
            CHECK_EQ_U64(mismatched, 0);
        }
    }
    CHECK_EQ_U64(g_bad_records, 0);
    CHECK_EQ_U64(g_unknown_thread, 0);
    CHECK_EQ_U64(api_delivered + kernels_delivered, g_delivered);
    if (g_lossless) {
        CHECK_EQ_U64(g_delivered, produced);
        CHECK_EQ_U64(g_dropped, 0);
    } else {
        CHECK_EQ_U64(g_delivered + g_dropped, produced);
        CHECK(g_dropped > 0);
        CHECK(g_delivered < produced);
    }
    const uint64_t growth = peak > before.rss ? peak - before.rss : 0;
    const uint64_t bound = (uint64_t)(THREADS + 2) * g_region + RSS_CONSTANT;
    const double mib = 1024.0 * 1024.0;
    const uint64_t kernels = THREADS * enqueues, api = produced - kernels;
    fprintf(stderr,
            "stress_opencl %s: %d threads x (%ld calls + %llu enqueues): produced %llu records "
            "(%llu API + %llu kernel), delivered %llu (%llu + %llu), dropped %llu, %llu callbacks; "
            "%.2f s (%.0f API calls/s), %.2f s with the flush; RSS before %.1f MiB, after "
            "%.1f MiB, peak %.1f MiB (%s): growth %.1f MiB, bound %.1f MiB = %u x %u KiB "
            "regions + %llu MiB%s\n",
            argv[1], THREADS, g_calls, (unsigned long long)enqueues, (unsigned long long)produced,
            (unsigned long long)api, (unsigned long long)kernels, (unsigned long long)g_delivered,
            (unsigned long long)api_delivered, (unsigned long long)kernels_delivered,
            (unsigned long long)g_dropped, (unsigned long long)g_callbacks, t_workers,
            (double)api / t_workers, t_all, (double)before.rss / mib, (double)after.rss / mib,
            (double)peak / mib, hwm_reset ? "VmHWM" : "sampled", (double)growth / mib,
            (double)bound / mib, THREADS + 2, (unsigned)(g_region / 1024),
            (unsigned long long)(RSS_CONSTANT >> 20), rss_check ? "" : " (not asserted)");
    if (rss_check)
        CHECK(growth <= bound);
    g_checked = 1;
    pthread_mutex_unlock(&g_lock);

    /* Nothing more is traced: the kernels ran (read back untraced), then teardown. */
    CHECK_STATUS(upti_stop_context(g_ctx), UPTI_STATUS_SUCCESS);
    for (int i = 0; i < THREADS; i++) {
        per_thread_t *t = &g_threads[i];
        cl_int value = -1;
        CL_OK(clEnqueueReadBuffer(t->queue, t->counter, CL_TRUE, 0, sizeof value, &value, 0, NULL,
                                  NULL));
        CHECK_EQ_U64((uint64_t)value, enqueues + 1); /* + the warm-up */
        clReleaseMemObject(t->counter);
        clReleaseKernel(t->kernel);
        clReleaseCommandQueue(t->queue);
    }
    clReleaseProgram(program);
    clReleaseContext(g_cl_ctx);
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    pthread_mutex_lock(&g_lock);
    CHECK_EQ_U64(g_delivered, g_delivered_at_flush);
    CHECK_EQ_U64(g_dropped, g_dropped_at_flush);
    pthread_mutex_unlock(&g_lock);
    return test_result(g_lossless ? "stress_opencl lossless" : "stress_opencl discard");
}
