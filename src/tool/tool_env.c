/* See tool_env.h. */
#include "tool_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
