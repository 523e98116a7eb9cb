/* SPDX-License-Identifier: MIT */
/* The traced program of the fault tests: a few uptx ranges (in threads too),
 * optionally OpenCL calls, "app: done" on stdout, and exit status 7 (its own,
 * which every fault must leave untouched).
 * fault_app [--ocl | --threads-during-discovery] */
#include <uptx/uptx.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#ifdef FAULT_APP_OCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        uptx_range_push("worker");
        uptx_range_pop();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t[2];
    if (argc > 1 && strcmp(argv[1], "--threads-during-discovery") == 0) {
        /* The first worker's first call discovers the tools; the second
         * worker starts 100 ms later, while discovery goes on (a slow
         * initialize): it must wait for it, and be traced. */
        pthread_create(&t[0], NULL, worker, NULL);
        struct timespec later = {0, 100 * 1000 * 1000};
        nanosleep(&later, NULL);
        pthread_create(&t[1], NULL, worker, NULL);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        uptx_range_push("main");
    } else {
        uptx_range_push("main");
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    }
#ifdef FAULT_APP_OCL
    if (argc > 1 && strcmp(argv[1], "--ocl") == 0) {
        cl_uint n = 0;
        cl_int rc = clGetPlatformIDs(0, NULL, &n);
        printf("app: clGetPlatformIDs %d, %u platform(s)\n", (int)rc, n > 0 ? 1u : 0u);
    }
#else
    (void)argc;
    (void)argv;
#endif
    uptx_range_pop();
    printf("app: done\n");
    return 7;
}
