/* SPDX-License-Identifier: MIT */
/* Deliberate errors and what the program can observe of UPTI's changes:
 * return codes must be the same with and without the layer. */
#include "ocl_common.h"

#include <unistd.h>

static const char *source = "__kernel void two(__global int *a, int b) { a[get_global_id(0)] = b; }\n";

int main(void)
{
    cl_int err;
    cl_device_id dev = ocl_first_device(NULL);
    cl_context ctx = ocl_context(dev);
    /* A queue without profiling: its properties and its events must say so. */
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    cl_command_queue_properties props = 99;
    CHECK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    printf("queue properties: %lu\n", (unsigned long)props);
    cl_program prog = ocl_build(ctx, dev, source);
    cl_kernel k = clCreateKernel(prog, "missing_kernel", &err);
    printf("clCreateKernel(missing_kernel): %d %s\n", err, k == NULL ? "NULL" : "kernel");
    k = clCreateKernel(prog, "two", &err);
    CHECK(err);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &err);
    printf("clCreateBuffer(size 0): %d\n", err);
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1024, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    size_t global = 256;
    /* Argument 1 was never set. */
    cl_event ev = NULL;
    err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev);
    printf("clEnqueueNDRangeKernel(missing argument): %d\n", err);
    err = clSetKernelArg(k, 2, sizeof m, &m);
    printf("clSetKernelArg(bad index): %d\n", err);
    int value = 7;
    CHECK(clSetKernelArg(k, 1, sizeof value, &value));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev));
    CHECK(clWaitForEvents(1, &ev));
    usleep(100000); /* PoCL drops its own references to a finished event a little later */
    cl_uint refs = 0;
    CHECK(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    printf("event reference count: %u\n", refs);
    cl_ulong t = 0;
    err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL);
    printf("clGetEventProfilingInfo(non-profiling queue): %d\n", err);
    int out[4] = {0};
    err = clEnqueueReadBuffer(q, m, CL_TRUE, 2048, sizeof out, out, 0, NULL, NULL);
    printf("clEnqueueReadBuffer(out of range): %d\n", err);
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    printf("values: %d %d %d %d\n", out[0], out[1], out[2], out[3]);
    /* A profiling queue the program asked for: times are there. */
    cl_command_queue qp = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    cl_event ev2;
    CHECK(clEnqueueNDRangeKernel(qp, k, 1, NULL, &global, NULL, 0, NULL, &ev2));
    CHECK(clFinish(qp));
    cl_ulong s = 0, e = 0;
    CHECK(clGetEventProfilingInfo(ev2, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL));
    CHECK(clGetEventProfilingInfo(ev2, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL));
    printf("profiling queue: start<=end %s\n", s <= e && s != 0 ? "yes" : "no");
    usleep(100000);
    CHECK(clGetEventInfo(ev2, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    printf("event reference count: %u\n", refs);
    clReleaseEvent(ev);
    clReleaseEvent(ev2);
    clReleaseMemObject(m);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(qp);
    clReleaseContext(ctx);
    return 0;
}
