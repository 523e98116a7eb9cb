/* SPDX-License-Identifier: MIT */
/* See manifest.h. */
#include "manifest.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* upti's own manifest, already open (uo_manifest_set_fd), or -1. */
static int g_manifest_fd = -1;

void uo_manifest_set_fd(int fd)
{
    g_manifest_fd = fd;
}

int uo_manifest_add(const char *const *fields, size_t n)
{
    if (g_manifest_fd < 0)
        return 0;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += strlen(fields[i]) + 1;
    char *rec = malloc(len);
    if (rec == NULL)
        return -1;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(fields[i]) + 1;
        memcpy(rec + at, fields[i], k);
        at += k;
    }
    /* One write with O_APPEND: the records of upti's threads never interleave. */
    int rc = write(g_manifest_fd, rec, len) == (ssize_t)len ? 0 : -1;
    free(rec);
    return rc;
}

void uo_note_written(const char *path)
{
    const char *fields[] = {"wrote", path};
    uo_manifest_add(fields, 2);
}
