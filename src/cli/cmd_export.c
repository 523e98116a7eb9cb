/* upti export: a trace database as a Perfetto timeline, Chrome JSON or CSV. */
#include "cli.h"
#include "out_files.h"
#include "output.h"
#include "safe_open.h"

#include <getopt.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

void cmd_export_help(FILE *out)
{
    fprintf(out,
            "usage: upti export DATABASE --format FORMAT[,FORMAT...] [-o OUTPUT]\n"
            "\n"
            "Writes a trace database in other formats:\n"
            "  pftrace  Perfetto protobuf timeline (OUTPUT.pftrace): open at https://ui.perfetto.dev\n"
            "  json     Chrome trace-event JSON timeline (OUTPUT.json): ui.perfetto.dev,\n"
            "           chrome://tracing\n"
            "  csv      one CSV per record kind (OUTPUT_api_trace.csv, _kernel_trace.csv,\n"
            "           _memory_copy_trace.csv, _memory_allocation_trace.csv,\n"
            "           _marker_api_trace.csv, _region_trace.csv) and OUTPUT_stats.csv\n"
            "\n"
            "options:\n"
            "  -f, --format LIST   formats, comma-separated (required)\n"
            "  -o, --output PATH   output path without extension (default: DATABASE\n"
            "                      without .db)\n"
            "  -h, --help          this help\n");
}

int cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *formats = NULL, *output = NULL, *input = NULL;
    int c;
    opterr = 0;
    optind = 1;
    /* Options may follow the database: parse in a permuting loop. */
    while (optind < argc) {
        c = getopt_long(argc, argv, "+:f:o:h", opts, NULL);
        if (c == -1) {
            if (input != NULL)
                return cli_usage_error("export", "one DATABASE only");
            input = argv[optind++];
            continue;
        }
        switch (c) {
        case 'f': formats = optarg; break;
        case 'o': output = optarg; break;
        case 'h': cmd_export_help(stdout); return 0;
        default: return cli_bad_option("export", c, argv, optind, optopt);
        }
    }
    if (input == NULL)
        return cli_usage_error("export", "missing DATABASE");
    if (formats == NULL)
        return cli_usage_error("export", "missing --format (pftrace, json or csv)");
    int want_pf = 0, want_json = 0, want_csv = 0;
    char *copy = strdup(formats);
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "pftrace") == 0 || strcmp(t, "perfetto") == 0)
            want_pf = 1;
        else if (strcmp(t, "json") == 0)
            want_json = 1;
        else if (strcmp(t, "csv") == 0)
            want_csv = 1;
        else {
            int rc = cli_usage_error("export", "unknown format '%s' (pftrace, json or csv)", t);
            free(copy);
            return rc;
        }
    }
    free(copy);
    char err[512];
    sqlite3 *db = uo_open(input, 0, err, sizeof err);
    if (db == NULL)
        return cli_error("%s", err);
    char *base = output ? strdup(output) : cli_strip_db(input);
    size_t len = strlen(base) + 32;
    char *path = malloc(len);
    int rc = 0;
    unsigned bits = (want_pf ? UO_FORMAT_PFTRACE : 0) | (want_json ? UO_FORMAT_JSON : 0) |
                    (want_csv ? UO_FORMAT_CSV : 0);
    char which[4096];
    if (!uo_outputs_replaceable(base, bits, which, sizeof which)) {
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
            rc = uo_summary_csv_file(db, path, err, sizeof err);
    }
    sqlite3_close(db);
    free(path);
    free(base);
    return rc == 0 ? 0 : cli_error("%s", err);
}
