/* SPDX-License-Identifier: MIT */
/* Creating output files without following links planted in the output
 * directory and without writing through a file that is not ours. */
#ifndef UPTI_OUTPUT_SAFE_OPEN_H
#define UPTI_OUTPUT_SAFE_OPEN_H

#include <stdio.h>

/* Creates path for writing: O_CREAT|O_EXCL|O_NOFOLLOW, mode 0644. An existing
 * regular file owned by this user with one link (an earlier output) is
 * unlinked and created anew, never written through; a symbolic link or any
 * other existing file is refused with errno EEXIST (ELOOP for a link), and one
 * that another process is writing (it holds the file's flock, taken here on
 * every file created, until it is closed) with EBUSY. The
 * stdio stream is fdopen()ed with mode ("w" or "wb"). NULL and errno on
 * failure. */
FILE *uo_fopen_new(const char *path, const char *mode);

/* The same as a file descriptor (O_RDWR), for writers that reopen the path
 * themselves (SQLite): returns the fd or -1 with errno. */
int uo_open_new(const char *path);

/* Why uo_open_new() or uo_fopen_new() failed with errno e, for a message:
 * "another upti is writing it" for EBUSY, else strerror(e). */
const char *uo_open_new_reason(int e);

#endif
