/* SPDX-License-Identifier: MIT */
/* `upti-ring convert`: the ring records that are not tracing records
 * (convert_records.c): agents and tools' own records. */
#ifndef UPTI_COLLECTOR_CONVERT_RECORDS_H
#define UPTI_COLLECTOR_CONVERT_RECORDS_H

#include "op_names.h"
#include "output.h"

#include <stddef.h>
#include <stdint.h>

/** What became of a record. */
enum {
    UR_RECORD_DONE = 0,
    UR_RECORD_MALFORMED = -1, /**< a length lies: counted in records_malformed, not read past */
    UR_RECORD_DB_ERROR = -2,  /**< the database failed */
    UR_RECORD_SKIPPED = 1,    /**< a tool record that is not the converter's to apply:
                                   counted in tool_records_skipped */
};

/**
 * UPTI_RING_KIND_AGENT: body (body_len bytes, after the record header) is a
 * upti_ring_agent_t and its four strings; adds the agent row.
 */
int ur_convert_agent(uo_db *db, const uint8_t *body, size_t body_len);

/**
 * UPTI_RING_KIND_TOOL: body is a upti_ring_tool_t and its data. The bundled
 * tool's kinds (trace_tool_records.h): ARG adds an arg row, METADATA sets a
 * metadata entry unless the converter owns its key (then SKIPPED), OPERATION
 * names a RUNTIME_API operation in db and keeps its names in names. Any other
 * kind: SKIPPED.
 */
int ur_convert_tool(uo_db *db, ur_op_names *names, const uint8_t *body, size_t body_len);

#endif
