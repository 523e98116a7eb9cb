/* SPDX-License-Identifier: MIT */
/* Kernels at the edges of capture windows (tests/integration/cli/test_capture.py,
 * case device_edges), one in-order queue, kernel "k":
 *   range "launch": 3 kernels enqueued, held back by a user event; the range
 *                   ends, then the event is set and the queue finished: all 3
 *                   complete after the range ended
 *   4 kernels enqueued outside any range, held back by another user event;
 *   range "sync":   the event is set and the queue finished inside it: the 4
 *                   complete inside the range
 *   range "inside": 2 kernels enqueued and finished inside it
 * Prints "ok" at the end. Plain OpenCL and uptx. */
#include "ocl_common.h"

#include <uptx/uptx.h>

static const char *source = "__kernel void k(__global int *a) { a[get_global_id(0)] += 1; }\n";

static void enqueue(cl_command_queue q, cl_kernel k, int n, cl_event *wait)
{
    size_t global = 64;
    for (int i = 0; i < n; i++)
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, wait ? 1 : 0, wait, NULL));
}

int main(void)
{
    cl_int err;
    cl_device_id dev = ocl_first_device(NULL);
    cl_context ctx = ocl_context(dev);
    cl_command_queue q = ocl_queue(ctx, dev);
    cl_program prog = ocl_build(ctx, dev, source);
    cl_kernel k = ocl_kernel(prog, "k");
    cl_mem buf = ocl_buffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(int));
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));

    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK(err);
    uptx_range_push("launch");
    enqueue(q, k, 3, &gate);
    uptx_range_pop();
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clFinish(q));
    CHECK(clReleaseEvent(gate));

    gate = clCreateUserEvent(ctx, &err);
    CHECK(err);
    enqueue(q, k, 4, &gate);
    uptx_range_push("sync");
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clFinish(q));
    uptx_range_pop();
    CHECK(clReleaseEvent(gate));

    uptx_range_push("inside");
    enqueue(q, k, 2, NULL);
    CHECK(clFinish(q));
    uptx_range_pop();

    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("ok\n");
    return 0;
}
