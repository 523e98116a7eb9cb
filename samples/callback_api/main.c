/* SPDX-License-Identifier: MIT */
/* samples/callback_api: the life of each GPU operation through UPTI's
 * subscriber callback API (<upti/callback.h>), on any OpenCL program run
 * with OPENCL_LAYERS=libupti-opencl.so. Here the program is its own. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <upti/callback.h>
#include <upti/status.h>

#include <stdatomic.h>
#include <stdio.h>

/* Called synchronously by UPTI, on the thread the table in docs/callback-api.md
 * names for each domain: COMPLETED arrives on UPTI's completion thread while
 * main() enqueues, so what the callback shares with main() must be atomic.
 * Only the name helpers of UPTI may be used in here. */
static void on_event(upti_callback_domain_t domain, uint32_t api_group, uint32_t api_id, void *backend_context,
                     const void *cb_data, void *user_data, void **instance)
{
    (void)api_group, (void)api_id, (void)backend_context;
    atomic_int *count = user_data;
    atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
    if (domain == UPTI_CB_DOMAIN_INTERNAL_THREADS || domain == UPTI_CB_DOMAIN_INTERNAL_EVENT) {
        const upti_callback_internal_data_t *d = cb_data;
        printf("%-32s %-21s %s\n", upti_get_callback_domain_name(domain), upti_get_callback_phase_kind_name(d->phase),
               d->message);
        return;
    }
    const upti_callback_gpu_op_data_t *d = cb_data;
    const upti_gpu_op_details_t *op = d->operation_count ? &d->operation_details[0] : NULL;
    if (d->phase == UPTI_CB_PHASE_API_ENTER && instance != NULL)
        *instance = (void *)op; /* carried to the EXIT of the same call */
    printf("%-32s %-9s corr %-4llu %-12s %-14s", upti_get_callback_domain_name(domain),
           upti_get_callback_phase_kind_name(d->phase), (unsigned long long)d->correlation_id,
           op ? upti_get_gpu_operation_kind_name(op->kind) : "", op && op->name ? op->name : "");
    if (domain == UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED)
        printf(" %llu ns on the device", (unsigned long long)(op->end_timestamp - op->start_timestamp));
    printf("\n");
}

static const char *source = "__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }\n";

int main(void)
{
    atomic_int count = 0;
    upti_callback_subscriber_t sub;
    if (upti_callback_subscribe(&sub, on_event, &count) != UPTI_STATUS_SUCCESS)
        return 1;
    /* APPENDED with both phases; single-phase domains take (1, 1). */
    upti_callback_enable_domain(sub, UPTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED, 1, 1);
    upti_callback_enable_domain(sub, UPTI_CB_DOMAIN_DRIVER_MODULE_LOADED, 1, 1);
    upti_callback_enable_domain(sub, UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED, 1, 1);
    upti_callback_enable_domain(sub, UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED, 1, 1);
    upti_callback_enable_domain(sub, UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED, 1, 1);
    upti_callback_enable_domain(sub, UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION, 1, 1);
    upti_callback_enable_domain(sub, UPTI_CB_DOMAIN_INTERNAL_THREADS, 1, 1);

    cl_platform_id platform;
    cl_device_id dev;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return 1;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    int data[256];
    for (int i = 0; i < 256; i++)
        data[i] = i;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
    clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL);
    clSetKernelArg(k, 0, sizeof buf, &buf);
    size_t global = 256;
    clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL);
    clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL);
    clFinish(q);

    /* The handle dies with unsubscribe: later calls with it fail, never crash. */
    upti_callback_unsubscribe(sub);
    upti_status_t st = upti_callback_enable_domain(sub, UPTI_CB_DOMAIN_DRIVER_API, 1, 1);
    printf("data[255] = %d; %d callbacks; enable after unsubscribe: %s\n", data[255], atomic_load(&count),
           upti_get_status_name(st));
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return data[255] == 510 ? 0 : 1;
}
