/* SPDX-License-Identifier: MIT */
/* Life cycle of a tool that starts before any runtime (upti_force_configure):
 * is_initialized / is_finalized before, during and after; every configuration
 * call after initialize is CONFIGURATION_LOCKED; contexts can still be
 * started and stopped. Prints its steps for a golden comparison and checks
 * every status (exit status 1 on a failed check). */
#include <upti/upti.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <uptx/uptx.h>

#include <stdatomic.h>

#include "check.h"

static upti_context_id_t g_ctx;
static upti_buffer_id_t g_buffer;
static _Atomic unsigned long g_enters;
static _Atomic unsigned long g_buffer_records;
static int g_finalize_calls;

static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    (void)user_data, (void)data;
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER)
        atomic_fetch_add(&g_enters, 1);
}

static void on_buffer(upti_context_id_t ctx, upti_buffer_id_t buffer, upti_record_header_t **headers,
                      size_t n, void *data, uint64_t drops)
{
    (void)ctx, (void)buffer, (void)headers, (void)data, (void)drops;
    atomic_fetch_add(&g_buffer_records, n);
}

static void on_table(upti_intercept_table_t type, uint64_t lib_version, uint64_t lib_instance,
                     void **tables, uint64_t num_tables, void *data)
{
    (void)type, (void)lib_version, (void)lib_instance, (void)tables, (void)num_tables, (void)data;
}

static int tool_init(upti_client_finalize_t fini, void *tool_data)
{
    (void)fini, (void)tool_data;
    int v = -1;
    CHECK_STATUS(upti_is_initialized(&v), UPTI_STATUS_SUCCESS);
    say("initialize force is_initialized=%d", v);

    CHECK_STATUS(upti_create_context(&g_ctx), UPTI_STATUS_SUCCESS);
    CHECK(g_ctx.handle != 0);
    CHECK_STATUS(upti_context_is_valid(g_ctx, &v), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(v, 1);
    v = -1;
    CHECK_STATUS(upti_context_is_active(g_ctx, &v), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(v, 0);
    upti_context_id_t zero = {0};
    v = -1;
    CHECK_STATUS(upti_context_is_valid(zero, &v), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(v, 0);

    CHECK_STATUS(upti_configure_callback_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API, NULL,
                                                         0, on_marker, NULL),
                 UPTI_STATUS_SUCCESS);
    /* Once per (context, kind). */
    CHECK_STATUS(upti_configure_callback_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API, NULL,
                                                         0, on_marker, NULL),
                 UPTI_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED);
    CHECK_STATUS(upti_create_buffer(g_ctx, 4096, 0, UPTI_BUFFER_POLICY_LOSSLESS, on_buffer, NULL,
                                    &g_buffer),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                                       g_buffer),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                                       g_buffer),
                 UPTI_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED);
    CHECK_STATUS(upti_at_intercept_table_registration(on_table, UPTI_INTERCEPT_TABLE_MARKER, NULL),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(g_ctx), UPTI_STATUS_SUCCESS);
    v = -1;
    CHECK_STATUS(upti_context_is_active(g_ctx, &v), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(v, 1);
    return 0;
}

static void tool_fini(void *tool_data)
{
    (void)tool_data;
    g_finalize_calls++;
    /* Buffers are flushed before finalize: both records of the one push/pop
     * made while the context was active have been delivered. */
    say("finalize force enters=%lu buffer_records=%lu", atomic_load(&g_enters),
        atomic_load(&g_buffer_records));
}

static upti_tool_configure_result_t g_result = {sizeof(upti_tool_configure_result_t), tool_init,
                                                tool_fini, NULL};

static upti_tool_configure_result_t *force_configure(uint32_t version, const char *runtime_version,
                                                     uint32_t priority, upti_client_id_t *client_id)
{
    (void)version, (void)runtime_version;
    client_id->name = "force";
    say("configure force priority=%u", priority);
    return &g_result;
}

static upti_tool_configure_result_t *late_configure(uint32_t version, const char *runtime_version,
                                                    uint32_t priority, upti_client_id_t *client_id)
{
    (void)version, (void)runtime_version, (void)client_id;
    say("late configure called (priority %u): must never happen", priority);
    return NULL;
}

/* Registered before UPTI exists, so it runs after UPTI's own exit handler. */
static void after_exit(void)
{
    int init = -1, fini = -1;
    upti_is_initialized(&init);
    upti_is_finalized(&fini);
    say("atexit is_initialized=%d is_finalized=%d finalize_calls=%d", init, fini,
        g_finalize_calls);
    if (fini != 1 || g_finalize_calls != 1 || test_failures != 0) {
        test_result("lifecycle");
        _exit(1);
    }
}

int main(void)
{
    atexit(after_exit);
    int init = -1, fini = -1;
    CHECK_STATUS(upti_is_initialized(&init), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_is_finalized(&fini), UPTI_STATUS_SUCCESS);
    say("main before is_initialized=%d is_finalized=%d", init, fini);

    CHECK_STATUS(upti_force_configure(force_configure), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_is_initialized(&init), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_is_finalized(&fini), UPTI_STATUS_SUCCESS);
    say("main after is_initialized=%d is_finalized=%d", init, fini);

    /* Discovery ran: a second forced tool is refused and never configured. */
    CHECK_STATUS(upti_force_configure(late_configure), UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);

    /* Configuration is locked once initialize returned. */
    upti_context_id_t ctx2 = {0};
    CHECK_STATUS(upti_create_context(&ctx2), UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);
    upti_buffer_id_t buf2 = {0};
    CHECK_STATUS(upti_create_buffer(g_ctx, 4096, 0, UPTI_BUFFER_POLICY_LOSSLESS, on_buffer, NULL,
                                    &buf2),
                 UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);
    CHECK_STATUS(upti_configure_callback_tracing_service(g_ctx, UPTI_TRACING_KIND_CODE_OBJECT, NULL,
                                                         0, on_marker, NULL),
                 UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);
    CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_CODE_OBJECT, NULL, 0,
                                                       g_buffer),
                 UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);
    CHECK_STATUS(upti_at_intercept_table_registration(on_table, UPTI_INTERCEPT_TABLE_MARKER, NULL),
                 UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);

    /* Contexts may be stopped and started at any time; a stopped one produces nothing. */
    CHECK_STATUS(upti_stop_context(g_ctx), UPTI_STATUS_SUCCESS);
    int active = -1;
    CHECK_STATUS(upti_context_is_active(g_ctx, &active), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(active, 0);
    uptx_mark("while stopped");
    CHECK_STATUS(upti_start_context(g_ctx), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_context_is_active(g_ctx, &active), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(active, 1);
    CHECK_EQ_U64(uptx_range_push("r"), 0);
    CHECK_EQ_U64(uptx_range_pop(), 0);
    say("main end");
    return test_failures == 0 ? 0 : 1;
}
