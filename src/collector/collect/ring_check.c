/* SPDX-License-Identifier: MIT */
/* See ring_check.h. A ring file is input like any other: a producer killed
 * while it wrote the header, or a file another program wrote, may claim more
 * slots than it holds, offsets past its end, or sizes whose sums overflow.
 * Nothing of it is used before it passed these checks. */
#include "ring_check.h"

#include <upti/ring.h>

#include <stdio.h>
#include <string.h>

int ur_ring_check(const void *map, uint64_t size, upti_ring_header_t *checked, char *why,
                  size_t why_len)
{
    memcpy(checked, map, sizeof *checked);
    const upti_ring_header_t *h = checked;
    /* (Version 1 is version 2 without its compact API records and compact marks.) */
    if (h->version < 1 || h->version > UPTI_RING_VERSION ||
        h->header_bytes != UPTI_RING_HEADER_BYTES || h->slot_bytes != UPTI_RING_SLOT_BYTES) {
        snprintf(why, why_len, "version %u, header %u bytes, slot %u bytes: not this format",
                 h->version, h->header_bytes, h->slot_bytes);
        return -1;
    }
    if (h->record_abi != sizeof(void *)) {
        snprintf(why, why_len, "records of %u-byte pointers", h->record_abi);
        return -1;
    }
    if (h->file_size != size) {
        snprintf(why, why_len, "file_size %llu, the file has %llu bytes",
                 (unsigned long long)h->file_size, (unsigned long long)size);
        return -1;
    }
    if (h->max_slots == 0 || h->max_slots > 65536) {
        snprintf(why, why_len, "max_slots %u (1 to 65536)", h->max_slots);
        return -1;
    }
    if (h->slot_size == 0 || (h->slot_size & (h->slot_size - 1)) != 0 || h->slot_size > size) {
        snprintf(why, why_len, "slot_size %llu (a power of two the file holds)",
                 (unsigned long long)h->slot_size);
        return -1;
    }
    /* At most 65536 slots of 384 bytes: no overflow. */
    uint64_t table_end = UPTI_RING_HEADER_BYTES + (uint64_t)h->max_slots * UPTI_RING_SLOT_BYTES;
    if (table_end > size) {
        snprintf(why, why_len, "max_slots %u need %llu bytes, the file has %llu", h->max_slots,
                 (unsigned long long)table_end, (unsigned long long)size);
        return -1;
    }
    /* Only the slots a producer may have claimed (the others are zero, and are
     * not faulted in); drain_slot checks data_offset again at each read. */
    uint32_t claimed = ur_slots_claimed(h->max_slots, h->slots_unused);
    for (uint32_t i = 0; i < claimed; i++) {
        uint64_t off = upti_ring_slot((void *)map, i)->data_offset;
        if (off != 0 && (off < table_end || !ur_span_fits(off, h->slot_size, size))) {
            snprintf(why, why_len, "slot %u: data_offset %llu + slot_size %llu outside the "
                     "file's %llu bytes", i, (unsigned long long)off,
                     (unsigned long long)h->slot_size, (unsigned long long)size);
            return -1;
        }
    }
    return 0;
}
