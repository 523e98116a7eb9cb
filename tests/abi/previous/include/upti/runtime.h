/* SPDX-License-Identifier: MIT */
/* UPTI — the interface runtime integrations (libupti-opencl, libupti-nvtx…) use to trace.
 *
 * Not for tools. A wrapper looks up the plan of its operation with
 * upti_runtime_plan(); NULL means no active context wants it, and the
 * wrapper calls straight through (one load and one branch). Otherwise it
 * brackets the call with upti_runtime_call_enter() / upti_runtime_call_exit().
 * Device operations that complete later are reported with upti_runtime_emit().
 */
#ifndef UPTI_RUNTIME_H
#define UPTI_RUNTIME_H

#include <upti/agent.h>
#include <upti/context.h>
#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/** What the active contexts want of one (kind, operation); opaque. */
typedef struct upti_operation_plan_t upti_operation_plan_t;

/**
 * *plans = UPTI's table of plans for kind, indexed by operation
 * (*count entries). The table lives as long as the process; its entries
 * change when contexts start and stop. Read entries with upti_runtime_plan().
 */
UPTI_API upti_status_t upti_runtime_get_operation_plans(upti_tracing_kind_t kind,
                                                        const upti_operation_plan_t *const **plans,
                                                        uint32_t *count);

/** The current plan of operation op (NULL: nothing to do). */
static inline const upti_operation_plan_t *
upti_runtime_plan(const upti_operation_plan_t *const *plans, uint32_t op)
{
    return __atomic_load_n(&plans[op], __ATOMIC_ACQUIRE);
}

/** Correlation captured at an API call, for device records reported later. */
typedef struct upti_runtime_correlation_t {
    uint64_t internal;           /**< the call's internal correlation id */
    upti_thread_id_t thread_id;  /**< the thread that made the call */
    uint32_t num_external;       /**< entries used below */
    uint32_t context_index[4];   /**< contexts that had an external id pushed */
    upti_user_data_t external[4];
} upti_runtime_correlation_t;

/** State of one traced call; lives on the wrapper's stack. Fields are UPTI's. */
typedef struct upti_runtime_call_t {
    const upti_operation_plan_t *plan;
    upti_tracing_kind_t kind;
    uint32_t operation;
    uint64_t correlation_id;     /**< internal correlation id assigned at enter */
    upti_thread_id_t thread_id;
    upti_timestamp_t start_timestamp;
    void *payload;               /**< the kind's callback payload (args + retval) */
    struct upti_runtime_call_t *parent; /**< the enclosing call on this thread */
    upti_user_data_t user_data[UPTI_MAX_CONTEXTS];
} upti_runtime_call_t;

/**
 * Starts a traced call: assigns its correlation id, reads the start time,
 * runs ENTER callbacks. payload: the kind's callback payload (for
 * OPENCL_API an upti_callback_tracing_opencl_api_data_t with args filled).
 */
UPTI_API void upti_runtime_call_enter(upti_runtime_call_t *call, const upti_operation_plan_t *plan,
                                      upti_tracing_kind_t kind, uint32_t operation,
                                      void *payload);
/**
 * Ends it: reads the end time, runs EXIT callbacks, writes API records
 * (upti_buffer_tracing_api_record_t; for MARKER_API none: a marker
 * integration emits its upti_buffer_tracing_marker_api_record_t itself with
 * upti_runtime_emit()). Set retval first.
 */
UPTI_API void upti_runtime_call_exit(upti_runtime_call_t *call);

/**
 * Captures the correlation of call (or, if call is NULL, of the innermost
 * call in progress on this thread) for a record reported later.
 */
UPTI_API void upti_runtime_capture_correlation(const upti_runtime_call_t *call,
                                               upti_runtime_correlation_t *out);

/** A record to deliver to callback and buffer services. */
typedef struct upti_runtime_record_t {
    size_t size;                      /**< sizeof(upti_runtime_record_t) */
    upti_tracing_kind_t kind;
    uint32_t operation;
    upti_callback_phase_t phase;      /**< phase given to callback services */
    const upti_runtime_correlation_t *correlation; /**< NULL: the current call's, if any */
    void *record;                     /**< a buffer_tracing.h record, its prefix's size set */
    size_t string_offset;             /**< offset of a const char* member copied with the record, 0 if none */
} upti_runtime_record_t;

/**
 * Delivers a record to every active context that wants (kind, operation):
 * callbacks see it as payload; buffers get a copy (prefix fields and the
 * external correlation filled per context; the string member deep-copied).
 * Correlation: record->correlation, else the call in progress on this
 * thread, else a new internal id.
 */
UPTI_API void upti_runtime_emit(const upti_runtime_record_t *record);

/**
 * *present = 1 if discovery has run and some tool's upti_configure returned a
 * result, else 0. A runtime that found none after registering can stop
 * tracing work for good (tools are configured only once).
 */
UPTI_API upti_status_t upti_runtime_tools_present(int *present);

/** Adds a device agent; strings are copied. *id receives its id. */
UPTI_API upti_status_t upti_runtime_add_agent(const upti_agent_t *agent, upti_agent_id_t *id);

/** Reports an unusual event (issue, drop, clock mapping) on stderr once, prefixed "upti:". */
UPTI_API void upti_runtime_warn(const char *message);

UPTI_EXTERN_C_END

#endif
