/* upti stats: the summary tables of a trace database. */
#include "cli.h"
#include "output.h"

#include <getopt.h>
#include <sqlite3.h>
#include <string.h>

void cmd_stats_help(FILE *out)
{
    fprintf(out,
            "usage: upti stats [--csv] DATABASE\n"
            "\n"
            "Prints the summary tables of a trace database written by `upti run` (or\n"
            "merged by `upti merge`): per API function, per marker range name, per kernel\n"
            "and per memory-copy direction: calls, total, average, min, max and stddev of\n"
            "the durations (ns) and the percent of the table's total time.\n"
            "\n"
            "options:\n"
            "  --csv        write CSV (Domain,Name,Calls,Total_ns,...) instead of text\n"
            "  -h, --help   this help\n");
}

int cmd_stats(int argc, char **argv)
{
    static const struct option opts[] = {
        {"csv", no_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int csv = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': csv = 1; break;
        case 'h': cmd_stats_help(stdout); return 0;
        default: return cli_bad_option("stats", c, argv, optind, optopt);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("stats", optind == argc ? "missing DATABASE" : "one DATABASE only");
    char err[512];
    sqlite3 *db = uo_open(argv[optind], 0, err, sizeof err);
    if (db == NULL)
        return cli_error("%s", err);
    int rc = uo_summary(db, stdout, csv, err, sizeof err);
    sqlite3_close(db);
    return rc == 0 ? 0 : cli_error("%s", err);
}
