/* SPDX-License-Identifier: MIT */
/* The helper collector of a program traced without `upti run`
 * (collector_helper.c): without UPTI_TRACE_RING_DIR, the tool starts `upti recover --wait-pid PID
 * --background RUN_FOLDER` beside the program, in a session of its own, and
 * the program only records (ring_mode.h), as under `upti run`. The helper
 * drains the rings while the program runs and, once it ended, writes its
 * outputs where UPTI_TRACE_OUTPUT says. The program never waits for it, never
 * has it as a child (its wait() cannot see it), and keeps no file of it open. */
#ifndef UPTI_TOOL_COLLECTOR_HELPER_H
#define UPTI_TOOL_COLLECTOR_HELPER_H

#include <stddef.h>

/** What the helper writes (run.conf of its run folder, src/cli/run_collect.h). */
typedef struct ut_helper_conf {
    const char *pattern; /**< output path without extension, placeholders unexpanded, absolute */
    unsigned formats;    /**< UO_FORMAT_* bits */
    const char *stats;   /**< the reports on the helper's stderr (a list of names), or NULL */
    const char *include, *exclude, *iterations; /**< kernel filters, or NULL */
} ut_helper_conf;

/**
 * Creates a run folder ($TMPDIR, else /tmp: upti-collect-XXXXXX, the rings in
 * /dev/shm/upti-collect-XXXXXX when it exists), writes its run.conf and starts
 * the helper on it (the `upti` program: UPTI_TRACE_COLLECTOR, else ../bin/upti
 * beside this library, else the installed one). Returns 0 once the helper
 * runs, with the ring folder in rings; 1 when no helper could start (said in
 * one "upti:" line naming the folder and the `upti recover` that converts it):
 * the folder stays, the rings still go there; -1 when no folder could be made
 * (said: nothing is traced).
 */
int ut_helper_start(const ut_helper_conf *conf, char *rings, size_t len);

/** pattern made absolute against the working directory (a '%' in it doubled). malloc'd. */
char *ut_absolute_pattern(const char *pattern);

#endif
