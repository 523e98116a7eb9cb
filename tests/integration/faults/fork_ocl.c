/* SPDX-License-Identifier: MIT */
/* fork() without exec while another thread enqueues OpenCL kernels.
 *
 * A worker thread enqueues kernels (clFinish every 16) until main has forked
 * FORKS children, each fork while the worker is busy; then main stops it.
 * The child never uses OpenCL (PoCL itself cannot run in a forked child) and
 * ends as MODE says:
 *   exit        exit(0) at once (UPTI's exit handlers run in the child)
 *   calls       100 uptx ranges and marks, then exit(0)
 *   _exit       100 uptx ranges and marks, then _exit(0)
 *   subscriber  (the parent subscribes to GPU_OPERATION_COMPLETED first,
 *               callback.h) the child subscribes, enables and unsubscribes,
 *               then exit(0)
 * A child stuck for 60 s is killed by SIGALRM and fails the run. The parent
 * prints "app: N kernels, F forks ok" (and, with subscriber, "app: completed
 * N": the kernels whose COMPLETED callback it saw) and exits 7.
 * fork_ocl MODE [forks] */
#include "../../apps/ocl_common.h"

#include <uptx/uptx.h>
#ifdef FORK_OCL_SUBSCRIBER
#include <upti/callback.h>
#endif

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FORK_OCL_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FORK_OCL_ASAN 1
#endif
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FORK_OCL_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FORK_OCL_TSAN 1
#endif

static const char *k_source = "__kernel void bump(__global int *a) { a[get_global_id(0)] += 1; }";

static cl_command_queue g_queue;
static cl_kernel g_kernel;
static atomic_int g_stop;
static atomic_long g_enqueued;
static atomic_int g_forks_done; /* the worker stays at most 64 kernels ahead of the forks */

static void *worker(void *arg)
{
    (void)arg;
    size_t global = 64;
    long n = 0;
    while (!atomic_load(&g_stop)) {
        if (n >= 32L * atomic_load(&g_forks_done) + 64) {
            usleep(100);
            continue;
        }
        CHECK(clEnqueueNDRangeKernel(g_queue, g_kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
        atomic_store(&g_enqueued, ++n);
        if (n % 16 == 0)
            CHECK(clFinish(g_queue));
    }
    CHECK(clFinish(g_queue));
    return NULL;
}

#ifdef FORK_OCL_SUBSCRIBER
static atomic_long g_completed;

static void on_op(upti_callback_domain_t domain, uint32_t api_group, uint32_t api_id,
                  void *backend_context, const void *cb_data, void *user_data, void **instance)
{
    (void)api_group, (void)api_id, (void)backend_context, (void)user_data, (void)instance;
    const upti_callback_gpu_op_data_t *d = cb_data;
    if (domain == UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED &&
        d->operation_details != NULL &&
        d->operation_details->kind == UPTI_GPU_OPERATION_KIND_KERNEL)
        atomic_fetch_add(&g_completed, 1);
}

static int subscribe_completed(upti_callback_subscriber_t *s)
{
    return upti_callback_subscribe(s, on_op, NULL) == UPTI_STATUS_SUCCESS &&
           upti_callback_enable_domain(*s, UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED, 1, 1) ==
               UPTI_STATUS_SUCCESS;
}
#endif

static void child(const char *mode)
{
    alarm(60);
    if (strcmp(mode, "exit") == 0)
        exit(0);
    if (strcmp(mode, "subscriber") == 0) {
#ifdef FORK_OCL_SUBSCRIBER
        upti_callback_subscriber_t s;
        if (!subscribe_completed(&s) || upti_callback_unsubscribe(s) != UPTI_STATUS_SUCCESS)
            _exit(3);
#endif
        exit(0);
    }
    for (int i = 0; i < 100; i++) {
        uptx_range_push("child");
        uptx_mark("child mark");
        uptx_range_pop();
    }
    if (strcmp(mode, "_exit") == 0)
        _exit(0);
    exit(0);
}

int main(int argc, char **argv)
{
#ifdef FORK_OCL_ASAN
    /* LLVM 14's ASan allocator is not fork-safe: a child forked while other
     * threads allocate can wait forever on an allocator lock (glibc's malloc
     * resets its locks at fork; this ASan's does not). */
    printf("SKIP: fork while threads allocate is not supported by this AddressSanitizer\n");
    return 77;
#endif
#ifdef FORK_OCL_TSAN
    /* The same holds for LLVM 14's ThreadSanitizer allocator: a child's free() (LLVM's
     * own static destructors in PoCL's libLLVM, at exit) waited for ever on a size-class
     * region lock that a PoCL thread of the parent held at fork (seen once in about 30
     * runs, in __sanitizer::SizeClassAllocator64::ReturnToAllocator). */
    printf("SKIP: fork while threads allocate is not supported by this ThreadSanitizer\n");
    return 77;
#endif
    const char *mode = argc > 1 ? argv[1] : "exit";
    int forks = argc > 2 ? atoi(argv[2]) : 10;
#ifdef FORK_OCL_SUBSCRIBER
    upti_callback_subscriber_t sub;
    if (strcmp(mode, "subscriber") == 0 && !subscribe_completed(&sub)) {
        printf("FAILED: subscribe\n");
        return 1;
    }
#endif
    cl_device_id dev = ocl_first_device(NULL);
    cl_int err;
    cl_context ctx = ocl_context(dev);
    g_queue = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    cl_program prog = ocl_build(ctx, dev, k_source);
    g_kernel = clCreateKernel(prog, "bump", &err);
    CHECK(err);
    cl_mem buf = ocl_buffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(int));
    CHECK(clSetKernelArg(g_kernel, 0, sizeof buf, &buf));

    uptx_range_push("parent");
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    int bad = 0;
    for (int f = 0; f < forks; f++) {
        /* Fork while the worker is busy: after its next few enqueues. */
        long seen = atomic_load(&g_enqueued);
        long cap = 32L * atomic_load(&g_forks_done) + 64; /* where the worker waits */
        while (atomic_load(&g_enqueued) < seen + 8 && atomic_load(&g_enqueued) < cap)
            usleep(100);
        fflush(NULL); /* nothing buffered is written twice */
        pid_t pid = fork();
        if (pid == 0)
            child(mode);
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            printf("app: child %d of %d failed (status 0x%x)\n", f, forks, status);
            bad = 1;
        }
        atomic_fetch_add(&g_forks_done, 1);
    }
    atomic_store(&g_stop, 1);
    pthread_join(t, NULL);
    uptx_range_pop();
    long n = atomic_load(&g_enqueued);
    printf("app: %ld kernels, %d forks %s\n", n, forks, bad ? "FAILED" : "ok");
#ifdef FORK_OCL_SUBSCRIBER
    if (strcmp(mode, "subscriber") == 0) {
        upti_callback_unsubscribe(sub);
        printf("app: completed %ld\n", atomic_load(&g_completed));
    }
#endif
    clReleaseMemObject(buf);
    clReleaseKernel(g_kernel);
    clReleaseProgram(prog);
    clReleaseCommandQueue(g_queue);
    clReleaseContext(ctx);
    return bad ? 1 : 7;
}
