/* SPDX-License-Identifier: MIT */
/* Internal: checks of the files a subcommand reads and writes (files.c). */
#ifndef UPTI_CLI_FILES_H
#define UPTI_CLI_FILES_H

#include <stddef.h>

/**
 * Index of the input that is the same file as output (same device and
 * inode, whatever the paths say), or -1 when none is (or output does not
 * exist yet).
 */
int cli_output_is_input(const char *output, const char *const *inputs, int n);

/**
 * The whole of the file at path, malloc'd, with a '\0' after its *len bytes;
 * NULL with errno set when it cannot be opened (fopen's errno), is larger than
 * 64 MiB (EFBIG), memory runs out (ENOMEM) or a read fails (EIO).
 */
char *cli_read_file(const char *path, size_t *len);

#endif
