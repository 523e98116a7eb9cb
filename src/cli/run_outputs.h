/* SPDX-License-Identifier: MIT */
/* Internal: what `upti run` does with the outputs of the processes it traced
 * (run_outputs.c): the run manifest (src/collector/output/manifest.h), the recovery of
 * traces whose process died without closing them, the leftovers of a writer
 * killed half-way, and the closing "upti: wrote PATH" lines. */
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
 * Once the program (pid top, wait status) has ended: recovers the databases
 * its processes left open, finishes or removes half-written outputs (saying
 * which), removes empty traces, then prints "upti: wrote PATH" per output
 * file, or says that no trace was written (traced_elsewhere: the number of
 * processes whose outputs the collector wrote; -1: none, and the collector
 * said why). Removes the manifest.
 */
void run_outputs_end(pid_t top, int status, int stats, int traced_elsewhere);

/** How the program (pid top, wait status) or one of its processes (pid) ended,
 *  for the database's metadata "ended": "killed by signal 9 (Killed)", ... */
void run_describe_end(char *out, size_t len, pid_t pid, pid_t top, int status);

#endif
