/* SPDX-License-Identifier: MIT */
/* Shared helpers of the OpenCL test programs: first device of the first
 * platform, a program built from source, and a CHECK that prints the failing
 * call and exits. Programs print only deterministic text. */
#ifndef UPTI_TEST_OCL_COMMON_H
#define UPTI_TEST_OCL_COMMON_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

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

static inline cl_program ocl_build(cl_context ctx, cl_device_id dev, const char *src)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    return p;
}

#endif
