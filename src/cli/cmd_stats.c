/* SPDX-License-Identifier: MIT */
/* upti stats: the summary reports of a trace database. */
#include "cli.h"
#include "manifest.h"
#include "options.h"
#include "out_files.h"
#include "output.h"
#include "safe_open.h"
#include "stats_reports.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

void cmd_stats_help(FILE *out)
{
    fprintf(out,
            "usage: upti stats DATABASE [--report NAME[,NAME...]] [-f table|csv|json] [--top N]\n"
            "                  [--unit ns|us|ms|s] [--full-names] [--demangle] [-d DIR] [-o NAME]\n"
            "       upti stats --list\n"
            "\n"
            "Prints summary reports of a trace database written by `upti run` (or merged\n"
            "by `upti merge`), named after `nsys stats`' reports; `upti stats --list`\n"
            "names them. Without --report: %s\n"
            "(what `upti run --stats` prints at exit).\n"
            "\n"
            "options (before or after DATABASE):\n"
            "  -f, --format FORMAT        table (default; also: text), csv or json (one\n"
            "                             document holding every report)\n"
            "      --csv                  the same as -f csv\n"
            "      --report NAME[,NAME]   these reports, in that order\n"
            "      --list                 the reports' names and what each shows\n"
            "      --top N                at most N rows per report\n"
            "      --unit UNIT            times in ns (default), us, ms or s\n"
            "      --full-names           tables: names whole (default: cut to %d characters)\n"
            "      --demangle             C++ kernel names demangled (SYCL, OpenCL C++, ...)\n"
            "  -d, --output-dir DIR       write NAME_stats.txt (or .csv, .json) in DIR instead\n"
            "                             of stdout (created with its parents)\n"
            "  -o, --output NAME          write NAME_stats.txt (or .csv, .json) instead of\n"
            "                             stdout (also --output-file; default NAME:\n"
            "                             DATABASE's name without .db); a file of that name\n"
            "                             is replaced only if upti wrote it\n"
            "      --force-overwrite      replace it even if upti did not write it\n"
            "  -h, --help                 this help\n",
            report_default_list,             REPORT_NAME_WIDTH);
}

enum {
    OPT_CSV = CLI_OPT_OWN,
    OPT_REPORT,
    OPT_LIST,
    OPT_TOP,
    OPT_UNIT,
    OPT_FULL_NAMES,
    OPT_DEMANGLE,
    OPT_FORCE
};

typedef struct stats_options {
    cli_output_options out;
    const char *reports, *top, *unit;
    int csv, list, full_names, demangle, force;
} stats_options;

static int on_option(void *ctx, int id, const char *value)
{
    stats_options *o = ctx;
    if (cli_on_output_option(&o->out, id, value))
        return 0;
    switch (id) {
    case OPT_CSV: o->csv = 1; break;
    case OPT_REPORT: o->reports = value; break;
    case OPT_LIST: o->list = 1; break;
    case OPT_TOP: o->top = value; break;
    case OPT_UNIT: o->unit = value; break;
    case OPT_FULL_NAMES: o->full_names = 1; break;
    case OPT_DEMANGLE: o->demangle = 1; break;
    case OPT_FORCE: o->force = 1; break;
    }
    return 0;
}

static const cli_option k_options[] = {
    CLI_OPTION_FORMAT, CLI_OPTION_DIR, CLI_OPTION_OUTPUT, {OPT_CSV, 0, "csv", NULL, 0},
    {OPT_REPORT, 0, "report", NULL, 1}, {OPT_LIST, 0, "list", NULL, 0},
    {OPT_TOP, 0, "top", NULL, 1}, {OPT_UNIT, 0, "unit", NULL, 1},
    {OPT_FULL_NAMES, 0, "full-names", NULL, 0}, {OPT_DEMANGLE, 0, "demangle", NULL, 0},
    {OPT_FORCE, 0, "force-overwrite", NULL, 0}, CLI_OPTION_HELP};
enum { FMT_TEXT = 1, FMT_CSV = 2, FMT_JSON = 4 };
static const cli_format k_formats[] = {
    {"text", FMT_TEXT}, {"table", FMT_TEXT}, {"csv", FMT_CSV}, {"json", FMT_JSON}};
static const char *const k_exts[] = {".txt", ".csv", ".json", ".db", NULL};
static const char *const k_units[] = {"ns", "us", "ms", "s"};

/* The file for -d/-o: DIR/NAME_stats.EXT; NULL (stdout) without them. */
static char *stats_path(const stats_options *o, const char *input, const char *ext)
{
    if (o->out.dir == NULL && o->out.output == NULL)
        return NULL;
    char *base = cli_input_output_base(o->out.dir, o->out.output, input, k_exts);
    char *path = cli_format_text("%s_stats.%s", base, ext);
    free(base);
    return path;
}

static void print_list(FILE *out)
{
    for (size_t i = 0; i < report_count; i++)
        fprintf(out, "%-20s %s\n", report_defs[i].name, report_defs[i].summary);
}

/* --top, --unit, --full-names and --demangle into r; 0, or 2 after one usage line. */
static int parse_report_options(const stats_options *o, report_options *r)
{
    if (o->top != NULL) {
        char *end;
        errno = 0;
        long long v = strtoll(o->top, &end, 10);
        if (o->top[0] < '0' || o->top[0] > '9' || *end != '\0' || errno != 0 || v <= 0) {
            char shown[80];
            cli_printable(o->top, shown, sizeof shown);
            return cli_usage_error("stats", "--top wants a number of rows above 0, not '%s'", shown);
        }
        r->top = v;
    }
    if (o->unit != NULL) {
        size_t i = 0;
        while (i < 4 && strcmp(k_units[i], o->unit) != 0)
            i++;
        if (i == 4) {
            char shown[80];
            cli_printable(o->unit, shown, sizeof shown);
            return cli_usage_error("stats", "unknown --unit '%s' (ns, us, ms or s)", shown);
        }
        r->unit = (report_unit)i;
    }
    if (o->demangle && !report_can_demangle())
        return cli_usage_error("stats", "--demangle: this upti was built without libiberty");
    r->full_names = o->full_names;
    r->demangle = o->demangle;
    return 0;
}

int cmd_stats(int argc, char **argv)
{
    uo_say_written(); /* each file it writes, said on stderr */
    stats_options o = {0};
    const char *input;
    int npos;
    int rc = cli_parse_input("stats", k_options, sizeof k_options / sizeof k_options[0], argc, argv,
                             on_option, &o, &input, &npos);
    if (rc != 0)
        return rc;
    if (o.out.help) {
        cmd_stats_help(stdout);
        return 0;
    }
    if (o.list) {
        if (npos != 0 || o.reports != NULL)
            return cli_usage_error("stats", "--list takes no DATABASE and no --report");
        print_list(stdout);
        return 0;
    }
    if (npos != 1)
        return cli_usage_error("stats", npos == 0 ? "missing DATABASE" : "one DATABASE only");
    if ((rc = cli_check_output_options("stats", o.out.dir, o.out.output)) != 0)
        return rc;
    unsigned bits = o.csv ? FMT_CSV : FMT_TEXT;
    if (o.out.formats != NULL) {
        rc = cli_parse_formats("stats", o.out.formats, k_formats, 4, &bits);
        if (rc != 0)
            return rc;
        if (bits != FMT_TEXT && bits != FMT_CSV && bits != FMT_JSON)
            return cli_usage_error("stats", "one --format only (text, csv or json)");
        if (o.csv && bits != FMT_CSV)
            return cli_usage_error("stats", "--csv and --format %s", o.out.formats);
    }
    report_options ropts = {.format = bits == FMT_JSON  ? FORMAT_JSON
                                      : bits == FMT_CSV ? FORMAT_CSV
                                                        : FORMAT_TABLE};
    rc = parse_report_options(&o, &ropts);
    if (rc != 0)
        return rc;
    const report_def **reports = NULL;
    size_t nreports = 0;
    char err[768];
    if (report_parse_list(o.reports ? o.reports : report_default_list, &reports, &nreports, err,
                          sizeof err) != 0)
        return cli_usage_error("stats", "%s", err);
    sqlite3 *db = uo_open(input, 0, err, sizeof err);
    if (db == NULL) {
        free(reports);
        return cli_error("%s", err);
    }
    char *path = stats_path(&o, input, bits == FMT_JSON ? "json" : bits == FMT_CSV ? "csv" : "txt");
    FILE *out = stdout;
    if (path != NULL) {
        rc = cli_make_output_dir(path, 0);
        if (rc == 0 && !o.force && !uo_file_is_replaceable(path))
            rc = cli_error("%s exists and was not written by upti: not replaced (choose another -o, "
                           "or --force-overwrite)", path);
        else if (rc == 0 && (out = uo_fopen_new(path, "w")) == NULL)
            rc = cli_error("cannot write %s: %s", path, uo_open_new_reason(errno));
        if (rc != 0) {
            sqlite3_close(db);
            free(path);
            free(reports);
            return rc;
        }
    }
    rc = report_print(db, reports, nreports, &ropts, out, err, sizeof err);
    free(reports);
    sqlite3_close(db);
    if (out != stdout && fclose(out) != 0 && rc == 0)
        rc = -1, snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(errno));
    else if (out != stdout && rc == 0)
        uo_note_written(path);
    free(path);
    return rc == 0 ? 0 : cli_error("%s", err);
}
