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

/** What a tool learns of one registration (upti_at_named_intercept_table_registration). */
typedef struct upti_intercept_table_info_t {
    size_t size;          /**< sizeof(upti_intercept_table_info_t) */
    const char *name;     /**< the name the runtime registered: "uptx", "opencl", "toyrt" */
    uint64_t version;     /**< the version it registered */
    uint64_t instance;    /**< the registration's id (upti_register_library_id_t) */
    /**
     * UPTI_TRACING_KIND_RUNTIME_API for a runtime that described its API
     * (upti_register_runtime_api), whose operations are first_operation ..
     * first_operation + num_operations - 1, in the order of its description;
     * else UPTI_TRACING_KIND_NONE and 0, 0 (the built-in runtimes have kinds
     * of their own).
     */
    upti_tracing_kind_t kind;
    uint32_t first_operation;
    uint32_t num_operations;
    uint32_t reserved0;   /**< 0 */
} upti_intercept_table_info_t;

/**
 * Receives a registered runtime's tables, as upti_intercept_library_cb_t
 * does: entries may be replaced (the replacement calls the saved original);
 * UPTI's tracing wrappers are beneath, and a later tool's entries wrap an
 * earlier one's. info is valid during the call.
 */
typedef void (*upti_intercept_named_table_cb_t)(const upti_intercept_table_info_t *info,
                                                void **tables, uint64_t num_tables, void *data);

/**
 * Asks for the tables of the runtime registered as name (any name: a
 * runtime UPTI does not know included; "uptx", "opencl" and "vulkan" are
 * the built-in ones) in a version >= min_version, or, name NULL, of every
 * runtime that registers. A registration of a lower version is not passed.
 * As upti_at_intercept_table_registration: call it in upti_configure() or
 * the tool's initialize; every registration reaches it, the one that started
 * tool discovery included. Returns UPTI_STATUS_SUCCESS;
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT for callback NULL, or name "" or
 * longer than 63 bytes; UPTI_STATUS_ERROR_CONFIGURATION_LOCKED outside
 * upti_configure() and initialize (nothing is registered);
 * UPTI_STATUS_ERROR_OUT_OF_RESOURCES once 128 requests are registered (both
 * calls and all tools together). Since UPTI 1.0.
 */
UPTI_API upti_status_t upti_at_named_intercept_table_registration(const char *name,
                                                                  uint64_t min_version,
                                                                  upti_intercept_named_table_cb_t callback,
                                                                  void *data);

UPTI_EXTERN_C_END

#endif
