/* SPDX-License-Identifier: MIT */
/* A program that dies in the middle of its work, for the crash-safe trace
 * tests (tests/integration/crash). OpenCL plus three uptx calls: the thread
 * is named "crasher", and the ranges "work" (pushed) and "async" (started)
 * are still open when it dies.
 *
 *   ocl_crash N HOW [WAIT_MS [M]]
 *
 * Runs N kernels, each waited for with clFinish (printing "app: started" after
 * the first, so that a test can time a kill from there), prints "app: N kernels",
 * sleeps WAIT_MS (default 0), enqueues M more kernels without waiting, then
 * dies as HOW says: kill (SIGKILL), segv (a NULL write), abort, or exit
 * (_exit(3): no atexit handler, no destructor runs).
 */
#include "ocl_common.h"

#include <uptx/uptx.h>

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uintptr_t g_null; /* a NULL the compiler cannot see */
static const char *k_source = "__kernel void bump(__global int *a) { a[get_global_id(0)] += 1; }\n";

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ocl_crash N kill|segv|abort|exit [WAIT_MS [M]]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    const char *how = argv[2];
    int wait_ms = argc > 3 ? atoi(argv[3]) : 0;
    int more = argc > 4 ? atoi(argv[4]) : 0;
    uptx_name_thread("crasher");
    uptx_range_push("work");
    uptx_range_start("async");
    cl_device_id dev = ocl_first_device(NULL);
    cl_context ctx = ocl_context(dev);
    cl_command_queue q = ocl_queue(ctx, dev);
    cl_program prog = ocl_build(ctx, dev, k_source);
    cl_kernel k = ocl_kernel(prog, "bump");
    size_t global = 64;
    cl_mem buf = ocl_buffer(ctx, CL_MEM_READ_WRITE, global * sizeof(int));
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    for (int i = 0; i < n; i++) {
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clFinish(q));
        if (i == 0) {
            printf("app: started\n");
            fflush(stdout);
        }
    }
    printf("app: %d kernels\n", n);
    fflush(stdout);
    struct timespec pause = {wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    for (int i = 0; i < more; i++)
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    if (strcmp(how, "kill") == 0)
        kill(getpid(), SIGKILL);
    else if (strcmp(how, "segv") == 0)
        *(volatile int *)g_null = 1;
    else if (strcmp(how, "abort") == 0)
        abort();
    else if (strcmp(how, "exit") == 0)
        _exit(3);
    fprintf(stderr, "ocl_crash: unknown HOW '%s'\n", how);
    return 2;
}
