/* SPDX-License-Identifier: MIT */
/* Internal: directories created with their parents (`upti -d a/b/c`, `-o newdir/name`). */
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

#endif
