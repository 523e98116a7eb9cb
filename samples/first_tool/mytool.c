/* SPDX-License-Identifier: MIT */
/* mytool.c: a complete UPTI tool in one file (docs/writing-a-tool.md).
 *
 * Counts marker calls (uptx and NVTX) and OpenCL API calls with callbacks,
 * and collects kernels with their device times through a buffer; prints a
 * summary when the program ends.
 *
 *   cc -shared -fPIC -o mytool.so mytool.c $(pkg-config --cflags --libs upti)
 *   UPTI_TOOL_LIBRARIES=$PWD/mytool.so OPENCL_LAYERS=/usr/lib/libupti-opencl.so ./app
 */
#include <upti/upti.h>

#include <stdatomic.h>
#include <stdio.h>

static atomic_ulong marker_calls, opencl_calls;
static unsigned long kernels;         /* written by the buffer thread only */
static unsigned long long kernel_ns;

/* Runs in the application's thread: at ENTER and at EXIT of an OpenCL or
 * uptx call, once (phase NONE) for an NVTX call. Each call counts once. */
static void on_call(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                    void *data)
{
    (void)user_data;
    (void)data;
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER)
        return;
    if (record.kind == UPTI_TRACING_KIND_MARKER_API)
        atomic_fetch_add(&marker_calls, 1);
    else if (record.kind == UPTI_TRACING_KIND_OPENCL_API)
        atomic_fetch_add(&opencl_calls, 1);
}

/* Runs on a UPTI thread with the records the buffer holds. */
static void on_records(upti_context_id_t context, upti_buffer_id_t buffer,
                       upti_record_header_t **headers, size_t num_headers, void *data,
                       uint64_t drop_count)
{
    (void)context;
    (void)buffer;
    (void)data;
    (void)drop_count; /* a lossless buffer drops nothing */
    for (size_t i = 0; i < num_headers; i++) {
        if (headers[i]->kind != UPTI_TRACING_KIND_KERNEL_DISPATCH)
            continue;
        const upti_buffer_tracing_kernel_dispatch_record_t *k = headers[i]->payload;
        kernels++;
        if (k->end_timestamp > k->start_timestamp)
            kernel_ns += k->end_timestamp - k->start_timestamp;
    }
}

static int tool_init(upti_client_finalize_t finalize, void *data)
{
    (void)finalize;
    (void)data;
    upti_context_id_t ctx;
    upti_buffer_id_t buffer;
    if (upti_create_context(&ctx) != UPTI_STATUS_SUCCESS)
        return -1;
    /* NULL, 0: every operation of the kind. */
    if (upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, on_call,
                                                NULL) != UPTI_STATUS_SUCCESS ||
        upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_OPENCL_API, NULL, 0, on_call,
                                                NULL) != UPTI_STATUS_SUCCESS)
        return -1;
    /* UPTI_OPTIONS sets size; a field left out takes its default. 64 KiB per
     * producing thread, delivered at half full, nothing dropped. */
    upti_buffer_options_t options = UPTI_OPTIONS(upti_buffer_options_t,
                                                 .region_size = 64 * 1024,
                                                 .watermark = 32 * 1024,
                                                 .policy = UPTI_BUFFER_POLICY_LOSSLESS,
                                                 .callback = on_records);
    if (upti_create_buffer_with_options(ctx, &options, &buffer) != UPTI_STATUS_SUCCESS ||
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_KERNEL_DISPATCH, NULL, 0,
                                              buffer) != UPTI_STATUS_SUCCESS)
        return -1;
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : -1;
}

/* At exit, after every buffer was flushed. */
static void tool_fini(void *data)
{
    (void)data;
    fprintf(stderr, "mytool: %lu marker calls, %lu OpenCL calls, %lu kernels (%llu ns on the device)\n",
            atomic_load(&marker_calls), atomic_load(&opencl_calls), kernels, kernel_ns);
}

/* Found by UPTI in every tool library; priority is this tool's place among them. */
upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    (void)version;
    (void)runtime_version;
    (void)priority; /* works alongside other tools (under `upti run` it is not first) */
    client_id->name = "mytool";
    static upti_tool_configure_result_t result = {sizeof result, tool_init, tool_fini, NULL};
    return &result;
}
