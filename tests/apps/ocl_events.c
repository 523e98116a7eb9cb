/* SPDX-License-Identifier: MIT */
/* Event patterns of real programs (pyopencl's event callbacks, hashcat's
 * clean-up at exit), each with an exact count of what UPTI must record:
 *   1. a kernel with three callbacks on each of CL_SUBMITTED, CL_RUNNING and
 *      CL_COMPLETE, its event released before it completes;
 *   2. a kernel and a read waiting on a user event that the program sets to an
 *      error: neither runs (both are recorded with a negative status);
 *   3. a kernel after that failure, which runs;
 *   4. an exit handler, registered after the first OpenCL call, that enqueues
 *      two kernels and releases every object after main has returned.
 * Prints only deterministic text; exits 3 (main's return value). */
#include "ocl_common.h"

#include <stdatomic.h>
#include <unistd.h>

static const char *source =
    "__kernel void inc(__global float *a) { a[get_global_id(0)] += 1.0f; }\n";

static cl_context ctx;
static cl_command_queue queue;
static cl_program prog;
static cl_kernel kernel;
static cl_mem buf;
static atomic_int callbacks[3]; /* by status: CL_SUBMITTED, CL_RUNNING, CL_COMPLETE */

static void CL_CALLBACK on_status(cl_event ev, cl_int status, void *data)
{
    (void)ev;
    (void)status;
    atomic_fetch_add(&callbacks[(long)data], 1);
}

static void enqueue_inc(cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    size_t global = 1024;
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, nwait, wait, ev));
}

static void at_exit_cleanup(void)
{
    enqueue_inc(0, NULL, NULL);
    enqueue_inc(0, NULL, NULL);
    CHECK(clFinish(queue));
    float first = 0;
    CHECK(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof first, &first, 0, NULL, NULL));
    printf("after exit: %.0f\n", first);
    CHECK(clReleaseKernel(kernel));
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseMemObject(buf));
    CHECK(clReleaseCommandQueue(queue));
    CHECK(clReleaseContext(ctx));
    fflush(stdout);
}

int main(void)
{
    cl_int err;
    cl_device_id dev = ocl_first_device(NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    atexit(at_exit_cleanup); /* after the first OpenCL call, as a program's clean-up is */
    queue = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    prog = ocl_build(ctx, dev, source);
    kernel = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1024 * sizeof(float), NULL, &err);
    CHECK(err);
    float zero = 0.0f;
    CHECK(clEnqueueFillBuffer(queue, buf, &zero, sizeof zero, 0, 1024 * sizeof(float), 0, NULL,
                              NULL));
    CHECK(clSetKernelArg(kernel, 0, sizeof buf, &buf));

    /* 1 */
    cl_event ev;
    enqueue_inc(0, NULL, &ev);
    for (int r = 0; r < 3; r++) {
        CHECK(clSetEventCallback(ev, CL_SUBMITTED, on_status, (void *)0));
        CHECK(clSetEventCallback(ev, CL_RUNNING, on_status, (void *)1));
        CHECK(clSetEventCallback(ev, CL_COMPLETE, on_status, (void *)2));
    }
    CHECK(clReleaseEvent(ev));
    CHECK(clFinish(queue));
    for (int i = 0; i < 500 && atomic_load(&callbacks[2]) < 3; i++)
        usleep(10000);
    printf("callbacks: submitted %d, running %d, complete %d\n", atomic_load(&callbacks[0]),
           atomic_load(&callbacks[1]), atomic_load(&callbacks[2]));

    /* 2 */
    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK(err);
    cl_event kev, rev;
    enqueue_inc(1, &gate, &kev);
    float first = -1.0f;
    CHECK(clEnqueueReadBuffer(queue, buf, CL_FALSE, 0, sizeof first, &first, 1, &kev, &rev));
    CHECK(clFlush(queue));
    CHECK(clSetUserEventStatus(gate, -42));
    err = clWaitForEvents(1, &rev);
    cl_int kst = 0, rst = 0;
    CHECK(clGetEventInfo(kev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof kst, &kst, NULL));
    CHECK(clGetEventInfo(rev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof rst, &rst, NULL));
    printf("failed chain: wait %s, kernel %s, read %s, buffer not read: %s\n",
           err == CL_SUCCESS ? "succeeded" : "failed", kst < 0 ? "failed" : "ran",
           rst < 0 ? "failed" : "ran", first == -1.0f ? "yes" : "no");
    CHECK(clReleaseEvent(gate));
    CHECK(clReleaseEvent(kev));
    CHECK(clReleaseEvent(rev));

    /* 3 */
    enqueue_inc(0, NULL, NULL);
    CHECK(clFinish(queue));
    CHECK(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof first, &first, 0, NULL, NULL));
    printf("before exit: %.0f\n", first);
    fflush(stdout);
    return 3; /* 4: at_exit_cleanup */
}
