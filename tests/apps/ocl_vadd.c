/* SPDX-License-Identifier: MIT */
/* Vector addition: 2 writes, 1 kernel, 1 read, on one in-order queue. */
#include "ocl_common.h"

static const char *source =
    "__kernel void vadd(__global const int *a, __global const int *b, __global int *c)\n"
    "{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n";

#define N 1024

int main(void)
{
    static int a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = i;
        b[i] = 2 * i;
    }
    cl_int err;
    cl_device_id dev = ocl_first_device(NULL);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_program prog = ocl_build(ctx, dev, source);
    cl_kernel k = clCreateKernel(prog, "vadd", &err);
    CHECK(err);
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY, sizeof a, NULL, &err);
    CHECK(err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY, sizeof b, NULL, &err);
    CHECK(err);
    cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof c, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(q, da, CL_FALSE, 0, sizeof a, a, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, db, CL_FALSE, 0, sizeof b, b, 0, NULL, NULL));
    CHECK(clSetKernelArg(k, 0, sizeof da, &da));
    CHECK(clSetKernelArg(k, 1, sizeof db, &db));
    CHECK(clSetKernelArg(k, 2, sizeof dc, &dc));
    size_t global = N, local = 64;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    CHECK(clFinish(q));
    long sum = 0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        sum += c[i];
        bad += c[i] != 3 * i;
    }
    printf("vadd: n=%d sum=%ld errors=%d\n", N, sum, bad);
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return bad != 0;
}
