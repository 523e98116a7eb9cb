/* SPDX-License-Identifier: MIT */
/* What a call writes on standard error, read back: stderr goes into a pipe
 * from capture_stderr_begin to capture_stderr_end (a pipe's size at most). */
#ifndef UPTI_TEST_CAPTURE_STDERR_H
#define UPTI_TEST_CAPTURE_STDERR_H

#include <stddef.h>
#include <unistd.h>

typedef struct capture_stderr {
    int fds[2];
    int saved; /* the standard error to put back */
} capture_stderr_t;

/* 0, or -1 without a pipe (stderr left as it was). */
static inline int capture_stderr_begin(capture_stderr_t *c)
{
    if (pipe(c->fds) != 0)
        return -1;
    c->saved = dup(STDERR_FILENO);
    dup2(c->fds[1], STDERR_FILENO);
    return 0;
}

/* Puts stderr back; out (cap bytes, NUL-terminated) gets what was written, and its length. */
static inline size_t capture_stderr_end(capture_stderr_t *c, char *out, size_t cap)
{
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    close(c->fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = read(c->fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(c->fds[0]);
    return n;
}

#endif
