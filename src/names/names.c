/* SPDX-License-Identifier: MIT */
/* Names of statuses, kinds, operations and phases. */
#include "kind_info.h"

#include <upti/compat.h> /* upti_get_status_string, UPTI 0.1's name, defined here */

#include <stdbool.h>

static const char *const g_status_names[UPTI_STATUS_LAST] = {
#define NAME(x) [x] = #x
    NAME(UPTI_STATUS_SUCCESS),
    NAME(UPTI_STATUS_ERROR),
    NAME(UPTI_STATUS_ERROR_INVALID_ARGUMENT),
    NAME(UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND),
    NAME(UPTI_STATUS_ERROR_BUFFER_NOT_FOUND),
    NAME(UPTI_STATUS_ERROR_KIND_NOT_FOUND),
    NAME(UPTI_STATUS_ERROR_OPERATION_NOT_FOUND),
    NAME(UPTI_STATUS_ERROR_THREAD_NOT_FOUND),
    NAME(UPTI_STATUS_ERROR_AGENT_NOT_FOUND),
    NAME(UPTI_STATUS_ERROR_CONFIGURATION_LOCKED),
    NAME(UPTI_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED),
    NAME(UPTI_STATUS_ERROR_OUT_OF_RESOURCES),
    NAME(UPTI_STATUS_ERROR_DEADLOCK),
    NAME(UPTI_STATUS_ERROR_NOT_INITIALIZED),
    NAME(UPTI_STATUS_ERROR_FINALIZED),
    NAME(UPTI_STATUS_ERROR_INCOMPATIBLE_ABI),
    NAME(UPTI_STATUS_ERROR_NOT_AVAILABLE),
    NAME(UPTI_STATUS_ERROR_NOT_IMPLEMENTED),
    NAME(UPTI_STATUS_ERROR_CALLBACK_CONTEXT),
#undef NAME
};

UPTI_API const char *upti_get_status_name(upti_status_t status)
{
    if ((unsigned)status >= UPTI_STATUS_LAST)
        return NULL;
    return g_status_names[status];
}

/* The UPTI 0.1 name (status.h): a compatibility alias. */
UPTI_API const char *upti_get_status_string(upti_status_t status)
{
    return upti_get_status_name(status);
}

static const char *const g_phase_names[UPTI_CALLBACK_PHASE_LAST] = {
    "NONE", "ENTER", "EXIT", "LOAD", "UNLOAD",
};

UPTI_API const char *upti_get_callback_phase_name(upti_callback_phase_t phase)
{
    if ((unsigned)phase >= UPTI_CALLBACK_PHASE_LAST)
        return NULL;
    return g_phase_names[phase];
}

/* ---- kinds whose operations are fixed enums in buffer_tracing.h ---- */

static const char *const g_kernel_dispatch_ops[UPTI_KERNEL_DISPATCH_LAST] = {
    "NONE", "NDRANGE", "TASK", "NATIVE", "VK_DISPATCH", "VK_DISPATCH_BASE", "VK_DISPATCH_INDIRECT",
};
static const char *const g_memory_copy_ops[UPTI_MEMORY_COPY_LAST] = {
    "NONE", "READ_BUFFER", "WRITE_BUFFER", "COPY_BUFFER", "READ_BUFFER_RECT",
    "WRITE_BUFFER_RECT", "COPY_BUFFER_RECT", "READ_IMAGE", "WRITE_IMAGE", "COPY_IMAGE",
    "COPY_IMAGE_TO_BUFFER", "COPY_BUFFER_TO_IMAGE", "FILL_BUFFER", "FILL_IMAGE", "MAP_BUFFER",
    "MAP_IMAGE", "UNMAP", "MIGRATE", "SVM_MEMCPY", "SVM_MEMFILL", "SVM_MAP", "SVM_UNMAP",
    "SVM_FREE", "SVM_MIGRATE", "MARKER", "BARRIER",
};
static const char *const g_memory_allocation_ops[UPTI_MEMORY_ALLOCATION_LAST] = {
    "NONE", "ALLOCATE", "FREE",
};
static const char *const g_code_object_ops[UPTI_CODE_OBJECT_LAST] = {
    "NONE", "LOAD", "KERNEL_SYMBOL",
};

#define FIXED_KIND(var, kname, ops) FIXED_KIND_ARGS(var, kname, ops, NULL)
#define FIXED_KIND_ARGS(var, kname, ops, args)                                                   \
    static const upti_kind_info_t var = {kname, sizeof ops / sizeof ops[0], ops, args}

FIXED_KIND(g_kernel_dispatch_info, "KERNEL_DISPATCH", g_kernel_dispatch_ops);
FIXED_KIND(g_memory_copy_info, "MEMORY_COPY", g_memory_copy_ops);
FIXED_KIND(g_memory_allocation_info, "MEMORY_ALLOCATION", g_memory_allocation_ops);
FIXED_KIND(g_code_object_info, "CODE_OBJECT", g_code_object_ops);

/* OPENCL_API: named from the committed operation list, whatever headers this machine
   has; only the argument printer needs them. opencl_args.c checks at compile time that
   the generated public enum has these ids. */
static const char *const g_opencl_api_ops[] = {
    [0] = "NONE",
#define UPTI_OPENCL_OPERATION(id, name) [id] = #name,
#include "opencl/opencl_operations.def"
#undef UPTI_OPENCL_OPERATION
};
enum {
    OPENCL_API_OPERATIONS = 1
#define UPTI_OPENCL_OPERATION(id, name) +1
#include "opencl/opencl_operations.def"
#undef UPTI_OPENCL_OPERATION
};
_Static_assert(sizeof g_opencl_api_ops / sizeof g_opencl_api_ops[0] == OPENCL_API_OPERATIONS,
               "src/names/opencl/opencl_operations.def: operation ids must be 1..N, each once");
#ifdef UPTI_HAVE_OPENCL
#define OPENCL_API_ARGS uocl_iterate_args
#else
#define OPENCL_API_ARGS NULL
#endif
FIXED_KIND_ARGS(upti_opencl_api_kind_info, "OPENCL_API", g_opencl_api_ops, OPENCL_API_ARGS);

#ifndef UPTI_HAVE_VULKAN
static const char *const g_no_ops[1] = {"NONE"};
/* Built without Vulkan headers: the kind exists but has no operations. */
static const upti_kind_info_t upti_vulkan_api_kind_info = {"VULKAN_API", 1, g_no_ops, NULL};
#endif

static const upti_kind_info_t g_none_info = {"NONE", 0, NULL, NULL};

const upti_kind_info_t *upti_kind_info(upti_tracing_kind_t kind)
{
    switch (kind) {
    case UPTI_TRACING_KIND_MARKER_API:
        return &upti_marker_api_kind_info;
    case UPTI_TRACING_KIND_OPENCL_API:
        return &upti_opencl_api_kind_info;
    case UPTI_TRACING_KIND_KERNEL_DISPATCH:
        return &g_kernel_dispatch_info;
    case UPTI_TRACING_KIND_MEMORY_COPY:
        return &g_memory_copy_info;
    case UPTI_TRACING_KIND_MEMORY_ALLOCATION:
        return &g_memory_allocation_info;
    case UPTI_TRACING_KIND_CODE_OBJECT:
        return &g_code_object_info;
    case UPTI_TRACING_KIND_VULKAN_API:
        return &upti_vulkan_api_kind_info;
    case UPTI_TRACING_KIND_RUNTIME_API:
        return &upti_runtime_api_kind_info;
    default:
        return &g_none_info;
    }
}

static bool valid_kind(upti_tracing_kind_t kind)
{
    return kind > UPTI_TRACING_KIND_NONE && kind < UPTI_TRACING_KIND_LAST;
}

UPTI_API upti_status_t upti_get_tracing_kind_name(upti_tracing_kind_t kind, const char **name)
{
    if (name == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    if (!valid_kind(kind))
        return UPTI_STATUS_ERROR_KIND_NOT_FOUND;
    *name = upti_kind_info(kind)->name;
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_get_tracing_operation_name(upti_tracing_kind_t kind, uint32_t operation,
                                                       const char **name)
{
    if (name == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    if (!valid_kind(kind))
        return UPTI_STATUS_ERROR_KIND_NOT_FOUND;
    const char *found = upti_operation_name_of(upti_kind_info(kind), operation);
    if (found == NULL)
        return UPTI_STATUS_ERROR_OPERATION_NOT_FOUND;
    *name = found;
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_iterate_tracing_kinds(upti_tracing_kind_cb_t callback, void *data)
{
    if (callback == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    for (int k = UPTI_TRACING_KIND_NONE + 1; k < UPTI_TRACING_KIND_LAST; k++)
        if (callback((upti_tracing_kind_t)k, data) != 0)
            break;
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_iterate_tracing_kind_operations(upti_tracing_kind_t kind,
                                                            upti_tracing_operation_cb_t callback,
                                                            void *data)
{
    if (callback == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    if (!valid_kind(kind))
        return UPTI_STATUS_ERROR_KIND_NOT_FOUND;
    const upti_kind_info_t *info = upti_kind_info(kind);
    for (uint32_t op = 1; op < info->operation_count; op++)
        if (upti_operation_name_of(info, op) != NULL && callback(kind, op, data) != 0)
            break;
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_iterate_callback_tracing_operation_args(
    upti_callback_tracing_record_t record, upti_callback_tracing_operation_args_cb_t callback,
    int32_t max_dereference_count, void *data)
{
    if (callback == NULL || record.payload == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    if (!valid_kind(record.kind))
        return UPTI_STATUS_ERROR_KIND_NOT_FOUND;
    const upti_kind_info_t *info = upti_kind_info(record.kind);
    if (upti_operation_name_of(info, record.operation) == NULL)
        return UPTI_STATUS_ERROR_OPERATION_NOT_FOUND;
    if (info->iterate_args == NULL)
        return UPTI_STATUS_ERROR_NOT_AVAILABLE;
    return info->iterate_args(&record, callback, max_dereference_count, data);
}
