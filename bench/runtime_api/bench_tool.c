/* SPDX-License-Identifier: MIT */
/* The tool of bench_runtime_api, by UPTI_RT_BENCH_MODE:
 *   none      a context traces MARKER_API only: toyrt's wrappers are installed,
 *             no plan of theirs is set (the cost of a tool that does not trace it);
 *   api       RUNTIME_API records into a buffer (what upti run does);
 *   callback  a RUNTIME_API callback that does nothing, at ENTER and EXIT. */
#include <upti/upti.h>

#include <stdlib.h>
#include <string.h>

static void on_call(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                    void *data)
{
    (void)record, (void)user_data, (void)data;
}

static void on_records(upti_context_id_t context, upti_buffer_id_t buffer,
                       upti_record_header_t **headers, size_t num_headers, void *data,
                       uint64_t drop_count)
{
    (void)context, (void)buffer, (void)headers, (void)num_headers, (void)data, (void)drop_count;
}

static int init(upti_client_finalize_t fini, void *data)
{
    (void)fini, (void)data;
    const char *mode = getenv("UPTI_RT_BENCH_MODE");
    mode = mode != NULL ? mode : "api";
    upti_context_id_t ctx;
    if (upti_create_context(&ctx) != UPTI_STATUS_SUCCESS)
        return 1;
    upti_status_t st;
    if (strcmp(mode, "none") == 0) {
        st = upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                                     on_call, NULL);
    } else if (strcmp(mode, "callback") == 0) {
        st = upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_RUNTIME_API, NULL, 0,
                                                     on_call, NULL);
    } else {
        upti_buffer_id_t buffer;
        upti_buffer_options_t options = UPTI_OPTIONS(upti_buffer_options_t, .region_size = 1 << 20,
                                                     .watermark = 1 << 19,
                                                     .policy = UPTI_BUFFER_POLICY_LOSSLESS,
                                                     .callback = on_records);
        st = upti_create_buffer_with_options(ctx, &options, &buffer);
        if (st == UPTI_STATUS_SUCCESS)
            st = upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_RUNTIME_API, NULL,
                                                       0, buffer);
    }
    return st == UPTI_STATUS_SUCCESS && upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    (void)version, (void)runtime_version, (void)priority, (void)client_id;
    static upti_tool_configure_result_t r = {sizeof r, init, NULL, NULL};
    return &r;
}
