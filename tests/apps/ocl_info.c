/* SPDX-License-Identifier: MIT */
/* Creates every kind of OpenCL object in each way a program can (NULL, empty
 * and full property lists; the 1.x and 2.x+ entry points), runs commands with
 * and without the program's own events, and prints every clGet*Info value it
 * can read back: the size the runtime reports (param_value_size_ret), the
 * error code, and the value. Handles print as the name of the object they are
 * (or "null"/"other"); values that differ from run to run (times, host
 * pointers, binaries) print their size only. Run bare and under a tool, the
 * output must be the same line for line (tests/integration/opencl,
 * opencl.info_values). */
#include "ocl_common.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

/* --- handles by name --- */

enum { MAX_NAMED = 256 };
static struct {
    const void *handle;
    char name[48];
} named[MAX_NAMED];
static int num_named;

static void name_handle(const void *handle, const char *name)
{
    if (handle != NULL && num_named < MAX_NAMED) {
        named[num_named].handle = handle;
        snprintf(named[num_named].name, sizeof named[num_named].name, "%.40s", name);
        num_named++;
    }
}

static const char *handle_name(const void *handle)
{
    if (handle == NULL)
        return "null";
    /* The newest first: a released object's address is given to a later one. */
    for (int i = num_named - 1; i >= 0; i--)
        if (named[i].handle == handle)
            return named[i].name;
    return "other";
}

/* --- printing one query --- */

typedef enum {
    K_UINT,    /* cl_uint, cl_int, cl_bool, enums */
    K_ULONG,   /* cl_ulong, bitfields */
    K_SIZE,    /* size_t */
    K_HANDLE,  /* one handle */
    K_WORDS,   /* an array of 8-byte words (property lists, handles, sizes) */
    K_STRING,  /* text */
    K_SIZEONLY, /* varies between runs: size and error only */
    K_COUNT     /* a reference count (cl_uint): read until it settles */
} kind_t;

static void print_value(kind_t kind, const unsigned char *v, size_t size)
{
    switch (kind) {
    case K_UINT:
    case K_COUNT:
        if (size >= sizeof(cl_uint))
            printf(" value=%u", *(const cl_uint *)v);
        break;
    case K_ULONG:
        if (size >= sizeof(cl_ulong))
            printf(" value=0x%llx", (unsigned long long)*(const cl_ulong *)v);
        break;
    case K_SIZE:
        if (size >= sizeof(size_t))
            printf(" value=%zu", *(const size_t *)v);
        break;
    case K_HANDLE:
        if (size >= sizeof(void *))
            printf(" value=%s", handle_name(*(void *const *)v));
        break;
    case K_WORDS:
        printf(" value=[");
        for (size_t i = 0; i + sizeof(uint64_t) <= size; i += sizeof(uint64_t)) {
            uint64_t w;
            memcpy(&w, v + i, sizeof w);
            const char *n = handle_name((const void *)(uintptr_t)w);
            if (strcmp(n, "other") == 0 || w == 0)
                printf("%s0x%llx", i ? "," : "", (unsigned long long)w);
            else
                printf("%s%s", i ? "," : "", n);
        }
        printf("]");
        break;
    case K_STRING:
        printf(" value=\"%.*s\"", (int)(size > 0 ? size - 1 : 0), (const char *)v);
        break;
    case K_SIZEONLY:
        break;
    }
}

/* The runtime drops its references to a command's objects in its worker
 * threads, after the command completed (PoCL: after clFinish returned), bare
 * as well as under UPTI: a reference count is read until it stayed the same
 * over three pauses of 2 ms (at most 200 pauses). */
static void settle_pause(void)
{
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
}

/* Asks for the size first, then the value into a large buffer (a layer must
 * write no more than the runtime does), then into a buffer one byte short
 * (the runtime's error must come back). */
#define INFO(fn, label, obj, param, kind)                                                          \
    do {                                                                                           \
        size_t size_ = 0, size2_ = 0, short_ret_ = 0;                                              \
        unsigned char value_[4096];                                                                \
        memset(value_, 0xA5, sizeof value_);                                                       \
        cl_int e1_ = fn(obj, param, 0, NULL, &size_);                                              \
        cl_int e2_ = fn(obj, param, sizeof value_, value_, &size2_);                               \
        for (int same_ = 0, tries_ = 0; (kind) == K_COUNT && e2_ == CL_SUCCESS && same_ < 3 &&     \
                                        tries_ < 200;                                              \
             tries_++) {                                                                           \
            cl_uint before_ = *(cl_uint *)value_;                                                  \
            settle_pause();                                                                        \
            e2_ = fn(obj, param, sizeof value_, value_, &size2_);                                  \
            same_ = *(cl_uint *)value_ == before_ ? same_ + 1 : 0;                                 \
        }                                                                                          \
        cl_int e3_ = size_ > 0 && size_ <= sizeof value_                                           \
                         ? fn(obj, param, size_ - 1, value_ + 2048, &short_ret_)                   \
                         : CL_SUCCESS;                                                             \
        size_t untouched_ = 0;                                                                     \
        while (size2_ + untouched_ < 2048 && value_[size2_ + untouched_] == 0xA5)                  \
            untouched_++;                                                                          \
        printf("%s %s err=%d size=%zu err2=%d size2=%zu short=%d tail_untouched=%d", label, #param, \
               e1_, size_, e2_, size2_, e3_, size2_ + untouched_ == 2048);                         \
        if (e2_ == CL_SUCCESS)                                                                     \
            print_value(kind, value_, size2_);                                                     \
        printf("\n");                                                                              \
    } while (0)

/* --- objects --- */

static const char *kernel_source =
    "__kernel void scale(__global float *a, float f) { a[get_global_id(0)] *= f; }\n"
    "__kernel void touch(__global int *a) { a[0] += 1; }\n";

static void context_info(const char *label, cl_context c)
{
    INFO(clGetContextInfo, label, c, CL_CONTEXT_REFERENCE_COUNT, K_COUNT);
    INFO(clGetContextInfo, label, c, CL_CONTEXT_NUM_DEVICES, K_UINT);
    INFO(clGetContextInfo, label, c, CL_CONTEXT_DEVICES, K_WORDS);
    INFO(clGetContextInfo, label, c, CL_CONTEXT_PROPERTIES, K_WORDS);
}

static void queue_info(const char *label, cl_command_queue q)
{
    INFO(clGetCommandQueueInfo, label, q, CL_QUEUE_CONTEXT, K_HANDLE);
    INFO(clGetCommandQueueInfo, label, q, CL_QUEUE_DEVICE, K_HANDLE);
    INFO(clGetCommandQueueInfo, label, q, CL_QUEUE_REFERENCE_COUNT, K_COUNT);
    INFO(clGetCommandQueueInfo, label, q, CL_QUEUE_PROPERTIES, K_ULONG);
    INFO(clGetCommandQueueInfo, label, q, CL_QUEUE_PROPERTIES_ARRAY, K_WORDS);
    INFO(clGetCommandQueueInfo, label, q, CL_QUEUE_SIZE, K_UINT);
    INFO(clGetCommandQueueInfo, label, q, CL_QUEUE_DEVICE_DEFAULT, K_HANDLE);
}

static void event_info(const char *label, cl_event e)
{
    INFO(clGetEventInfo, label, e, CL_EVENT_COMMAND_QUEUE, K_HANDLE);
    INFO(clGetEventInfo, label, e, CL_EVENT_CONTEXT, K_HANDLE);
    INFO(clGetEventInfo, label, e, CL_EVENT_COMMAND_TYPE, K_UINT);
    INFO(clGetEventInfo, label, e, CL_EVENT_COMMAND_EXECUTION_STATUS, K_UINT);
    INFO(clGetEventInfo, label, e, CL_EVENT_REFERENCE_COUNT, K_COUNT);
    INFO(clGetEventProfilingInfo, label, e, CL_PROFILING_COMMAND_QUEUED, K_SIZEONLY);
    INFO(clGetEventProfilingInfo, label, e, CL_PROFILING_COMMAND_SUBMIT, K_SIZEONLY);
    INFO(clGetEventProfilingInfo, label, e, CL_PROFILING_COMMAND_START, K_SIZEONLY);
    INFO(clGetEventProfilingInfo, label, e, CL_PROFILING_COMMAND_END, K_SIZEONLY);
    INFO(clGetEventProfilingInfo, label, e, CL_PROFILING_COMMAND_COMPLETE, K_SIZEONLY);
}

static void mem_info(const char *label, cl_mem m)
{
    INFO(clGetMemObjectInfo, label, m, CL_MEM_TYPE, K_UINT);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_FLAGS, K_ULONG);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_SIZE, K_SIZE);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_HOST_PTR, K_SIZEONLY);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_MAP_COUNT, K_UINT);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_REFERENCE_COUNT, K_COUNT);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_CONTEXT, K_HANDLE);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_ASSOCIATED_MEMOBJECT, K_HANDLE);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_OFFSET, K_SIZE);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_USES_SVM_POINTER, K_UINT);
    INFO(clGetMemObjectInfo, label, m, CL_MEM_PROPERTIES, K_WORDS);
}

static void image_info(const char *label, cl_mem m)
{
    mem_info(label, m);
    INFO(clGetImageInfo, label, m, CL_IMAGE_FORMAT, K_WORDS);
    INFO(clGetImageInfo, label, m, CL_IMAGE_ELEMENT_SIZE, K_SIZE);
    INFO(clGetImageInfo, label, m, CL_IMAGE_ROW_PITCH, K_SIZE);
    INFO(clGetImageInfo, label, m, CL_IMAGE_SLICE_PITCH, K_SIZE);
    INFO(clGetImageInfo, label, m, CL_IMAGE_WIDTH, K_SIZE);
    INFO(clGetImageInfo, label, m, CL_IMAGE_HEIGHT, K_SIZE);
    INFO(clGetImageInfo, label, m, CL_IMAGE_DEPTH, K_SIZE);
    INFO(clGetImageInfo, label, m, CL_IMAGE_ARRAY_SIZE, K_SIZE);
    INFO(clGetImageInfo, label, m, CL_IMAGE_BUFFER, K_HANDLE);
    INFO(clGetImageInfo, label, m, CL_IMAGE_NUM_MIP_LEVELS, K_UINT);
    INFO(clGetImageInfo, label, m, CL_IMAGE_NUM_SAMPLES, K_UINT);
}

static void sampler_info(const char *label, cl_sampler s)
{
    INFO(clGetSamplerInfo, label, s, CL_SAMPLER_REFERENCE_COUNT, K_COUNT);
    INFO(clGetSamplerInfo, label, s, CL_SAMPLER_CONTEXT, K_HANDLE);
    INFO(clGetSamplerInfo, label, s, CL_SAMPLER_NORMALIZED_COORDS, K_UINT);
    INFO(clGetSamplerInfo, label, s, CL_SAMPLER_ADDRESSING_MODE, K_UINT);
    INFO(clGetSamplerInfo, label, s, CL_SAMPLER_FILTER_MODE, K_UINT);
    INFO(clGetSamplerInfo, label, s, CL_SAMPLER_PROPERTIES, K_WORDS);
}

static cl_device_id the_device;

static void program_info(const char *label, cl_program p)
{
    INFO(clGetProgramInfo, label, p, CL_PROGRAM_REFERENCE_COUNT, K_COUNT);
    INFO(clGetProgramInfo, label, p, CL_PROGRAM_CONTEXT, K_HANDLE);
    INFO(clGetProgramInfo, label, p, CL_PROGRAM_NUM_DEVICES, K_UINT);
    INFO(clGetProgramInfo, label, p, CL_PROGRAM_DEVICES, K_WORDS);
    INFO(clGetProgramInfo, label, p, CL_PROGRAM_SOURCE, K_STRING);
    INFO(clGetProgramInfo, label, p, CL_PROGRAM_BINARY_SIZES, K_SIZEONLY);
    INFO(clGetProgramInfo, label, p, CL_PROGRAM_NUM_KERNELS, K_SIZE);
    INFO(clGetProgramInfo, label, p, CL_PROGRAM_KERNEL_NAMES, K_STRING);
    INFO(clGetProgramInfo, label, p, CL_PROGRAM_IL, K_SIZEONLY);
#define BUILD_INFO(obj, param, size, value, ret) clGetProgramBuildInfo(obj, the_device, param, size, value, ret)
    INFO(BUILD_INFO, label, p, CL_PROGRAM_BUILD_STATUS, K_UINT);
    INFO(BUILD_INFO, label, p, CL_PROGRAM_BUILD_OPTIONS, K_STRING);
    INFO(BUILD_INFO, label, p, CL_PROGRAM_BINARY_TYPE, K_UINT);
}

static void kernel_info(const char *label, cl_kernel k)
{
    INFO(clGetKernelInfo, label, k, CL_KERNEL_FUNCTION_NAME, K_STRING);
    INFO(clGetKernelInfo, label, k, CL_KERNEL_NUM_ARGS, K_UINT);
    INFO(clGetKernelInfo, label, k, CL_KERNEL_REFERENCE_COUNT, K_COUNT);
    INFO(clGetKernelInfo, label, k, CL_KERNEL_CONTEXT, K_HANDLE);
    INFO(clGetKernelInfo, label, k, CL_KERNEL_PROGRAM, K_HANDLE);
    INFO(clGetKernelInfo, label, k, CL_KERNEL_ATTRIBUTES, K_STRING);
#define ARG_INFO(obj, param, size, value, ret) clGetKernelArgInfo(obj, 0, param, size, value, ret)
    INFO(ARG_INFO, label, k, CL_KERNEL_ARG_ADDRESS_QUALIFIER, K_UINT);
    INFO(ARG_INFO, label, k, CL_KERNEL_ARG_TYPE_NAME, K_STRING);
    INFO(ARG_INFO, label, k, CL_KERNEL_ARG_NAME, K_STRING);
#define WG_INFO(obj, param, size, value, ret) clGetKernelWorkGroupInfo(obj, the_device, param, size, value, ret)
    INFO(WG_INFO, label, k, CL_KERNEL_WORK_GROUP_SIZE, K_SIZE);
    INFO(WG_INFO, label, k, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, K_WORDS);
    INFO(WG_INFO, label, k, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, K_SIZE);
}

/* Every way a queue is made: the 1.x bitfield and the 2.x+ property list. */
typedef struct {
    const char *name;
    int with_properties; /* clCreateCommandQueueWithProperties */
    cl_command_queue_properties bits;
    const cl_queue_properties *list;
} queue_way_t;

static const cl_queue_properties list_empty[] = {0};
static const cl_queue_properties list_zero[] = {CL_QUEUE_PROPERTIES, 0, 0};
static const cl_queue_properties list_prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
static const cl_queue_properties list_ooo[] = {CL_QUEUE_PROPERTIES,
                                                CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
static const cl_queue_properties list_both[] = {
    CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE, 0};

static const queue_way_t queue_ways[] = {
    {"q1_zero", 0, 0, NULL},
    {"q1_prof", 0, CL_QUEUE_PROFILING_ENABLE, NULL},
    {"q1_ooo", 0, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, NULL},
    {"q2_null", 1, 0, NULL},
    {"q2_empty", 1, 0, list_empty},
    {"q2_zero", 1, 0, list_zero},
    {"q2_prof", 1, 0, list_prof},
    {"q2_ooo", 1, 0, list_ooo},
    {"q2_ooo_prof", 1, 0, list_both},
};

static cl_command_queue make_queue(cl_context ctx, const queue_way_t *w)
{
    cl_int err;
    cl_command_queue q = w->with_properties
                             ? clCreateCommandQueueWithProperties(ctx, the_device, w->list, &err)
                             : clCreateCommandQueue(ctx, the_device, w->bits, &err);
    CHECK(err);
    name_handle(q, w->name);
    return q;
}

/* Commands on a queue, with and without the program's own events; every
 * value read after clFinish (while commands run, counts may differ bare). */
static void queue_commands(cl_context ctx, cl_command_queue q, cl_kernel k, const char *qname)
{
    float data[64] = {0};
    cl_mem buf = ocl_buffer(ctx, CL_MEM_READ_WRITE, sizeof data);
    char label[40];
    snprintf(label, sizeof label, "%s.buf", qname);
    name_handle(buf, label);
    float f = 2.0f;
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(k, 1, sizeof f, &f));
    size_t global = 64;
    cl_event ev_write, ev_kernel, ev_read, ev_marker, ev_barrier;
    CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, sizeof data, data, 0, NULL, &ev_write));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 1, &ev_write, &ev_kernel));
    CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof data, data, 1, &ev_kernel, &ev_read));
    CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev_marker));
    CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, &ev_barrier));
    CHECK(clFinish(q));
    const struct {
        const char *what;
        cl_event e;
    } events[] = {{"write", ev_write}, {"kernel", ev_kernel}, {"read", ev_read},
                  {"marker", ev_marker}, {"barrier", ev_barrier}};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        snprintf(label, sizeof label, "%s.ev_%s", qname, events[i].what);
        event_info(label, events[i].e);
    }
    CHECK(clRetainEvent(ev_kernel));
    snprintf(label, sizeof label, "%s.ev_kernel_retained", qname);
    INFO(clGetEventInfo, label, ev_kernel, CL_EVENT_REFERENCE_COUNT, K_COUNT);
    CHECK(clReleaseEvent(ev_kernel));
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        CHECK(clReleaseEvent(events[i].e));
    snprintf(label, sizeof label, "%s.buf", qname);
    mem_info(label, buf);
    queue_info(qname, q);
    CHECK(clReleaseMemObject(buf));
}

static void queues(cl_context ctx, cl_kernel k)
{
    for (size_t i = 0; i < sizeof queue_ways / sizeof queue_ways[0]; i++) {
        cl_command_queue q = make_queue(ctx, &queue_ways[i]);
        queue_info(queue_ways[i].name, q);
        queue_commands(ctx, q, k, queue_ways[i].name);
        CHECK(clRetainCommandQueue(q));
        INFO(clGetCommandQueueInfo, queue_ways[i].name, q, CL_QUEUE_REFERENCE_COUNT, K_COUNT);
        CHECK(clReleaseCommandQueue(q));
        CHECK(clReleaseCommandQueue(q));
    }
}

static void user_events(cl_context ctx)
{
    cl_int err;
    cl_event u = clCreateUserEvent(ctx, &err);
    CHECK(err);
    name_handle(u, "user");
    event_info("user.new", u);
    CHECK(clSetUserEventStatus(u, CL_COMPLETE));
    event_info("user.complete", u);
    CHECK(clReleaseEvent(u));
}

static void buffers(cl_context ctx)
{
    cl_int err;
    static float host[256];
    const cl_mem_properties empty[] = {0};
    cl_mem b1 = ocl_buffer(ctx, CL_MEM_READ_ONLY, 1024);
    name_handle(b1, "buf_1x");
    mem_info("buf_1x", b1);
    cl_mem b2 = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, sizeof host, host, &err);
    CHECK(err);
    name_handle(b2, "buf_host");
    mem_info("buf_host", b2);
    cl_mem b3 = clCreateBufferWithProperties(ctx, NULL, CL_MEM_READ_WRITE, 512, NULL, &err);
    printf("clCreateBufferWithProperties(NULL) err=%d\n", err);
    if (b3 != NULL) {
        name_handle(b3, "buf_props_null");
        mem_info("buf_props_null", b3);
    }
    cl_mem b4 = clCreateBufferWithProperties(ctx, empty, CL_MEM_READ_WRITE, 512, NULL, &err);
    printf("clCreateBufferWithProperties({0}) err=%d\n", err);
    if (b4 != NULL) {
        name_handle(b4, "buf_props_empty");
        mem_info("buf_props_empty", b4);
    }
    cl_buffer_region region = {256, 256};
    cl_mem sub = clCreateSubBuffer(b1, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CHECK(err);
    name_handle(sub, "sub");
    mem_info("sub", sub);
    mem_info("buf_1x.with_sub", b1);
    CHECK(clRetainMemObject(b1));
    INFO(clGetMemObjectInfo, "buf_1x.retained", b1, CL_MEM_REFERENCE_COUNT, K_COUNT);
    CHECK(clReleaseMemObject(b1));
    CHECK(clReleaseMemObject(sub));
    CHECK(clReleaseMemObject(b1));
    CHECK(clReleaseMemObject(b2));
    if (b3 != NULL)
        CHECK(clReleaseMemObject(b3));
    if (b4 != NULL)
        CHECK(clReleaseMemObject(b4));
    cl_mem pipe = clCreatePipe(ctx, CL_MEM_READ_WRITE, 4, 16, NULL, &err);
    printf("clCreatePipe err=%d\n", err);
    if (pipe != NULL) {
        name_handle(pipe, "pipe");
        mem_info("pipe", pipe);
        INFO(clGetPipeInfo, "pipe", pipe, CL_PIPE_PACKET_SIZE, K_UINT);
        INFO(clGetPipeInfo, "pipe", pipe, CL_PIPE_MAX_PACKETS, K_UINT);
        INFO(clGetPipeInfo, "pipe", pipe, CL_PIPE_PROPERTIES, K_WORDS);
        CHECK(clReleaseMemObject(pipe));
    }
}

static void images(cl_context ctx)
{
    cl_int err;
    cl_image_format fmt = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc = ocl_image2d_desc(16, 8);
    const cl_mem_properties empty[] = {0};
    cl_mem i1 = clCreateImage(ctx, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err);
    CHECK(err);
    name_handle(i1, "image");
    image_info("image", i1);
    cl_mem i2 = clCreateImage2D(ctx, CL_MEM_READ_WRITE, &fmt, 8, 8, 0, NULL, &err);
    CHECK(err);
    name_handle(i2, "image2d_1x");
    image_info("image2d_1x", i2);
    cl_mem i3 = clCreateImageWithProperties(ctx, NULL, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err);
    printf("clCreateImageWithProperties(NULL) err=%d\n", err);
    if (i3 != NULL) {
        name_handle(i3, "image_props_null");
        image_info("image_props_null", i3);
        CHECK(clReleaseMemObject(i3));
    }
    cl_mem i4 = clCreateImageWithProperties(ctx, empty, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err);
    printf("clCreateImageWithProperties({0}) err=%d\n", err);
    if (i4 != NULL) {
        name_handle(i4, "image_props_empty");
        image_info("image_props_empty", i4);
        CHECK(clReleaseMemObject(i4));
    }
    CHECK(clReleaseMemObject(i1));
    CHECK(clReleaseMemObject(i2));
}

static void samplers(cl_context ctx)
{
    cl_int err;
    const cl_sampler_properties empty[] = {0};
    const cl_sampler_properties full[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE,
                                          CL_SAMPLER_ADDRESSING_MODE, CL_ADDRESS_CLAMP,
                                          CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, 0};
    cl_sampler s1 = clCreateSampler(ctx, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_NEAREST, &err);
    CHECK(err);
    name_handle(s1, "sampler_1x");
    sampler_info("sampler_1x", s1);
    const struct {
        const char *name;
        const cl_sampler_properties *list;
    } ways[] = {{"sampler_null", NULL}, {"sampler_empty", empty}, {"sampler_full", full}};
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        cl_sampler s = clCreateSamplerWithProperties(ctx, ways[i].list, &err);
        printf("clCreateSamplerWithProperties(%s) err=%d\n", ways[i].name, err);
        if (s == NULL)
            continue; /* PoCL 3.1 refuses NULL and empty lists */
        name_handle(s, ways[i].name);
        sampler_info(ways[i].name, s);
        CHECK(clReleaseSampler(s));
    }
    CHECK(clRetainSampler(s1));
    INFO(clGetSamplerInfo, "sampler_1x.retained", s1, CL_SAMPLER_REFERENCE_COUNT, K_COUNT);
    CHECK(clReleaseSampler(s1));
    CHECK(clReleaseSampler(s1));
}

static cl_context contexts(cl_platform_id platform)
{
    cl_int err;
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_context c1 = ocl_context(the_device);
    name_handle(c1, "ctx_null");
    context_info("ctx_null", c1);
    cl_context c2 = clCreateContext(props, 1, &the_device, NULL, NULL, &err);
    CHECK(err);
    name_handle(c2, "ctx_props");
    context_info("ctx_props", c2);
    cl_context c3 = clCreateContextFromType(props, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
    CHECK(err);
    name_handle(c3, "ctx_type");
    context_info("ctx_type", c3);
    CHECK(clReleaseContext(c2));
    CHECK(clReleaseContext(c3));
    return c1;
}

int main(void)
{
    cl_platform_id platform;
    the_device = ocl_first_device(&platform);
    name_handle(platform, "platform");
    name_handle(the_device, "device");
    INFO(clGetDeviceInfo, "device", the_device, CL_DEVICE_REFERENCE_COUNT, K_COUNT);
    INFO(clGetDeviceInfo, "device", the_device, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, K_ULONG);
    INFO(clGetDeviceInfo, "device", the_device, CL_DEVICE_PLATFORM, K_HANDLE);

    cl_context ctx = contexts(platform);
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_source, NULL, &err);
    CHECK(err);
    name_handle(prog, "program");
    program_info("program.source", prog);
    CHECK(clBuildProgram(prog, 1, &the_device, "-cl-kernel-arg-info", NULL, NULL));
    program_info("program.built", prog);
    cl_kernel k = ocl_kernel(prog, "scale");
    name_handle(k, "kernel");
    kernel_info("kernel", k);
    cl_kernel all[2];
    cl_uint num = 0;
    CHECK(clCreateKernelsInProgram(prog, 2, all, &num));
    name_handle(all[0], "kernels_in_program.0");
    name_handle(all[1], "kernels_in_program.1");
    kernel_info("kernels_in_program.0", all[0]);
    kernel_info("kernels_in_program.1", all[1]);
    cl_kernel clone = clCloneKernel(k, &err);
    CHECK(err);
    name_handle(clone, "clone");
    kernel_info("clone", clone);
    program_info("program.with_kernels", prog);

    queues(ctx, k);
    user_events(ctx);
    buffers(ctx);
    images(ctx);
    samplers(ctx);

    kernel_info("kernel.after", k);
    program_info("program.after", prog);
    context_info("ctx_null.after", ctx);
    CHECK(clReleaseKernel(clone));
    CHECK(clReleaseKernel(all[0]));
    CHECK(clReleaseKernel(all[1]));
    CHECK(clRetainKernel(k));
    INFO(clGetKernelInfo, "kernel.retained", k, CL_KERNEL_REFERENCE_COUNT, K_COUNT);
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseKernel(k));
    CHECK(clRetainProgram(prog));
    INFO(clGetProgramInfo, "program.retained", prog, CL_PROGRAM_REFERENCE_COUNT, K_COUNT);
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseProgram(prog));
    CHECK(clRetainContext(ctx));
    INFO(clGetContextInfo, "ctx_null.retained", ctx, CL_CONTEXT_REFERENCE_COUNT, K_COUNT);
    CHECK(clReleaseContext(ctx));
    CHECK(clReleaseContext(ctx));
    printf("done\n");
    return 0;
}
