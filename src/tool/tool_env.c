/* See tool_env.h. */
#include "tool_env.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t ut_env_size(const char *var, size_t def, size_t min, size_t max)
{
    const char *v = getenv(var);
    if (v == NULL || v[0] == '\0')
        return def;
    const char *p = v;
    uint64_t n = 0;
    int ok = *p >= '0' && *p <= '9';
    for (; ok && *p >= '0' && *p <= '9'; p++) {
        if (n > (UINT64_MAX - 9) / 10) {
            ok = 0;
            break;
        }
        n = n * 10 + (uint64_t)(*p - '0');
    }
    unsigned shift = 0;
    if (ok && *p != '\0') {
        switch (*p) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: ok = 0;
        }
        if (ok && p[1] != '\0')
            ok = 0;
    }
    if (ok && n > (UINT64_MAX >> shift))
        ok = 0;
    n <<= shift;
    if (!ok || n < min || n > max) {
        /* The value is printed with %s as data, never as a format. */
        fprintf(stderr, "upti: %s='%.64s' is not a size in [%zu, %zu] bytes: using %zu\n", var, v,
                min, max, def);
        return def;
    }
    return (size_t)n;
}

char *ut_fallback_base(const char *base)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] != '/')
        dir = "/tmp";
    const char *name = strrchr(base, '/');
    name = name != NULL ? name + 1 : base;
    if (name[0] == '\0')
        name = "upti-trace";
    size_t len = strlen(dir) + strlen(name) + 2;
    char *out = malloc(len);
    if (out == NULL)
        return NULL;
    snprintf(out, len, "%s/%s", dir, name);
    if (strcmp(out, base) == 0) {
        free(out);
        return NULL;
    }
    return out;
}
