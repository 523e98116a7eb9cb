/* SPDX-License-Identifier: MIT */
/* The records of the bundled tracing tool (libupti-trace.so, src/program/recorder) that
 * are its own, not UPTI's: written with upti_write_buffer_record() into its
 * shared buffer, read back by the collector (src/collector/collect) that builds the
 * database. Both sides include this header; it is their whole contract.
 *
 * Every payload is 8-byte aligned; strings are NUL-terminated and their
 * lengths count the NUL.
 */
#ifndef UPTI_TRACE_TOOL_RECORDS_H
#define UPTI_TRACE_TOOL_RECORDS_H

#include <stdint.h>

enum {
    /** An OpenCL call's argument: trace_tool_arg_t, then type, name, value. */
    UPTI_TRACE_RECORD_ARG = 1,
    /** A metadata entry of the process's database: key, then value (two
     *  NUL-terminated strings). Keys the tool writes: "output_base" (the
     *  output path without extension, placeholders expanded in the program),
     *  "rank", "session", "kinds", "marker_texts_truncated" (at finalize). */
    UPTI_TRACE_RECORD_METADATA = 2,
    /** The name of an operation given out at run time (RUNTIME_API), written when its
     *  runtime registers, before any of its calls: trace_tool_operation_t, then the
     *  runtime's name (the api domain), then the operation's. */
    UPTI_TRACE_RECORD_OPERATION = 3,
};

/** UPTI_TRACE_RECORD_OPERATION. */
typedef struct trace_tool_operation_t {
    uint32_t kind;      /**< upti_tracing_kind_t */
    uint32_t operation;
    uint32_t domain_len, name_len;
} trace_tool_operation_t;

/** UPTI_TRACE_RECORD_ARG. */
typedef struct trace_tool_arg_t {
    uint64_t correlation_id; /**< the call's */
    uint32_t position;       /**< argument index, from 0 */
    uint32_t type_len, name_len, value_len;
} trace_tool_arg_t;

#endif
