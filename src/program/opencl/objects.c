/* SPDX-License-Identifier: MIT */
/* Hand-written calls into the next layer for the entries that need more than
 * tracing: queues (profiling turned on behind the program's back, and hidden
 * again), events (UPTI's references hidden), synchronisation points (device
 * records reaped), code objects and memory allocations.
 *
 * Each is called by the generated wrapper in place of uocl_next.<entry>,
 * whether or not the API call itself is traced.
 */
#include "app_refs.h"
#include "opencl_impl.h"
#include "subscriber_hooks.h"

#include <upti/names.h>

#include <stdlib.h>
#include <string.h>

/* --- queues --- */

static void remember_queue(cl_command_queue q, cl_context context, cl_device_id device,
                           cl_command_queue_properties app, int forced, uocl_app_list_t app_list)
{
    uocl_queue_info_t info;
    memset(&info, 0, sizeof info);
    info.context = context;
    info.device = device;
    info.dev = uocl_device_find(device);
    info.app_properties = app;
    info.forced_profiling = forced;
    info.app_list = forced ? (int)app_list : UOCL_LIST_AS_MADE;
    uocl_queue_put(q, &info);
}

cl_command_queue uocl_impl_clCreateCommandQueue(cl_context context, cl_device_id device,
                                                cl_command_queue_properties properties,
                                                cl_int *errcode_ret)
{
    cl_command_queue q = NULL;
    int forced = uocl_tools_present && !(properties & CL_QUEUE_PROFILING_ENABLE);
    if (forced) {
        q = uocl_next.clCreateCommandQueue(context, device, properties | CL_QUEUE_PROFILING_ENABLE,
                                           errcode_ret);
        if (q == NULL)
            forced = 0; /* the device refuses profiling: give the program what it asked for */
    }
    if (q == NULL)
        q = uocl_next.clCreateCommandQueue(context, device, properties, errcode_ret);
    if (q != NULL && uocl_tools_present)
        remember_queue(q, context, device, properties, forced, UOCL_LIST_AS_MADE);
    return q;
}

/* The queue properties come as a property list: profiling is turned on in a copy of it. */
cl_command_queue uocl_impl_clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                                              const cl_queue_properties *properties,
                                                              cl_int *errcode_ret)
{
    cl_command_queue_properties app = 0;
    size_t n = 0;
    if (properties != NULL) {
        while (properties[n] != 0) {
            if (properties[n] == CL_QUEUE_PROPERTIES)
                app = (cl_command_queue_properties)properties[n + 1];
            n += 2;
        }
    }
    cl_command_queue q = NULL;
    uocl_app_list_t app_list = UOCL_LIST_AS_MADE;
    int forced = uocl_tools_present && !(app & CL_QUEUE_PROFILING_ENABLE) && n < 62;
    if (forced) {
        /* A copy of the list with profiling on; the program's list is untouched. */
        cl_queue_properties copy[64];
        int found = 0;
        for (size_t i = 0; i < n; i += 2) {
            copy[i] = properties[i];
            copy[i + 1] = properties[i + 1];
            if (properties[i] == CL_QUEUE_PROPERTIES) {
                copy[i + 1] |= CL_QUEUE_PROFILING_ENABLE;
                found = 1;
            }
        }
        app_list = found ? UOCL_LIST_CHANGED : UOCL_LIST_ADDED;
        if (properties == NULL)
            app_list = UOCL_LIST_NULL;
        if (!found) {
            copy[n] = CL_QUEUE_PROPERTIES;
            copy[n + 1] = CL_QUEUE_PROFILING_ENABLE;
            n += 2;
        }
        copy[n] = 0;
        q = uocl_next.clCreateCommandQueueWithProperties(context, device, copy, errcode_ret);
        if (q == NULL)
            forced = 0;
    }
    if (q == NULL)
        q = uocl_next.clCreateCommandQueueWithProperties(context, device, properties, errcode_ret);
    if (q != NULL && uocl_tools_present)
        remember_queue(q, context, device, app, forced, app_list);
    return q;
}

#ifdef CL_QUEUE_PROPERTIES_ARRAY
/* CL_QUEUE_PROPERTIES_ARRAY of a queue UPTI turned profiling on for: the
 * runtime's list (which it keeps as it was given: UPTI's copy) with UPTI's
 * change undone, answered as the runtime answers (the size the list takes in
 * *param_value_size_ret, CL_INVALID_VALUE into too small a buffer). */
static cl_int app_properties_array(cl_command_queue command_queue, const uocl_queue_info_t *qi,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret)
{
    cl_queue_properties list[64];
    size_t bytes = 0;
    cl_int r = uocl_next.clGetCommandQueueInfo(command_queue, CL_QUEUE_PROPERTIES_ARRAY, sizeof list,
                                               list, &bytes);
    if (r != CL_SUCCESS)
        return r;
    size_t n = bytes / sizeof *list, out = 0;
    if (qi->app_list != UOCL_LIST_NULL) {
        for (size_t i = 0; i < n; i++) {
            if (list[i] == 0 || i + 1 >= n) { /* the terminator */
                list[out++] = list[i];
                break;
            }
            if (list[i] == CL_QUEUE_PROPERTIES && qi->app_list == UOCL_LIST_ADDED) {
                i++; /* the pair UPTI appended */
                continue;
            }
            list[out++] = list[i];
            list[out++] = list[i] == CL_QUEUE_PROPERTIES ? qi->app_properties : list[i + 1];
            i++;
        }
    }
    bytes = out * sizeof *list;
    if (param_value_size_ret != NULL)
        *param_value_size_ret = bytes;
    if (param_value == NULL)
        return CL_SUCCESS;
    if (param_value_size < bytes)
        return CL_INVALID_VALUE;
    memcpy(param_value, list, bytes);
    return CL_SUCCESS;
}
#endif

cl_int uocl_impl_clGetCommandQueueInfo(cl_command_queue command_queue, cl_command_queue_info param_name,
                                       size_t param_value_size, void *param_value,
                                       size_t *param_value_size_ret)
{
    uocl_queue_info_t qi;
    int forced = uocl_tools_present && uocl_queue_get(command_queue, &qi) && qi.forced_profiling;
#ifdef CL_QUEUE_PROPERTIES_ARRAY
    if (forced && param_name == CL_QUEUE_PROPERTIES_ARRAY && qi.app_list != UOCL_LIST_AS_MADE)
        return app_properties_array(command_queue, &qi, param_value_size, param_value,
                                    param_value_size_ret);
#endif
    cl_int r = uocl_next.clGetCommandQueueInfo(command_queue, param_name, param_value_size, param_value,
                                               param_value_size_ret);
    if (r != CL_SUCCESS || param_value == NULL || !forced)
        return r;
    /* Answer what the program asked for, not what UPTI made of it. */
    if (param_name == CL_QUEUE_PROPERTIES && param_value_size >= sizeof(cl_command_queue_properties))
        *(cl_command_queue_properties *)param_value = qi.app_properties;
    return r;
}

cl_int uocl_impl_clReleaseCommandQueue(cl_command_queue command_queue)
{
    if (uocl_tools_present)
        uocl_commands_sync(command_queue);
    return uocl_next.clReleaseCommandQueue(command_queue);
}

cl_int uocl_impl_clFinish(cl_command_queue command_queue)
{
    cl_int r = uocl_next.clFinish(command_queue);
    if (uocl_tools_present)
        uocl_commands_sync(command_queue);
    return r;
}

cl_int uocl_impl_clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
    cl_int r = uocl_next.clWaitForEvents(num_events, event_list);
    if (uocl_tools_present)
        uocl_commands_sync(NULL);
    return r;
}

/* --- events --- */

cl_int uocl_impl_clGetEventInfo(cl_event event, cl_event_info param_name, size_t param_value_size,
                                void *param_value, size_t *param_value_size_ret)
{
    cl_int r = uocl_next.clGetEventInfo(event, param_name, param_value_size, param_value,
                                        param_value_size_ret);
    if (r == CL_SUCCESS && param_name == CL_EVENT_REFERENCE_COUNT && param_value != NULL &&
        uocl_tools_present) {
        /* Hide the references UPTI holds until it has read the event's times. */
        cl_uint holds = uocl_commands_event_holds(event);
        cl_uint *count = param_value;
        if (holds < *count)
            *count -= holds;
    }
    return r;
}

cl_int uocl_impl_clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name,
                                         size_t param_value_size, void *param_value,
                                         size_t *param_value_size_ret)
{
    if (uocl_tools_present) {
        /* Events of a queue the program made without profiling keep answering so. */
        cl_command_queue q = NULL;
        uocl_queue_info_t qi;
        if (uocl_next.clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS &&
            q != NULL && uocl_queue_get(q, &qi) && qi.forced_profiling)
            return CL_PROFILING_INFO_NOT_AVAILABLE;
    }
    return uocl_next.clGetEventProfilingInfo(event, param_name, param_value_size, param_value,
                                             param_value_size_ret);
}

/* --- code objects --- */

static upti_timestamp_t now(void)
{
    upti_timestamp_t t = 0;
    upti_get_timestamp(&t);
    return t;
}

static void emit_code_object(uint32_t op, upti_callback_phase_t phase, cl_context context,
                             cl_program program, cl_kernel kernel, const char *name)
{
    upti_buffer_tracing_code_object_record_t r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r; /* the prefix's other fields are filled by upti_runtime_emit */
    r.timestamp = now();
    r.phase = phase;
    r.runtime_context = (uint64_t)(uintptr_t)context;
    r.code_object_id = (uint64_t)(uintptr_t)program;
    r.kernel_id = (uint64_t)(uintptr_t)kernel;
    r.name = name;
    uocl_sub_emitting_code_object = 1;
    upti_layer_emit(UPTI_TRACING_KIND_CODE_OBJECT, op, phase, NULL, &r,
                    offsetof(upti_buffer_tracing_code_object_record_t, name), NULL);
    uocl_sub_emitting_code_object = 0;
}

static void program_loaded(cl_program program)
{
    if (program == NULL || upti_runtime_plan(uocl_code_plans, UPTI_CODE_OBJECT_LOAD) == NULL)
        return;
    cl_context context = NULL;
    uocl_next.clGetProgramInfo(program, CL_PROGRAM_CONTEXT, sizeof context, &context, NULL);
    size_t size = 0;
    char *names = NULL;
    if (uocl_next.clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size) == CL_SUCCESS &&
        size > 0 && (names = calloc(1, size + 1)) != NULL)
        uocl_next.clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, size, names, NULL);
    emit_code_object(UPTI_CODE_OBJECT_LOAD, UPTI_CALLBACK_PHASE_LOAD, context, program, NULL,
                     names != NULL ? names : "");
    free(names);
}

/* Counts the application's reference to a new program of context (see app_refs.c). */
static cl_program program_created(cl_context context, cl_program program)
{
    if (program != NULL && uocl_tools_present) {
        uocl_appref_info_t info;
        memset(&info, 0, sizeof info);
        info.context = context;
        uocl_appref_created(program, &info);
    }
    return program;
}

cl_program uocl_impl_clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                               const cl_device_id *device_list, const size_t *lengths,
                                               const unsigned char **binaries, cl_int *binary_status,
                                               cl_int *errcode_ret)
{
    /* A program from a binary is still built before use: LOAD is reported then. */
    return program_created(context, uocl_next.clCreateProgramWithBinary(context, num_devices, device_list, lengths,
                                                               binaries, binary_status, errcode_ret));
}

cl_program uocl_impl_clCreateProgramWithSource(cl_context context, cl_uint count, const char **strings,
                                               const size_t *lengths, cl_int *errcode_ret)
{
    return program_created(context, uocl_next.clCreateProgramWithSource(context, count, strings, lengths, errcode_ret));
}

cl_program uocl_impl_clCreateProgramWithIL(cl_context context, const void *il, size_t length,
                                           cl_int *errcode_ret)
{
    return program_created(context, uocl_next.clCreateProgramWithIL(context, il, length, errcode_ret));
}

cl_program uocl_impl_clCreateProgramWithBuiltInKernels(cl_context context, cl_uint num_devices,
                                                       const cl_device_id *device_list,
                                                       const char *kernel_names, cl_int *errcode_ret)
{
    return program_created(context, uocl_next.clCreateProgramWithBuiltInKernels(context, num_devices, device_list,
                                                                       kernel_names, errcode_ret));
}

cl_int uocl_impl_clRetainProgram(cl_program program)
{
    return uocl_appref_retained(uocl_next.clRetainProgram(program), program);
}

cl_int uocl_impl_clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
                                const char *options, upti_cl_program_notify_fn pfn_notify,
                                void *user_data)
{
    cl_int r = uocl_next.clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);
    if (r == CL_SUCCESS && pfn_notify == NULL)
        program_loaded(program);
    return r;
}

cl_program uocl_impl_clLinkProgram(cl_context context, cl_uint num_devices, const cl_device_id *device_list,
                                   const char *options, cl_uint num_input_programs,
                                   const cl_program *input_programs, upti_cl_program_notify_fn pfn_notify,
                                   void *user_data, cl_int *errcode_ret)
{
    cl_program p = uocl_next.clLinkProgram(context, num_devices, device_list, options, num_input_programs,
                                           input_programs, pfn_notify, user_data, errcode_ret);
    program_created(context, p);
    if (p != NULL && pfn_notify == NULL)
        program_loaded(p);
    return p;
}

/*
 * Releases: the application's count, not the runtime's (PoCL's kernel
 * commands keep kernels, and kernels their program, alive after clFinish),
 * and what is reported was captured at creation (see app_refs.c). An object
 * made before tracing is unknown: no UNLOAD or FREE for it.
 */
cl_int uocl_impl_clReleaseProgram(cl_program program)
{
    uocl_appref_info_t info;
    int unload = uocl_appref_released(program, &info) == 1 &&
                 upti_runtime_plan(uocl_code_plans, UPTI_CODE_OBJECT_LOAD) != NULL;
    cl_int r = uocl_next.clReleaseProgram(program);
    if (r == CL_SUCCESS && unload)
        emit_code_object(UPTI_CODE_OBJECT_LOAD, UPTI_CALLBACK_PHASE_UNLOAD, info.context, program, NULL, "");
    return r;
}

static void kernel_created(cl_kernel k)
{
    if (k == NULL || !uocl_tools_present)
        return;
    char name[256] = "";
    uocl_appref_info_t info;
    memset(&info, 0, sizeof info);
    uocl_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL);
    uocl_next.clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof info.program, &info.program, NULL);
    uocl_next.clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof info.context, &info.context, NULL);
    info.name = uocl_intern(name);
    uocl_appref_created(k, &info);
    uocl_kernel_put(k, info.program, name);
    if (upti_runtime_plan(uocl_code_plans, UPTI_CODE_OBJECT_KERNEL_SYMBOL) == NULL)
        return;
    emit_code_object(UPTI_CODE_OBJECT_KERNEL_SYMBOL, UPTI_CALLBACK_PHASE_LOAD, info.context, info.program, k,
                     info.name);
}

cl_kernel uocl_impl_clCreateKernel(cl_program program, const char *kernel_name, cl_int *errcode_ret)
{
    cl_kernel k = uocl_next.clCreateKernel(program, kernel_name, errcode_ret);
    kernel_created(k);
    return k;
}

cl_int uocl_impl_clCreateKernelsInProgram(cl_program program, cl_uint num_kernels, cl_kernel *kernels,
                                          cl_uint *num_kernels_ret)
{
    cl_int r = uocl_next.clCreateKernelsInProgram(program, num_kernels, kernels, num_kernels_ret);
    if (r == CL_SUCCESS && kernels != NULL)
        for (cl_uint i = 0; i < num_kernels; i++)
            kernel_created(kernels[i]);
    return r;
}

cl_kernel uocl_impl_clCloneKernel(cl_kernel source_kernel, cl_int *errcode_ret)
{
    cl_kernel k = uocl_next.clCloneKernel(source_kernel, errcode_ret);
    kernel_created(k);
    return k;
}

cl_int uocl_impl_clRetainKernel(cl_kernel kernel)
{
    return uocl_appref_retained(uocl_next.clRetainKernel(kernel), kernel);
}

cl_int uocl_impl_clReleaseKernel(cl_kernel kernel)
{
    uocl_appref_info_t info; /* see clReleaseProgram */
    int unload = uocl_appref_released(kernel, &info) == 1 &&
                 upti_runtime_plan(uocl_code_plans, UPTI_CODE_OBJECT_KERNEL_SYMBOL) != NULL;
    cl_int r = uocl_next.clReleaseKernel(kernel);
    if (r == CL_SUCCESS && unload)
        emit_code_object(UPTI_CODE_OBJECT_KERNEL_SYMBOL, UPTI_CALLBACK_PHASE_UNLOAD, info.context, info.program,
                         kernel, info.name);
    return r;
}

/* --- memory allocations --- */

/* The context's agent if it has exactly one device, else handle 0. */
static upti_agent_id_t context_agent(cl_context context)
{
    upti_agent_id_t none = {0};
    cl_uint n = 0;
    cl_device_id dev = NULL;
    if (uocl_next.clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL) != CL_SUCCESS ||
        n != 1 ||
        uocl_next.clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL) != CL_SUCCESS)
        return none;
    uocl_device_t *d = uocl_device_find(dev);
    return d != NULL ? d->agent : none;
}

static void emit_allocation(uint32_t op, const void *handle, const uocl_appref_info_t *info)
{
    upti_buffer_tracing_memory_allocation_record_t r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r; /* the prefix's other fields are filled by upti_runtime_emit */
    r.timestamp = now();
    r.agent_id = info->agent;
    r.runtime_context = (uint64_t)(uintptr_t)info->context;
    r.type = (upti_memory_allocation_type_t)info->type;
    r.handle = (uint64_t)(uintptr_t)handle;
    r.bytes = info->size;
    r.flags = info->flags;
    upti_runtime_emit(&(upti_runtime_record_t){.size = sizeof(upti_runtime_record_t),
                                               .kind = UPTI_TRACING_KIND_MEMORY_ALLOCATION,
                                               .operation = op, .record = &r});
}

static upti_memory_allocation_type_t mem_type(cl_mem mem)
{
    cl_mem_object_type t = 0;
    cl_mem parent = NULL;
    uocl_next.clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof t, &t, NULL);
    if (t == CL_MEM_OBJECT_BUFFER) {
        uocl_next.clGetMemObjectInfo(mem, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL);
        return parent != NULL ? UPTI_MEMORY_ALLOCATION_TYPE_SUB_BUFFER : UPTI_MEMORY_ALLOCATION_TYPE_BUFFER;
    }
    return t == CL_MEM_OBJECT_PIPE ? UPTI_MEMORY_ALLOCATION_TYPE_PIPE : UPTI_MEMORY_ALLOCATION_TYPE_IMAGE;
}

/* An allocation made while allocations are traced: remembered (for its FREE) and reported. */
static void allocated(const void *handle, uocl_appref_info_t *info)
{
    info->agent = context_agent(info->context);
    uocl_appref_created(handle, info);
    emit_allocation(UPTI_MEMORY_ALLOCATION_ALLOCATE, handle, info);
}

/* The application's last reference to an allocation is gone: FREE, if it was reported. */
static void freed(const void *handle, int last, const uocl_appref_info_t *info)
{
    if (last == 1 && upti_runtime_plan(uocl_alloc_plans, UPTI_MEMORY_ALLOCATION_FREE) != NULL)
        emit_allocation(UPTI_MEMORY_ALLOCATION_FREE, handle, info);
}

static cl_mem mem_created(cl_mem mem)
{
    if (mem == NULL || upti_runtime_plan(uocl_alloc_plans, UPTI_MEMORY_ALLOCATION_ALLOCATE) == NULL)
        return mem;
    size_t size = 0;
    cl_mem_flags flags = 0;
    uocl_appref_info_t info;
    memset(&info, 0, sizeof info);
    uocl_next.clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL);
    uocl_next.clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, NULL);
    uocl_next.clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof info.context, &info.context, NULL);
    info.size = size;
    info.flags = flags;
    info.type = mem_type(mem);
    allocated(mem, &info);
    return mem;
}

cl_mem uocl_impl_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                                cl_int *errcode_ret)
{
    return mem_created(uocl_next.clCreateBuffer(context, flags, size, host_ptr, errcode_ret));
}

cl_mem uocl_impl_clCreateBufferWithProperties(cl_context context, const cl_mem_properties *properties,
                                              cl_mem_flags flags, size_t size, void *host_ptr,
                                              cl_int *errcode_ret)
{
    return mem_created(
        uocl_next.clCreateBufferWithProperties(context, properties, flags, size, host_ptr, errcode_ret));
}

cl_mem uocl_impl_clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type buffer_create_type,
                                   const void *buffer_create_info, cl_int *errcode_ret)
{
    return mem_created(
        uocl_next.clCreateSubBuffer(buffer, flags, buffer_create_type, buffer_create_info, errcode_ret));
}

cl_mem uocl_impl_clCreateImage(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                               const cl_image_desc *image_desc, void *host_ptr, cl_int *errcode_ret)
{
    return mem_created(
        uocl_next.clCreateImage(context, flags, image_format, image_desc, host_ptr, errcode_ret));
}

cl_mem uocl_impl_clCreateImageWithProperties(cl_context context, const cl_mem_properties *properties,
                                             cl_mem_flags flags, const cl_image_format *image_format,
                                             const cl_image_desc *image_desc, void *host_ptr,
                                             cl_int *errcode_ret)
{
    return mem_created(uocl_next.clCreateImageWithProperties(context, properties, flags, image_format,
                                                             image_desc, host_ptr, errcode_ret));
}

cl_mem uocl_impl_clCreateImage2D(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                                 size_t image_width, size_t image_height, size_t image_row_pitch,
                                 void *host_ptr, cl_int *errcode_ret)
{
    return mem_created(uocl_next.clCreateImage2D(context, flags, image_format, image_width, image_height,
                                                 image_row_pitch, host_ptr, errcode_ret));
}

cl_mem uocl_impl_clCreateImage3D(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                                 size_t image_width, size_t image_height, size_t image_depth,
                                 size_t image_row_pitch, size_t image_slice_pitch, void *host_ptr,
                                 cl_int *errcode_ret)
{
    return mem_created(uocl_next.clCreateImage3D(context, flags, image_format, image_width, image_height,
                                                 image_depth, image_row_pitch, image_slice_pitch, host_ptr,
                                                 errcode_ret));
}

cl_mem uocl_impl_clCreatePipe(cl_context context, cl_mem_flags flags, cl_uint pipe_packet_size,
                              cl_uint pipe_max_packets, const cl_pipe_properties *properties,
                              cl_int *errcode_ret)
{
    return mem_created(uocl_next.clCreatePipe(context, flags, pipe_packet_size, pipe_max_packets, properties,
                                              errcode_ret));
}

cl_int uocl_impl_clRetainMemObject(cl_mem memobj)
{
    return uocl_appref_retained(uocl_next.clRetainMemObject(memobj), memobj);
}

/* Releases (clReleaseMemObject, clSVMFree, clEnqueueSVMFree) forget the
 * allocation before the runtime frees it: another thread may be handed the
 * same address at once, and its allocation must not be forgotten instead. */
cl_int uocl_impl_clReleaseMemObject(cl_mem memobj)
{
    uocl_appref_info_t info;
    int last = uocl_appref_released(memobj, &info);
    cl_int r = uocl_next.clReleaseMemObject(memobj);
    if (r == CL_SUCCESS)
        freed(memobj, last, &info);
    return r;
}

void *uocl_impl_clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size, unsigned int alignment)
{
    void *p = uocl_next.clSVMAlloc(context, flags, size, alignment);
    if (p != NULL && upti_runtime_plan(uocl_alloc_plans, UPTI_MEMORY_ALLOCATION_ALLOCATE) != NULL) {
        uocl_appref_info_t info = {.context = context, .type = UPTI_MEMORY_ALLOCATION_TYPE_SVM,
                                   .size = size, .flags = flags};
        allocated(p, &info);
    }
    return p;
}

void uocl_impl_clSVMFree(cl_context context, void *svm_pointer)
{
    uocl_appref_info_t info;
    int last = uocl_appref_released(svm_pointer, &info);
    uocl_next.clSVMFree(context, svm_pointer);
    freed(svm_pointer, last, &info);
}

cl_int uocl_impl_clEnqueueSVMFree(cl_command_queue command_queue, cl_uint num_svm_pointers,
                                  void **svm_pointers, upti_cl_svm_free_fn pfn_free_func, void *user_data,
                                  cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                                  cl_event *event)
{
    /* Any number of pointers: what each one's creation captured, in small steps. */
    enum { STEP = 32 };
    cl_uint n = svm_pointers != NULL ? num_svm_pointers : 0;
    uocl_appref_info_t step_info[STEP];
    int step_last[STEP];
    uocl_appref_info_t *info = n <= STEP ? step_info : calloc(n, sizeof *info);
    int *last = n <= STEP ? step_last : calloc(n, sizeof *last);
    if (info == NULL || last == NULL) { /* no memory: these FREEs are not reported */
        n = 0;
        if (info != step_info)
            free(info);
        if (last != step_last)
            free(last);
        info = step_info;
        last = step_last;
    }
    for (cl_uint i = 0; i < n; i++)
        last[i] = uocl_appref_released(svm_pointers[i], &info[i]);
    cl_int r = uocl_next.clEnqueueSVMFree(command_queue, num_svm_pointers, svm_pointers, pfn_free_func,
                                          user_data, num_events_in_wait_list, event_wait_list, event);
    for (cl_uint i = 0; i < n; i++) {
        if (r == CL_SUCCESS)
            freed(svm_pointers[i], last[i], &info[i]);
        else if (last[i] == 1) /* not freed after all: remembered again */
            uocl_appref_created(svm_pointers[i], &info[i]);
    }
    if (info != step_info)
        free(info);
    if (last != step_last)
        free(last);
    return r;
}

/* --- extension functions: pointers that would bypass the layers are wrapped --- */

void *uocl_impl_clGetExtensionFunctionAddress(const char *function_name)
{
    return uocl_extension_function(function_name, uocl_next.clGetExtensionFunctionAddress(function_name));
}

void *uocl_impl_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char *function_name)
{
    return uocl_extension_function(
        function_name, uocl_next.clGetExtensionFunctionAddressForPlatform(platform, function_name));
}
