/* SPDX-License-Identifier: MIT */
/* Added cost of the UPTI OpenCL layer per call, as a ratio to the same loop
 * untraced in the same run. The untraced loop calls the driver's own entry
 * (the ICD dispatch table every PoCL object starts with), bypassing the
 * loader and the layer; the traced loop calls the public entry. Run by
 * run_bench.sh in each mode (see bench_tool.c). Prints ns per call: the
 * fastest of UPTI_OCL_BENCH_REPS (default 7) alternating repetitions. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "setarg";
    cl_platform_id pf;
    cl_device_id dev;
    cl_int err;
    clGetPlatformIDs(1, &pf, NULL);
    clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    const char *src = "__kernel void k(int a) { }\n";
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    clBuildProgram(p, 1, &dev, "", NULL, NULL);
    cl_kernel k = clCreateKernel(p, "k", &err);
    const struct _cl_icd_dispatch *driver = *(struct _cl_icd_dispatch **)k;
    int v = 1;
    clSetKernelArg(k, 0, sizeof v, &v);
    /* Alternating repetitions; the fastest of each loop is reported (the
       machine is shared: the minimum is the least disturbed run). The first
       repetition warms up and is not counted. */
    const char *reps_env = getenv("UPTI_OCL_BENCH_REPS");
    int reps = reps_env != NULL ? atoi(reps_env) : 7;
    double base = 1e30, traced = 1e30;
    if (what[0] == 's') {
        const int n = 1000000;
        for (int rep = 0; rep <= reps; rep++) {
            double t0 = now();
            for (int i = 0; i < n; i++)
                driver->clSetKernelArg(k, 0, sizeof i, &i);
            double t1 = now();
            for (int i = 0; i < n; i++)
                clSetKernelArg(k, 0, sizeof i, &i);
            double t2 = now();
            if (rep > 0 && (t1 - t0) / n < base)
                base = (t1 - t0) / n;
            if (rep > 0 && (t2 - t1) / n < traced)
                traced = (t2 - t1) / n;
        }
        printf("clSetKernelArg: untraced %.2f ns, with layer %.2f ns, added %.2f ns, ratio %.3f\n", base,
               traced, traced - base, traced / base);
    } else {
        const int n = 20000;
        size_t g = 1;
        for (int rep = 0; rep <= reps; rep++) {
            double t0 = now();
            for (int i = 0; i < n; i++)
                driver->clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
            driver->clFinish(q);
            double t1 = now();
            for (int i = 0; i < n; i++)
                clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
            clFinish(q);
            double t2 = now();
            if (rep > 0 && (t1 - t0) / n < base)
                base = (t1 - t0) / n;
            if (rep > 0 && (t2 - t1) / n < traced)
                traced = (t2 - t1) / n;
        }
        printf("clEnqueueNDRangeKernel (+clFinish): untraced %.1f ns, with layer %.1f ns, added %.1f ns, ratio %.3f\n",
               base, traced, traced - base, traced / base);
    }
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
