/* SPDX-License-Identifier: MIT */
/* Internal: whether a mapped file is a ring this collector may read
 * (include/upti/ring.h), checked before any of it is used. */
#ifndef UPTI_COLLECTOR_RING_CHECK_H
#define UPTI_COLLECTOR_RING_CHECK_H

#include <upti/ring.h>

#include <stddef.h>
#include <stdint.h>

/**
 * Checks every header field of the ring file mapped at map (size bytes, the
 * file's size when it was mapped) and every slot's data_offset against size,
 * with arithmetic that cannot overflow: the slot table and every slot's data
 * lie inside the file. 0 if it is a ring this collector reads; -1 with the
 * reason in why ("max_slots 65536 need 25169920 bytes, the file has 16384").
 * The caller has checked magic and state, and that size covers the header.
 * The header is checked as copied to *checked: the file is shared, and its
 * producer (or anyone who may write it) can change it after the check, so
 * the caller uses the copy's fields, never the file's.
 */
int ur_ring_check(const void *map, uint64_t size, upti_ring_header_t *checked, char *why,
                  size_t why_len);

/** 1 if [offset, offset + len) lies in [0, size), without overflow. */
static inline int ur_span_fits(uint64_t offset, uint64_t len, uint64_t size)
{
    return offset <= size && len <= size - offset;
}

/** The slots a producer may have claimed, [0, the result), by a header's
 *  slots_unused (upti/ring.h): a value above max_slots reads them all. */
static inline uint32_t ur_slots_claimed(uint32_t max_slots, uint32_t slots_unused)
{
    return slots_unused <= max_slots ? max_slots - slots_unused : max_slots;
}

#endif
