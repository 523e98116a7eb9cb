/* SPDX-License-Identifier: MIT */
/* Shared helpers of the OpenCL test programs: first device of the first
 * platform, its context and queue, a program built from source, its kernels
 * and buffers, a 2D image's description, and a CHECK that prints the failing call and exits.
 * Each helper makes exactly the one OpenCL call it names (ocl_first_device:
 * clGetPlatformIDs, clGetDeviceIDs; ocl_build: clCreateProgramWithSource,
 * clBuildProgram). Programs print only deterministic text. */
#ifndef UPTI_TEST_OCL_COMMON_H
#define UPTI_TEST_OCL_COMMON_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cl_int check_err_ = (call);                                                    \
        if (check_err_ != CL_SUCCESS) {                                                \
            printf("FAILED %s: %d (line %d)\n", #call, check_err_, __LINE__);          \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static inline cl_device_id ocl_first_device(cl_platform_id *platform_out)
{
    cl_platform_id platform;
    cl_device_id device;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    if (platform_out != NULL)
        *platform_out = platform;
    return device;
}

/* A context on dev alone. */
static inline cl_context ocl_context(cl_device_id dev)
{
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    return ctx;
}

/* A queue with the default properties (clCreateCommandQueueWithProperties). */
static inline cl_command_queue ocl_queue(cl_context ctx, cl_device_id dev)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    return q;
}

static inline cl_program ocl_build(cl_context ctx, cl_device_id dev, const char *src)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    return p;
}

static inline cl_kernel ocl_kernel(cl_program prog, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    CHECK(err);
    return k;
}

/* A buffer of size bytes without host memory. */
static inline cl_mem ocl_buffer(cl_context ctx, cl_mem_flags flags, size_t size)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, flags, size, NULL, &err);
    CHECK(err);
    return m;
}

/* The description of a 2D image of width x height pixels. */
static inline cl_image_desc ocl_image2d_desc(size_t width, size_t height)
{
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = width;
    desc.image_height = height;
    return desc;
}

#endif
