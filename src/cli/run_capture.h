/* SPDX-License-Identifier: MIT */
/* Internal: `upti run`'s capture options (run_capture.c): which parts of the
 * program's run are recorded (--capture-range, --capture-range-name,
 * --capture-range-end, --start-paused, --delay, --duration,
 * --collection-period) and which executions of each kernel are kept
 * (--kernel-iteration-range). Checked here, handed to the tool in the program
 * (src/program/recorder/capture.c) through UPTI_TRACE_* variables; the kernel iterations
 * are applied by the collector (run_collect.c) as it builds the databases. */
#ifndef UPTI_CLI_RUN_CAPTURE_H
#define UPTI_CLI_RUN_CAPTURE_H

#include <stddef.h>

/** The options as given (NULL: not given). */
typedef struct run_capture {
    const char *range, *name, *end, *delay, *duration, *period, *iterations;
    int start_paused;
} run_capture;

/**
 * Checks the options and sets the variables the program's tool reads. what
 * receives, when a window gates recording, why a run whose window never
 * opened wrote nothing (e.g. `marker "X" was never entered`), else "".
 * 0, or 2 after one line "upti: run: --OPTION 'value' ...: accepted ...".
 */
int run_capture_apply(const run_capture *c, char *what, size_t len);

/** Checks the options as run_capture_apply does, setting nothing. */
int run_capture_check(const run_capture *c);

/**
 * Checks the value of one of these options alone (option: its long name,
 * e.g. "delay"; 0 for any other option), with run_capture_apply's message.
 */
int run_capture_check_one(const char *option, const char *value);

#endif
