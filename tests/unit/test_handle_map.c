/* SPDX-License-Identifier: MIT */
/* src/program/vulkan/handle_map.c: the Vulkan layer's handle -> state map, checked
 * against a plain array through random puts, replacements and removals,
 * with keys chosen to collide (aligned pointers, small counters, keys that
 * share a home slot) so that probe runs wrap around the table and removals
 * shift keys back across the wrap. */
#include "../../src/program/vulkan/handle_map.h"

#include "check.h"
#include "unit_tests.h"

#include <stdint.h>
#include <stdlib.h>

#define KEYS 3000

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* 0 if m holds exactly the keys whose present[] is set, with value i + 1. */
static int same(const uvk_handle_map_t *m, const uint64_t *keys, const unsigned char *present)
{
    size_t held = 0;
    for (int i = 0; i < KEYS; i++) {
        void *v = uvk_handle_map_get(m, keys[i]);
        if (v != (present[i] ? (void *)(uintptr_t)(i + 1) : NULL))
            return -1;
        held += present[i];
    }
    return held == m->n ? 0 : -1;
}

UNIT_TEST(handle_map)
{
    static uint64_t keys[KEYS];
    static unsigned char present[KEYS];
    for (int i = 0; i < KEYS; i++) {
        if (i < 1000)
            keys[i] = 0x7f0000001000ull + 64ull * (uint64_t)i; /* aligned pointers */
        else if (i < 2000)
            keys[i] = (uint64_t)(i - 999);                    /* small counters */
        else
            keys[i] = (uint64_t)(i - 1999) << 40;              /* only high bits differ */
    }
    uvk_handle_map_t m = {0};
    CHECK(uvk_handle_map_get(&m, keys[0]) == NULL);
    CHECK(uvk_handle_map_remove(&m, keys[0]) == NULL);
    CHECK(uvk_handle_map_put(&m, 0, &m) == -1); /* VK_NULL_HANDLE is never a key */
    CHECK(uvk_handle_map_get(&m, 0) == NULL);

    uint64_t rnd = 88172645463325252ull;
    int bad = 0;
    for (int step = 0; step < 200000 && !bad; step++) {
        int i = (int)(next_random(&rnd) % KEYS);
        /* Fill up more often than empty until the table is large, then balance. */
        int put = (int)(next_random(&rnd) % 100) < (step < 50000 ? 70 : 50);
        if (put) {
            bad |= uvk_handle_map_put(&m, keys[i], (void *)(uintptr_t)(i + 1)) != 0;
            present[i] = 1;
        } else {
            void *old = uvk_handle_map_remove(&m, keys[i]);
            bad |= old != (present[i] ? (void *)(uintptr_t)(i + 1) : NULL);
            present[i] = 0;
        }
        if (step % 997 == 0)
            bad |= same(&m, keys, present) != 0;
    }
    CHECK(!bad);
    CHECK(same(&m, keys, present) == 0);
    CHECK(2 * m.n <= m.cap); /* at most half full */

    /* Replacing keeps one entry. */
    size_t n = m.n;
    CHECK(uvk_handle_map_put(&m, keys[5], &m) == 0);
    CHECK(m.n == n + !present[5]);
    CHECK(uvk_handle_map_get(&m, keys[5]) == &m);

    /* Keys with one home slot: a run that wraps past the table's end; each
       removal, in any order, leaves the others findable. */
    uvk_handle_map_clear(&m);
    CHECK(m.n == 0 && m.cap == 0 && m.keys == NULL);
    uint64_t same_home[6];
    int found = 0;
    for (uint64_t k = 1; found < 6 && k < 10000000; k++)
        if ((size_t)((k * 0x9E3779B97F4A7C15ull) >> 32 & 15) == 15) /* the last slot of 16 */
            same_home[found++] = k;
    CHECK(found == 6);
    for (int i = 0; i < 6; i++)
        CHECK(uvk_handle_map_put(&m, same_home[i], (void *)(uintptr_t)(i + 1)) == 0);
    CHECK(m.cap == 16);
    const int order[6] = {0, 3, 5, 1, 4, 2};
    for (int r = 0; r < 6; r++) {
        CHECK(uvk_handle_map_remove(&m, same_home[order[r]]) == (void *)(uintptr_t)(order[r] + 1));
        for (int k = r + 1; k < 6; k++)
            CHECK(uvk_handle_map_get(&m, same_home[order[k]]) == (void *)(uintptr_t)(order[k] + 1));
    }
    CHECK(m.n == 0);
    uvk_handle_map_clear(&m);
    return test_result("handle_map");
}
