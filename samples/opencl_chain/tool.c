/* SPDX-License-Identifier: MIT */
/* samples/opencl_chain — a tool that chains clEnqueueNDRangeKernel.
 *
 * libupti-opencl registers the OpenCL dispatch table (struct _cl_icd_dispatch)
 * with UPTI on the program's first OpenCL call. A tool that asked for
 * UPTI_INTERCEPT_TABLE_OPENCL receives it, saves an entry and installs its
 * own function, which calls the saved one:
 *
 *     clEnqueueNDRangeKernel → loader → layer trampoline → tool_ndrange
 *         → UPTI's wrapper (tracing) → the driver
 *
 * This one counts enqueues and work-items and times each enqueue call.
 */
#include <upti/upti.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static cl_api_clEnqueueNDRangeKernel next_ndrange; /* the entry we replaced */
static _Atomic unsigned long enqueues, work_items, enqueue_ns;

static cl_int CL_API_CALL tool_ndrange(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                                       const size_t *offset, const size_t *global, const size_t *local,
                                       cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cl_int status = next_ndrange(queue, kernel, work_dim, offset, global, local, num_events, wait_list, event);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    unsigned long items = 1;
    for (cl_uint i = 0; global != NULL && i < work_dim; i++)
        items *= global[i];
    atomic_fetch_add(&enqueues, 1);
    atomic_fetch_add(&work_items, items);
    atomic_fetch_add(&enqueue_ns, (t1.tv_sec - t0.tv_sec) * 1000000000ul + t1.tv_nsec - t0.tv_nsec);
    return status; /* the program sees what the driver returned */
}

static void on_tables(upti_intercept_table_t type, uint64_t version, uint64_t instance, void **tables,
                      uint64_t num_tables, void *data)
{
    (void)version, (void)instance, (void)data;
    if (type != UPTI_INTERCEPT_TABLE_OPENCL || num_tables < 1)
        return;
    struct _cl_icd_dispatch *table = tables[0];
    next_ndrange = table->clEnqueueNDRangeKernel;
    table->clEnqueueNDRangeKernel = tool_ndrange;
}

static int tool_init(upti_client_finalize_t finalize, void *data)
{
    (void)finalize, (void)data;
    return 0;
}

static void tool_fini(void *data)
{
    (void)data;
    printf("opencl_chain: enqueues=%lu work_items=%lu (%s)\n", atomic_load(&enqueues),
           atomic_load(&work_items), atomic_load(&enqueue_ns) > 0 ? "timed" : "untimed");
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version, uint32_t priority,
                                             upti_client_id_t *id)
{
    (void)version, (void)runtime_version, (void)priority;
    id->name = "opencl_chain";
    /* Only here (before initialize) may a tool ask for runtime tables. */
    if (upti_at_intercept_table_registration(on_tables, UPTI_INTERCEPT_TABLE_OPENCL, NULL) != UPTI_STATUS_SUCCESS)
        return NULL;
    static upti_tool_configure_result_t result = {sizeof result, tool_init, tool_fini, NULL};
    return &result;
}
