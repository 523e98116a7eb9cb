/* SPDX-License-Identifier: MIT */
/* OpenCL program for the end-to-end tests of `upti run` (test_cli.py): a fixed,
 * countable sequence of OpenCL calls.
 *
 *   upti-test-ocl-e2e [--kernels N] [--kernels-b M] [--until-signal] [--own-handler]
 *
 * Calls, in order (each exactly once unless stated):
 *   clGetPlatformIDs, clGetDeviceIDs, clCreateContext,
 *   clCreateCommandQueueWithProperties, clCreateProgramWithSource, clBuildProgram,
 *   clCreateKernel x2 ("kern_a", "kern_b"), clCreateBuffer x2 (4096 bytes each),
 *   clEnqueueWriteBuffer (4096 bytes, host to device), clSetKernelArg x2 (index 0,
 *   a cl_mem), clEnqueueNDRangeKernel N times kern_a then M times kern_b (1-D,
 *   global 1024, local 64), clEnqueueCopyBuffer (1024 bytes, device to device),
 *   clEnqueueReadBuffer (4096 bytes, device to host, blocking), clFinish,
 *   clReleaseMemObject x2, clReleaseKernel x2, clReleaseProgram,
 *   clReleaseCommandQueue, clReleaseContext.
 * --until-signal: after the write, loops {clEnqueueNDRangeKernel kern_a, clFinish}
 * until SIGINT/SIGTERM, printing "looping" once the first kernel finished; with
 * --own-handler the program's own handler stops the loop (and prints "handler
 * ran"), else the default action ends the process.
 * Prints one line: "ocl_e2e: a=N b=M sum=S errors=E". Exit 0 on success.
 */
#include "../../apps/ocl_common.h"

#include <signal.h>
#include <unistd.h>

static const char *source =
    "__kernel void kern_a(__global int *a) { a[get_global_id(0)] += 1; }\n"
    "__kernel void kern_b(__global int *b) { b[get_global_id(0)] += 2; }\n";

#define N 1024

static volatile sig_atomic_t g_stop;
static void on_signal(int sig)
{
    static const char msg[] = "handler ran\n";
    (void)sig;
    g_stop = 1;
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
}

int main(int argc, char **argv)
{
    long na = 1000, nb = 0;
    int until_signal = 0, own_handler = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc)
            na = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--kernels-b") == 0 && i + 1 < argc)
            nb = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--until-signal") == 0)
            until_signal = 1;
        else if (strcmp(argv[i], "--own-handler") == 0)
            own_handler = 1;
        else {
            fprintf(stderr, "usage: %s [--kernels N] [--kernels-b M] [--until-signal] [--own-handler]\n",
                    argv[0]);
            return 2;
        }
    }
    if (own_handler) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    static int host[N];
    for (int i = 0; i < N; i++)
        host[i] = i;

    cl_device_id dev = ocl_first_device(NULL);
    cl_context ctx = ocl_context(dev);
    cl_command_queue q = ocl_queue(ctx, dev);
    cl_program prog = ocl_build(ctx, dev, source);
    cl_kernel ka = ocl_kernel(prog, "kern_a");
    cl_kernel kb = ocl_kernel(prog, "kern_b");
    cl_mem da = ocl_buffer(ctx, CL_MEM_READ_WRITE, sizeof host);
    cl_mem db = ocl_buffer(ctx, CL_MEM_READ_WRITE, sizeof host);
    CHECK(clEnqueueWriteBuffer(q, da, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
    CHECK(clSetKernelArg(ka, 0, sizeof da, &da));
    CHECK(clSetKernelArg(kb, 0, sizeof db, &db));
    size_t global = N, local = 64;
    if (until_signal) {
        for (long i = 0; !g_stop; i++) {
            CHECK(clEnqueueNDRangeKernel(q, ka, 1, NULL, &global, &local, 0, NULL, NULL));
            CHECK(clFinish(q));
            if (i == 0) {
                printf("looping\n");
                fflush(stdout);
            }
            na = i + 1;
        }
    } else {
        for (long i = 0; i < na; i++)
            CHECK(clEnqueueNDRangeKernel(q, ka, 1, NULL, &global, &local, 0, NULL, NULL));
        for (long i = 0; i < nb; i++)
            CHECK(clEnqueueNDRangeKernel(q, kb, 1, NULL, &global, &local, 0, NULL, NULL));
    }
    CHECK(clEnqueueCopyBuffer(q, da, db, 0, 0, 1024, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, da, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    CHECK(clFinish(q));
    long sum = 0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        sum += host[i];
        bad += host[i] != i + (int)na;
    }
    printf("ocl_e2e: a=%ld b=%ld sum=%ld errors=%d\n", na, nb, sum, bad);
    CHECK(clReleaseMemObject(da));
    CHECK(clReleaseMemObject(db));
    CHECK(clReleaseKernel(ka));
    CHECK(clReleaseKernel(kb));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    return bad != 0;
}
