/* SPDX-License-Identifier: MIT */
/* Outputs are written as NAME.part and renamed to NAME once complete: a
 * writer killed half-way leaves NAME.part (which `upti run` finishes or
 * removes), never a truncated file under the final name. */
#include "out_files.h"
#include "safe_open.h"
#include "dirs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *uo_part_path(const char *path)
{
    size_t n = strlen(path) + sizeof ".part";
    char *p = malloc(n);
    if (p != NULL)
        snprintf(p, n, "%s.part", path);
    return p;
}

FILE *uo_part_open(const char *path, const char *mode, char **part, char *err, size_t errlen)
{
    *part = uo_part_path(path);
    FILE *f = *part != NULL ? uo_fopen_new(*part, mode) : NULL;
    if (f == NULL) {
        snprintf(err, errlen, "cannot write %s: %s", *part != NULL ? *part : path,
                 uo_open_new_reason(errno));
        free(*part);
        *part = NULL;
    }
    return f;
}

int uo_part_finish(const char *part, const char *path, int ok, char *err, size_t errlen)
{
    if (ok && upti_replace_file(part, path) == 0)
        return 0;
    if (ok)
        snprintf(err, errlen, "cannot rename %s to %s: %s", part, path, strerror(errno));
    unlink(part);
    return -1;
}
