/* SPDX-License-Identifier: MIT */
/* Test tool for the OpenCL layer (layer_tool.h): one line per record it
 * sees to $UPTI_OCL_TEST_OUT; check_opencl.py asserts on them. Built twice:
 * plain, and with CHAIN (replaces clEnqueueNDRangeKernel through the
 * intercept table and counts the calls it forwards). */
#define CL_TARGET_OPENCL_VERSION 300
#include <upti/opencl.h>
#include <upti/upti.h>

#include "layer_tool.h"

#include <CL/cl_icd.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static bool write_record(const upti_record_prefix_t *p, const char *name)
{
    switch (p->kind) {
    case UPTI_TRACING_KIND_KERNEL_DISPATCH: {
        const upti_buffer_tracing_kernel_dispatch_record_t *r = (const void *)p;
        fprintf(g_out,
                "KERNEL %s name=%s corr=%" PRIu64 " agent=%" PRIu64 " queue=%" PRIx64 " ctx=%" PRIx64
                " kernel=%" PRIx64 " dim=%u global=%" PRIu64 ",%" PRIu64 ",%" PRIu64 " local=%" PRIu64
                " queued=%" PRIu64 " submit=%" PRIu64 " start=%" PRIu64 " end=%" PRIu64 " status=%d\n",
                name, r->kernel_name, r->correlation_id.internal, r->agent_id.handle, r->queue_id,
                r->runtime_context, r->kernel_id, r->work_dim, r->global_size[0], r->global_size[1],
                r->global_size[2], r->local_size[0], r->queued_timestamp, r->submit_timestamp,
                r->start_timestamp, r->end_timestamp, r->status);
        return true;
    }
    case UPTI_TRACING_KIND_MEMORY_COPY: {
        const upti_buffer_tracing_memory_copy_record_t *r = (const void *)p;
        fprintf(g_out,
                "COPY %s bytes=%" PRIu64 " dir=%d src=%" PRIu64 " dst=%" PRIu64 " corr=%" PRIu64
                " queue=%" PRIx64 " queued=%" PRIu64 " submit=%" PRIu64 " start=%" PRIu64
                " end=%" PRIu64 " status=%d\n",
                name, r->bytes, (int)r->direction, r->src_agent_id.handle, r->dst_agent_id.handle,
                r->correlation_id.internal, r->queue_id, r->queued_timestamp, r->submit_timestamp,
                r->start_timestamp, r->end_timestamp, r->status);
        return true;
    }
    case UPTI_TRACING_KIND_MEMORY_ALLOCATION: {
        const upti_buffer_tracing_memory_allocation_record_t *r = (const void *)p;
        fprintf(g_out, "ALLOC %s type=%d bytes=%" PRIu64 " handle=%" PRIx64 " agent=%" PRIu64 "\n", name,
                (int)r->type, r->bytes, r->handle, r->agent_id.handle);
        return true;
    }
    case UPTI_TRACING_KIND_CODE_OBJECT: {
        const upti_buffer_tracing_code_object_record_t *r = (const void *)p;
        fprintf(g_out, "CODE %s phase=%s program=%" PRIx64 " kernel=%" PRIx64 " name=%s\n", name,
                upti_get_callback_phase_name(r->phase), r->code_object_id, r->kernel_id,
                r->name != NULL ? r->name : "");
        return true;
    }
    default:
        return false;
    }
}

static int print_arg(upti_tracing_kind_t kind, uint32_t op, uint32_t index, const void *addr,
                     int32_t indirection, const char *type, const char *name, const char *value,
                     int32_t derefs, void *data)
{
    (void)kind, (void)op, (void)index, (void)addr, (void)indirection, (void)derefs;
    char *line = data;
    size_t n = strlen(line);
    snprintf(line + n, 4096 - n, " %s(%s)=%s", name, type, value);
    return 0;
}

/* Callback tracing: the arguments of a few calls, printed at EXIT. */
static void api_cb(upti_callback_tracing_record_t rec, upti_user_data_t *user, void *data)
{
    (void)user, (void)data;
    if (rec.phase != UPTI_CALLBACK_PHASE_EXIT)
        return;
    char line[4096] = "";
    upti_iterate_callback_tracing_operation_args(rec, print_arg, 1, line);
    const upti_callback_tracing_opencl_api_data_t *d = rec.payload;
    pthread_mutex_lock(&g_lock);
    fprintf(g_out, "ARGS %s%s", op_name(rec.kind, rec.operation), line);
    if (rec.operation == UPTI_OPENCL_API_clEnqueueNDRangeKernel || rec.operation == UPTI_OPENCL_API_clSetKernelArg)
        fprintf(g_out, " ret=%d", d->retval.cl_int_retval);
    fprintf(g_out, "\n");
    pthread_mutex_unlock(&g_lock);
}

static upti_status_t agents_cb(const upti_agent_t **agents, size_t n, void *data)
{
    (void)data;
    for (size_t i = 0; i < n; i++)
        if (agents[i]->runtime != NULL && strcmp(agents[i]->runtime, "opencl") == 0)
            fprintf(g_out, "AGENT id=%" PRIu64 " type=%d name=%s vendor=%s cus=%u mem=%" PRIu64 " handle=%s\n",
                    agents[i]->id.handle, (int)agents[i]->type, agents[i]->name, agents[i]->vendor,
                    agents[i]->compute_units, agents[i]->global_memory_bytes,
                    agents[i]->runtime_handle != 0 ? "yes" : "no");
    return UPTI_STATUS_SUCCESS;
}

#ifdef CHAIN
static cl_api_clEnqueueNDRangeKernel g_saved;

static cl_int CL_API_CALL my_ndrange(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off,
                                     const size_t *gws, const size_t *lws, cl_uint n, const cl_event *w,
                                     cl_event *e)
{
    __atomic_add_fetch(&g_forwarded, 1, __ATOMIC_RELAXED);
    return g_saved(q, k, dim, off, gws, lws, n, w, e);
}

void layer_tool_on_table(upti_intercept_table_t type, uint64_t version, uint64_t instance, void **tables,
                         uint64_t num_tables, void *data)
{
    (void)version, (void)instance, (void)data;
    if (type != UPTI_INTERCEPT_TABLE_OPENCL || num_tables < 1)
        return;
    struct _cl_icd_dispatch *t = tables[0];
    g_saved = t->clEnqueueNDRangeKernel;
    t->clEnqueueNDRangeKernel = my_ndrange;
}
#endif

/* UPTI_OCL_TEST_KINDS: the kinds traced (api, kernel, copy, alloc, code, args; default: all). */
static void configure_kinds(upti_context_id_t ctx, upti_buffer_id_t buf)
{
    const char *kinds = getenv("UPTI_OCL_TEST_KINDS");
    static const struct { const char *name; upti_tracing_kind_t kind; } all[] = {
        {"api", UPTI_TRACING_KIND_OPENCL_API},       {"kernel", UPTI_TRACING_KIND_KERNEL_DISPATCH},
        {"copy", UPTI_TRACING_KIND_MEMORY_COPY},     {"alloc", UPTI_TRACING_KIND_MEMORY_ALLOCATION},
        {"code", UPTI_TRACING_KIND_CODE_OBJECT},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (kinds == NULL || strstr(kinds, all[i].name) != NULL)
            upti_configure_buffer_tracing_service(ctx, all[i].kind, NULL, 0, buf);
    if (kinds == NULL || strstr(kinds, "args") != NULL) {
        static const uint32_t ops[] = {UPTI_OPENCL_API_clEnqueueNDRangeKernel, UPTI_OPENCL_API_clCreateKernel,
                                       UPTI_OPENCL_API_clSetKernelArg, UPTI_OPENCL_API_clCreateBuffer};
        upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_OPENCL_API, ops, 4, api_cb, NULL);
    }
    upti_query_available_agents(agents_cb, NULL);
}

const layer_tool_t layer_tool = {
    .out_variable = "UPTI_OCL_TEST_OUT", .client_name = "ocl-test",
    .api_kind = UPTI_TRACING_KIND_OPENCL_API, .table = UPTI_INTERCEPT_TABLE_OPENCL,
    .write_record = write_record, .configure = configure_kinds,
};
