/* SPDX-License-Identifier: MIT */
/* See manifest.h. */
#include "manifest.h"

#include <fcntl.h>
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
    const char *manifest = getenv("UPTI_TRACE_MANIFEST");
    if (g_manifest_fd < 0 && (manifest == NULL || manifest[0] == '\0'))
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
    /* One write with O_APPEND: records of concurrent processes never interleave. */
    int fd = g_manifest_fd >= 0 ? g_manifest_fd
                                : open(manifest, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    int rc = -1;
    if (fd >= 0) {
        rc = write(fd, rec, len) == (ssize_t)len ? 0 : -1;
        if (fd != g_manifest_fd)
            close(fd);
    }
    free(rec);
    return rc;
}

void uo_note_written(const char *path)
{
    const char *fields[] = {"wrote", path};
    uo_manifest_add(fields, 2);
}
