/* SPDX-License-Identifier: MIT */
/* ocl_stuck: ends with commands that can never run. Three kernels and a read
 * wait for a user event that is never set; the program flushes and returns
 * without waiting (what a program that fails, or forgets clFinish, does).
 * Prints one line; exit 0.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <stdio.h>

int main(void)
{
    cl_platform_id platform;
    cl_device_id dev;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return 1;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    const char *src = "__kernel void inc(__global float *a) { a[get_global_id(0)] += 1; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (clBuildProgram(prog, 1, &dev, NULL, NULL, NULL) != CL_SUCCESS)
        return 1;
    cl_kernel k = clCreateKernel(prog, "inc", &err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096 * sizeof(float), NULL, &err);
    clSetKernelArg(k, 0, sizeof buf, &buf);
    cl_event gate = clCreateUserEvent(ctx, &err);
    size_t global = 4096;
    for (int i = 0; i < 3; i++)
        clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 1, &gate, NULL);
    float host[4];
    clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL);
    clFlush(q);
    printf("ocl_stuck: 3 kernels and a read left behind a user event\n");
    return 0;
}
