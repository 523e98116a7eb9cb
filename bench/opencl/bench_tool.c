/* SPDX-License-Identifier: MIT */
/* Tool for bench_opencl: UPTI_OCL_BENCH_MODE = buffer (OPENCL_API buffer
 * tracing), callback (OPENCL_API callback tracing, empty callback), kernel
 * (KERNEL_DISPATCH buffer tracing). Records are counted, nothing more. */
#include <upti/upti.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */

#include <stdlib.h>
#include <string.h>

static upti_context_id_t g_ctx;
static upti_buffer_id_t g_buf;
static size_t g_records;

static void on_buffer(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **h, size_t n, void *d,
                      uint64_t drops)
{
    (void)c, (void)b, (void)h, (void)d, (void)drops;
    g_records += n;
}

static void on_call(upti_callback_tracing_record_t r, upti_user_data_t *u, void *d)
{
    (void)r, (void)u, (void)d;
}

static int initialize(upti_client_finalize_t f, void *d)
{
    (void)f, (void)d;
    const char *mode = getenv("UPTI_OCL_BENCH_MODE");
    mode = mode != NULL ? mode : "none";
    upti_create_context(&g_ctx);
    upti_create_buffer(g_ctx, 1 << 20, 1 << 19, UPTI_BUFFER_POLICY_LOSSLESS, on_buffer, NULL, &g_buf);
    if (strcmp(mode, "buffer") == 0)
        upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_OPENCL_API, NULL, 0, g_buf);
    else if (strcmp(mode, "callback") == 0)
        upti_configure_callback_tracing_service(g_ctx, UPTI_TRACING_KIND_OPENCL_API, NULL, 0, on_call, NULL);
    else if (strcmp(mode, "kernel") == 0)
        upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_KERNEL_DISPATCH, NULL, 0, g_buf);
    upti_start_context(g_ctx);
    return 0;
}

upti_tool_configure_result_t *upti_configure(uint32_t v, const char *rv, uint32_t p, upti_client_id_t *id)
{
    (void)v, (void)rv, (void)p, (void)id;
    static upti_tool_configure_result_t r = {sizeof r, initialize, NULL, NULL};
    return &r;
}
