/* SPDX-License-Identifier: MIT */
/* UPTI — subscriber callback API: the life of every GPU operation (appended,
 * dispatched, completed), driver calls, host synchronisation, modules, and
 * UPTI's own threads and events, delivered synchronously to subscribers.
 *
 * Built on the core SDK: a subscriber's domains become callback-tracing
 * services of one internal context, so correlation ids are the ones buffer
 * records carry. Subscriptions may be made at any time, from a tool's
 * initialize or later from the application; each domain starts delivering
 * from the moment it is enabled.
 *
 * Inside a subscriber callback only these may be called: the name lookups
 * (upti_get_callback_domain_name(), upti_get_callback_phase_kind_name(),
 * upti_get_gpu_operation_kind_name(), upti_get_status_name(), those of
 * names.h, and their 0.1 names in compat.h),
 * upti_iterate_callback_tracing_operation_args(), upti_get_timestamp(),
 * upti_get_thread_id(), upti_get_version(), upti_write_buffer_record(),
 * upti_set_buffer_flush_interval(), upti_get_shared_buffer_path(),
 * upti_get_marker_texts_truncated(), upti_query_runtime_metadata() and
 * upti_set_log_callback(); every other UPTI function returns
 * UPTI_STATUS_ERROR_CALLBACK_CONTEXT there (never a deadlock).
 */
#ifndef UPTI_CALLBACK_H
#define UPTI_CALLBACK_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/** A subscriber. Invalid once unsubscribed: later calls with it return
 *  UPTI_STATUS_ERROR_INVALID_ARGUMENT. */
typedef struct upti_callback_subscriber_t { uint64_t handle; } upti_callback_subscriber_t;

/** What a callback reports. */
typedef enum upti_callback_domain_t {
    UPTI_CB_DOMAIN_INVALID = 0,
    UPTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED,         /**< a runtime context (cl_context) was created; EXIT */
    UPTI_CB_DOMAIN_DRIVER_MODULE_LOADED,           /**< a program (module) was built or linked; EXIT */
    UPTI_CB_DOMAIN_DRIVER_MODULE_UNLOADED,         /**< a program was released for good; EXIT */
    UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED,  /**< an operation is enqueued: ENTER and EXIT */
    UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED,/**< the device took it (submitted/running); EXIT */
    UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED, /**< it finished, with device times; asynchronous, EXIT */
    UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION,    /**< the host waits (finish, wait, blocking copy): ENTER and EXIT */
    UPTI_CB_DOMAIN_DRIVER_API,                     /**< every driver (OpenCL) call: ENTER and EXIT */
    UPTI_CB_DOMAIN_INTERNAL_THREADS,               /**< a UPTI thread starts or ends */
    UPTI_CB_DOMAIN_INTERNAL_EVENT,                 /**< UPTI noticed something: info, warning, critical */
    UPTI_CB_DOMAIN_LAST                            /**< one past the last domain, as every UPTI enum ends */
} upti_callback_domain_t;

/** Phase of a subscriber callback. */
typedef enum upti_callback_phase_kind_t {
    UPTI_CB_PHASE_INVALID = 0,
    UPTI_CB_PHASE_API_ENTER,
    UPTI_CB_PHASE_API_EXIT,
    UPTI_CB_PHASE_INTERNAL_THREAD_START,
    UPTI_CB_PHASE_INTERNAL_THREAD_END,
    UPTI_CB_PHASE_INTERNAL_EVENT,
    UPTI_CB_PHASE_LAST                     /**< one past the last phase */
} upti_callback_phase_kind_t;

/** Severity of an INTERNAL_EVENT (its detail). */
typedef enum upti_internal_event_type_t {
    UPTI_INTERNAL_EVENT_TYPE_INFO = 0,
    UPTI_INTERNAL_EVENT_TYPE_WARNING,
    UPTI_INTERNAL_EVENT_TYPE_CRITICAL,
    UPTI_INTERNAL_EVENT_TYPE_LAST                                /**< one past the last type */
} upti_internal_event_type_t;

/** Purpose of an internal thread (INTERNAL_THREADS detail). */
typedef enum upti_internal_thread_type_t {
    UPTI_INTERNAL_THREAD_BUFFER_DELIVERY = 1, /**< delivers buffers to tools (upti-callback) */
    UPTI_INTERNAL_THREAD_COMPLETION,          /**< collects completed device operations */
    UPTI_INTERNAL_THREAD_LAST                 /**< one past the last type */
} upti_internal_thread_type_t;

/** Kind of a GPU operation. */
typedef enum upti_gpu_operation_kind_t {
    UPTI_GPU_OPERATION_KIND_INVALID = 0,
    UPTI_GPU_OPERATION_KIND_KERNEL,
    UPTI_GPU_OPERATION_KIND_MEMORY_COPY,
    UPTI_GPU_OPERATION_KIND_MEMORY_FILL,
    UPTI_GPU_OPERATION_KIND_MAP,
    UPTI_GPU_OPERATION_KIND_UNMAP,
    UPTI_GPU_OPERATION_KIND_MIGRATE,
    UPTI_GPU_OPERATION_KIND_MARKER,
    UPTI_GPU_OPERATION_KIND_BARRIER,
    UPTI_GPU_OPERATION_KIND_FREE,
    UPTI_GPU_OPERATION_KIND_OTHER,
    UPTI_GPU_OPERATION_KIND_LAST                               /**< one past the last kind */
} upti_gpu_operation_kind_t;

/** One operation (a kernel, a copy…) or, for MODULE_*, one module. */
typedef struct upti_gpu_op_details_t {
    size_t size;                        /**< sizeof(upti_gpu_op_details_t) */
    upti_gpu_operation_kind_t kind;
    uint32_t operation;                 /**< KERNEL_DISPATCH / MEMORY_COPY operation of buffer_tracing.h */
    uint64_t operation_id;              /**< kernel handle (as kernel_id in records), or module handle */
    const char *name;                   /**< kernel name, operation name, or a module's kernel names */
    uint64_t bytes;                     /**< bytes moved or filled (0 for kernels) */
    uint32_t work_dim;                  /**< kernels: dimensions, sizes below (0 where unknown) */
    uint64_t global_size[3];
    uint64_t local_size[3];
    upti_timestamp_t submit_timestamp;  /**< COMPLETED: device times on UPTI's clock, else 0 */
    upti_timestamp_t start_timestamp;
    upti_timestamp_t end_timestamp;
    int32_t status;                     /**< COMPLETED: 0 complete, < 0 a runtime error */
    uint32_t reserved0;                 /**< must be zero: what was tail padding */
} upti_gpu_op_details_t;

/** cb_data of the DRIVER_* domains. */
typedef struct upti_callback_gpu_op_data_t {
    size_t size;                      /**< sizeof(upti_callback_gpu_op_data_t) */
    upti_callback_domain_t domain;
    upti_callback_phase_kind_t phase;
    uint64_t queue_handle;            /**< cl_command_queue, 0 if none */
    uint64_t device_handle;           /**< cl_device_id, 0 if unknown */
    uint64_t context_handle;          /**< cl_context, 0 if unknown */
    int32_t return_code;              /**< the call's status at EXIT (CL_SUCCESS…), else 0 */
    uint64_t correlation_id;          /**< equal to correlation_id.internal of the call's buffer records */
    upti_tracing_kind_t api_group;    /**< the call: UPTI_TRACING_KIND_OPENCL_API … */
    uint32_t api_id;                  /**< … and its operation (UPTI_OPENCL_API_*) */
    uint32_t operation_count;         /**< entries in operation_details */
    const upti_gpu_op_details_t *operation_details;
} upti_callback_gpu_op_data_t;

/** cb_data of INTERNAL_THREADS and INTERNAL_EVENT. */
typedef struct upti_callback_internal_data_t {
    size_t size;                      /**< sizeof(upti_callback_internal_data_t) */
    upti_callback_domain_t domain;
    upti_callback_phase_kind_t phase; /**< THREAD_START / THREAD_END / INTERNAL_EVENT */
    uint32_t detail;                  /**< upti_internal_thread_type_t or upti_internal_event_type_t */
    const char *message;              /**< explains it */
    uint64_t count;                   /**< records dropped (drop events), else 0 */
    upti_thread_id_t thread_id;       /**< the thread that starts/ends or reports */
} upti_callback_internal_data_t;

/**
 * A subscriber callback. api_group/api_id: the driver call (kind and
 * operation), 0 for internal domains. backend_context: the cl_context when
 * known. cb_data: upti_callback_gpu_op_data_t (DRIVER_*) or
 * upti_callback_internal_data_t (INTERNAL_*). user_data: given at subscribe.
 * instance_user_data: one slot per subscriber and call, carried from ENTER to
 * EXIT of the same call (NULL for single-phase domains).
 */
typedef void (*upti_callback_function_t)(upti_callback_domain_t domain, uint32_t api_group,
                                         uint32_t api_id, void *backend_context,
                                         const void *cb_data, void *user_data,
                                         void **instance_user_data);

/**
 * Creates a subscriber with no domain enabled. At most UPTI_MAX_SUBSCRIBERS
 * (16) at once (then UPTI_STATUS_ERROR_OUT_OF_RESOURCES);
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT if subscriber or callback is NULL.
 */
UPTI_API upti_status_t upti_callback_subscribe(upti_callback_subscriber_t *subscriber,
                                               upti_callback_function_t callback, void *user_data);

/** Disables every domain, waits for callbacks of it running on other threads, frees it, invalidates the handle. */
UPTI_API upti_status_t upti_callback_unsubscribe(upti_callback_subscriber_t subscriber);

/**
 * Enables domain. enter_cb / exit_cb (0 or 1) pick the phases of two-phase
 * domains (APPENDED, HOST_SYNCHRONIZATION, DRIVER_API); single-phase domains
 * are enabled when either is 1. Enabling again replaces the phases.
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT for an unknown subscriber or a domain out
 * of range (the same for the disable calls and upti_callback_unsubscribe).
 */
UPTI_API upti_status_t upti_callback_enable_domain(upti_callback_subscriber_t subscriber,
                                                   upti_callback_domain_t domain,
                                                   uint32_t enter_cb, uint32_t exit_cb);

UPTI_API upti_status_t upti_callback_disable_domain(upti_callback_subscriber_t subscriber,
                                                    upti_callback_domain_t domain);

UPTI_API upti_status_t upti_callback_disable_all_domains(upti_callback_subscriber_t subscriber);

/*
 * Names. Every name lookup of UPTI is upti_get_<enum>_name, named after the
 * enum it takes (upti_<enum>_t): upti_get_callback_phase_kind_name takes a
 * upti_callback_phase_kind_t, upti_get_callback_phase_name (names.h) a
 * upti_callback_phase_t. Each returns a string that lives as long as the
 * process, NULL if the value is out of range; allowed anywhere, inside
 * callbacks too.
 */
/** "DRIVER_GPU_OPERATION_APPENDED"… (the enumerator without UPTI_CB_DOMAIN_). */
UPTI_API const char *upti_get_callback_domain_name(upti_callback_domain_t domain);
/** "API_ENTER"… (the enumerator without UPTI_CB_PHASE_). */
UPTI_API const char *upti_get_callback_phase_kind_name(upti_callback_phase_kind_t phase);
/** "KERNEL", "MEMORY_COPY"… (the enumerator without UPTI_GPU_OPERATION_KIND_). */
UPTI_API const char *upti_get_gpu_operation_kind_name(upti_gpu_operation_kind_t kind);
/* UPTI 0.1's names of these three lookups and of the enums' _LAST
 * sentinels (_MAX) are in <upti/compat.h>. */

UPTI_EXTERN_C_END

#endif
