/* SPDX-License-Identifier: MIT */
/* Several threads, each with several queues (and its own context), each
 * queue running a chain of kernels then a read. Exact counts:
 * THREADS*QUEUES*KERNELS kernels, THREADS*QUEUES writes and reads. */
#include "ocl_common.h"

#include <pthread.h>

#define THREADS 4
#define QUEUES 2
#define KERNELS 5
#define N 256

static const char *source = "__kernel void inc(__global int *x) { x[get_global_id(0)] += 1; }\n";
static cl_device_id g_dev;
static long g_result[THREADS];

static void *worker(void *arg)
{
    long t = (long)arg;
    cl_int err;
    cl_context ctx = ocl_context(g_dev);
    cl_program prog = ocl_build(ctx, g_dev, source);
    cl_command_queue q[QUEUES];
    cl_kernel k[QUEUES];
    cl_mem m[QUEUES];
    int host[QUEUES][N];
    for (int j = 0; j < QUEUES; j++) {
        q[j] = clCreateCommandQueue(ctx, g_dev, 0, &err);
        CHECK(err);
        k[j] = clCreateKernel(prog, "inc", &err);
        CHECK(err);
        m[j] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof host[j], NULL, &err);
        CHECK(err);
        for (int i = 0; i < N; i++)
            host[j][i] = (int)t * 1000 + j;
        CHECK(clEnqueueWriteBuffer(q[j], m[j], CL_FALSE, 0, sizeof host[j], host[j], 0, NULL, NULL));
        CHECK(clSetKernelArg(k[j], 0, sizeof m[j], &m[j]));
        size_t global = N;
        for (int r = 0; r < KERNELS; r++)
            CHECK(clEnqueueNDRangeKernel(q[j], k[j], 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q[j], m[j], CL_FALSE, 0, sizeof host[j], host[j], 0, NULL, NULL));
    }
    long sum = 0;
    for (int j = 0; j < QUEUES; j++) {
        CHECK(clFinish(q[j]));
        for (int i = 0; i < N; i++)
            sum += host[j][i];
        clReleaseMemObject(m[j]);
        clReleaseKernel(k[j]);
        clReleaseCommandQueue(q[j]);
    }
    clReleaseProgram(prog);
    clReleaseContext(ctx);
    g_result[t] = sum;
    return NULL;
}

int main(void)
{
    g_dev = ocl_first_device(NULL);
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++)
        printf("thread %d: sum=%ld\n", t, g_result[t]);
    return 0;
}
