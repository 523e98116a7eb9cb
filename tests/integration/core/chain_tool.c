/* SPDX-License-Identifier: MIT */
/* A tool that wraps uptx_range_push through the intercept table and prints
 * when its wrapper is entered and left. Built twice: into prog_chain itself
 * (CHAIN_NAME "chain0", configured with upti_force_configure, priority 0) and
 * as a library (CHAIN_NAME "chain1", from UPTI_TOOL_LIBRARIES, priority 1).
 * The chain0 build also traces the marker API with callbacks, so the output
 * shows the whole nesting: chain1 → chain0 → UPTI's tracing → libuptx. */
#include <upti/upti.h>
#include <uptx/uptx_table.h>

#include "check.h"

static int (*g_next_push)(const char *message);

static int wrapped_push(const char *message)
{
    say("%s push enter %s", CHAIN_NAME, message);
    int depth = g_next_push(message);
    say("%s push exit %d", CHAIN_NAME, depth);
    return depth;
}

static void on_table(upti_intercept_table_t type, uint64_t lib_version, uint64_t lib_instance,
                     void **tables, uint64_t num_tables, void *data)
{
    (void)lib_version, (void)lib_instance, (void)data;
    say("table %s type=%d num_tables=%llu", CHAIN_NAME, (int)type, (unsigned long long)num_tables);
    if (type != UPTI_INTERCEPT_TABLE_MARKER || num_tables != 1)
        return;
    uptx_dispatch_table_t *table = tables[0];
    if (table->size < sizeof(uptx_dispatch_table_t))
        say("%s: table size %zu", CHAIN_NAME, table->size);
    g_next_push = table->range_push_fn;
    table->range_push_fn = wrapped_push;
}

#ifdef CHAIN_TRACE
static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    (void)user_data, (void)data;
    say("upti %s op=%u", upti_get_callback_phase_name(record.phase), record.operation);
}
#endif

static int chain_init(upti_client_finalize_t fini, void *tool_data)
{
    (void)fini, (void)tool_data;
    say("initialize %s", CHAIN_NAME);
#ifdef CHAIN_TRACE
    upti_context_id_t ctx;
    upti_create_context(&ctx);
    upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, on_marker,
                                            NULL);
    upti_start_context(ctx);
#endif
    return 0;
}

static upti_tool_configure_result_t g_result = {sizeof(upti_tool_configure_result_t), chain_init,
                                                NULL, NULL};

#ifdef CHAIN_FORCE
upti_tool_configure_result_t *chain_configure(uint32_t version, const char *runtime_version,
                                              uint32_t priority, upti_client_id_t *client_id)
#else
upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
#endif
{
    (void)version, (void)runtime_version, (void)client_id;
    say("configure %s priority=%u", CHAIN_NAME, priority);
    upti_status_t s = upti_at_intercept_table_registration(on_table, UPTI_INTERCEPT_TABLE_MARKER,
                                                           NULL);
    if (s != UPTI_STATUS_SUCCESS)
        say("%s: upti_at_intercept_table_registration: %s", CHAIN_NAME,
            upti_get_status_name(s));
    return &g_result;
}
