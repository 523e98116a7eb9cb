/* SPDX-License-Identifier: MIT */
/* The ring records that are not tracing records: agents (UPTI_RING_KIND_AGENT)
 * and tools' own records (UPTI_RING_KIND_TOOL), decoded for `upti-ring convert`.
 *
 * Every length is checked against the record before anything is read: a
 * string must lie inside its record and end exactly where its length says.
 * Tool records of the bundled tracing tool (trace_tool_records.h) become
 * arg rows and metadata; other tools' kinds are not the converter's to read.
 */
#include "convert_records.h"
#include "trace_tool_records.h"
#include <upti/ring.h>

#include <string.h>

/* Metadata the converter and the database writer set themselves: a tool record
 * naming one of these is skipped, never applied. */
static const char *const k_owned_keys[] = {
    "source",          "records_malformed", "tool_records_skipped", "records_received",
    "records_written", "records_dropped",   "records_filtered",     "committed",
    "schema_version",  "writer",            "clock",                "ended",
    "images",          "records_not_stored", "records_dropped_no_slot", "ring_waits",
    "ring_wait_ns",    "ring_wait_room_ns",
};

/* The string of len bytes (its NUL included) at s, if it ends exactly there; else NULL. */
static const char *exact_string(const uint8_t *s, size_t len)
{
    if (len == 0 || memchr(s, '\0', len) != (const void *)(s + len - 1))
        return NULL;
    return (const char *)s;
}

/* Reads n strings of lens[i] bytes each, one after the other from *s, into text[]; moves *s
 * and *left past them. -1 if one does not fit in *left or does not end exactly at its length. */
static int read_strings(const uint8_t **s, size_t *left, const uint32_t *lens, const char **text,
                        int n)
{
    for (int i = 0; i < n; i++) {
        if (lens[i] > *left || (text[i] = exact_string(*s, lens[i])) == NULL)
            return -1;
        *s += lens[i];
        *left -= lens[i];
    }
    return 0;
}

/* Copies the fixed part of a record (head_size bytes) out of body into head; *rest and
 * *left: what follows it. -1 if body is shorter. */
static int read_head(const uint8_t *body, size_t body_len, void *head, size_t head_size,
                     const uint8_t **rest, size_t *left)
{
    if (body_len < head_size)
        return -1;
    memcpy(head, body, head_size);
    *rest = body + head_size;
    *left = body_len - head_size;
    return 0;
}

int ur_convert_agent(uo_db *db, const uint8_t *body, size_t body_len)
{
    upti_ring_agent_t r;
    const uint8_t *s;
    size_t left;
    if (read_head(body, body_len, &r, sizeof r, &s, &left) != 0)
        return UR_RECORD_MALFORMED;
    const uint32_t lens[4] = {r.runtime_len, r.name_len, r.vendor_len, r.driver_version_len};
    const char *text[4];
    if (read_strings(&s, &left, lens, text, 4) != 0)
        return UR_RECORD_MALFORMED;
    if (left >= 8) /* more than the padding to 8 bytes */
        return UR_RECORD_MALFORMED;
    upti_agent_t a = {
        .size = sizeof a,
        .id = {r.id},
        .type = (upti_agent_type_t)r.type,
        .runtime = text[0],
        .name = text[1],
        .vendor = text[2],
        .driver_version = text[3],
        .compute_units = r.compute_units,
        .global_memory_bytes = r.global_memory_bytes,
        .runtime_handle = r.runtime_handle,
        .node_id = r.node_id,
    };
    return uo_db_add_agent(db, &a) == 0 ? UR_RECORD_DONE : UR_RECORD_DB_ERROR;
}

/* UPTI_TRACE_RECORD_ARG: trace_tool_arg_t, then type, name, value. */
static int convert_arg(uo_db *db, const uint8_t *data, size_t size)
{
    trace_tool_arg_t a;
    const uint8_t *s;
    size_t left;
    if (read_head(data, size, &a, sizeof a, &s, &left) != 0)
        return UR_RECORD_MALFORMED;
    const uint32_t lens[3] = {a.type_len, a.name_len, a.value_len};
    const char *text[3];
    if (read_strings(&s, &left, lens, text, 3) != 0 || left != 0)
        return UR_RECORD_MALFORMED;
    return uo_db_add_arg(db, a.correlation_id, a.position, text[0], text[1], text[2]) == 0
               ? UR_RECORD_DONE
               : UR_RECORD_DB_ERROR;
}

/* UPTI_TRACE_RECORD_OPERATION: trace_tool_operation_t, then domain, name. */
static int convert_operation(uo_db *db, ur_op_names *names, const uint8_t *data, size_t size)
{
    trace_tool_operation_t o;
    const uint8_t *s;
    size_t left;
    if (read_head(data, size, &o, sizeof o, &s, &left) != 0)
        return UR_RECORD_MALFORMED;
    const uint32_t lens[2] = {o.domain_len, o.name_len};
    const char *text[2];
    if (read_strings(&s, &left, lens, text, 2) != 0 || left != 0 ||
        o.kind != UPTI_TRACING_KIND_RUNTIME_API || o.operation == 0 ||
        o.operation >= UPTI_RUNTIME_API_MAX_OPERATIONS)
        return UR_RECORD_MALFORMED;
    return uo_db_set_operation_name(db, o.kind, o.operation, text[0], text[1]) == 0 &&
                   ur_op_names_add(names, o.operation, text[0], text[1]) == 0
               ? UR_RECORD_DONE
               : UR_RECORD_DB_ERROR;
}

/* UPTI_TRACE_RECORD_METADATA: key, then value, filling the data exactly. */
static int convert_metadata(uo_db *db, const uint8_t *data, size_t size)
{
    const uint8_t *nul = size > 0 ? memchr(data, '\0', size) : NULL;
    if (nul == NULL || nul == data) /* no key, or an empty one */
        return UR_RECORD_MALFORMED;
    size_t key_len = (size_t)(nul - data) + 1;
    const char *key = (const char *)data;
    const char *value = exact_string(data + key_len, size - key_len);
    if (value == NULL)
        return UR_RECORD_MALFORMED;
    for (size_t i = 0; i < sizeof k_owned_keys / sizeof k_owned_keys[0]; i++)
        if (strcmp(key, k_owned_keys[i]) == 0)
            return UR_RECORD_SKIPPED;
    if (strncmp(key, "image.", 6) == 0) /* image.K.*: the converter's (convert.c) */
        return UR_RECORD_SKIPPED;
    return uo_db_set_metadata(db, key, value) == 0 ? UR_RECORD_DONE : UR_RECORD_DB_ERROR;
}

int ur_convert_tool(uo_db *db, ur_op_names *names, const uint8_t *body, size_t body_len)
{
    upti_ring_tool_t t;
    const uint8_t *data;
    size_t left;
    /* The data fills the record, padded to 8 bytes. */
    if (read_head(body, body_len, &t, sizeof t, &data, &left) != 0 || t.size > left ||
        left - t.size >= 8)
        return UR_RECORD_MALFORMED;
    switch (t.kind) {
    case UPTI_TRACE_RECORD_ARG:
        return convert_arg(db, data, t.size);
    case UPTI_TRACE_RECORD_METADATA:
        return convert_metadata(db, data, t.size);
    case UPTI_TRACE_RECORD_OPERATION:
        return convert_operation(db, names, data, t.size);
    default:
        return UR_RECORD_SKIPPED;
    }
}
