/* SPDX-License-Identifier: MIT */
/* The held-out probe of bench/run_overhead: an ocl_overhead-style OpenCL
 * program. CALLS clSetKernelArg calls split evenly over THREADS threads (each
 * its own kernel object, all released together by a barrier), then KERNELS
 * kernel launches and WRITES buffer writes from the main thread.
 *
 *   bench_run_overhead_probe CALLS THREADS KERNELS WRITES
 *
 * Prints one line `probe ...` with the clSetKernelArg loop's wall time (from
 * the first thread past the barrier to the last thread done) and the threads'
 * CPU time, then, as its very last act before returning from main,
 * `exit_start_ns=T` (CLOCK_MONOTONIC), so that its parent can time how long
 * the program takes to end. It knows
 * nothing of UPTI: the driver (run_overhead.py) runs it bare and traced. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timed_threads.h"

struct worker {
    timed_thread timed; /* (first) */
    cl_kernel kernel;
    long calls;
};

static pthread_barrier_t start_line;

static void *set_args(void *arg)
{
    struct worker *w = arg;
    pthread_barrier_wait(&start_line);
    timed_begin(&w->timed);
    for (long i = 0; i < w->calls; i++) {
        int v = (int)i;
        clSetKernelArg(w->kernel, 0, sizeof v, &v);
    }
    timed_end(&w->timed);
    return NULL;
}

static int fail(const char *what, cl_int err)
{
    fprintf(stderr, "bench: %s failed (%d)\n", what, (int)err);
    return 1;
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 2000000;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    long kernels = argc > 3 ? atol(argv[3]) : 20000;
    long writes = argc > 4 ? atol(argv[4]) : 10000;
    if (calls < 1 || threads < 1 || threads > 256 || kernels < 0 || writes < 0) {
        fprintf(stderr, "usage: %s CALLS THREADS KERNELS WRITES\n", argv[0]);
        return 2;
    }
    cl_platform_id pf;
    cl_device_id dev;
    cl_int err = clGetPlatformIDs(1, &pf, NULL);
    if (err != CL_SUCCESS)
        return fail("clGetPlatformIDs", err);
    err = clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    if (err != CL_SUCCESS)
        return fail("clGetDeviceIDs", err);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return fail("clCreateContext", err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    if (err != CL_SUCCESS)
        return fail("clCreateCommandQueueWithProperties", err);
    const char *src = "__kernel void k(int a) { }\n";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (err != CL_SUCCESS)
        return fail("clCreateProgramWithSource", err);
    err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    if (err != CL_SUCCESS)
        return fail("clBuildProgram", err);

    struct worker *w = calloc((size_t)threads, sizeof *w);
    if (w == NULL)
        return fail("calloc", 0);
    pthread_barrier_init(&start_line, NULL, (unsigned)threads + 1);
    for (int t = 0; t < threads; t++) {
        w[t].kernel = clCreateKernel(prog, "k", &err);
        if (err != CL_SUCCESS)
            return fail("clCreateKernel", err);
        w[t].calls = calls / threads + (t < calls % threads);
        if (pthread_create(&w[t].timed.thread, NULL, set_args, &w[t]) != 0)
            return fail("pthread_create", 0);
    }
    pthread_barrier_wait(&start_line);
    double setarg_wall, cpu;
    timed_join(w, sizeof *w, threads, &setarg_wall, &cpu);

    /* Kernels and writes, as in an ocl_overhead-style probe (not in the per-call figure). */
    double t0 = clock_ns(CLOCK_MONOTONIC);
    int value = 1;
    size_t global = 1;
    clSetKernelArg(w[0].kernel, 0, sizeof value, &value);
    for (long i = 0; i < kernels; i++)
        clEnqueueNDRangeKernel(q, w[0].kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    if (err != CL_SUCCESS)
        return fail("clCreateBuffer", err);
    static char bytes[4096];
    for (long i = 0; i < writes; i++)
        clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof bytes, bytes, 0, NULL, NULL);
    clFinish(q);
    double enqueue_wall = clock_ns(CLOCK_MONOTONIC) - t0;

    clReleaseMemObject(buf);
    for (int t = 0; t < threads; t++)
        clReleaseKernel(w[t].kernel);
    free(w);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    pthread_barrier_destroy(&start_line);

    /* wall_ns_per_call: what one thread sees per call (its share of the calls
       in the loop's wall time); cpu_ns_per_call: the threads' CPU per call. */
    printf("probe calls=%ld threads=%d setarg_wall_ns=%.0f wall_ns_per_call=%.2f "
           "cpu_ns_per_call=%.2f kernels=%ld writes=%ld enqueue_wall_ns=%.0f\n",
           calls, threads, setarg_wall, setarg_wall / (double)(calls / threads),
           cpu / (double)calls, kernels, writes, enqueue_wall);
    printf("exit_start_ns=%.0f\n", clock_ns(CLOCK_MONOTONIC));
    fflush(stdout);
    return 0;
}
