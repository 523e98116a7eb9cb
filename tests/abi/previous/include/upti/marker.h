/* SPDX-License-Identifier: MIT */
/* UPTI — operations and callback data of kind MARKER_API (uptx). */
#ifndef UPTI_MARKER_H
#define UPTI_MARKER_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/**
 * Longest marker text, in bytes (its NUL excluded), that a buffer record
 * keeps: uptx and NVTX messages, thread and category names. A longer text is
 * cut to its first UPTI_MARKER_TEXT_MAX bytes in the record (callbacks still
 * get the whole text); upti_get_marker_texts_truncated() counts the cut ones,
 * and UPTI says how many on stderr once, when it finalizes.
 */
#define UPTI_MARKER_TEXT_MAX 1023

/**
 * How many marker texts were cut to UPTI_MARKER_TEXT_MAX bytes in buffer
 * records so far in this process (a call is counted once, whatever the
 * number of buffers it is recorded in; a forked child counts from 0).
 * Thread-safe, callable at any time. Returns UPTI_STATUS_ERROR_INVALID_ARGUMENT
 * if count is NULL.
 */
UPTI_API upti_status_t upti_get_marker_texts_truncated(uint64_t *count);

/** Operations of UPTI_TRACING_KIND_MARKER_API. */
typedef enum upti_marker_api_operation_t {
    UPTI_MARKER_API_NONE = 0,
    UPTI_MARKER_API_RANGE_PUSH,
    UPTI_MARKER_API_RANGE_POP,
    UPTI_MARKER_API_RANGE_START,
    UPTI_MARKER_API_RANGE_STOP,
    UPTI_MARKER_API_MARK,
    UPTI_MARKER_API_NAME_THREAD,
    UPTI_MARKER_API_NAME_CATEGORY,
    UPTI_MARKER_API_LAST
} upti_marker_api_operation_t;

/** Arguments of a marker call, by operation. */
typedef union upti_marker_api_args_t {
    struct { const char *message; } range_push;
    struct { int unused; } range_pop;
    struct { const char *message; } range_start;
    struct { uint64_t id; } range_stop;
    struct { const char *message; } mark;
    struct { const char *name; } name_thread;
    struct { uint32_t category; const char *name; } name_category;
} upti_marker_api_args_t;

/** Return value of a marker call (valid at EXIT). */
typedef union upti_marker_api_retval_t {
    int int_retval;         /**< range_push, range_pop */
    uint64_t uint64_retval; /**< range_start */
} upti_marker_api_retval_t;

/** Payload of a MARKER_API callback record. */
typedef struct upti_callback_tracing_marker_api_data_t {
    size_t size;
    upti_marker_api_args_t args;
    upti_marker_api_retval_t retval;
} upti_callback_tracing_marker_api_data_t;

UPTI_EXTERN_C_END

#endif
