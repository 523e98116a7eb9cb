/* SPDX-License-Identifier: MIT */
/* Vector addition on the first device of every platform (2 writes, 1 kernel,
 * 1 read each). OpenCL 1.2 platforms get clCreateCommandQueue: oclgrind 21.10
 * is one, and the 2.0+ slots of its dispatch table point back into the
 * loader (the ICD's own exported names resolve to libOpenCL's), so calling
 * clCreateCommandQueueWithProperties on it loops forever. */
#include "../../apps/ocl_common.h"

#include <string.h>

static const char *source =
    "__kernel void vadd(__global const int *a, __global const int *b, __global int *c)\n"
    "{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n";

#define N 1024

static int vadd(cl_platform_id platform, cl_uint index)
{
    static int a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = i;
        b[i] = 2 * i + (int)index;
        c[i] = 0;
    }
    char version[256] = "";
    CHECK(clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof version - 1, version, NULL));
    cl_device_id dev;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_int err;
    cl_context ctx = ocl_context(dev);
    cl_command_queue q = strncmp(version, "OpenCL 1.", 9) == 0
                             ? clCreateCommandQueue(ctx, dev, 0, &err)
                             : clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_program prog = ocl_build(ctx, dev, source);
    cl_kernel k = ocl_kernel(prog, "vadd");
    cl_mem m[3];
    for (int i = 0; i < 3; i++) {
        m[i] = clCreateBuffer(ctx, i < 2 ? CL_MEM_READ_ONLY : CL_MEM_WRITE_ONLY, sizeof a, NULL, &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, (cl_uint)i, sizeof m[i], &m[i]));
    }
    CHECK(clEnqueueWriteBuffer(q, m[0], CL_FALSE, 0, sizeof a, a, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, m[1], CL_FALSE, 0, sizeof b, b, 0, NULL, NULL));
    size_t global = N, local = 64;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, m[2], CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    CHECK(clFinish(q));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += c[i] != a[i] + b[i];
    printf("platform %u: vadd n=%d errors=%d\n", index, N, bad);
    for (int i = 0; i < 3; i++)
        clReleaseMemObject(m[i]);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return bad;
}

int main(void)
{
    cl_platform_id platforms[8];
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(8, platforms, &n));
    if (n > 8)
        n = 8;
    int bad = 0;
    for (cl_uint i = 0; i < n; i++)
        bad += vadd(platforms[i], i);
    printf("platforms: %u\n", n);
    return bad != 0;
}
