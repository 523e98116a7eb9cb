/* SPDX-License-Identifier: MIT */
/* Internal to the index of a page-written table (index_pages.h): what its
 * files share. index_pages.c keeps the entries, as runs or one by one, and
 * attaches the index; index_sort.c sorts entries kept one by one;
 * index_leaves.c writes the b-tree from the entries in key order. */
#ifndef UPTI_OUTPUT_INDEX_INTERNAL_H
#define UPTI_OUTPUT_INDEX_INTERNAL_H

#include "index_pages.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** Bytes of entries held by every index: of every database, whichever thread
 *  adds their rows (a converter's and a page writer's, page_writer.h). */
extern _Atomic size_t uo_index_bytes;

/** Frees the entries ix's scan took out (uo_index_tree.out), counted in uo_index_bytes. */
void uo_index_free_taken(uo_index_tree *ix);

/* Entries ahead of the one read that a pass over an index's entries asks
 * for (1 KiB): on the virtual machines measured, the processor did not fetch
 * them ahead itself. The pass that writes the leaves of a 2 M-call run's
 * index, its entries out of the cache, waited a quarter of its time for
 * them: 19 to 20 ms, 11.5 with this (128 and 256 ahead did no better).
 * Placing the entries of an 8-thread run at their keys (place_unique) took
 * 8.3 ms, 7.1 with this. */
#define UO_INDEX_PREFETCH 64

/* Asks for e[i + UO_INDEX_PREFETCH] of e[0..n) to be fetched, if there is one. */
static inline void prefetch_ahead(const uo_index_entry *e, size_t i, size_t n)
{
    if (i + UO_INDEX_PREFETCH < n)
        __builtin_prefetch(&e[i + UO_INDEX_PREFETCH]);
}

/** The order of entries (key a, row id ra) and (key b, row id rb): by key,
 *  then row id; -1, 0 or 1. */
static inline int uo_index_order(int64_t a, int64_t ra, int64_t b, int64_t rb)
{
    if (a != b)
        return a < b ? -1 : 1;
    return ra < rb ? -1 : ra > rb;
}

/** Runs fn(arg, 1) on a thread of its own and fn(arg, 0) on this one, then
 *  waits for both; with split 0, or without a thread, one after the other. */
void uo_index_both_halves(void (*fn)(void *, int), void *arg, int split);

/** Ends ix's scan as its entries came (uo_index_tree.scan): 1 where its
 *  entries are then in key order, else 0 (index_sort.c). */
int uo_index_finish_scan(uo_index_tree *ix);

/** Sorts ix's entries by key then row id; returns the array that holds
 *  them: ix->e or *tmp, made here (index_sort.c). */
uo_index_entry *uo_index_sort_entries(const uo_index_tree *ix, int scanned, uo_index_entry **tmp);

/* The entries in key order that the leaves are written from: e[0..n), or
 * the runs run[0..runs), run r's entries the first[r]-th on. */
typedef struct uo_sorted_entries {
    const uo_index_entry *e;
    const uo_index_run *run;
    const size_t *first;
    size_t runs, n;
} uo_sorted_entries;

/** Writes the b-tree of src's entries: pages appended through out, the top
 *  into root (which stays an empty leaf where there is no entry). 0, or -1
 *  (out->error says why). */
int uo_index_write_tree(const uo_sorted_entries *src, uint32_t root, sqlf_out *out);

#endif
