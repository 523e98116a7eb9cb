/* SPDX-License-Identifier: MIT */
/* Internal: what UPTI reads of /proc/<pid>/stat (the SDK stamps its ring files with
 * its own start time; the collector tells a live writer from a reused pid). */
#ifndef UPTI_COMMON_PROC_STAT_H
#define UPTI_COMMON_PROC_STAT_H

#include <stddef.h>
#include <stdint.h>

/**
 * Reads process pid's state letter (field 3: 'R', 'S', 'Z'...) and start time
 * (field 22, clock ticks after boot) from /proc/<pid>/stat; pid 0: this process.
 * Returns 0, or -1 when the process or its stat cannot be read.
 */
int upti_proc_stat(int64_t pid, char *state, uint64_t *start_ticks);

/**
 * This process's command line (/proc/self/cmdline), its arguments joined by
 * spaces, in out[0..cap) (cut to fit, NUL-terminated). Returns 0, or -1 (out
 * is then "") when it cannot be read.
 */
int upti_proc_command_line(char *out, size_t cap);

#endif
