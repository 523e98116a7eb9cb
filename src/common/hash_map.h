/* SPDX-License-Identifier: MIT */
/* The one hash map of UPTI's internals: uint64 -> uint64, open addressing with
 * linear probing, not thread-safe (a caller shared between threads locks around it).
 *
 * Two ways to use it:
 *  - one value per key: upti_map_find, upti_map_insert, upti_map_remove;
 *  - tables keyed by a hash of something larger (a string): upti_map_add stores a
 *    value under a key that may already be there, and upti_map_next visits the values
 *    stored under a key, for the caller to compare what they stand for. */
#ifndef UPTI_COMMON_HASH_MAP_H
#define UPTI_COMMON_HASH_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct upti_map {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    size_t cap;   /* a power of two, or 0 before the first insertion */
    size_t count;
} upti_map;

void upti_map_init(upti_map *m);
void upti_map_free(upti_map *m);
/** Pointer to the value of key, or NULL. */
uint64_t *upti_map_find(const upti_map *m, uint64_t key);
/** Pointer to the value of key, inserted as 0 if absent (*inserted = 1); NULL on ENOMEM. */
uint64_t *upti_map_insert(upti_map *m, uint64_t key, int *inserted);
/** Removes key (its first value); 0, or -1 if it was not there. */
int upti_map_remove(upti_map *m, uint64_t key);
/** A new value 0 stored under key, even if key has values already; NULL on ENOMEM.
 *  The pointer holds until the next change of the map. */
uint64_t *upti_map_add(upti_map *m, uint64_t key);
/** The next value stored under key: *pos is 0 for the first call and is moved on by
 *  each; NULL after the last. */
uint64_t *upti_map_next(const upti_map *m, uint64_t key, size_t *pos);
/** Spreads the bits of x (splitmix64's finalizer). */
uint64_t upti_hash64(uint64_t x);

#endif
