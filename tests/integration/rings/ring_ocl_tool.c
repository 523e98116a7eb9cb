/* SPDX-License-Identifier: MIT */
/* A tool (UPTI_TOOL_LIBRARIES) that traces OpenCL calls and markers into a
 * shared buffer in $RING_TEST_DIR, and writes from the EXIT callback of each
 * OpenCL call one tool record of the bundled tool's ARG kind (correlation:
 * the call's; position 0, type "uint32_t", name "operation", value: its
 * operation number). At finalize it writes what upti_query_available_agents
 * lists to $RING_TEST_DIR/agents.txt, one line per agent:
 *   handle|type|runtime|name|vendor|driver_version|compute_units|global_memory_bytes|runtime_handle|node_id
 */
#include <upti/upti.h>

#include "test_tool.h"
#include "trace_tool_records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_dir;
static upti_buffer_id_t g_buffer;

static void on_api(upti_callback_tracing_record_t r, upti_user_data_t *user_data, void *data)
{
    (void)user_data;
    (void)data;
    if (r.phase != UPTI_CALLBACK_PHASE_EXIT)
        return;
    unsigned char buf[128];
    char value[16];
    snprintf(value, sizeof value, "%u", r.operation);
    trace_tool_arg_t a = {r.correlation_id.internal, 0, sizeof "uint32_t", sizeof "operation",
                          (uint32_t)strlen(value) + 1};
    unsigned char *p = buf;
    memcpy(p, &a, sizeof a);
    memcpy(p += sizeof a, "uint32_t", a.type_len);
    memcpy(p += a.type_len, "operation", a.name_len);
    memcpy(p += a.name_len, value, a.value_len);
    size_t size = (size_t)(p + a.value_len - buf);
    upti_status_t st = upti_write_buffer_record(g_buffer, UPTI_TRACE_RECORD_ARG, buf, size);
    if (st != UPTI_STATUS_SUCCESS)
        fprintf(stderr, "ring_ocl_tool: upti_write_buffer_record: %s\n", upti_get_status_name(st));
}

static upti_status_t list_agents(const upti_agent_t **agents, size_t n, void *data)
{
    FILE *f = data;
    for (size_t i = 0; i < n; i++) {
        const upti_agent_t *a = agents[i];
        static const char *const types[] = {"NONE", "CPU", "GPU", "ACCELERATOR"};
        fprintf(f, "%llu|%s|%s|%s|%s|%s|%u|%llu|%llu|%u\n", (unsigned long long)a->id.handle,
                (unsigned)a->type < 4 ? types[a->type] : "UNKNOWN", a->runtime, a->name, a->vendor,
                a->driver_version, a->compute_units, (unsigned long long)a->global_memory_bytes,
                (unsigned long long)a->runtime_handle, a->node_id);
    }
    return UPTI_STATUS_SUCCESS;
}

static void die(const char *what, upti_status_t st)
{
    fprintf(stderr, "ring_ocl_tool: %s: %s\n", what, upti_get_status_name(st));
    exit(3);
}

static int tool_init(upti_client_finalize_t fini, void *data)
{
    (void)fini;
    (void)data;
    g_dir = getenv("RING_TEST_DIR");
    if (g_dir == NULL)
        die("RING_TEST_DIR", UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    upti_context_id_t ctx;
    upti_status_t st = upti_create_context(&ctx);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_create_context", st);
    st = upti_create_shared_buffer(ctx, 1u << 20, UPTI_BUFFER_POLICY_LOSSLESS, g_dir, 8, &g_buffer);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_create_shared_buffer", st);
    upti_tracing_kind_t kinds[2] = {UPTI_TRACING_KIND_OPENCL_API, UPTI_TRACING_KIND_MARKER_API};
    for (int i = 0; i < 2; i++)
        if ((st = upti_configure_buffer_tracing_service(ctx, kinds[i], NULL, 0, g_buffer)) !=
            UPTI_STATUS_SUCCESS)
            die("upti_configure_buffer_tracing_service", st);
    st = upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_OPENCL_API, NULL, 0, on_api,
                                                 NULL);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_configure_callback_tracing_service", st);
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

static void tool_fini(void *data)
{
    (void)data;
    char path[4096];
    snprintf(path, sizeof path, "%s/agents.txt", g_dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    upti_query_available_agents(list_agents, f);
    fclose(f);
}

TEST_CONFIGURE(configure, tool_init, tool_fini)

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    return configure(version, runtime_version, priority, client_id);
}
