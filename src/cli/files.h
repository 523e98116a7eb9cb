/* Internal: checks of the files a subcommand reads and writes (files.c). */
#ifndef UPTI_CLI_FILES_H
#define UPTI_CLI_FILES_H

/**
 * Index of the input that is the same file as output (same device and
 * inode, whatever the paths say), or -1 when none is (or output does not
 * exist yet).
 */
int cli_output_is_input(const char *output, const char *const *inputs, int n);

#endif
