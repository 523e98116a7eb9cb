/* SPDX-License-Identifier: MIT */
/* Internal: the `upti` command line: one file per subcommand, dispatched by main.c. */
#ifndef UPTI_CLI_H
#define UPTI_CLI_H

#include <stdio.h>

/** One subcommand: its name, a one-line summary, its entry and its help. */
typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /**< argv[0] is the subcommand's name */
    void (*help)(FILE *out);
} cli_command;

/** Declares a subcommand's entry, cmd_NAME, and its help, cmd_NAME_help. */
#define CLI_COMMAND(name)                                                                     \
    int cmd_##name(int argc, char **argv);                                                    \
    void cmd_##name##_help(FILE *out)
CLI_COMMAND(run);
CLI_COMMAND(stats);
CLI_COMMAND(export);
CLI_COMMAND(merge);
CLI_COMMAND(recover);

/** The analyses written in Python (cmd_analysis.c): runs `python3 -m upti
 *  argv[0] argv[1]...`, the command's name first; returns only on failure. */
int cmd_python(int argc, char **argv);
void cmd_analyze_help(FILE *out);
void cmd_diff_help(FILE *out);
void cmd_recipe_help(FILE *out);
void cmd_report_help(FILE *out);

/** Prints "upti: <message>" and a hint to the subcommand's help; returns 2 (usage error). */
int cli_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/**
 * Where the values being checked come from (e.g. "job.json:3:5: \"delay\""), put
 * by cli_usage_error after the command's name; NULL: the command line.
 */
void cli_set_error_context(const char *context);

/** Prints "upti: <message>"; returns 1. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Set by upti run once it starts a program: upti's exit status is then the
 *  program's, even if what upti printed on stdout (-L) could not be written. */
extern int cli_status_is_programs;

/** The path of this upti executable (/proc/self/exe, read once); NULL if unknown. */
const char *cli_self_exe(void);
/** Directory holding UPTI's libraries (next to the binary: ../lib, ../<libdir>) and the
 *  upti Python package (upti/python); NULL if none. */
const char *cli_library_dir(void);

/** db path without a trailing ".db" (malloc'd). */
char *cli_strip_db(const char *path);

/** The text of printf(fmt, ...), malloc'd; NULL on ENOMEM. */
char *cli_format_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
