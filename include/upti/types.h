/* SPDX-License-Identifier: MIT */
/* UPTI — identifiers and small value types shared by all headers. */
#ifndef UPTI_TYPES_H
#define UPTI_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <upti/defines.h>
#include <upti/status.h>

UPTI_EXTERN_C_BEGIN

/** Nanoseconds on UPTI's clock (CLOCK_MONOTONIC_RAW); device times are mapped onto it. */
typedef uint64_t upti_timestamp_t;
/** Operating-system thread id (gettid()). */
typedef uint64_t upti_thread_id_t;

/** A context: a group of services a tool starts and stops together. handle 0 is never valid. */
typedef struct upti_context_id_t { uint64_t handle; } upti_context_id_t;
/** A buffer created by upti_create_buffer_with_options() or upti_create_shared_buffer(). */
typedef struct upti_buffer_id_t { uint64_t handle; } upti_buffer_id_t;
/** An internal thread that delivers buffers. */
typedef struct upti_callback_thread_t { uint64_t handle; } upti_callback_thread_t;
/** A device or host processor (see agent.h). */
typedef struct upti_agent_id_t { uint64_t handle; } upti_agent_id_t;

/** Storage a tool owns: a number or a pointer. */
typedef union upti_user_data_t {
    uint64_t value;
    void *ptr;
} upti_user_data_t;

/**
 * Correlation of a record with the API call that caused it.
 * internal: unique in the process, never 0 for a traced call.
 * external: what the thread pushed for the record's context with
 * upti_push_external_correlation_id(), or 0.
 */
typedef struct upti_correlation_id_t {
    uint64_t internal;
    upti_user_data_t external;
} upti_correlation_id_t;

/** What is being traced. Values are only appended. */
typedef enum upti_tracing_kind_t {
    UPTI_TRACING_KIND_NONE = 0,
    UPTI_TRACING_KIND_MARKER_API,        /**< uptx_* calls (and NVTX through libupti-nvtx) */
    UPTI_TRACING_KIND_OPENCL_API,        /**< every OpenCL call through the layer */
    UPTI_TRACING_KIND_KERNEL_DISPATCH,   /**< kernels executed on a device */
    UPTI_TRACING_KIND_MEMORY_COPY,       /**< copies, fills, maps, migrations, markers, barriers */
    UPTI_TRACING_KIND_MEMORY_ALLOCATION, /**< buffers, images, SVM/USM allocations and releases */
    UPTI_TRACING_KIND_CODE_OBJECT,       /**< programs and kernel symbols loaded and unloaded */
    UPTI_TRACING_KIND_VULKAN_API,        /**< every Vulkan call through the layer (upti/vulkan.h) */
    /**
     * Calls of runtimes UPTI does not know at build time, which described their
     * API when they registered (upti/runtime_api.h). Operation ids are given
     * out at run time, one range per runtime, from 1 up to
     * UPTI_RUNTIME_API_MAX_OPERATIONS - 1: look them up by name
     * (upti_get_tracing_operation_name, upti_at_named_intercept_table_registration).
     * Since UPTI 1.0.
     */
    UPTI_TRACING_KIND_RUNTIME_API,
    UPTI_TRACING_KIND_LAST
} upti_tracing_kind_t;

/** Operation ids of UPTI_TRACING_KIND_RUNTIME_API are below this (0 is NONE). */
#define UPTI_RUNTIME_API_MAX_OPERATIONS 1024u

/** Phase of a callback. */
typedef enum upti_callback_phase_t {
    UPTI_CALLBACK_PHASE_NONE = 0, /**< a record with no phase (a completed device operation) */
    UPTI_CALLBACK_PHASE_ENTER,    /**< before the call reaches the runtime */
    UPTI_CALLBACK_PHASE_EXIT,     /**< after the runtime returned */
    UPTI_CALLBACK_PHASE_LOAD,     /**< a code object or symbol was loaded */
    UPTI_CALLBACK_PHASE_UNLOAD,   /**< a code object or symbol was unloaded */
    UPTI_CALLBACK_PHASE_LAST
} upti_callback_phase_t;

/**
 * The result of a call that returns no status (a void call, a marker call):
 * the value of an API record's result then, and of the OPENCL_API and
 * VULKAN_API callback payloads' result (at ENTER always). A status (cl_int,
 * VkResult) is never this value.
 */
#define UPTI_API_RESULT_NONE INT64_MIN

UPTI_EXTERN_C_END

#endif
