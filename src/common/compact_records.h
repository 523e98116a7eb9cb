/* SPDX-License-Identifier: MIT */
/* The public records that the compact ring records stand for (<upti/ring.h>):
 * upti_ring_compact_api_t, upti_ring_compact_marker_t and upti_ring_compact_mark_t
 * leave out what the reader knows (the thread: the slot's in a shared buffer, the producer's in
 * an in-process one; the message: the text after the record, and after a compact mark's
 * value). In-process
 * delivery (src/program/sdk/buffer.c) and the converter
 * (src/collector/collect/convert.c) expand them here, so that a tool's
 * callback and the database read the same fields; the converter takes a
 * compact API record's fields as they are (uo_api_call: the same fields,
 * the slot's thread, no external id), without making its public record.
 */
#ifndef UPTI_COMPACT_RECORDS_H
#define UPTI_COMPACT_RECORDS_H

#include <upti/buffer_tracing.h>
#include <upti/ring.h>

#include <stdbool.h>
#include <string.h>

/** Whether kind is an API call's: the kinds whose public record is
 *  upti_buffer_tracing_api_record_t, the only ones a compact API record carries. */
static inline bool upti_api_kind(uint32_t kind)
{
    return kind == UPTI_TRACING_KIND_OPENCL_API || kind == UPTI_TRACING_KIND_VULKAN_API ||
           kind == UPTI_TRACING_KIND_RUNTIME_API;
}

/** The public record of compact API record c, made by thread tid. */
static inline void upti_compact_api_expand(const upti_ring_compact_api_t *c, upti_thread_id_t tid,
                                           upti_buffer_tracing_api_record_t *out)
{
    *out = (upti_buffer_tracing_api_record_t){
        .size = sizeof *out,
        .kind = c->kind,
        .operation = c->operation,
        .correlation_id = {c->correlation_id, {0}},
        .thread_id = tid,
        .start_timestamp = c->start_timestamp,
        .end_timestamp = c->end_timestamp,
        .result = c->result,
    };
}

/** The public record of compact marker record c, made by thread tid, with
 *  message (NULL where c->has_message is 0). */
static inline void upti_compact_marker_expand(const upti_ring_compact_marker_t *c,
                                              upti_thread_id_t tid, const char *message,
                                              upti_buffer_tracing_marker_api_record_t *out)
{
    int category = c->operation == UPTI_MARKER_API_NAME_CATEGORY;
    *out = (upti_buffer_tracing_marker_api_record_t){
        .size = sizeof *out,
        .kind = UPTI_TRACING_KIND_MARKER_API,
        .operation = c->operation,
        .correlation_id = {c->correlation_id, {c->external}},
        .thread_id = tid,
        .start_timestamp = c->timestamp,
        .end_timestamp = c->timestamp,
        .range_id = category ? 0 : c->value,
        .domain = category ? c->value : 0,
        .message = message,
    };
}

/**
 * The public record of the compact mark record whose payload (after its ring
 * record header) is body[0..len), made by thread tid; its message, if any,
 * points into body. 0, or -1 where flags has a bit it does not know, or the
 * record is shorter than its flags say, or its message has no NUL within it.
 */
static inline int upti_compact_mark_expand(const uint8_t *body, size_t len, upti_thread_id_t tid,
                                           upti_buffer_tracing_marker_api_record_t *out)
{
    upti_ring_compact_mark_t m;
    if (len < sizeof m)
        return -1;
    memcpy(&m, body, sizeof m);
    if ((m.flags & ~(uint32_t)(UPTI_RING_MARK_MESSAGE | UPTI_RING_MARK_VALUE)) != 0)
        return -1;
    size_t at = sizeof m;
    uint64_t value = 0;
    if (m.flags & UPTI_RING_MARK_VALUE) {
        if (len - at < sizeof value)
            return -1;
        memcpy(&value, body + at, sizeof value);
        at += sizeof value;
    }
    const char *message = NULL;
    if (m.flags & UPTI_RING_MARK_MESSAGE) {
        if (at >= len || memchr(body + at, '\0', len - at) == NULL)
            return -1;
        message = (const char *)(body + at);
    }
    upti_ring_compact_marker_t c = {m.operation, message != NULL, m.correlation_id, 0,
                                    m.timestamp, value};
    upti_compact_marker_expand(&c, tid, message, out);
    return 0;
}

#endif
