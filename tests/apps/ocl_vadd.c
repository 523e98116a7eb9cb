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
    cl_device_id dev = ocl_first_device(NULL);
    cl_context ctx = ocl_context(dev);
    cl_command_queue q = ocl_queue(ctx, dev);
    cl_program prog = ocl_build(ctx, dev, source);
    cl_kernel k = ocl_kernel(prog, "vadd");
    cl_mem da = ocl_buffer(ctx, CL_MEM_READ_ONLY, sizeof a);
    cl_mem db = ocl_buffer(ctx, CL_MEM_READ_ONLY, sizeof b);
    cl_mem dc = ocl_buffer(ctx, CL_MEM_WRITE_ONLY, sizeof c);
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
