/* SPDX-License-Identifier: MIT */
/* Internal: `upti run -i FILE` (run_config.c): options in a JSON or YAML
 * file, by their long names, possibly several passes ("jobs"), each value
 * checked as on the command line; and the resolved settings written back as
 * JSON (--output-config, the database's metadata "config"). See docs/cli.md,
 * "Options in a file". */
#ifndef UPTI_CLI_RUN_CONFIG_H
#define UPTI_CLI_RUN_CONFIG_H

#include "config_tree.h"
#include "options.h"

#include <stddef.h>

/** One option of a pass: the option's id and its value as the command line
 *  would give it ("1" for a switch that is on); value NULL: off or unset. */
typedef struct rc_entry {
    int id;
    const char *value;
} rc_entry;

/** The options of one pass: the file's top level, then the pass's own (later ones win). */
typedef struct rc_pass {
    rc_entry *entries;
    size_t n;
} rc_pass;

/** A loaded file. */
typedef struct run_config_file {
    cn_node *root;
    rc_pass *passes;
    size_t npasses; /**< 1 without "jobs" */
    char **owned;   /**< joined lists */
    size_t nowned;
} run_config_file;

/** Checks one value of the file as the command line would (0, or an exit status after one line). */
typedef int (*rc_check_fn)(void *ctx, int id, const char *value);

/**
 * Reads path (JSON: a .json name or a text starting with '{'; YAML: .yaml,
 * .yml or else) against the n options of table, calling check for every
 * value with the message context "PATH:LINE:COL: \"KEY\"" set
 * (cli_set_error_context). 0, or 2 after one line "upti: run: PATH...".
 */
int run_config_load(const char *path, const cli_option *table, size_t n, rc_check_fn check,
                    void *ctx, run_config_file *out);

void run_config_free(run_config_file *f);

/** A growing text (the resolved settings). */
typedef struct rc_text {
    char *s;
    size_t len, cap;
    int failed;
} rc_text;

void rc_text_add(rc_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Appends s as a JSON string ("null" for NULL). */
void rc_text_json_string(rc_text *t, const char *s);

/** The first bytes of the resolved settings upti writes (NAME_config.json). */
#define RC_CONFIG_HEAD "{\n  \"upti-config\": 1,\n"

#endif
