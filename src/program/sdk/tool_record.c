/* SPDX-License-Identifier: MIT */
/* upti_write_buffer_record(): a tool's own records, in order with the
 * tracing records of the thread that writes them.
 *
 * In-process buffer: ring kind UPTI_RING_TOOL_RECORD, body
 * upti_inproc_tool_record_t then the data; the callback gets category
 * UPTI_BUFFER_CATEGORY_TOOL and a pointer to its upti_tool_record_t half
 * (buffer.c, deliver). Shared buffer: UPTI_RING_KIND_TOOL, body
 * upti_ring_tool_t then the data (upti/ring.h). Either way the record
 * goes through the same reserve/commit as any other, so a full region
 * follows the buffer's policy and a drop is counted.
 */
#include "internal.h"
#include "ring.h"
#include <upti/ring.h>

#include <stddef.h>
#include <string.h>

_Static_assert(sizeof(upti_ring_tool_t) == 8, "shared tool record header");
_Static_assert(sizeof(upti_inproc_tool_record_t) == 16 &&
                   offsetof(upti_inproc_tool_record_t, size) == 8 &&
                   sizeof(upti_tool_record_t) == 8,
               "in-process tool record: the payload is the second half, data 8-byte aligned");

UPTI_API upti_status_t upti_write_buffer_record(upti_buffer_id_t buffer_id, uint32_t kind,
                                                const void *data, size_t size)
{
    struct upti_buffer *b = upti_buffer_lookup(buffer_id);
    if (b == NULL || atomic_load_explicit(&b->destroyed, memory_order_relaxed))
        return UPTI_STATUS_ERROR_BUFFER_NOT_FOUND;
    if ((data == NULL && size > 0) || size > UPTI_TOOL_RECORD_MAX_BYTES)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    upti_thread_state_t *s = upti_thread_state();
    size_t head = b->shared != NULL ? sizeof(upti_ring_tool_t) : sizeof(upti_inproc_tool_record_t);
    uint8_t *dst = upti_buffer_reserve(b, s, UPTI_RING_TOOL_RECORD, head + size);
    if (dst == NULL)
        return atomic_load(&b->destroyed) ? UPTI_STATUS_ERROR_BUFFER_NOT_FOUND
                                          : UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    if (b->shared != NULL)
        memcpy(dst, &(upti_ring_tool_t){kind, (uint32_t)size}, sizeof(upti_ring_tool_t));
    else
        memcpy(dst, &(upti_inproc_tool_record_t){kind, 0, (uint32_t)size, 0},
               sizeof(upti_inproc_tool_record_t));
    if (size > 0)
        memcpy(dst + head, data, size);
    /* The padding to 8 bytes: nothing stale goes to the callback or the file. */
    memset(dst + head + size, 0, ((head + size + 7) & ~(size_t)7) - (head + size));
    upti_buffer_commit(b, s);
    return UPTI_STATUS_SUCCESS;
}
