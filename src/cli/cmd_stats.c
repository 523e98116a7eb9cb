/* upti stats: the summary tables of a trace database. */
#include "cli.h"
#include "options.h"
#include "output.h"
#include "safe_open.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

void cmd_stats_help(FILE *out)
{
    fprintf(out,
            "usage: upti stats DATABASE [-f text|csv] [-d DIR] [-o NAME]\n"
            "\n"
            "Prints the summary tables of a trace database written by `upti run` (or\n"
            "merged by `upti merge`): per API function, per marker range name, per kernel\n"
            "and per memory-copy direction: calls, total, average, min, max and stddev of\n"
            "the durations (ns) and the percent of the table's total time.\n"
            "\n"
            "options (before or after DATABASE):\n"
            "  -f, --format FORMAT        text (default) or csv (Domain,Name,Calls,Total_ns,...)\n"
            "      --csv                  the same as -f csv\n"
            "  -d, --output-dir DIR       write NAME_stats.txt (or .csv) in DIR instead of\n"
            "                             stdout (created with its parents)\n"
            "  -o, --output NAME          write NAME_stats.txt (or .csv) instead of stdout\n"
            "                             (also --output-file; default NAME: DATABASE's\n"
            "                             name without .db)\n"
            "  -h, --help                 this help\n");
}

enum { OPT_CSV = CLI_OPT_OWN };

typedef struct stats_options {
    const char *formats, *dir, *output;
    int csv, help;
} stats_options;

static int on_option(void *ctx, int id, const char *value)
{
    stats_options *o = ctx;
    switch (id) {
    case CLI_OPT_FORMAT: o->formats = value; break;
    case CLI_OPT_DIR: o->dir = value; break;
    case CLI_OPT_OUTPUT: o->output = value; break;
    case OPT_CSV: o->csv = 1; break;
    case CLI_OPT_HELP: o->help = 1; break;
    }
    return 0;
}

static const cli_option k_options[] = {CLI_OPTION_FORMAT, CLI_OPTION_DIR, CLI_OPTION_OUTPUT,
                                       {OPT_CSV, 0, "csv", NULL, 0}, CLI_OPTION_HELP};
static const cli_format k_formats[] = {{"text", 1}, {"csv", 2}};
static const char *const k_exts[] = {".txt", ".csv", ".db", NULL};

/* The file for -d/-o: DIR/NAME_stats.txt or .csv; NULL (stdout) without them. */
static char *stats_path(const stats_options *o, const char *input, int csv)
{
    if (o->dir == NULL && o->output == NULL)
        return NULL;
    char *base;
    if (o->output != NULL) {
        base = cli_output_base(o->dir, o->output, k_exts);
    } else {
        char *stripped = cli_strip_db(input);
        const char *slash = strrchr(stripped, '/');
        base = cli_output_base(o->dir, slash ? slash + 1 : stripped, NULL);
        free(stripped);
    }
    size_t len = strlen(base) + 16;
    char *path = malloc(len);
    if (path != NULL)
        snprintf(path, len, "%s_stats.%s", base, csv ? "csv" : "txt");
    free(base);
    return path;
}

int cmd_stats(int argc, char **argv)
{
    stats_options o = {0};
    char **pos = calloc((size_t)argc + 1, sizeof *pos);
    int npos = 0;
    if (pos == NULL)
        return cli_error("out of memory");
    int rc = cli_parse_options("stats", k_options, sizeof k_options / sizeof k_options[0], argc,
                               argv, CLI_ARGS_ANYWHERE, on_option, &o, pos, &npos);
    const char *input = npos > 0 ? pos[0] : NULL;
    free(pos);
    if (rc != 0)
        return rc;
    if (o.help) {
        cmd_stats_help(stdout);
        return 0;
    }
    if (npos != 1)
        return cli_usage_error("stats", npos == 0 ? "missing DATABASE" : "one DATABASE only");
    if ((o.dir != NULL && o.dir[0] == '\0') || (o.output != NULL && o.output[0] == '\0'))
        return cli_usage_error("stats", "empty %s", o.dir && !o.dir[0] ? "--output-dir" : "--output");
    unsigned bits = o.csv ? 2 : 1;
    if (o.formats != NULL) {
        rc = cli_parse_formats("stats", o.formats, k_formats, 2, &bits);
        if (rc != 0)
            return rc;
        if (bits == 3)
            return cli_usage_error("stats", "one --format only (text or csv)");
        if (o.csv && bits != 2)
            return cli_usage_error("stats", "--csv and --format text");
    }
    int csv = bits == 2;
    char err[512];
    sqlite3 *db = uo_open(input, 0, err, sizeof err);
    if (db == NULL)
        return cli_error("%s", err);
    char *path = stats_path(&o, input, csv);
    FILE *out = stdout;
    if (path != NULL) {
        if (cli_make_output_dir(path, 0) != 0)
            rc = 1;
        else if ((out = uo_fopen_new(path, "w")) == NULL)
            rc = cli_error("cannot write %s: %s", path, strerror(errno));
        if (rc != 0) {
            sqlite3_close(db);
            free(path);
            return rc;
        }
    }
    rc = uo_summary(db, out, csv, err, sizeof err);
    sqlite3_close(db);
    if (out != stdout && fclose(out) != 0 && rc == 0)
        rc = -1, snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(errno));
    free(path);
    return rc == 0 ? 0 : cli_error("%s", err);
}
