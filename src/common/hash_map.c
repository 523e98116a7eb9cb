/* SPDX-License-Identifier: MIT */
/* The uint64 -> uint64 hash map (hash_map.h). */
#include "hash_map.h"

#include <stdlib.h>
#include <string.h>

uint64_t upti_hash64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void upti_map_init(upti_map *m) { memset(m, 0, sizeof *m); }

void upti_map_free(upti_map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

/* The first empty slot of key's probe run. */
static size_t empty_slot(const upti_map *m, uint64_t key)
{
    size_t mask = m->cap - 1, i = upti_hash64(key) & mask;
    while (m->used[i])
        i = (i + 1) & mask;
    return i;
}

static uint64_t *put(upti_map *m, size_t i, uint64_t key, uint64_t val)
{
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return &m->vals[i];
}

uint64_t *upti_map_next(const upti_map *m, uint64_t key, size_t *pos)
{
    if (m->cap == 0)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = (upti_hash64(key) + *pos) & mask; m->used[i]; i = (i + 1) & mask) {
        ++*pos;
        if (m->keys[i] == key)
            return &m->vals[i];
    }
    return NULL;
}

uint64_t *upti_map_find(const upti_map *m, uint64_t key)
{
    size_t pos = 0;
    return upti_map_next(m, key, &pos);
}

/* Room for one more entry, the map kept at most half full. */
static int reserve(upti_map *m)
{
    if ((m->count + 1) * 2 <= m->cap)
        return 0;
    size_t cap = m->cap ? m->cap * 2 : 64;
    upti_map n = {calloc(cap, 8), calloc(cap, 8), calloc(cap, 1), cap, 0};
    if (n.keys == NULL || n.vals == NULL || n.used == NULL) {
        upti_map_free(&n);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i])
            put(&n, empty_slot(&n, m->keys[i]), m->keys[i], m->vals[i]);
    upti_map_free(m);
    *m = n;
    return 0;
}

uint64_t *upti_map_add(upti_map *m, uint64_t key)
{
    if (reserve(m) != 0)
        return NULL;
    return put(m, empty_slot(m, key), key, 0);
}

uint64_t *upti_map_insert(upti_map *m, uint64_t key, int *inserted)
{
    if (inserted)
        *inserted = 0;
    if (reserve(m) != 0)
        return NULL;
    uint64_t *v = upti_map_find(m, key);
    if (v != NULL)
        return v;
    if (inserted)
        *inserted = 1;
    return put(m, empty_slot(m, key), key, 0);
}

int upti_map_remove(upti_map *m, uint64_t key)
{
    uint64_t *v = upti_map_find(m, key);
    if (v == NULL)
        return -1;
    size_t mask = m->cap - 1, i = (size_t)(v - m->vals);
    m->used[i] = 0;
    m->count--;
    /* Re-insert the rest of the cluster so probes stay unbroken. */
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        m->used[j] = 0;
        m->count--;
        put(m, empty_slot(m, m->keys[j]), m->keys[j], m->vals[j]);
    }
    return 0;
}
