/* SPDX-License-Identifier: MIT */
/* samples/intercept_table — chaining a function into a runtime's dispatch table, as a tool.
 *
 * libuptx calls every uptx_* function through a dispatch table
 * (uptx/uptx_table.h). When it registers, UPTI installs its own tracing
 * wrappers into that table and then hands the table to every tool that asked
 * for UPTI_INTERCEPT_TABLE_MARKER. This tool saves the current range_push
 * entry (UPTI's wrapper, which itself calls libuptx's implementation) and
 * installs its own function, which calls the saved one: a chain
 *
 *     uptx_range_push → tool_range_push → UPTI's wrapper → implementation
 *
 * It also traces the marker API with a callback, to show that UPTI's tracing
 * beneath still sees every call, and that the application still gets the
 * implementation's return value (the range depth).
 */
#include <upti/upti.h>
#include <uptx/uptx_table.h>

#include <stdatomic.h>
#include <stdio.h>

static int (*next_range_push)(const char *message); /* the entry we replaced */
static _Atomic int wrapped_calls;
static _Atomic int traced_pushes;
static char depths[64];                              /* what the implementation returned */

static int tool_range_push(const char *message)
{
    int depth = next_range_push(message); /* chain to UPTI's wrapper → libuptx */
    int n = atomic_fetch_add(&wrapped_calls, 1);
    if (n < 8) {
        size_t used = 0;
        while (depths[used] != '\0')
            used++;
        snprintf(depths + used, sizeof depths - used, "%s%d", n == 0 ? "" : ",", depth);
    }
    return depth; /* the application sees what it would see without us */
}

/* Called when a runtime registers its tables (here: libuptx, one table). */
static void on_tables(upti_intercept_table_t type, uint64_t lib_version, uint64_t lib_instance,
                      void **tables, uint64_t num_tables, void *data)
{
    (void)lib_version;
    (void)lib_instance;
    (void)data;
    if (type != UPTI_INTERCEPT_TABLE_MARKER || num_tables < 1)
        return;
    uptx_dispatch_table_t *table = tables[0];
    if (table->size < sizeof(uptx_dispatch_table_t))
        return; /* an older libuptx: leave it alone */
    next_range_push = table->range_push_fn;
    table->range_push_fn = tool_range_push;
}

static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    (void)user_data;
    (void)data;
    if (record.operation == UPTI_MARKER_API_RANGE_PUSH && record.phase == UPTI_CALLBACK_PHASE_ENTER)
        atomic_fetch_add(&traced_pushes, 1);
}

static int tool_init(upti_client_finalize_t finalize, void *tool_data)
{
    (void)finalize;
    (void)tool_data;
    upti_context_id_t ctx;
    if (upti_create_context(&ctx) != UPTI_STATUS_SUCCESS ||
        upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                                on_marker, NULL) != UPTI_STATUS_SUCCESS ||
        upti_start_context(ctx) != UPTI_STATUS_SUCCESS)
        return 1;
    return 0;
}

static void tool_fini(void *tool_data)
{
    (void)tool_data;
    printf("intercept_table: wrapped calls=%d depths=%s traced pushes=%d\n",
           atomic_load(&wrapped_calls), depths, atomic_load(&traced_pushes));
    fflush(stdout);
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    (void)version;
    (void)runtime_version;
    (void)priority;
    client_id->name = "intercept_table";
    /* Ask for the marker runtime's table; allowed here or in initialize. */
    if (upti_at_intercept_table_registration(on_tables, UPTI_INTERCEPT_TABLE_MARKER, NULL) !=
        UPTI_STATUS_SUCCESS)
        return NULL;
    static upti_tool_configure_result_t result = {sizeof(upti_tool_configure_result_t), tool_init,
                                                  tool_fini, NULL};
    return &result;
}
