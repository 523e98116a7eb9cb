/* SPDX-License-Identifier: MIT */
/* Internal: what UPTI knows of each tracing kind (names, argument printers):
 * the names library (src/names), linked into libupti, the collector and the CLI. */
#ifndef UPTI_NAMES_KIND_INFO_H
#define UPTI_NAMES_KIND_INFO_H

#include <upti/upti.h>

typedef struct upti_kind_info_t {
    const char *name;                    /**< "MARKER_API" */
    uint32_t operation_count;            /**< entries of operation_names, slot 0 (NONE) included */
    const char *const *operation_names;  /**< [0] is "NONE" */
    /** Prints the arguments of a callback record's payload; NULL if the kind has none. */
    upti_status_t (*iterate_args)(const upti_callback_tracing_record_t *record,
                                  upti_callback_tracing_operation_args_cb_t callback,
                                  int32_t max_dereference_count, void *data);
} upti_kind_info_t;

/** Kind table, indexed by upti_tracing_kind_t. */
const upti_kind_info_t *upti_kind_info(upti_tracing_kind_t kind);

/** The name of operation op of info's kind; NULL for 0, out of range, or an
 *  id not given out yet (RUNTIME_API). */
static inline const char *upti_operation_name_of(const upti_kind_info_t *info, uint32_t op)
{
    if (op == 0 || op >= info->operation_count)
        return NULL;
    return __atomic_load_n(&info->operation_names[op], __ATOMIC_ACQUIRE);
}

/** The marker API (marker_names.c). */
extern const upti_kind_info_t upti_marker_api_kind_info;
/** RUNTIME_API: operations given out at run time (runtime_api_names.c). */
extern const upti_kind_info_t upti_runtime_api_kind_info;
struct upti_runtime_api_function_t;
/** Gives count RUNTIME_API operations to functions (named after them, their
 *  arguments printed from their descriptions, which must outlive the process):
 *  *first = the first one's id. OUT_OF_RESOURCES past UPTI_RUNTIME_API_MAX_OPERATIONS. */
upti_status_t upti_runtime_api_operations_add(const struct upti_runtime_api_function_t *functions,
                                              uint32_t count, uint32_t *first);
#ifdef UPTI_HAVE_OPENCL
/** Prints an OPENCL_API payload's arguments (src/names/opencl/opencl_args.c, with the generated
    descriptions); only where OpenCL headers were found. The OPENCL_API
    operation names do not depend on them (src/names/names.c). */
upti_status_t uocl_iterate_args(const upti_callback_tracing_record_t *record,
                                upti_callback_tracing_operation_args_cb_t callback,
                                int32_t max_dereference_count, void *data);
#endif
#ifdef UPTI_HAVE_VULKAN
/** The Vulkan API: made by vulkan/generate.py (only where Vulkan headers and vk.xml were found). */
extern const upti_kind_info_t upti_vulkan_api_kind_info;
#endif

#endif
