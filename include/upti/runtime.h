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
 * count may be NULL. UPTI_STATUS_ERROR_INVALID_ARGUMENT for kind out of
 * range or plans NULL.
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

/**
 * Nonzero if some context has a callback for the operation of plan (not NULL):
 * only then is the payload given to upti_runtime_call_enter() read (by the
 * ENTER and EXIT callbacks), so a wrapper may leave it unfilled otherwise,
 * the plan being the call's for its whole duration. A plan's first member is
 * its uint32_t count of callbacks: part of the UPTI_RUNTIME_ contract, read
 * inline so that a call traced by buffers only pays one load. New after
 * UPTI 0.2, in 1.0 (an inline: no symbol).
 */
static inline int upti_runtime_plan_has_callbacks(const upti_operation_plan_t *plan)
{
    return *(const uint32_t *)(const void *)plan != 0;
}

/**
 * Correlation captured at an API call, for device records reported later.
 * Holds the external ids of up to 4 contexts (the first 4 with one pushed);
 * more is reported once, as a warning where UPTI's messages go (log.h), and
 * those contexts' device records carry no external id.
 */
typedef struct upti_runtime_correlation_t {
    uint64_t internal;           /**< the call's internal correlation id */
    upti_thread_id_t thread_id;  /**< the thread that made the call */
    uint32_t num_external;       /**< entries used below */
    uint32_t context_index[4];   /**< contexts that had an external id pushed */
    upti_user_data_t external[4];
} upti_runtime_correlation_t;

/**
 * State of one traced call; lives on the wrapper's stack. Fields are UPTI's.
 * user_data is sized by UPTI_MAX_CONTEXTS: this struct belongs to the
 * runtime-integration API (UPTI_RUNTIME_ version node), whose callers are
 * UPTI's own runtime libraries, built and shipped with the SDK; a change of
 * UPTI_MAX_CONTEXTS changes its size and fails the abi.abidiff.upti test
 * until a new node and baseline come with it. Tools never see it.
 */
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
 * runs ENTER callbacks. plan: upti_runtime_plan() of (kind, operation).
 * payload: the kind's callback payload (for OPENCL_API an
 * upti_callback_tracing_opencl_api_data_t with args filled; where
 * upti_runtime_plan_has_callbacks(plan) is 0 nothing reads it). The call
 * ends with upti_runtime_call_exit() or _exit_result() on the same thread.
 */
UPTI_API void upti_runtime_call_enter(upti_runtime_call_t *call, const upti_operation_plan_t *plan,
                                      upti_tracing_kind_t kind, uint32_t operation,
                                      void *payload);
/**
 * Ends it: reads the end time, runs EXIT callbacks, writes API records
 * (upti_buffer_tracing_api_record_t; for MARKER_API none: a marker
 * integration emits its upti_buffer_tracing_marker_api_record_t itself with
 * upti_runtime_emit()). Set retval first. The records' and EXIT callbacks'
 * result is UPTI_API_RESULT_NONE: a call that returns a status ends with
 * upti_runtime_call_exit_result().
 */
UPTI_API void upti_runtime_call_exit(upti_runtime_call_t *call);

/**
 * upti_runtime_call_exit() of a call that returned a status: result (a
 * cl_int, the errcode_ret of a call that returns an object, a VkResult)
 * goes into its API records and EXIT callbacks. Since UPTI_RUNTIME_0.2.
 */
UPTI_API void upti_runtime_call_exit_result(upti_runtime_call_t *call, int64_t result);

/**
 * Captures the correlation of call (or, if call is NULL, of the innermost
 * call in progress on this thread) for a record reported later.
 */
UPTI_API void upti_runtime_capture_correlation(const upti_runtime_call_t *call,
                                               upti_runtime_correlation_t *out);

/**
 * upti_runtime_capture_correlation(NULL, out), and in *start the start
 * time of the innermost call in progress on this thread (its API record's
 * start_timestamp), or the time now if none is: one call and one clock read
 * for a device operation recorded inside a traced call (a Vulkan vkCmd*).
 * Since UPTI_RUNTIME_0.2.
 */
UPTI_API void upti_runtime_capture_current(upti_runtime_correlation_t *out, upti_timestamp_t *start);

/** A record to deliver to callback and buffer services. */
typedef struct upti_runtime_record_t {
    size_t size;                      /**< sizeof(upti_runtime_record_t) */
    upti_tracing_kind_t kind;
    uint32_t operation;
    upti_callback_phase_t phase;      /**< phase given to callback services */
    const upti_runtime_correlation_t *correlation; /**< NULL: the current call's, if any */
    void *record;                     /**< a buffer_tracing.h record, its prefix's size set */
    size_t string_offset;             /**< offset of a const char* member copied with the record, 0 if none */
    /**
     * The plan of (kind, operation) when the work the record reports was
     * started (upti_runtime_plan at the enqueue), or NULL. Buffers then get
     * the record in the contexts that were active at the start, even if they
     * stopped since (a kernel enqueued inside a capture window that completes
     * after it closed), and not in contexts started since; callbacks still
     * go to the contexts active now. Ignored once UPTI finalized. An
     * integration built before this field (a smaller size) gets the plan of now.
     */
    const upti_operation_plan_t *started_plan;
} upti_runtime_record_t;

/**
 * Delivers a record to every active context that wants (kind, operation):
 * callbacks see it as payload; buffers get a copy (prefix fields and the
 * external correlation filled per context; the string member deep-copied),
 * those of record->started_plan's contexts when it is set.
 * Correlation: record->correlation, else the call in progress on this
 * thread, else a new internal id.
 */
UPTI_API void upti_runtime_emit(const upti_runtime_record_t *record);

/**
 * *present = 1 if discovery has run and some tool's upti_configure returned a
 * result, else 0. A runtime that found none after registering can stop
 * tracing work for good (tools are configured only once).
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT if present is NULL.
 */
UPTI_API upti_status_t upti_runtime_tools_present(int *present);

/**
 * Adds a device agent; strings are copied. *id receives its id (id may be
 * NULL). Thread-safe. UPTI_STATUS_ERROR_INVALID_ARGUMENT for agent NULL or
 * agent->size below sizeof(size_t), UPTI_STATUS_ERROR_INCOMPATIBLE_ABI for
 * non-zero fields this UPTI does not know, UPTI_STATUS_ERROR_OUT_OF_RESOURCES
 * past 256 agents (host agents included).
 */
UPTI_API upti_status_t upti_runtime_add_agent(const upti_agent_t *agent, upti_agent_id_t *id);

/**
 * Reports a fact about the trace as a whole: key (at most 63 bytes, by
 * convention "RUNTIME.NAME", e.g. "vulkan.calibration_max_deviation_ns") and
 * value (at most 255 bytes), both copied. A later call with the same key
 * replaces the value. Tools read them with upti_query_runtime_metadata()
 * (the tracing tool writes them into its database's metadata table).
 * Thread-safe. INVALID_ARGUMENT for a missing or too long key or value, a
 * key without a '.' (the keys tools write themselves have none) or starting
 * with one, OUT_OF_RESOURCES past 32 keys.
 */
UPTI_API upti_status_t upti_runtime_set_metadata(const char *key, const char *value);

/**
 * Reports an unusual event (issue, drop, clock mapping) as a warning where
 * UPTI's messages go (log.h: stderr prefixed "upti:", or a tool's log
 * callback), and to subscribers of the internal-event domain. Each call is
 * one message: a caller that may repeat itself says it once. NULL: ignored.
 */
UPTI_API void upti_runtime_warn(const char *message);

UPTI_EXTERN_C_END

#endif
