/* UPTI — operations and callback data of kind MARKER_API (uptx). */
#ifndef UPTI_MARKER_H
#define UPTI_MARKER_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

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
