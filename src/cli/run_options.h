/* SPDX-License-Identifier: MIT */
/* Internal: `upti run`'s options (run_options.c): the help text, the option
 * table, what each option sets, the checks of each value (on the command line
 * and in -i's file), the output pattern, and the settings resolved as -i's
 * JSON. cmd_run.c runs the program with them. */
#ifndef UPTI_CLI_RUN_OPTIONS_H
#define UPTI_CLI_RUN_OPTIONS_H

#include "options.h"
#include "run_capture.h"

#include <stdbool.h>
#include <stddef.h>

enum {
    O_OPENCL = CLI_OPT_OWN, O_KERNEL, O_COPY, O_ALLOC, O_MARKER, O_SYS, O_STATS, O_INCLUDE,
    O_EXCLUDE, O_ARGS, O_LIST, O_FORCE, O_VULKAN, O_CAPTURE_RANGE, O_CAPTURE_NAME, O_CAPTURE_END,
    O_START_PAUSED, O_DELAY, O_DURATION, O_PERIOD, O_ITERATIONS, O_LOG_LEVEL, O_INPUT, O_OUTPUT_CONFIG,
    O_STATS_REPORT, O_RUNTIME, O_END
};

/* What the command line asked for. */
typedef struct run_options {
    char kinds[256];
    const char *dir, *file, *formats, *include, *exclude;
    const char *log_level; /* --log-level: UPTI_LOG_LEVEL for upti and the traced processes */
    const char *stats_report; /* --stats-report: the reports of --stats (checked), or NULL */
    int stats, list, args, help;
    bool force_overwrite; /* --force-overwrite: replace files of the same name UPTI did not write */
    run_capture capture;  /* when to record, which kernel executions to keep */
    const char *input;    /* -i FILE */
    int output_config;    /* --output-config */
    int pass, npasses;    /* this pass of -i's "jobs", from 1, and how many */
    unsigned char given[O_END]; /* the options given (by id) */
} run_options;

/** The options of `upti run` (run_option_count entries). */
extern const cli_option run_option_table[];
extern const size_t run_option_count;

/** What option id with value sets in o (a run_options *): cli_parse_options' callback. */
int run_on_option(void *o, int id, const char *value);

/** One value of -i's file, checked as on the command line (rc_check_fn). */
int run_check_value(void *ctx, int id, const char *value);

/** The value given for option id (NULL: none). */
const char *run_given_value(const run_options *o, int id);

/** The reports --stats prints (--stats-report's, or the default ones), or NULL without --stats. */
const char *run_stats_reports(const run_options *o);

/** Output pattern: DIR/NAME without extension (malloc'd in *pattern), its
 *  placeholders checked. 0, or an exit status after one line. */
int run_output_pattern(const run_options *o, char **pattern);

/** The formats of a --format value, as UO_FORMAT_* bits. 0, or an exit status after one line. */
int run_check_formats(const char *formats, unsigned *bits);

/** value as a --kernel-include-regex/--kernel-exclude-regex. 0, or an exit status after one line. */
int run_check_regex(const char *value);

/** The settings o resolves to, as a JSON object (RC_CONFIG_HEAD, the options
 *  by long name: every one, defaults included), a file that -i reads back. malloc'd. */
char *run_resolved_config(const run_options *o);

#endif
