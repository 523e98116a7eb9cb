/* SPDX-License-Identifier: MIT */
/* libFuzzer: uo_expand_placeholders() on any pattern. */
#include "output.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *pattern = malloc(size + 1);
    if (pattern == NULL)
        return 0;
    memcpy(pattern, data, size);
    pattern[size] = '\0';
    setenv("UPTI_FUZZ_ENV", "a/b%pid%c", 1);
    char err[256];
    char *out = uo_expand_placeholders(pattern, err, sizeof err);
    if (out != NULL && strchr(out, '\0') == NULL)
        abort();
    /* A refusal says what, in one line of printable text. */
    if (out == NULL && err[0] != '\0')
        for (const char *e = err; *e; e++)
            if ((unsigned char)*e < 0x20)
                abort();
    free(out);
    free(pattern);
    return 0;
}
