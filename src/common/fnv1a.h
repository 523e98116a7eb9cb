/* SPDX-License-Identifier: MIT */
/* Internal: FNV-1a, the 64-bit hash of a string that UPTI's tables use
 * (interned strings, OTF2's string table, a ring file's name). */
#ifndef UPTI_COMMON_FNV1A_H
#define UPTI_COMMON_FNV1A_H

#include <stdint.h>

/* FNV-1a's 64-bit offset basis: the hash of the empty string. */
#define UPTI_FNV1A64_BASIS 14695981039346656037ull

/* The hash of s continued from h (UPTI_FNV1A64_BASIS for s alone). */
static inline uint64_t upti_fnv1a64(uint64_t h, const char *s)
{
    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

#endif
