/* SPDX-License-Identifier: MIT */
/* Internal: reading a caller's struct whose first member is its size.
 *
 * A public struct grows only at its end, and its first member, size_t size,
 * says how much of it the caller's build knows (sizeof at the caller's
 * compile time). UPTI reads such a struct through upti_struct_copy():
 *   - smaller than this UPTI's: the fields the caller does not know read as
 *     0, the documented default of every field (an older tool keeps working);
 *   - larger: the caller's build knows fields this UPTI does not. Those bytes
 *     being all zero means the caller left them at their defaults, which this
 *     UPTI also gives, so it goes on; a non-zero one asks for something this
 *     UPTI cannot do: UPTI_STATUS_ERROR_INCOMPATIBLE_ABI (libbpf's
 *     OPTS_VALID rule).
 *   - smaller than the size member itself: UPTI_STATUS_ERROR_INVALID_ARGUMENT.
 */
#ifndef UPTI_COMMON_STRUCT_SIZE_H
#define UPTI_COMMON_STRUCT_SIZE_H

#include <stddef.h>
#include <string.h>
#include <upti/status.h>

/* Copies in (claimed bytes) into out (known bytes, zeroed first); see above. */
static inline upti_status_t upti_struct_copy(void *out, size_t known, const void *in)
{
    memset(out, 0, known);
    if (in == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    size_t claimed;
    memcpy(&claimed, in, sizeof claimed);
    if (claimed < sizeof(size_t))
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    const unsigned char *bytes = in;
    for (size_t i = known; i < claimed; i++)
        if (bytes[i] != 0)
            return UPTI_STATUS_ERROR_INCOMPATIBLE_ABI;
    memcpy(out, in, claimed < known ? claimed : known);
    return UPTI_STATUS_SUCCESS;
}

#endif
