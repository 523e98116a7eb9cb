/* SPDX-License-Identifier: MIT */
/* Internal: the run manifest of `upti run` and `upti recover` (run_outputs.c,
 * src/collector/output/manifest.h): the files the collector wrote, and the
 * closing "upti: wrote PATH" lines. */
#ifndef UPTI_CLI_RUN_OUTPUTS_H
#define UPTI_CLI_RUN_OUTPUTS_H

#include <sys/types.h>

/** Creates the run's manifest (a private, unlinked file). 0, or -1 (said on stderr). */
int run_outputs_begin(void);
/** Removes the manifest (the program never ran). */
void run_outputs_discard(void);
/** The helper collector of a program traced without `upti run` (run.conf
 *  "quiet"): run_outputs_end() prints no closing line ("upti: wrote PATH", "no
 *  trace written"): the program's stderr, which the helper shares, stays the
 *  program's own. Errors are still said. */
void run_outputs_quiet(void);

/**
 * Once the collector is done: prints "upti: wrote PATH" per output file, or
 * says that no trace was written (traced: the number of processes whose
 * records the collector converted; -1: none, and the collector said why).
 * Removes the manifest. Returns how many files it said written.
 */
int run_outputs_end(int traced);

/** How the program (pid top, wait status) or one of its processes (pid) ended,
 *  for the database's metadata "ended": "killed by signal 9 (Killed)", ... */
void run_describe_end(char *out, size_t len, pid_t pid, pid_t top, int status);

#endif
