/* SPDX-License-Identifier: MIT */
/* Tool for bench_vulkan: UPTI_VK_BENCH_MODE = none (a context, nothing
 * configured), api (VULKAN_API buffer tracing), kernel (VULKAN_API and
 * KERNEL_DISPATCH buffer tracing). Records are dropped on delivery. */
#include <upti/upti.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */

#include <stdlib.h>
#include <string.h>

static upti_context_id_t g_ctx;
static upti_buffer_id_t g_buf;

static void on_buffer(upti_context_id_t ctx, upti_buffer_id_t buf, upti_record_header_t **headers, size_t n,
                      void *data, uint64_t drops)
{
    (void)ctx, (void)buf, (void)headers, (void)n, (void)data, (void)drops;
}

static int initialize(upti_client_finalize_t fini, void *data)
{
    (void)fini, (void)data;
    const char *mode = getenv("UPTI_VK_BENCH_MODE");
    upti_create_context(&g_ctx);
    upti_create_buffer(g_ctx, 1 << 22, 1 << 21, UPTI_BUFFER_POLICY_LOSSLESS, on_buffer, NULL, &g_buf);
    if (mode != NULL && (strcmp(mode, "api") == 0 || strcmp(mode, "kernel") == 0))
        upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_VULKAN_API, NULL, 0, g_buf);
    if (mode != NULL && strcmp(mode, "kernel") == 0)
        upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_KERNEL_DISPATCH, NULL, 0, g_buf);
    upti_start_context(g_ctx);
    return 0;
}

static void finalize(void *data)
{
    (void)data;
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version, uint32_t priority,
                                             upti_client_id_t *id)
{
    (void)version, (void)runtime_version, (void)priority;
    static upti_tool_configure_result_t result = {sizeof result, initialize, finalize, NULL};
    id->name = "vk-bench";
    return &result;
}
