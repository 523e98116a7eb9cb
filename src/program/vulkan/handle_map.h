/* SPDX-License-Identifier: MIT */
/* A map from Vulkan handles to the layer's state of them: open addressing
 * with linear probing, at most half full, backward-shift deletion (no
 * tombstones). Handles are 64-bit (dispatchable ones are pointers,
 * non-dispatchable ones driver values); VK_NULL_HANDLE (0) is never a key.
 * Not thread-safe: each user holds its own lock.
 *
 * The layer looked its objects up in linked lists before: a program with
 * thousands of command buffers, pipelines or allocations paid a scan of all
 * of them at each vkQueueSubmit, vkCmdBindPipeline or vkFreeMemory. */
#ifndef UPTI_VULKAN_HANDLE_MAP_H
#define UPTI_VULKAN_HANDLE_MAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct uvk_handle_map_t {
    uint64_t *keys; /* 0: a free slot */
    void **values;
    size_t cap;     /* slots, a power of two (0: nothing allocated yet) */
    size_t n;       /* keys held */
} uvk_handle_map_t;

/* The value of key, NULL if none (or key is 0). */
void *uvk_handle_map_get(const uvk_handle_map_t *m, uint64_t key);
/* Sets key's value (replacing one it had); 0, or -1 if memory is short (m unchanged) or key is 0. */
int uvk_handle_map_put(uvk_handle_map_t *m, uint64_t key, void *value);
/* uvk_handle_map_put under lock, freeing value where it fails (what it held
   of an object then goes unfollowed); 0 or -1 as uvk_handle_map_put. */
int uvk_handle_map_keep(uvk_handle_map_t *m, pthread_mutex_t *lock, uint64_t key, void *value);
/* Removes key; returns the value it had, NULL if none. */
void *uvk_handle_map_remove(uvk_handle_map_t *m, uint64_t key);
/* Frees m's memory (its values are the caller's); m is empty again. */
void uvk_handle_map_clear(uvk_handle_map_t *m);

#endif
