/* SPDX-License-Identifier: MIT */
/* Large growing arrays (big_array.h). */
#include "big_array.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

/* The mapping's length for an array of bytes: whole 2 MiB pages. */
static size_t mapped_length(size_t bytes) { return (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1); }

static void *map_new(size_t len)
{
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

void *uo_big_array_resize(void *p, size_t old_bytes, size_t new_bytes)
{
    if (new_bytes < UO_BIG_ARRAY_MIN)
        return realloc(p, new_bytes);
    size_t len = mapped_length(new_bytes);
    void *m;
    if (p != NULL && old_bytes >= UO_BIG_ARRAY_MIN) {
        size_t was = mapped_length(old_bytes);
        if (len == was)
            return p;
        m = mremap(p, was, len, MREMAP_MAYMOVE);
        if (m == MAP_FAILED)
            return NULL;
    } else {
        /* From malloc's memory into a mapping of its own. */
        if ((m = map_new(len)) == NULL)
            return NULL;
        if (p != NULL)
            memcpy(m, p, old_bytes);
        free(p);
    }
    /* Advice only: without transparent huge pages the array works the same. */
    (void)madvise(m, len, MADV_HUGEPAGE);
    return m;
}

void uo_big_array_free(void *p, size_t bytes)
{
    if (p == NULL)
        return;
    if (bytes < UO_BIG_ARRAY_MIN)
        free(p);
    else
        munmap(p, mapped_length(bytes));
}
