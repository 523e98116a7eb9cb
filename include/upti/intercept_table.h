/* SPDX-License-Identifier: MIT */
/* UPTI — raw dispatch tables of runtimes, handed to tools for chaining. */
#ifndef UPTI_INTERCEPT_TABLE_H
#define UPTI_INTERCEPT_TABLE_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/** Which runtime a table belongs to (bit flags, combine with |). */
typedef enum upti_intercept_table_t {
    UPTI_INTERCEPT_TABLE_NONE = 0,
    UPTI_INTERCEPT_TABLE_MARKER = 1 << 0, /**< uptx_dispatch_table_t (uptx/uptx_table.h) */
    UPTI_INTERCEPT_TABLE_OPENCL = 1 << 1, /**< struct _cl_icd_dispatch of the OpenCL layer */
    UPTI_INTERCEPT_TABLE_VULKAN = 1 << 2, /**< upti_vulkan_dispatch_t of the Vulkan layer (upti/vulkan.h) */
    UPTI_INTERCEPT_TABLE_ALL = 0x7
} upti_intercept_table_t;

/**
 * Receives a runtime's tables when it registers. Entries may be replaced;
 * the replacement should call the saved original. UPTI's own tracing
 * wrappers are already installed beneath; tools are called in priority
 * order, so a later tool's entry wraps an earlier tool's.
 */
typedef void (*upti_intercept_library_cb_t)(upti_intercept_table_t type, uint64_t lib_version,
                                            uint64_t lib_instance, void **tables,
                                            uint64_t num_tables, void *data);

/**
 * Asks for the tables of the runtimes in library_mask. Call it in
 * upti_configure() or the tool's initialize; every registration reaches it,
 * the one whose first call started tool discovery included (its tables are
 * passed once every tool's initialize has returned). Afterwards:
 * UPTI_STATUS_ERROR_CONFIGURATION_LOCKED. Returns
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT for callback NULL or a mask that is 0 or
 * has bits outside UPTI_INTERCEPT_TABLE_ALL, UPTI_STATUS_ERROR_OUT_OF_RESOURCES
 * once 128 requests are registered (all tools together).
 */
UPTI_API upti_status_t upti_at_intercept_table_registration(upti_intercept_library_cb_t callback,
                                                            int library_mask, void *data);

UPTI_EXTERN_C_END

#endif
