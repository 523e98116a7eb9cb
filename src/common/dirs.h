/* SPDX-License-Identifier: MIT */
/* Internal: directories created with their parents (`upti -d a/b/c`, `-o newdir/name`),
 * and finished files put in the place of others (upti_replace_file). */
#ifndef UPTI_COMMON_DIRS_H
#define UPTI_COMMON_DIRS_H

#include <stddef.h>

/**
 * Creates the directory path and every missing parent (mode 0777 less the
 * umask); an existing directory is fine. 0, or -1 with errno set (ENOTDIR
 * when a component is not a directory) and nothing removed.
 */
int upti_mkdirs(const char *path);

/** Creates the directory that will hold file (everything before its last '/'); 0 or -1. */
int upti_mkdirs_for(const char *file);

/**
 * rename(from, to), without the writeback that ext4 starts in the caller when
 * a rename replaces a file (auto_da_alloc: every dirty page of from,
 * throttled by the block layer: 35 ms for a 100 MB trace database here):
 * where to is a regular file, the two are exchanged (renameat2
 * RENAME_EXCHANGE), then from, now that file, is removed. Where something
 * else came to to between the look and the exchange, it is put back first;
 * where the exchange is not possible, a rename. 0, or -1 with errno.
 */
int upti_replace_file(const char *from, const char *to);

#endif
