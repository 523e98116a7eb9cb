/* SPDX-License-Identifier: MIT */
/* libFuzzer: what `upti stats` and `upti export` do, on any file given as a
 * trace database (every report of `upti stats` in each format, every export):
 * an error message, never a crash. Seed it with a real trace
 * (scripts/ci-sanitizers.sh makes one with a small page size). */
#include "fuzz_workdir.h"
#include "output.h"
#include "stats_reports.h"

#include <sqlite3.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *g_dir; /* fuzz_workdir */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_dir = fuzz_workdir("reader");
    char path[128], out[128];
    snprintf(path, sizeof path, "%s/in.db", g_dir);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    char err[512];
    sqlite3 *db = uo_open(path, 0, err, sizeof err);
    if (db == NULL)
        return 0;
    FILE *null = fopen("/dev/null", "w");
    const report_def *all[64];
    size_t n = 0;
    for (size_t i = 0; i < report_count && n < 64; i++)
        all[n++] = &report_defs[i];
    for (int format = FORMAT_TABLE; format <= FORMAT_JSON; format++) {
        report_options o = {.format = (report_format)format, .demangle = report_can_demangle()};
        report_print(db, all, n, &o, null, err, sizeof err);
    }
    fclose(null);
    snprintf(out, sizeof out, "%s/out.json", g_dir);
    uo_export_json(db, out, err, sizeof err);
    snprintf(out, sizeof out, "%s/out.pftrace", g_dir);
    uo_export_pftrace(db, out, err, sizeof err);
    snprintf(out, sizeof out, "%s/out", g_dir);
    int files = 0;
    uo_export_csv(db, out, 1, &files, err, sizeof err);
#ifdef UPTI_HAVE_OTF2
    uo_export_otf2(db, g_dir, "out", err, sizeof err);
#endif
    sqlite3_close(db);
    return 0;
}
