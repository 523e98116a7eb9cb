/* SPDX-License-Identifier: MIT */
/* See handle_map.h. */
#include "handle_map.h"

#include <stdlib.h>

/* The home slot of key in a table of cap slots (Fibonacci hashing: handles
   are often aligned pointers or small counters, whose low bits repeat). */
static size_t home(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* The slot of key, or of the free slot where it would go. */
static size_t slot_of(const uvk_handle_map_t *m, uint64_t key)
{
    size_t i = home(key, m->cap);
    while (m->keys[i] != 0 && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

void *uvk_handle_map_get(const uvk_handle_map_t *m, uint64_t key)
{
    if (m->n == 0 || key == 0)
        return NULL;
    size_t i = slot_of(m, key);
    return m->keys[i] == key ? m->values[i] : NULL;
}

/* Moves m into a table of cap slots; -1 if memory is short (m unchanged). */
static int resize(uvk_handle_map_t *m, size_t cap)
{
    uint64_t *keys = calloc(cap, sizeof *keys);
    void **values = calloc(cap, sizeof *values);
    if (keys == NULL || values == NULL) {
        free(keys);
        free(values);
        return -1;
    }
    uvk_handle_map_t grown = {keys, values, cap, m->n};
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != 0) {
            size_t j = slot_of(&grown, m->keys[i]);
            keys[j] = m->keys[i];
            values[j] = m->values[i];
        }
    free(m->keys);
    free(m->values);
    *m = grown;
    return 0;
}

int uvk_handle_map_put(uvk_handle_map_t *m, uint64_t key, void *value)
{
    if (key == 0)
        return -1;
    if (2 * (m->n + 1) > m->cap && resize(m, m->cap != 0 ? 2 * m->cap : 16) != 0)
        return -1;
    size_t i = slot_of(m, key);
    if (m->keys[i] == 0) {
        m->keys[i] = key;
        m->n++;
    }
    m->values[i] = value;
    return 0;
}

void *uvk_handle_map_remove(uvk_handle_map_t *m, uint64_t key)
{
    if (m->n == 0 || key == 0)
        return NULL;
    size_t mask = m->cap - 1, i = slot_of(m, key);
    if (m->keys[i] != key)
        return NULL;
    void *value = m->values[i];
    /* Backward shift: each later key of the run moves into the hole if its
       home does not lie cyclically in (hole, its slot]. */
    for (size_t j = (i + 1) & mask; m->keys[j] != 0; j = (j + 1) & mask) {
        size_t h = home(m->keys[j], m->cap);
        if (((j - h) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->values[i] = m->values[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->values[i] = NULL;
    m->n--;
    return value;
}

int uvk_handle_map_keep(uvk_handle_map_t *m, pthread_mutex_t *lock, uint64_t key, void *value)
{
    pthread_mutex_lock(lock);
    int rc = uvk_handle_map_put(m, key, value);
    pthread_mutex_unlock(lock);
    if (rc != 0)
        free(value);
    return rc;
}

void uvk_handle_map_clear(uvk_handle_map_t *m)
{
    free(m->keys);
    free(m->values);
    *m = (uvk_handle_map_t){NULL, NULL, 0, 0};
}
