/* SPDX-License-Identifier: MIT */
/* See manifest.h. */
#include "manifest.h"
#include "output.h"

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

/* uo_say_written() was called. */
static int g_say;

void uo_say_written(void)
{
    g_say = 1;
}

void uo_say_path(const char *prefix, const char *path)
{
    uo_buf b;
    uo_buf_init(&b, stderr);
    uo_buf_puts(&b, prefix);
    uo_text_escape(&b, path, 0);
    uo_buf_putc(&b, '\n');
    uo_buf_flush(&b, 0);
    uo_buf_free(&b);
}

void uo_note_written(const char *path)
{
    if (g_manifest_fd < 0 && g_say) {
        uo_say_path("upti: wrote ", path);
        return;
    }
    const char *fields[] = {"wrote", path};
    uo_manifest_add(fields, 2);
}
