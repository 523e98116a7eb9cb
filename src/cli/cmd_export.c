/* SPDX-License-Identifier: MIT */
/* upti export: a trace database as a Perfetto timeline, Chrome JSON, CSV or OTF2. */
#include "cli.h"
#include "manifest.h"
#include "options.h"
#include "out_files.h"
#include "output.h"
#include "safe_open.h"
#include "stats_reports.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

void cmd_export_help(FILE *out)
{
    fprintf(out,
            "usage: upti export DATABASE -f FORMAT[,FORMAT...] [-d DIR] [-o NAME]\n"
            "\n"
            "Writes a trace database in other formats:\n"
            "  pftrace  Perfetto protobuf timeline (NAME.pftrace): open at https://ui.perfetto.dev\n"
            "  json     Chrome trace-event JSON timeline (NAME.json): ui.perfetto.dev,\n"
            "           chrome://tracing\n"
            "  csv      one CSV per record kind (NAME_api_trace.csv, _kernel_trace.csv,\n"
            "           _memory_copy_trace.csv, _memory_allocation_trace.csv,\n"
            "           _marker_api_trace.csv, _region_trace.csv) and NAME_stats.csv\n"
            "  otf2     OTF2 archive (NAME.otf2, NAME.def, NAME/) for Vampir, Scalasca and\n"
            "           otf2-print%s\n"
            "\n"
            "options (before or after DATABASE):\n"
            "  -f, --format LIST          formats, comma-separated (required)\n"
            "  -d, --output-dir DIR       directory of the outputs (created with its parents;\n"
            "                             default: the database's directory, or . with -o)\n"
            "  -o, --output NAME          file name without extension (also --output-file;\n"
            "                             default: DATABASE's name without .db)\n"
            "  -h, --help                 this help\n",
#ifdef UPTI_HAVE_OTF2
            ""
#else
            " (not in this build: it needs libotf2-trace-dev)"
#endif
    );
}

static int on_option(void *ctx, int id, const char *value)
{
    cli_on_output_option(ctx, id, value);
    return 0;
}

static const cli_option k_options[] = {CLI_OPTION_FORMAT, CLI_OPTION_DIR, CLI_OPTION_OUTPUT,
                                       CLI_OPTION_HELP};
static const cli_format k_formats[] = {{"pftrace", 1}, {"perfetto", 1}, {"json", 2}, {"csv", 4}, {"otf2", 8}};
static const char *const k_exts[] = {".pftrace", ".json", ".csv", ".db", NULL};

int cmd_export(int argc, char **argv)
{
    uo_say_written(); /* each file it writes, said on stderr */
    cli_output_options o = {0};
    const char *input;
    int npos;
    int rc = cli_parse_input("export", k_options, sizeof k_options / sizeof k_options[0], argc, argv,
                             on_option, &o, &input, &npos);
    if (rc != 0)
        return rc;
    if (o.help) {
        cmd_export_help(stdout);
        return 0;
    }
    if (npos > 1)
        return cli_usage_error("export", "one DATABASE only");
    if (input == NULL)
        return cli_usage_error("export", "missing DATABASE");
    if (o.formats == NULL)
        return cli_usage_error("export", "missing --format (pftrace, json, csv or otf2)");
    if ((rc = cli_check_output_options("export", o.dir, o.output)) != 0)
        return rc;
    unsigned bits = 0;
    rc = cli_parse_formats("export", o.formats, k_formats, sizeof k_formats / sizeof k_formats[0],
                           &bits);
    if (rc != 0)
        return rc;
    int want_pf = (bits & 1) != 0, want_json = (bits & 2) != 0, want_csv = (bits & 4) != 0;
    int want_otf2 = (bits & 8) != 0;
#ifndef UPTI_HAVE_OTF2
    if (want_otf2)
        return cli_error("export: this upti was built without OTF2 (install libotf2-trace-dev, "
                         "then rebuild)");
#endif
    char err[512];
    sqlite3 *db = uo_open(input, 0, err, sizeof err);
    if (db == NULL)
        return cli_error("%s", err);
    char *base = cli_input_output_base(o.dir, o.output, input, k_exts);
    int dir_rc = base != NULL ? cli_make_output_dir(base, 0) : 0;
    if (base == NULL || dir_rc != 0) {
        sqlite3_close(db);
        free(base);
        return base == NULL ? cli_error("out of memory") : dir_rc;
    }
    size_t len = strlen(base) + 32;
    char *path = malloc(len);
    unsigned out_bits = (want_pf ? UO_FORMAT_PFTRACE : 0) | (want_json ? UO_FORMAT_JSON : 0) |
                        (want_csv ? UO_FORMAT_CSV : 0);
    char which[4096];
    if (!uo_outputs_replaceable(base, out_bits, which, sizeof which)) {
        snprintf(err, sizeof err, "%.400s exists and was not written by upti: not replaced "
                 "(choose another -o)", which);
        rc = -1;
    }
    if (rc == 0 && want_pf) {
        snprintf(path, len, "%s.pftrace", base);
        rc = uo_export_pftrace(db, path, err, sizeof err);
    }
    if (rc == 0 && want_json) {
        snprintf(path, len, "%s.json", base);
        rc = uo_export_json(db, path, err, sizeof err);
    }
    if (rc == 0 && want_csv) {
        rc = uo_export_csv(db, base, 1, NULL, err, sizeof err);
        snprintf(path, len, "%s_stats.csv", base);
        if (rc == 0)
            rc = report_csv_file(db, path, report_default_list, err, sizeof err);
    }
#ifdef UPTI_HAVE_OTF2
    if (rc == 0 && want_otf2) {
        char *slash = strrchr(base, '/');
        if (slash != NULL)
            *slash = '\0';
        rc = uo_export_otf2(db, slash != NULL ? (base[0] ? base : "/") : ".",
                            slash != NULL ? slash + 1 : base, err, sizeof err);
        if (slash != NULL)
            *slash = '/';
    }
#endif
    sqlite3_close(db);
    free(path);
    free(base);
    return rc == 0 ? 0 : cli_error("%s", err);
}
