/* SPDX-License-Identifier: MIT */
/* The test tools of the runtime layers (tests/integration/opencl/tool.c,
 * tests/integration/vulkan/vk_tool.c and vk_sub_tool.c): public API only.
 * layer_tool.c is what they share: the output file (one line per record or
 * callback, "FINALIZE" last), the buffer of records, upti_configure. Each
 * tool defines layer_tool, its part. Built with CHAIN, a tool replaces a call
 * through the intercept table in layer_tool_on_table and counts the calls it
 * forwards in g_forwarded ("CHAIN forwarded=N" before FINALIZE). */
#ifndef UPTI_TEST_LAYER_TOOL_H
#define UPTI_TEST_LAYER_TOOL_H

#include <upti/upti.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct layer_tool {
    const char *out_variable; /* the environment variable naming the output file */
    const char *client_name;
    upti_tracing_kind_t api_kind; /* its records are written "API NAME corr=..." */
    upti_intercept_table_t table; /* CHAIN: the table layer_tool_on_table is registered for */
    /* Writes a record of another kind (under g_lock); false: not one it knows. */
    bool (*write_record)(const upti_record_prefix_t *record, const char *op);
    /* Configures the services of a context whose records go to g_out; the
     * tool's initialize then starts it. */
    void (*configure)(upti_context_id_t ctx, upti_buffer_id_t buffer);
    int (*initialize)(void); /* instead of configure: the tool's own initialize */
    void (*finalize)(void);  /* before g_lock is taken for the last lines, or NULL */
} layer_tool_t;

extern const layer_tool_t layer_tool;

/* The output file, open from upti_configure to finalize; every line under g_lock. */
extern FILE *g_out;
extern pthread_mutex_t g_lock;
extern long g_forwarded;

/* The name of operation op of kind ("?" if it has none). */
const char *op_name(upti_tracing_kind_t kind, uint32_t op);

#ifdef CHAIN
void layer_tool_on_table(upti_intercept_table_t type, uint64_t version, uint64_t instance, void **tables,
                         uint64_t num_tables, void *data);
#endif

#endif
