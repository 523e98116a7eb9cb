/* SPDX-License-Identifier: MIT */
/* upti merge: several trace databases into one (one track group per process). */
#include "cli.h"
#include "manifest.h"
#include "files.h"
#include "options.h"
#include "output.h"

#include <stdlib.h>
#include <string.h>

void cmd_merge_help(FILE *out)
{
    fprintf(out,
            "usage: upti merge DATABASE... -o NAME [-d DIR] [-f FORMAT[,FORMAT...]]\n"
            "\n"
            "Joins the databases of several processes or MPI ranks into one. Each\n"
            "process keeps its own rows (info_process.id is renumbered, strings are\n"
            "re-interned), so `upti export` draws one track group per process and\n"
            "`upti stats` sums over all of them.\n"
            "\n"
            "options (before or after the databases):\n"
            "  -o, --output NAME          the merged database, NAME.db (required; also\n"
            "                             --output-file; a .db extension is optional)\n"
            "  -d, --output-dir DIR       directory of the outputs (created with its parents)\n"
            "  -f, --format LIST          db (default), pftrace, json, csv, comma-separated:\n"
            "                             the other formats are written from the merged\n"
            "                             database, as upti run writes them\n"
            "  -h, --help                 this help\n");
}

static int on_option(void *ctx, int id, const char *value)
{
    cli_on_output_option(ctx, id, value);
    return 0;
}

static const cli_option k_options[] = {CLI_OPTION_OUTPUT, CLI_OPTION_DIR, CLI_OPTION_FORMAT,
                                       CLI_OPTION_HELP};
static const char *const k_exts[] = {".db", NULL};

int cmd_merge(int argc, char **argv)
{
    uo_say_written(); /* each file it writes, said on stderr */
    cli_output_options o = {0};
    char **inputs;
    int n;
    int rc = cli_parse_anywhere("merge", k_options, sizeof k_options / sizeof k_options[0], argc,
                                argv, on_option, &o, &inputs, &n);
    if (inputs == NULL)
        return rc;
    unsigned formats = UO_FORMAT_DB;
    if (rc == 0 && o.help)
        cmd_merge_help(stdout);
    else if (rc == 0 && (o.output == NULL || n == 0))
        rc = cli_usage_error("merge", o.output ? "no input DATABASE" : "missing -o NAME");
    else if (rc == 0 && (rc = cli_check_output_options("merge", o.dir, o.output)) == 0 &&
             o.formats != NULL)
        rc = cli_parse_formats("merge", o.formats, upti_format_names,
                               UPTI_FORMAT_OWN_NAMES, &formats);
    if (rc != 0 || o.help) {
        free(inputs);
        return rc;
    }
    char *base = cli_output_base(o.dir, o.output, k_exts);
    size_t len = base != NULL ? strlen(base) + sizeof ".db.part" : 0;
    char *path = base != NULL ? malloc(len) : NULL;
    char *part = base != NULL ? malloc(len) : NULL;
    int same = -1, same_part = -1, twice = -1, first = -1;
    /* One database given twice (a.db a.db, ./a.db a.db, a hard link) would be
     * merged twice: every row doubled. */
    for (int i = 1; i < n && twice < 0; i++)
        if ((first = cli_output_is_input(inputs[i], (const char *const *)inputs, i)) >= 0)
            twice = i;
    if (path != NULL && part != NULL) {
        snprintf(path, len, "%s.db", base);
        snprintf(part, len, "%s.db.part", base);
        same = cli_output_is_input(path, (const char *const *)inputs, n);
        /* The merge is written as PATH.part, which it empties first. */
        same_part = cli_output_is_input(part, (const char *const *)inputs, n);
    }
    if (path == NULL || part == NULL) {
        rc = cli_error("out of memory");
    } else if (twice >= 0) {
        rc = cli_usage_error("merge", "the input %s is %s, given before: each database is merged "
                             "once", inputs[twice], inputs[first]);
    } else if (same >= 0) {
        rc = cli_usage_error("merge", "the output %s is the input %s (choose another -o)", path,
                             inputs[same]);
    } else if (same_part >= 0) {
        rc = cli_usage_error("merge",
                             "the output's working file %s is the input %s (choose another -o)",
                             part, inputs[same_part]);
    } else if ((rc = cli_make_output_dir(base, 0)) == 0) {
        /* Without db in the formats the merge is the working file NAME.db.part,
         * removed once the others are written: a NAME.db already there stays. */
        const char *merged = (formats & UO_FORMAT_DB) ? path : part;
        char err[1024];
        if (uo_merge(merged, (const char *const *)inputs, n, err, sizeof err) != 0)
            rc = cli_error("%s", err);
        else if (formats & UO_FORMAT_DB)
            uo_note_written(merged);
        if (rc == 0 && (formats & ~UO_FORMAT_DB) != 0 &&
            uo_write_outputs(merged, base, formats & ~UO_FORMAT_DB, 0, 0) != 0)
            rc = 1; /* what was not written is said */
        if (rc == 0 && !(formats & UO_FORMAT_DB))
            remove(merged); /* written by this merge, only to make the other formats */
    }
    free(part);
    free(path);
    free(base);
    free(inputs);
    return rc;
}
