/* SPDX-License-Identifier: MIT */
/* Internal: arrays that grow to tens of megabytes while a database is written
 * (the entries of an index), kept in memory that the kernel can back with
 * 2 MiB pages.
 *
 * Filling 32 MiB of fresh 4 KiB pages takes 8,192 page faults; on a virtual
 * machine each is a trip through the hypervisor, and they were half of the
 * converter's time on its biggest table. Past UO_BIG_ARRAY_MIN bytes an array
 * moves into an anonymous mapping marked MADV_HUGEPAGE (taken by the kernel
 * when transparent huge pages are "always" or "madvise") and grows with
 * mremap, which moves page tables, not bytes. Below it, malloc: a small trace
 * does not pay for a 2 MiB page it would not fill.
 */
#ifndef UPTI_OUTPUT_BIG_ARRAY_H
#define UPTI_OUTPUT_BIG_ARRAY_H

#include <stddef.h>

/** Arrays of this size or more are mapped (a multiple of 2 MiB). */
#define UO_BIG_ARRAY_MIN ((size_t)4 << 20)

/**
 * Resizes p, of old_bytes (0 with p NULL), to new_bytes >= old_bytes, keeping
 * its content; returns the new address, or NULL (p is then left as it was).
 * Memory from this function is resized and freed only through it.
 */
void *uo_big_array_resize(void *p, size_t old_bytes, size_t new_bytes);

/** Frees p, of bytes (as last given to uo_big_array_resize). */
void uo_big_array_free(void *p, size_t bytes);

#endif
