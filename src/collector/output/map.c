/* SPDX-License-Identifier: MIT */
/* A uint64 → uint64 hash map with open addressing and linear probing. */
#include "output.h"

#include <stdlib.h>
#include <string.h>

uint64_t uo_hash64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void uo_map_init(uo_map *m) { memset(m, 0, sizeof *m); }

void uo_map_free(uo_map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

uint64_t *uo_map_find(const uo_map *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = uo_hash64(key) & mask;; i = (i + 1) & mask) {
        if (!m->used[i])
            return NULL;
        if (m->keys[i] == key)
            return &m->vals[i];
    }
}

static int grow(uo_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uo_map n = {calloc(cap, 8), calloc(cap, 8), calloc(cap, 1), cap, 0};
    if (n.keys == NULL || n.vals == NULL || n.used == NULL) {
        uo_map_free(&n);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = uo_hash64(m->keys[i]) & (cap - 1);
        while (n.used[j])
            j = (j + 1) & (cap - 1);
        n.used[j] = 1;
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.count++;
    }
    uo_map_free(m);
    *m = n;
    return 0;
}

uint64_t *uo_map_insert(uo_map *m, uint64_t key, int *inserted)
{
    if (inserted)
        *inserted = 0;
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
        return NULL;
    size_t mask = m->cap - 1;
    size_t i = uo_hash64(key) & mask;
    for (; m->used[i]; i = (i + 1) & mask)
        if (m->keys[i] == key)
            return &m->vals[i];
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = 0;
    m->count++;
    if (inserted)
        *inserted = 1;
    return &m->vals[i];
}

int uo_map_remove(uo_map *m, uint64_t key)
{
    if (m->cap == 0)
        return -1;
    size_t mask = m->cap - 1;
    size_t i = uo_hash64(key) & mask;
    for (;; i = (i + 1) & mask) {
        if (!m->used[i])
            return -1;
        if (m->keys[i] == key)
            break;
    }
    m->used[i] = 0;
    m->count--;
    /* Re-insert the rest of the cluster so probes stay unbroken. */
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        uint64_t k = m->keys[j], v = m->vals[j];
        m->used[j] = 0;
        size_t t = uo_hash64(k) & mask;
        while (m->used[t])
            t = (t + 1) & mask;
        m->used[t] = 1;
        m->keys[t] = k;
        m->vals[t] = v;
    }
    return 0;
}
