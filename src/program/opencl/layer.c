/* SPDX-License-Identifier: MIT */
/* libupti-opencl: the OpenCL layer entry points and registration with UPTI.
 *
 * Tables:
 *   uocl_next        copy of the target dispatch the loader gave us (beneath us)
 *   uocl_registered  the wrappers; registered with UPTI, so tools may chain it
 *   g_exported       what clInitLayer returns: trampolines into uocl_registered
 * The loader copies the table a layer returns (ocl-icd 2.3 does), so a tool's
 * later change to uocl_registered is only seen through the trampolines.
 *
 * Registration is lazy: the loader calls clInitLayer inside its own
 * pthread_once, where any exported cl* call (a tool's initialize might make
 * one) would deadlock. The first REGISTER_FIRST entry an application calls
 * registers instead (see uocl_register_slow).
 */
#include "layer.h"
#include "subscriber_hooks.h"

#include <upti/names.h>
#include <upti/register.h>
#include <upti/registration.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UOCL_EXPORT __attribute__((visibility("default")))

#ifndef CL_LAYER_API_VERSION
#define CL_LAYER_API_VERSION 0x4240
#define CL_LAYER_NAME 0x4241
#define CL_LAYER_API_VERSION_100 100
typedef cl_uint cl_layer_info;
typedef cl_uint cl_layer_api_version;
typedef cl_properties cl_layer_properties;
#endif

struct _cl_icd_dispatch uocl_next;
struct _cl_icd_dispatch uocl_registered;
static struct _cl_icd_dispatch g_exported;

/* Before registration every plan is NULL: the wrappers call straight through. */
static const upti_operation_plan_t *const g_no_plans[512];
const upti_operation_plan_t *const *uocl_api_plans = g_no_plans;
const upti_operation_plan_t *const *uocl_kernel_plans = g_no_plans;
const upti_operation_plan_t *const *uocl_copy_plans = g_no_plans;
const upti_operation_plan_t *const *uocl_alloc_plans = g_no_plans;
const upti_operation_plan_t *const *uocl_code_plans = g_no_plans;
int uocl_tools_present;

_Atomic int uocl_reg_state;

#define UOCL_MAX_DEVICES 64
static uocl_device_t g_devices[UOCL_MAX_DEVICES];
static _Atomic unsigned g_num_devices;

uocl_device_t *uocl_device_find(cl_device_id id)
{
    unsigned n = atomic_load_explicit(&g_num_devices, memory_order_acquire);
    for (unsigned i = 0; i < n; i++)
        if (g_devices[i].id == id)
            return &g_devices[i];
    return NULL;
}

uocl_device_t *uocl_device_of_agent(upti_agent_id_t agent)
{
    unsigned n = atomic_load_explicit(&g_num_devices, memory_order_acquire);
    for (unsigned i = 0; agent.handle != 0 && i < n; i++)
        if (g_devices[i].agent.handle == agent.handle)
            return &g_devices[i];
    return NULL;
}

/* --- layer entry points --- */

UOCL_EXPORT cl_int clGetLayerInfo(cl_layer_info param_name, size_t param_value_size,
                                  void *param_value, size_t *param_value_size_ret)
{
    static const char name[] = "UPTI tracing layer";
    const void *src;
    size_t size;
    cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    switch (param_name) {
    case CL_LAYER_API_VERSION:
        src = &version;
        size = sizeof version;
        break;
    case CL_LAYER_NAME:
        src = name;
        size = sizeof name;
        break;
    default:
        return CL_INVALID_VALUE;
    }
    if (param_value != NULL) {
        if (param_value_size < size)
            return CL_INVALID_VALUE;
        memcpy(param_value, src, size);
    }
    if (param_value_size_ret != NULL)
        *param_value_size_ret = size;
    return CL_SUCCESS;
}

UOCL_EXPORT cl_int clInitLayer(cl_uint num_entries, const struct _cl_icd_dispatch *target_dispatch,
                               cl_uint *num_entries_ret,
                               const struct _cl_icd_dispatch **layer_dispatch_ret)
{
    if (target_dispatch == NULL || num_entries_ret == NULL || layer_dispatch_ret == NULL)
        return CL_INVALID_VALUE;
    /* Use what both tables have; entries the loader knows beyond ours stay NULL
       in our table, and the loader fills them from the target. */
    unsigned n = num_entries < uocl_num_entries ? num_entries : uocl_num_entries;
    memset(&uocl_next, 0, sizeof uocl_next);
    memcpy(&uocl_next, target_dispatch, n * sizeof(void *));
    uocl_fill_tables(&uocl_registered, &g_exported);
    *num_entries_ret = uocl_num_entries;
    *layer_dispatch_ret = &g_exported;
    return CL_SUCCESS;
}

UOCL_EXPORT cl_int clInitLayerWithProperties(cl_uint num_entries,
                                             const struct _cl_icd_dispatch *target_dispatch,
                                             cl_uint *num_entries_ret,
                                             const struct _cl_icd_dispatch **layer_dispatch_ret,
                                             const cl_layer_properties *properties)
{
    (void)properties; /* none defined yet */
    return clInitLayer(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret);
}

static _Atomic int g_drained;

static void drain_once(void)
{
    if (atomic_exchange(&g_drained, 1) == 0) {
        uocl_commands_drain_all();
        uocl_commands_stop_thread();
    }
}

/* The Khronos loader calls this at its own teardown; ocl-icd never does. */
UOCL_EXPORT cl_int clDeinitLayer(void)
{
    drain_once();
    return CL_SUCCESS;
}

/* --- extension functions --- */

/*
 * The loaders answer a dispatch-table extension (clGetKernelSubGroupInfoKHR,
 * clCreateSubDevicesEXT, clGetGLContextInfoKHR, ...) with their own exported
 * entry, which dispatches through the layers: such a pointer is returned as
 * is. A pointer from elsewhere for a name that is a dispatch slot (a vendor's
 * own function, or a loader that asks the vendor) would bypass the layers:
 * the program gets the slot's trampoline instead, which is traced and
 * honours tools that chain the slot. Other names (vendor extensions outside
 * the table, e.g. clSetContentSizeBufferPoCL) are returned unchanged.
 */
void *uocl_extension_function(const char *name, void *found)
{
    if (found == NULL || name == NULL || !uocl_tools_present)
        return found;
    Dl_info loader, mine;
    if (uocl_next.clGetPlatformIDs != NULL && dladdr((void *)uocl_next.clGetPlatformIDs, &loader) != 0 &&
        dladdr(found, &mine) != 0 && loader.dli_fbase == mine.dli_fbase)
        return found; /* the loader's own entry: through every layer already */
    for (uint32_t op = 1; op < UPTI_OPENCL_API_LAST && op <= uocl_num_entries; op++) {
        const char *slot = NULL;
        if (upti_get_tracing_operation_name(UPTI_TRACING_KIND_OPENCL_API, op, &slot) == UPTI_STATUS_SUCCESS &&
            slot != NULL && strcmp(slot, name) == 0)
            return ((void **)&g_exported)[op - 1];
    }
    return found;
}

/* --- registration --- */

static char *device_string(cl_device_id dev, cl_device_info what)
{
    size_t size = 0;
    if (uocl_next.clGetDeviceInfo(dev, what, 0, NULL, &size) != CL_SUCCESS || size == 0)
        return NULL;
    char *s = calloc(1, size + 1);
    if (s != NULL && uocl_next.clGetDeviceInfo(dev, what, size, s, NULL) != CL_SUCCESS) {
        free(s);
        s = NULL;
    }
    return s;
}

static int is_pocl(cl_platform_id platform)
{
    char name[128] = "";
    uocl_next.clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
    return strstr(name, "Portable Computing Language") != NULL;
}

/* Adds every device of every platform as an agent. */
static void add_agents(void)
{
    cl_uint np = 0;
    if (uocl_next.clGetPlatformIDs == NULL || uocl_next.clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS)
        return;
    cl_platform_id platforms[16];
    if (np > 16)
        np = 16;
    if (uocl_next.clGetPlatformIDs(np, platforms, NULL) != CL_SUCCESS)
        return;
    uint32_t node = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        cl_device_id devs[UOCL_MAX_DEVICES];
        if (uocl_next.clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, UOCL_MAX_DEVICES, devs, &nd) !=
            CL_SUCCESS)
            continue;
        int pocl = is_pocl(platforms[p]);
        for (cl_uint d = 0; d < nd && d < UOCL_MAX_DEVICES; d++) {
            unsigned idx = atomic_load(&g_num_devices);
            if (idx >= UOCL_MAX_DEVICES)
                return;
            cl_device_type type = 0;
            cl_uint cus = 0;
            cl_ulong mem = 0;
            uocl_next.clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            uocl_next.clGetDeviceInfo(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
            uocl_next.clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
            char *name = device_string(devs[d], CL_DEVICE_NAME);
            char *vendor = device_string(devs[d], CL_DEVICE_VENDOR);
            char *driver = device_string(devs[d], CL_DRIVER_VERSION);
            upti_agent_t agent;
            memset(&agent, 0, sizeof agent);
            agent.size = sizeof agent;
            agent.type = (type & CL_DEVICE_TYPE_GPU)   ? UPTI_AGENT_TYPE_GPU
                         : (type & CL_DEVICE_TYPE_CPU) ? UPTI_AGENT_TYPE_CPU
                                                       : UPTI_AGENT_TYPE_ACCELERATOR;
            agent.runtime = "opencl";
            agent.name = name != NULL ? name : "";
            agent.vendor = vendor != NULL ? vendor : "";
            agent.driver_version = driver != NULL ? driver : "";
            agent.compute_units = cus;
            agent.global_memory_bytes = mem;
            agent.runtime_handle = (uint64_t)(uintptr_t)devs[d];
            agent.node_id = node++;
            uocl_device_t *dev = &g_devices[idx];
            dev->id = devs[d];
            if (upti_runtime_add_agent(&agent, &dev->agent) != UPTI_STATUS_SUCCESS)
                dev->agent.handle = 0;
            /* PoCL stamps device times with CLOCK_MONOTONIC_RAW: UPTI's clock. */
            if (pocl) {
                dev->clock_offset = 0;
                atomic_store(&dev->clock_state, 1);
            }
            free(name);
            free(vendor);
            free(driver);
            atomic_store_explicit(&g_num_devices, idx + 1, memory_order_release);
        }
    }
}

static void load_plans(upti_tracing_kind_t kind, const upti_operation_plan_t *const **slot,
                       uint32_t needed)
{
    const upti_operation_plan_t *const *plans = NULL;
    uint32_t count = 0;
    if (upti_runtime_get_operation_plans(kind, &plans, &count) == UPTI_STATUS_SUCCESS &&
        plans != NULL && count >= needed)
        __atomic_store_n(slot, plans, __ATOMIC_RELEASE);
}

static void at_exit(void)
{
    drain_once();
}

/* No tool: nothing will ever be traced (plans stay NULL, queues are not
   profiled), so each trampoline jumps straight to the next layer: one load
   and one jump of ours per call instead of the wrapper's two loads, branch
   and second jump. Entries the target lacks keep their wrapper. */
static void bypass_wrappers(void)
{
    void **reg = (void **)&uocl_registered;
    void *const *next = (void *const *)&uocl_next;
    for (unsigned i = 0; i < uocl_num_entries; i++)
        if (next[i] != NULL)
            __atomic_store_n(&reg[i], next[i], __ATOMIC_RELEASE);
}

void uocl_register_slow(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&uocl_reg_state, &expected, 1)) {
        /* Registration in progress: on this thread (a tool's initialize calling
           OpenCL) or another one: go on untraced rather than wait. */
        return;
    }
    /* A program linked with libupti may subscribe at any time (callback.h).
       Looked up in the program's global scope: RTLD_DEFAULT from here would
       also search this layer's own dependencies (libupti.so itself). */
    void *global = dlopen(NULL, RTLD_LAZY);
    int subscriber = global != NULL && dlsym(global, "upti_callback_subscribe") != NULL;
    if (global != NULL)
        dlclose(global);
    static int agents_added; /* once, though a registration may be retried */
    if (!agents_added) {
        agents_added = 1;
        add_agents();
    }
    upti_register_library_id_t id;
    void *tables[1] = {&uocl_registered};
    upti_status_t st = upti_register_library_api_table("opencl", UPTI_OPENCL_TABLE_VERSION, tables, 1, &id);
    if (st == UPTI_STATUS_SUCCESS) {
        /* Registration ran discovery: UPTI knows whether any tool was configured. */
        int initialized = 0, tools = 0;
        upti_is_initialized(&initialized);
        upti_runtime_tools_present(&tools);
        if (initialized && (tools || subscriber)) {
            uocl_tools_present = 1;
            load_plans(UPTI_TRACING_KIND_OPENCL_API, &uocl_api_plans, UPTI_OPENCL_API_LAST);
            load_plans(UPTI_TRACING_KIND_KERNEL_DISPATCH, &uocl_kernel_plans, UPTI_KERNEL_DISPATCH_LAST);
            load_plans(UPTI_TRACING_KIND_MEMORY_COPY, &uocl_copy_plans, UPTI_MEMORY_COPY_LAST);
            load_plans(UPTI_TRACING_KIND_MEMORY_ALLOCATION, &uocl_alloc_plans, UPTI_MEMORY_ALLOCATION_LAST);
            load_plans(UPTI_TRACING_KIND_CODE_OBJECT, &uocl_code_plans, UPTI_CODE_OBJECT_LAST);
            uocl_sub_init(); /* subscribers (callback.h): subscriber_hooks.c */
            /* Registered after UPTI's own exit handler, so it runs before it:
               pending device records reach the buffers before they are flushed. */
            atexit(at_exit);
        }
    } else if (st != UPTI_STATUS_ERROR_DEADLOCK) {
        upti_runtime_warn("opencl: registration with UPTI failed; OpenCL is not traced");
    }
    if (st == UPTI_STATUS_ERROR_DEADLOCK) {
        /* Registering now would wait for tool discovery that waits for this
           thread (a tool's initialize calling OpenCL, or a thread it started):
           this call goes on untraced and a later one registers. */
        atomic_store_explicit(&uocl_reg_state, 0, memory_order_release);
        return;
    }
    if (!uocl_tools_present)
        bypass_wrappers();
    atomic_store_explicit(&uocl_reg_state, 2, memory_order_release);
}
