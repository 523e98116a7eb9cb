/* SPDX-License-Identifier: MIT */
/* Failing OpenCL calls of several kinds, each once, in this order, and what they
 * return as the program sees it (stdout): tests/integration/cli/test_results.py
 * checks that every API record carries the same value, and that the program's
 * output is the same with and without `upti run`.
 *   clSetKernelArg        bad index               -> CL_INVALID_ARG_INDEX (-49), returned
 *   clCreateBuffer        size 0, errcode_ret set -> CL_INVALID_BUFFER_SIZE (-61), errcode_ret
 *   clCreateBuffer        size 0, errcode_ret NULL-> -61, seen only by UPTI
 *   clCreateBuffer        64 bytes, errcode_ret NULL -> CL_SUCCESS
 *   clGetDeviceInfo       bad param_name          -> CL_INVALID_VALUE (-30)
 *   clGetDeviceInfo       CL_DEVICE_TYPE          -> CL_SUCCESS
 *   clReleaseMemObject    NULL                    -> CL_INVALID_MEM_OBJECT (-38)
 *   clSVMFree             NULL                    -> void: no result */
#include "ocl_common.h"

static const char *source = "__kernel void one(__global int *a) { a[get_global_id(0)] = 1; }\n";

int main(void)
{
    cl_int err;
    cl_device_id dev = ocl_first_device(NULL);
    cl_context ctx = ocl_context(dev);
    cl_program prog = ocl_build(ctx, dev, source);
    cl_kernel k = ocl_kernel(prog, "one");

    cl_mem m = NULL;
    printf("clSetKernelArg(bad index): %d\n", clSetKernelArg(k, 5, sizeof m, &m));
    cl_mem none = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &err);
    printf("clCreateBuffer(size 0): %d %s\n", err, none == NULL ? "NULL" : "buffer");
    none = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, NULL);
    printf("clCreateBuffer(size 0, errcode_ret NULL): %s\n", none == NULL ? "NULL" : "buffer");
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, NULL);
    printf("clCreateBuffer(64, errcode_ret NULL): %s\n", m == NULL ? "NULL" : "buffer");
    cl_ulong value = 0;
    printf("clGetDeviceInfo(bad param): %d\n", clGetDeviceInfo(dev, 0x7fff, sizeof value, &value, NULL));
    cl_device_type type = 0;
    printf("clGetDeviceInfo(CL_DEVICE_TYPE): %d\n",
           clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    printf("clReleaseMemObject(NULL): %d\n", clReleaseMemObject(NULL));
    clSVMFree(ctx, NULL);
    printf("clSVMFree(NULL): done\n");

    CHECK(clReleaseMemObject(m));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseContext(ctx));
    return 0;
}
