/* SPDX-License-Identifier: MIT */
/* See kv_pairs.h. */
#include "kv_pairs.h"

#include <string.h>

int upti_kv_put(FILE *f, const char *key, const char *value)
{
    if (value == NULL)
        return 0;
    return fwrite(key, 1, strlen(key) + 1, f) == strlen(key) + 1 &&
                   fwrite(value, 1, strlen(value) + 1, f) == strlen(value) + 1
               ? 0
               : -1;
}

const char *upti_kv_get(const char *data, size_t len, const char *key)
{
    for (size_t i = 0; i < len;) {
        const char *k = data + i;
        size_t kl = strnlen(k, len - i);
        if (i + kl + 1 >= len)
            return NULL;
        const char *v = k + kl + 1;
        size_t vl = strnlen(v, len - (i + kl + 1));
        if (i + kl + 1 + vl >= len)
            return NULL;
        if (strcmp(k, key) == 0)
            return v;
        i += kl + 1 + vl + 1;
    }
    return NULL;
}
