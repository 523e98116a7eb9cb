/* SPDX-License-Identifier: MIT */
/* UPTI — buffers: where records are stored until an internal thread delivers them.
 *
 * Each producing thread writes into its own region of the buffer without a
 * lock; an internal callback thread hands full regions to the buffer's
 * callback. Records of one thread arrive in the order they were made;
 * records of different threads may interleave in any order.
 */
#ifndef UPTI_BUFFER_H
#define UPTI_BUFFER_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/** Category of a record: what header.kind means. */
typedef enum upti_buffer_category_t {
    UPTI_BUFFER_CATEGORY_NONE = 0,
    UPTI_BUFFER_CATEGORY_TRACING, /**< kind is a upti_tracing_kind_t */
    UPTI_BUFFER_CATEGORY_TOOL,    /**< a tool's own record (upti_write_buffer_record):
                                       kind is the tool's, payload a upti_tool_record_t */
    UPTI_BUFFER_CATEGORY_LAST
} upti_buffer_category_t;

/** One record delivered by a buffer: category, kind and a pointer to its payload. */
typedef struct upti_record_header_t {
    uint32_t category; /**< upti_buffer_category_t */
    uint32_t kind;     /**< upti_tracing_kind_t for the TRACING category */
    void *payload;     /**< the record; valid only during the buffer callback */
} upti_record_header_t;

/** What happens when a thread's region of the buffer is full. */
typedef enum upti_buffer_policy_t {
    UPTI_BUFFER_POLICY_NONE = 0,
    UPTI_BUFFER_POLICY_DISCARD,  /**< drop the record and count it (reported as drop_count) */
    UPTI_BUFFER_POLICY_LOSSLESS, /**< the producing thread waits until the region is drained */
    UPTI_BUFFER_POLICY_LAST
} upti_buffer_policy_t;

/**
 * Receives records. headers[0..num_headers) are in per-thread order;
 * drop_count is the number of records discarded since the last call.
 * Called from a UPTI callback thread (or from the thread calling
 * upti_flush_buffer() / finalization).
 */
typedef void (*upti_buffer_tracing_cb_t)(upti_context_id_t context_id, upti_buffer_id_t buffer_id,
                                         upti_record_header_t **headers, size_t num_headers,
                                         void *data, uint64_t drop_count);

/** The region size a buffer gets when upti_buffer_options_t.region_size is 0. */
#define UPTI_BUFFER_DEFAULT_REGION_SIZE 65536u

/**
 * How to create a buffer (upti_create_buffer_with_options). Set size to
 * sizeof(upti_buffer_options_t) and leave what you do not need at 0, its
 * default: UPTI_OPTIONS() does both. The struct only ever grows at its end;
 * a library older than your headers accepts it as long as the fields it does
 * not know are 0 (else UPTI_STATUS_ERROR_INCOMPATIBLE_ABI).
 */
typedef struct upti_buffer_options_t {
    size_t size;                       /**< sizeof(upti_buffer_options_t) */
    /** Bytes of each producing thread's region (rounded up to a power of two,
     *  at least 4096; allocated on the thread's first record). 0:
     *  UPTI_BUFFER_DEFAULT_REGION_SIZE. */
    size_t region_size;
    /** Bytes in a region that wake the callback thread (0: deliver as soon as
     *  possible; >= the region size: only when full or flushed). */
    size_t watermark;
    /** When a region is full. 0 (UPTI_BUFFER_POLICY_NONE): DISCARD, the
     *  program never waits. */
    upti_buffer_policy_t policy;
    upti_buffer_tracing_cb_t callback; /**< required */
    void *callback_data;               /**< passed to callback */
} upti_buffer_options_t;

/**
 * A compound literal of an options struct with its size set and the named
 * fields given, the others 0, e.g.
 * `upti_buffer_options_t o = UPTI_OPTIONS(upti_buffer_options_t, .callback = cb);`
 * No public struct ends with padding (spare bytes at the end are a member
 * named reserved0, which must be 0; abi.previous_release_layouts checks
 * it), so this sets every byte up to sizeof: a field a later release adds
 * at the end grows the struct and is seen, by size, as absent or 0. UPTI
 * does not read reserved0 of what a caller hands it (a binary built before
 * it was named may hold anything there) and writes 0 in that of what it
 * hands out.
 */
#define UPTI_OPTIONS(type, ...) ((type){.size = sizeof(type), __VA_ARGS__})

/**
 * Creates a buffer for a context, as options say. Only inside a tool's
 * initialize (else UPTI_STATUS_ERROR_CONFIGURATION_LOCKED). Returns
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT for options or buffer_id NULL, options
 * whose size is smaller than its size member, no callback, a policy out of
 * range or a region above 1 TiB; UPTI_STATUS_ERROR_INCOMPATIBLE_ABI when
 * options->size claims fields this library does not know and one of them is
 * not 0; UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND for an unknown context;
 * UPTI_STATUS_ERROR_OUT_OF_RESOURCES when the process already has 64 buffers
 * (shared ones included); UPTI_STATUS_ERROR_CALLBACK_CONTEXT inside a
 * subscriber callback.
 */
UPTI_API upti_status_t upti_create_buffer_with_options(upti_context_id_t context_id,
                                                       const upti_buffer_options_t *options,
                                                       upti_buffer_id_t *buffer_id);

/* UPTI 0.1's positional form, upti_create_buffer(context, size, watermark,
 * policy, callback, data, &buffer), is in <upti/compat.h>. */

/**
 * Delivers every record written so far and returns when the callback has
 * seen them. Thread-safe; called inside a buffer callback of the same
 * callback thread it returns UPTI_STATUS_ERROR_DEADLOCK, inside a subscriber
 * callback UPTI_STATUS_ERROR_CALLBACK_CONTEXT.
 * UPTI_STATUS_ERROR_BUFFER_NOT_FOUND for an unknown buffer.
 */
UPTI_API upti_status_t upti_flush_buffer(upti_buffer_id_t buffer_id);

/**
 * Bounds how long a record may wait in its region: every interval_ns the
 * callback thread delivers whatever the buffer holds, even below the
 * watermark (0, the default: only the watermark, a full region or a flush
 * deliver). A tool that writes a trace file as records arrive uses it to
 * bound what a process killed without warning (SIGKILL) takes with it.
 * Callable at any time; UPTI_STATUS_ERROR_INVALID_ARGUMENT below 1 ms (0
 * excepted), UPTI_STATUS_ERROR_BUFFER_NOT_FOUND for an unknown buffer.
 */
UPTI_API upti_status_t upti_set_buffer_flush_interval(upti_buffer_id_t buffer_id, uint64_t interval_ns);

/**
 * Flushes, then stops the buffer: later records for it are dropped.
 * UPTI_STATUS_ERROR_BUFFER_NOT_FOUND for an unknown or already destroyed
 * buffer; otherwise the status codes of upti_flush_buffer().
 */
UPTI_API upti_status_t upti_destroy_buffer(upti_buffer_id_t buffer_id);

/**
 * Creates a shared buffer: records that survive their process. Each
 * producing thread's region is a ring in a file-backed shared mapping
 * (format: include/upti/ring.h, docs/shared-rings.md) that a
 * collector in another process drains (`upti-ring collect`); a record is
 * there as soon as the call that made it returns, so a process killed at any
 * moment (SIGKILL, a crash, _exit) loses none of the records it committed.
 * Nothing in the process delivers them: there is no callback and no thread.
 *
 * size: bytes of each thread's ring (at least 4096, rounded up to a power of
 * two). max_threads: rings in the file (1..65536). The file takes at most half
 * the space free in its folder and half the address space left (RLIMIT_AS):
 * where size x max_threads does not fit, the rings are smaller, then fewer,
 * and one line at level WARNING says so. A ring's storage is reserved when a
 * thread first takes it (never a SIGBUS on a full tmpfs): a thread whose ring
 * gets none drops its records (counted). A thread takes a ring at its
 * first record and gives it back when it exits (reused once drained); a
 * thread that finds none drops its records (counted). path_or_dir: the file,
 * created or truncated; or an existing folder, where the file is named
 * upti-<pid>-<n>.upti-ring; NULL: /dev/shm. A child forked without exec
 * writes to a file of its own, named that way in the same folder, created at
 * its first record (a child that execs at once leaves none).
 *
 * The file also holds the process's agents (upti_query_available_agents),
 * each once: written by the first thread that records into the buffer, and
 * by a thread that registers an agent later.
 *
 * Full ring: DISCARD drops the record at once; LOSSLESS waits for the
 * collector while it makes progress, and drops the record when it made none
 * for 50 ms (UPTI_RING_FULL_WAIT_MS at creation changes that): a program is
 * never stopped by an absent collector. Drops are counted exactly in the file.
 * upti_flush_buffer() returns at once (records are already shared);
 * upti_destroy_buffer() marks the file closed. The collector removes the file.
 * Only inside a tool's initialize (else UPTI_STATUS_ERROR_CONFIGURATION_LOCKED).
 * Returns UPTI_STATUS_ERROR_INVALID_ARGUMENT for buffer_id NULL, a policy
 * other than DISCARD or LOSSLESS, size above 4 GiB, max_threads out of range
 * or a path too long; UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND for an unknown
 * context; UPTI_STATUS_ERROR_OUT_OF_RESOURCES if the file cannot be created
 * (the reason is logged at level ERROR, see <upti/log.h>) or the process
 * already has 64 buffers.
 */
UPTI_API upti_status_t upti_create_shared_buffer(upti_context_id_t context_id, size_t size,
                                                 upti_buffer_policy_t policy,
                                                 const char *path_or_dir, uint32_t max_threads,
                                                 upti_buffer_id_t *buffer_id);

/**
 * Copies the path of a shared buffer's file (this process's: a forked child
 * has its own) into path[0..capacity). UPTI_STATUS_ERROR_BUFFER_NOT_FOUND if
 * buffer_id is not a shared buffer, UPTI_STATUS_ERROR_NOT_AVAILABLE in a
 * forked child that has not recorded into it yet (no file yet),
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT if path is NULL or capacity is too small
 * (the path and its NUL must fit). Thread-safe.
 */
UPTI_API upti_status_t upti_get_shared_buffer_path(upti_buffer_id_t buffer_id, char *path,
                                                   size_t capacity);

/** The largest data a tool record carries (upti_write_buffer_record). */
#define UPTI_TOOL_RECORD_MAX_BYTES 65536u

/** The payload of a UPTI_BUFFER_CATEGORY_TOOL record. */
typedef struct upti_tool_record_t {
    uint32_t size;        /**< bytes of data */
    uint32_t reserved;    /**< 0 */
    unsigned char data[]; /**< what the tool wrote, 8-byte aligned */
} upti_tool_record_t;

/**
 * Appends a record of the tool's own to a buffer, from the calling thread, in
 * order with the tracing records that thread writes to the same buffer: a
 * tool's annotations (API arguments it printed, settings, names) travel with
 * the trace, and survive the process with it in a shared buffer. kind is the
 * tool's own numbering; data is copied (size bytes, at most
 * UPTI_TOOL_RECORD_MAX_BYTES). An in-process buffer delivers it to its
 * callback with category UPTI_BUFFER_CATEGORY_TOOL; a shared buffer frames it
 * as UPTI_RING_KIND_TOOL. A full region follows the buffer's policy, like any
 * record (a drop is counted), except that a record of more than half the
 * region is never waited for, and that a LOSSLESS in-process buffer's own
 * callback (which cannot wait for itself) drops it. Thread-safe, and
 * callable from a callback (a tracing callback, the buffer's callback).
 * Returns UPTI_STATUS_ERROR_BUFFER_NOT_FOUND for an unknown or destroyed
 * buffer (checked first), UPTI_STATUS_ERROR_INVALID_ARGUMENT for data NULL
 * with size > 0 or size too large, UPTI_STATUS_ERROR_OUT_OF_RESOURCES when
 * the record was dropped (full region, larger than the region, no ring slot).
 */
UPTI_API upti_status_t upti_write_buffer_record(upti_buffer_id_t buffer_id, uint32_t kind,
                                                const void *data, size_t size);

/**
 * Creates another internal delivery thread (started on first use). At most
 * 16 callback threads, the default one included (then
 * UPTI_STATUS_ERROR_OUT_OF_RESOURCES); UPTI_STATUS_ERROR_INVALID_ARGUMENT if
 * thread_id is NULL, UPTI_STATUS_ERROR_FINALIZED after finalization.
 */
UPTI_API upti_status_t upti_create_callback_thread(upti_callback_thread_t *thread_id);
/**
 * Makes thread_id deliver buffer_id (default: the first callback thread),
 * after the old thread delivered what it holds. Callable at any time.
 * UPTI_STATUS_ERROR_BUFFER_NOT_FOUND, UPTI_STATUS_ERROR_THREAD_NOT_FOUND for
 * unknown ids; UPTI_STATUS_ERROR_OUT_OF_RESOURCES if the thread cannot start.
 */
UPTI_API upti_status_t upti_assign_callback_thread(upti_buffer_id_t buffer_id,
                                                   upti_callback_thread_t thread_id);

UPTI_EXTERN_C_END

#endif
