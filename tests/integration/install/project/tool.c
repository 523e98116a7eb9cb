/* SPDX-License-Identifier: MIT */
/* A tool built against the installed headers: counts marker calls. */
#include <upti/upti.h>

#include <stdio.h>

static unsigned long calls;

static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    (void)user_data;
    (void)data;
    if (record.phase == UPTI_CALLBACK_PHASE_EXIT)
        calls++;
}

static int init(upti_client_finalize_t fini, void *data)
{
    (void)fini;
    (void)data;
    upti_context_id_t ctx;
    upti_create_context(&ctx);
    upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, on_marker,
                                            NULL);
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

static void fini(void *data)
{
    (void)data;
    printf("consumer_tool: %lu marker calls\n", calls);
    fflush(stdout);
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    (void)version;
    (void)runtime_version;
    (void)priority;
    (void)client_id;
    static upti_tool_configure_result_t r = {sizeof r, init, fini, NULL};
    return &r;
}
