/* SPDX-License-Identifier: MIT */
/* Internal: the one option grammar of every `upti` subcommand (no getopt: no
 * prefix abbreviations, no reordering surprises, messages that name the option). */
#ifndef UPTI_CLI_OPTIONS_H
#define UPTI_CLI_OPTIONS_H

#include <stddef.h>

#include "output_formats.h"

/** One option: its id, short letter (0: none), long name, a second long name
 *  (NULL: none) and whether it takes a value. */
typedef struct cli_option {
    int id;
    char short_name;
    const char *long_name;
    const char *alias;
    int takes_value;
} cli_option;

/** The ids of the options several subcommands share; a subcommand's own start at CLI_OPT_OWN. */
enum {
    CLI_OPT_HELP = 1, /**< -h, --help */
    CLI_OPT_DIR,      /**< -d, --output-dir DIR: the directory of the outputs */
    CLI_OPT_OUTPUT,   /**< -o, --output, --output-file NAME: the outputs' name, without extension */
    CLI_OPT_FORMAT,   /**< -f, --format LIST */
    CLI_OPT_OWN = 100
};

/** The table entries of the shared options: the same letters and names everywhere. */
#define CLI_OPTION_HELP {CLI_OPT_HELP, 'h', "help", NULL, 0}
#define CLI_OPTION_DIR {CLI_OPT_DIR, 'd', "output-dir", NULL, 1}
#define CLI_OPTION_OUTPUT {CLI_OPT_OUTPUT, 'o', "output", "output-file", 1}
#define CLI_OPTION_FORMAT {CLI_OPT_FORMAT, 'f', "format", NULL, 1}

/** Where the positional arguments end. */
typedef enum cli_args_mode {
    CLI_ARGS_ANYWHERE, /**< options and positionals in any order; "--" ends the options */
    CLI_ARGS_PROGRAM   /**< the first positional (or what follows "--") and everything after
                            it are the program and its arguments */
} cli_args_mode;

/** Called for each option in order with its value (NULL for a switch); 0, or an exit status. */
typedef int (*cli_option_fn)(void *ctx, int id, const char *value);

/**
 * Parses argv[1..argc) of command (argv[0] is the command's name) against the
 * n options of table. Long options by their exact name only (--name VALUE or
 * --name=VALUE: a prefix is not a name), short ones as -o VALUE, -oVALUE or a
 * cluster of switches (-Lh). Positionals are stored in positionals (room for
 * argc entries) and counted in *npositional. Returns 0; 2 after one line
 * "upti: COMMAND: ..." (unknown option, with "did you mean" when one is close;
 * an option without its value; a switch given one); or what fn returned.
 */
int cli_parse_options(const char *command, const cli_option *table, size_t n, int argc,
                      char **argv, cli_args_mode mode, cli_option_fn fn, void *ctx,
                      char **positionals, int *npositional);

/** The option whose long name (or alias) is name, or NULL. */
const cli_option *cli_find_option(const cli_option *table, size_t n, const char *name);

/** The long name of table closest to name when one is close (a typo, a prefix), else NULL. */
const char *cli_closest_option(const cli_option *table, size_t n, const char *name);

/** One accepted word of a --format list and its bit. */
typedef upti_format_name cli_format;

/**
 * The bits of a comma-separated list of the n formats; 0, or 2 after one usage
 * line when the list is empty, has an empty item (",", "db,") or an unknown word.
 */
int cli_parse_formats(const char *command, const char *list, const cli_format *formats, size_t n,
                      unsigned *bits);

/**
 * The outputs' path without extension: NAME in DIR (NAME alone when DIR is
 * NULL or NAME is absolute), NAME's extension among exts (NULL-terminated)
 * removed. malloc'd.
 */
char *cli_output_base(const char *dir, const char *name, const char *const *exts);

/**
 * The outputs' path without extension of a subcommand that reads the database
 * input: cli_output_base of -o NAME when given, else input's path without .db,
 * in DIR when given. malloc'd, or NULL.
 */
char *cli_input_output_base(const char *dir, const char *name, const char *input,
                            const char *const *exts);

/** The options of the subcommands that write outputs: -f, -d, -o and -h. */
typedef struct cli_output_options {
    const char *formats, *dir, *output;
    int help;
} cli_output_options;

/** Keeps the value of option id in o when it is one of cli_output_options'; 1 then, else 0. */
int cli_on_output_option(cli_output_options *o, int id, const char *value);

/**
 * cli_parse_options with CLI_ARGS_ANYWHERE, the positionals in *positionals
 * (malloc'd, for the caller to free; NULL after "out of memory", said).
 */
int cli_parse_anywhere(const char *command, const cli_option *table, size_t n, int argc,
                       char **argv, cli_option_fn fn, void *ctx, char ***positionals,
                       int *npositional);

/** cli_parse_anywhere for a subcommand of one DATABASE: *input the first positional
 *  (or NULL), *npositional how many were given. */
int cli_parse_input(const char *command, const cli_option *table, size_t n, int argc, char **argv,
                    cli_option_fn fn, void *ctx, const char **input, int *npositional);

/**
 * Checks -d DIR and -o NAME (either may be NULL) of command: neither empty,
 * and NAME's last component a file name (not "", "." or "..": `-o dd/` would
 * write a hidden dd/.db). 0, or 2 after one usage line.
 */
int cli_check_output_options(const char *command, const char *dir, const char *name);

/**
 * Creates, with its parents, the directory that will hold base's files. With
 * placeholders, a component with a '%' and what follows it are left to the
 * traced process, which expands them first. 0; or after one line, 1 (it cannot be
 * created) or 2 (it exists and anyone may write it, without the sticky bit).
 */
int cli_make_output_dir(const char *base, int placeholders);

/** s made printable for a message in out: control bytes as '?', cut with "..." to fit (len >= 8). */
void cli_printable(const char *s, char *out, size_t len);

#endif
