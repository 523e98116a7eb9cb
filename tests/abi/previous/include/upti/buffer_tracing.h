/* SPDX-License-Identifier: MIT */
/* UPTI — buffer tracing: records of calls and device operations written into buffers. */
#ifndef UPTI_BUFFER_TRACING_H
#define UPTI_BUFFER_TRACING_H

#include <upti/buffer.h>
#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/**
 * Every tracing record begins with these fields, in this order, so a reader
 * can look at any record through this prefix.
 */
#define UPTI_RECORD_PREFIX                                                     \
    size_t size;                   /**< bytes of this record's struct */        \
    upti_tracing_kind_t kind;      /**< the kind (also in the header) */        \
    uint32_t operation;            /**< operation within the kind */            \
    upti_correlation_id_t correlation_id; /**< the API call that caused it */  \
    upti_thread_id_t thread_id     /**< the thread that made the call */

/** The common prefix of all tracing records. */
typedef struct upti_record_prefix_t {
    UPTI_RECORD_PREFIX;
} upti_record_prefix_t;

/** An API call (OPENCL_API; MARKER_API uses the marker record below). */
typedef struct upti_buffer_tracing_api_record_t {
    UPTI_RECORD_PREFIX;
    upti_timestamp_t start_timestamp; /**< before the call entered the runtime */
    upti_timestamp_t end_timestamp;   /**< after it returned */
} upti_buffer_tracing_api_record_t;

/**
 * A marker call. Marker calls are instants: start_timestamp ==
 * end_timestamp, read once. message is a copy owned by the buffer (or NULL).
 */
typedef struct upti_buffer_tracing_marker_api_record_t {
    UPTI_RECORD_PREFIX;
    upti_timestamp_t start_timestamp;
    upti_timestamp_t end_timestamp;
    uint64_t range_id;   /**< uptx_range_start's id, or the id passed to uptx_range_stop */
    uint64_t domain;     /**< category / domain id (0 = default) */
    uint32_t color;      /**< ARGB, 0 if none */
    uint32_t payload_type; /**< 0 none, else an NVTX payload type */
    uint64_t payload;    /**< the payload's bits */
    const char *message; /**< marker text, thread or category name */
} upti_buffer_tracing_marker_api_record_t;

/** Operations of KERNEL_DISPATCH. */
typedef enum upti_kernel_dispatch_operation_t {
    UPTI_KERNEL_DISPATCH_NONE = 0,
    UPTI_KERNEL_DISPATCH_NDRANGE, /**< clEnqueueNDRangeKernel */
    UPTI_KERNEL_DISPATCH_TASK,    /**< clEnqueueTask */
    UPTI_KERNEL_DISPATCH_NATIVE,  /**< clEnqueueNativeKernel */
    UPTI_KERNEL_DISPATCH_VK_DISPATCH,          /**< vkCmdDispatch */
    UPTI_KERNEL_DISPATCH_VK_DISPATCH_BASE,     /**< vkCmdDispatchBase(KHR) */
    UPTI_KERNEL_DISPATCH_VK_DISPATCH_INDIRECT, /**< vkCmdDispatchIndirect */
    UPTI_KERNEL_DISPATCH_LAST
} upti_kernel_dispatch_operation_t;

/** A kernel that ran on a device. Times are on UPTI's clock; 0 = unknown. */
typedef struct upti_buffer_tracing_kernel_dispatch_record_t {
    UPTI_RECORD_PREFIX;
    upti_agent_id_t agent_id;     /**< the device */
    uint64_t queue_id;            /**< the runtime's queue handle */
    uint64_t runtime_context;     /**< the runtime's context handle */
    uint64_t kernel_id;           /**< as in the CODE_OBJECT kernel-symbol record */
    const char *kernel_name;      /**< copy owned by the buffer */
    uint32_t work_dim;
    uint64_t global_offset[3];
    uint64_t global_size[3];
    uint64_t local_size[3];       /**< 0 where the runtime chose */
    upti_timestamp_t queued_timestamp;
    upti_timestamp_t submit_timestamp;
    upti_timestamp_t start_timestamp;
    upti_timestamp_t end_timestamp;
    int32_t status;               /**< execution status (0 = complete, < 0 runtime error) */
} upti_buffer_tracing_kernel_dispatch_record_t;

/** Operations of MEMORY_COPY: every non-kernel device command. */
typedef enum upti_memory_copy_operation_t {
    UPTI_MEMORY_COPY_NONE = 0,
    UPTI_MEMORY_COPY_READ_BUFFER,
    UPTI_MEMORY_COPY_WRITE_BUFFER,
    UPTI_MEMORY_COPY_COPY_BUFFER,
    UPTI_MEMORY_COPY_READ_BUFFER_RECT,
    UPTI_MEMORY_COPY_WRITE_BUFFER_RECT,
    UPTI_MEMORY_COPY_COPY_BUFFER_RECT,
    UPTI_MEMORY_COPY_READ_IMAGE,
    UPTI_MEMORY_COPY_WRITE_IMAGE,
    UPTI_MEMORY_COPY_COPY_IMAGE,
    UPTI_MEMORY_COPY_COPY_IMAGE_TO_BUFFER,
    UPTI_MEMORY_COPY_COPY_BUFFER_TO_IMAGE,
    UPTI_MEMORY_COPY_FILL_BUFFER,
    UPTI_MEMORY_COPY_FILL_IMAGE,
    UPTI_MEMORY_COPY_MAP_BUFFER,
    UPTI_MEMORY_COPY_MAP_IMAGE,
    UPTI_MEMORY_COPY_UNMAP,
    UPTI_MEMORY_COPY_MIGRATE,
    UPTI_MEMORY_COPY_SVM_MEMCPY,
    UPTI_MEMORY_COPY_SVM_MEMFILL,
    UPTI_MEMORY_COPY_SVM_MAP,
    UPTI_MEMORY_COPY_SVM_UNMAP,
    UPTI_MEMORY_COPY_SVM_FREE,
    UPTI_MEMORY_COPY_SVM_MIGRATE,
    UPTI_MEMORY_COPY_MARKER,
    UPTI_MEMORY_COPY_BARRIER,
    UPTI_MEMORY_COPY_LAST
} upti_memory_copy_operation_t;

/** Direction of a memory operation. */
typedef enum upti_memory_direction_t {
    UPTI_MEMORY_DIRECTION_NONE = 0,       /**< no data moves (marker, barrier, fill of host memory) */
    UPTI_MEMORY_DIRECTION_HOST_TO_DEVICE,
    UPTI_MEMORY_DIRECTION_DEVICE_TO_HOST,
    UPTI_MEMORY_DIRECTION_DEVICE_TO_DEVICE,
    UPTI_MEMORY_DIRECTION_HOST_TO_HOST,
    UPTI_MEMORY_DIRECTION_LAST
} upti_memory_direction_t;

/** A copy, fill, map, migration, marker or barrier that ran on a device. */
typedef struct upti_buffer_tracing_memory_copy_record_t {
    UPTI_RECORD_PREFIX;
    upti_agent_id_t agent_id;     /**< the queue's device */
    uint64_t queue_id;
    uint64_t runtime_context;
    upti_memory_direction_t direction;
    upti_agent_id_t src_agent_id; /**< handle 0 = host memory */
    upti_agent_id_t dst_agent_id;
    uint64_t bytes;
    upti_timestamp_t queued_timestamp;
    upti_timestamp_t submit_timestamp;
    upti_timestamp_t start_timestamp;
    upti_timestamp_t end_timestamp;
    int32_t status;
} upti_buffer_tracing_memory_copy_record_t;

/** Operations of MEMORY_ALLOCATION. */
typedef enum upti_memory_allocation_operation_t {
    UPTI_MEMORY_ALLOCATION_NONE = 0,
    UPTI_MEMORY_ALLOCATION_ALLOCATE,
    UPTI_MEMORY_ALLOCATION_FREE,
    UPTI_MEMORY_ALLOCATION_LAST
} upti_memory_allocation_operation_t;

/** What was allocated. */
typedef enum upti_memory_allocation_type_t {
    UPTI_MEMORY_ALLOCATION_TYPE_NONE = 0,
    UPTI_MEMORY_ALLOCATION_TYPE_BUFFER,
    UPTI_MEMORY_ALLOCATION_TYPE_SUB_BUFFER,
    UPTI_MEMORY_ALLOCATION_TYPE_IMAGE,
    UPTI_MEMORY_ALLOCATION_TYPE_PIPE,
    UPTI_MEMORY_ALLOCATION_TYPE_SVM,
    UPTI_MEMORY_ALLOCATION_TYPE_USM_HOST,
    UPTI_MEMORY_ALLOCATION_TYPE_USM_DEVICE,
    UPTI_MEMORY_ALLOCATION_TYPE_USM_SHARED,
    UPTI_MEMORY_ALLOCATION_TYPE_DEVICE_MEMORY, /**< a VkDeviceMemory (vkAllocateMemory) */
    UPTI_MEMORY_ALLOCATION_TYPE_LAST
} upti_memory_allocation_type_t;

/** An allocation or its release. */
typedef struct upti_buffer_tracing_memory_allocation_record_t {
    UPTI_RECORD_PREFIX;
    upti_timestamp_t timestamp;
    upti_agent_id_t agent_id;          /**< handle 0 when the context spans several devices */
    uint64_t runtime_context;
    upti_memory_allocation_type_t type;
    uint64_t handle;                   /**< cl_mem or the SVM/USM pointer */
    uint64_t bytes;                    /**< size in bytes (0 at FREE if unknown) */
    uint64_t flags;                    /**< the runtime's flags as passed */
} upti_buffer_tracing_memory_allocation_record_t;

/** Operations of CODE_OBJECT. */
typedef enum upti_code_object_operation_t {
    UPTI_CODE_OBJECT_NONE = 0,
    UPTI_CODE_OBJECT_LOAD,          /**< a program (module) was built / released */
    UPTI_CODE_OBJECT_KERNEL_SYMBOL, /**< a kernel was created / released */
    UPTI_CODE_OBJECT_LAST
} upti_code_object_operation_t;

/** A program or a kernel symbol loaded (phase LOAD) or unloaded (UNLOAD). */
typedef struct upti_buffer_tracing_code_object_record_t {
    UPTI_RECORD_PREFIX;
    upti_timestamp_t timestamp;
    upti_callback_phase_t phase;  /**< LOAD or UNLOAD */
    uint64_t runtime_context;
    uint64_t code_object_id;      /**< the program */
    uint64_t kernel_id;           /**< the kernel (KERNEL_SYMBOL), else 0 */
    const char *name;             /**< kernel name, or the program's kernel names; buffer-owned */
} upti_buffer_tracing_code_object_record_t;

/**
 * Writes records of the given operations of kind into buffer_id while the
 * context is active. operations NULL or count 0: all. Only inside a tool's
 * initialize; once per (context, kind).
 */
UPTI_API upti_status_t upti_configure_buffer_tracing_service(upti_context_id_t context_id,
                                                             upti_tracing_kind_t kind,
                                                             const uint32_t *operations,
                                                             size_t count,
                                                             upti_buffer_id_t buffer_id);

UPTI_EXTERN_C_END

#endif
