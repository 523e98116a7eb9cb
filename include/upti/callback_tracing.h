/* SPDX-License-Identifier: MIT */
/* UPTI — callback tracing: a function called synchronously at ENTER and EXIT of each call. */
#ifndef UPTI_CALLBACK_TRACING_H
#define UPTI_CALLBACK_TRACING_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/**
 * What a tracing callback receives. payload points to the kind's data:
 * MARKER_API: upti_callback_tracing_marker_api_data_t (marker.h);
 * OPENCL_API: upti_callback_tracing_opencl_api_data_t (opencl.h);
 * RUNTIME_API: upti_callback_tracing_runtime_api_data_t (below);
 * KERNEL_DISPATCH, MEMORY_COPY, MEMORY_ALLOCATION, CODE_OBJECT: the same
 * record the buffer service stores (buffer_tracing.h), phase NONE, LOAD or UNLOAD.
 */
typedef struct upti_callback_tracing_record_t {
    size_t size;
    upti_context_id_t context_id;
    upti_thread_id_t thread_id;
    upti_correlation_id_t correlation_id;
    upti_tracing_kind_t kind;
    uint32_t operation;
    upti_callback_phase_t phase;
    void *payload;
} upti_callback_tracing_record_t;

/**
 * The callback payload of RUNTIME_API (upti_callback_tracing_record_t.payload),
 * at ENTER and EXIT.
 */
typedef struct upti_callback_tracing_runtime_api_data_t {
    size_t size;          /**< sizeof(upti_callback_tracing_runtime_api_data_t) */
    const void *args;     /**< the arguments, a struct of them in declaration order */
    void *retval;         /**< the return value (EXIT), NULL for a void function */
    /** EXIT: what a function declared `status` returned, else UPTI_API_RESULT_NONE; ENTER: NONE. */
    int64_t result;
} upti_callback_tracing_runtime_api_data_t;

/**
 * A tracing callback. user_data is one slot per call and per context:
 * what ENTER stores there, EXIT finds. Only UPTI's name helpers and
 * upti_iterate_callback_tracing_operation_args() may be called inside it.
 */
typedef void (*upti_callback_tracing_cb_t)(upti_callback_tracing_record_t record,
                                           upti_user_data_t *user_data, void *callback_data);

/**
 * Calls callback at each phase of the given operations of kind while the
 * context is active. operations == NULL or count == 0: every operation.
 * Only inside a tool's initialize (else CONFIGURATION_LOCKED); once per
 * (context, kind) (else SERVICE_ALREADY_CONFIGURED). Also returns
 * CONTEXT_NOT_FOUND for an unknown context, INVALID_ARGUMENT for callback
 * NULL, KIND_NOT_FOUND for kind out of range, OPERATION_NOT_FOUND for an
 * operation 0 or out of range (all UPTI_STATUS_ERROR_*).
 */
UPTI_API upti_status_t upti_configure_callback_tracing_service(upti_context_id_t context_id,
                                                               upti_tracing_kind_t kind,
                                                               const uint32_t *operations,
                                                               size_t count,
                                                               upti_callback_tracing_cb_t callback,
                                                               void *callback_data);

/**
 * Called once per argument. value_string is the printed value, dereferenced
 * up to the requested depth (a string's text, a pointed-to integer, …).
 * Return 0 to continue, anything else to stop.
 */
typedef int (*upti_callback_tracing_operation_args_cb_t)(
    upti_tracing_kind_t kind, uint32_t operation, uint32_t arg_index, const void *arg_value_addr,
    int32_t indirection_count, const char *arg_type, const char *arg_name,
    const char *arg_value_string, int32_t dereference_count, void *data);

/**
 * Iterates the arguments of the call described by record (MARKER_API,
 * OPENCL_API and RUNTIME_API kinds: RUNTIME_API from the descriptions the
 * runtimes registered), in declaration order. max_dereference_count: 0 prints
 * pointers as addresses; 1 also prints what they point to (at ENTER only
 * inputs are meaningful). Allowed inside a tracing callback. Returns
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT for callback NULL or record.payload
 * NULL, UPTI_STATUS_ERROR_KIND_NOT_FOUND / UPTI_STATUS_ERROR_OPERATION_NOT_FOUND
 * for an unknown kind or operation, UPTI_STATUS_ERROR_NOT_AVAILABLE for a
 * kind without argument descriptions (the device kinds, VULKAN_API; OPENCL_API
 * when UPTI was built without OpenCL headers).
 */
UPTI_API upti_status_t upti_iterate_callback_tracing_operation_args(
    upti_callback_tracing_record_t record, upti_callback_tracing_operation_args_cb_t callback,
    int32_t max_dereference_count, void *data);

UPTI_EXTERN_C_END

#endif
