/* SPDX-License-Identifier: MIT */
/* ocl_patterns MODE [ITERATIONS]: an OpenCL program that shows one pattern
 * `upti analyze` looks for, or none (clean). Prints "ocl_patterns MODE: ok".
 *
 *   clean   ITERATIONS (default 20) long kernels (milliseconds each on PoCL)
 *           enqueued back to back, one large write before and one blocking
 *           read after: no rule holds. Long, so that a launch call outlasts
 *           its kernel only if the host thread waits for a CPU for longer
 *           than a scheduler's slice in most of them: with kernels of 0.2 ms,
 *           a CI machine running other tests on both CPUs descheduled more
 *           than half of the launch calls for longer (launch_overhead held)
 *   sync    clean's kernel, clFinish and a blocking 4-byte read, 20 times
 *   idle    a kernel, clFinish, then 20 ms of host work, 6 times
 *   small   300 non-blocking 256-byte writes, then one clFinish
 *   errors  3 calls that fail: a bad argument index twice, a 0-byte buffer
 *   tiny    200 launches of a kernel that does nothing, one work-item each
 *   ranked  as clean with a tenth of the work per kernel, but the MPI rank 5
 *           (OMPI_COMM_WORLD_RANK) runs ten times the kernels, each with ten
 *           times the work (kernel times of ranks oversubscribed on few cores
 *           vary severalfold: rank 5's hundredfold stands out whatever the
 *           load); each kernel in a uptx range "step", the whole in "solve"
 */
#include "../../apps/ocl_common.h"

#include <string.h>
#include <time.h>
#include <uptx/uptx.h>

#define ELEMENTS 4096

static const char *k_source =
    "__kernel void spin(__global float *a, int n) {\n"
    "  size_t i = get_global_id(0); float x = a[i];\n"
    "  for (int k = 0; k < n; k++) x = x * 0.999f + 0.5f;\n"
    "  a[i] = x;\n"
    "}\n"
    "__kernel void nothing(__global float *a) { }\n";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Host work the device does not wait on: a busy loop, not a sleep. */
static void host_work(double ms)
{
    double until = now_ms() + ms;
    volatile unsigned spins = 0;
    while (now_ms() < until)
        spins++;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clean";
    int iterations = argc > 2 ? atoi(argv[2]) : 20;
    cl_device_id dev = ocl_first_device(NULL);
    cl_int err;
    cl_context ctx = ocl_context(dev);
    cl_command_queue q = ocl_queue(ctx, dev);
    cl_program prog = ocl_build(ctx, dev, k_source);
    cl_kernel spin = ocl_kernel(prog, "spin");
    cl_kernel nothing = ocl_kernel(prog, "nothing");
    static float host[ELEMENTS];
    cl_mem buf = ocl_buffer(ctx, CL_MEM_READ_WRITE, sizeof host);
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    int rank5 = strcmp(mode, "ranked") == 0 && rank != NULL && atoi(rank) == 5;
    int long_kernel = strcmp(mode, "clean") == 0 || strcmp(mode, "sync") == 0;
    int work = long_kernel || rank5 ? 1500 : 150;
    size_t global = ELEMENTS, one = 1;
    CHECK(clSetKernelArg(spin, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(spin, 1, sizeof work, &work));
    CHECK(clSetKernelArg(nothing, 0, sizeof buf, &buf));

    if (strcmp(mode, "clean") == 0) {
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
        for (int i = 0; i < iterations; i++)
            CHECK(clEnqueueNDRangeKernel(q, spin, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    } else if (strcmp(mode, "ranked") == 0) {
        if (rank5)
            iterations *= 10;
        uptx_range_push("solve");
        CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
        for (int i = 0; i < iterations; i++) {
            uptx_range_push("step");
            CHECK(clEnqueueNDRangeKernel(q, spin, 1, NULL, &global, NULL, 0, NULL, NULL));
            uptx_range_pop();
        }
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
        uptx_range_pop();
    } else if (strcmp(mode, "sync") == 0) {
        for (int i = 0; i < 20; i++) {
            CHECK(clEnqueueNDRangeKernel(q, spin, 1, NULL, &global, NULL, 0, NULL, NULL));
            CHECK(clFinish(q));
            CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof(float), host, 0, NULL, NULL));
        }
    } else if (strcmp(mode, "idle") == 0) {
        for (int i = 0; i < 6; i++) {
            CHECK(clEnqueueNDRangeKernel(q, spin, 1, NULL, &global, NULL, 0, NULL, NULL));
            CHECK(clFinish(q));
            host_work(20.0);
        }
    } else if (strcmp(mode, "small") == 0) {
        for (int i = 0; i < 300; i++)
            CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, (size_t)(i % 64) * 256, 256, host, 0,
                                       NULL, NULL));
        CHECK(clFinish(q));
    } else if (strcmp(mode, "errors") == 0) {
        if (clSetKernelArg(spin, 7, sizeof buf, &buf) != CL_INVALID_ARG_INDEX ||
            clSetKernelArg(spin, 9, sizeof buf, &buf) != CL_INVALID_ARG_INDEX)
            return printf("ocl_patterns errors: clSetKernelArg did not fail\n"), 1;
        cl_mem none = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &err);
        if (none != NULL || err != CL_INVALID_BUFFER_SIZE)
            return printf("ocl_patterns errors: clCreateBuffer did not fail\n"), 1;
    } else if (strcmp(mode, "tiny") == 0) {
        for (int i = 0; i < 200; i++)
            CHECK(clEnqueueNDRangeKernel(q, nothing, 1, NULL, &one, &one, 0, NULL, NULL));
        CHECK(clFinish(q));
    } else {
        printf("ocl_patterns: unknown mode %s\n", mode);
        return 2;
    }
    CHECK(clFinish(q));
    clReleaseMemObject(buf);
    clReleaseKernel(spin);
    clReleaseKernel(nothing);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("ocl_patterns %s: ok\n", mode);
    return 0;
}
