/* SPDX-License-Identifier: MIT */
/* What the runtime layers' test tools share (layer_tool.h). */
#include "layer_tool.h"
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */

#include <inttypes.h>
#include <stdlib.h>

FILE *g_out;
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
long g_forwarded;

const char *op_name(upti_tracing_kind_t kind, uint32_t op)
{
    const char *name = "?";
    upti_get_tracing_operation_name(kind, op, &name);
    return name;
}

static void write_api_record(const upti_record_prefix_t *p, const char *op)
{
    const upti_buffer_tracing_api_record_t *r = (const void *)p;
    fprintf(g_out, "API %s corr=%" PRIu64 " tid=%" PRIu64 " start=%" PRIu64 " end=%" PRIu64 "\n", op,
            r->correlation_id.internal, r->thread_id, r->start_timestamp, r->end_timestamp);
}

static void buffer_cb(upti_context_id_t ctx, upti_buffer_id_t buf, upti_record_header_t **headers,
                      size_t n, void *data, uint64_t drops)
{
    (void)ctx, (void)buf, (void)data;
    pthread_mutex_lock(&g_lock);
    if (drops)
        fprintf(g_out, "DROPS %" PRIu64 "\n", drops);
    for (size_t i = 0; i < n && g_out != NULL; i++) {
        const upti_record_prefix_t *p = headers[i]->payload;
        const char *op = op_name(p->kind, p->operation);
        if (p->kind == layer_tool.api_kind)
            write_api_record(p, op);
        else if (!layer_tool.write_record(p, op))
            fprintf(g_out, "OTHER kind=%d\n", (int)p->kind);
    }
    pthread_mutex_unlock(&g_lock);
}

/* A context with a lossless buffer of records written to g_out, configured by
 * the tool and started. */
static int initialize(upti_client_finalize_t fini, void *data)
{
    (void)fini, (void)data;
    if (layer_tool.initialize != NULL)
        return layer_tool.initialize();
    upti_context_id_t ctx;
    upti_buffer_id_t buf;
    upti_create_context(&ctx);
    upti_create_buffer(ctx, 1 << 16, 1 << 15, UPTI_BUFFER_POLICY_LOSSLESS, buffer_cb, NULL, &buf);
    layer_tool.configure(ctx, buf);
    upti_start_context(ctx);
    return 0;
}

static void finalize(void *data)
{
    (void)data;
    if (layer_tool.finalize != NULL)
        layer_tool.finalize();
    pthread_mutex_lock(&g_lock);
#ifdef CHAIN
    fprintf(g_out, "CHAIN forwarded=%ld\n", g_forwarded);
#endif
    fprintf(g_out, "FINALIZE\n");
    fclose(g_out);
    g_out = NULL;
    pthread_mutex_unlock(&g_lock);
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version, uint32_t priority,
                                             upti_client_id_t *id)
{
    (void)version, (void)runtime_version, (void)priority;
    static upti_tool_configure_result_t result = {sizeof result, initialize, finalize, NULL};
    const char *path = getenv(layer_tool.out_variable);
    g_out = fopen(path != NULL ? path : "/dev/stderr", "w");
    if (g_out == NULL)
        return NULL;
    id->name = layer_tool.client_name;
#ifdef CHAIN
    upti_at_intercept_table_registration(layer_tool_on_table, layer_tool.table, NULL);
#endif
    return &result;
}
