/* SPDX-License-Identifier: MIT */
/* samples/tool_library — a full tool library: upti_configure, initialize, finalize.
 *
 * A tool is a shared library that exports upti_configure(). UPTI finds it
 * (in a loaded object, or listed in UPTI_TOOL_LIBRARIES), calls
 * upti_configure() for every tool before any initialize, then calls each
 * tool's initialize — the only place where contexts and services may be
 * configured — and, at exit (or when the tool calls the finalizer it was
 * given), its finalize.
 */
#include <upti/upti.h>

#include <stdio.h>
#include <stdlib.h>

#define MAX_CONTEXTS 4

/* What upti_configure learned, handed back to initialize and finalize. */
typedef struct tool_data_t {
    uint32_t version;            /* UPTI_VERSION of the library calling us */
    const char *runtime_version; /* "1.0.0" */
    uint32_t priority;           /* 0 for the first tool found */
    upti_client_id_t *client_id;
    upti_client_finalize_t finalizer; /* saved in initialize */
    upti_context_id_t contexts[MAX_CONTEXTS];
    int num_contexts;
    unsigned long calls;         /* marker calls seen (EXIT phase) */
} tool_data_t;

/* A synchronous callback: runs in the application's thread at ENTER and EXIT. */
static void tool_tracing_callback(upti_callback_tracing_record_t record,
                                  upti_user_data_t *user_data, void *callback_data)
{
    tool_data_t *data = callback_data;
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER) {
        upti_timestamp_t now = 0;
        upti_get_timestamp(&now);
        user_data->value = now; /* the EXIT callback of this call finds it */
        return;
    }
    upti_timestamp_t end = 0;
    upti_get_timestamp(&end);
    const char *name = NULL;
    upti_get_tracing_operation_name(record.kind, record.operation, &name);
    printf("tool_library: %s (correlation %llu) took %llu ns\n", name ? name : "?",
           (unsigned long long)record.correlation_id.internal,
           (unsigned long long)(end - user_data->value));
    data->calls++; /* callbacks of one thread run one at a time; this app has one thread */
}

/* Tool initialization: create contexts and configure their services. */
static int tool_init(upti_client_finalize_t fini_func, void *tool_data_v)
{
    tool_data_t *data = tool_data_v;
    data->finalizer = fini_func; /* could be called later to finalize early */

    upti_context_id_t ctx = {0};
    if (upti_create_context(&ctx) != UPTI_STATUS_SUCCESS)
        return -1;
    data->contexts[data->num_contexts++] = ctx;

    /* Every operation of the marker API (NULL, 0 = all operations). */
    if (upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                                tool_tracing_callback, data) != UPTI_STATUS_SUCCESS)
        return -1;

    /* Contexts are created stopped: start it (it can be stopped and started at any time). */
    if (upti_start_context(ctx) != UPTI_STATUS_SUCCESS)
        return -1;
    return 0;
}

/* Tool finalization: runs once, at exit or when the tool calls its finalizer. */
static void tool_fini(void *tool_data_v)
{
    tool_data_t *data = tool_data_v;
    printf("tool_library: finalize %s (priority %u, UPTI %s): %lu marker calls\n",
           data->client_id->name, data->priority, data->runtime_version, data->calls);
    fflush(stdout);
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    /* If not the first tool to register, decline: return NULL. */
    if (priority > 0)
        return NULL;

    /* (optional) a name for this tool. */
    client_id->name = "ExampleTool";

    /* Data provided back to tool_init and tool_fini. */
    tool_data_t *data = calloc(1, sizeof *data);
    if (data == NULL)
        return NULL;
    data->version = version;
    data->runtime_version = runtime_version;
    data->priority = priority;
    data->client_id = client_id;

    /* The result must outlive UPTI: static storage. */
    static upti_tool_configure_result_t cfg = {sizeof(upti_tool_configure_result_t), tool_init,
                                               tool_fini, NULL};
    cfg.tool_data = data;
    return &cfg;
}
