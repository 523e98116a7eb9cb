/* SPDX-License-Identifier: MIT */
/* The formats derived from a closed trace database, written by the collector
 * (`upti run`, `upti recover`, the helper collector) once it converted a
 * process's records. */
#include "out_files.h"
#include "output.h"
#include "stats_reports.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The base of one format's files: base itself, or base-<pid> when a file of
 * that name exists that UPTI did not write (said once, never replaced). */
static char *base_for(const char *base, unsigned format, int pid)
{
    char which[4096];
    if (uo_outputs_replaceable(base, format, which, sizeof which))
        return strdup(base);
    size_t len = strlen(base) + 24;
    char *alt = malloc(len);
    if (alt == NULL)
        return NULL;
    snprintf(alt, len, "%s-%d", base, pid > 0 ? pid : (int)getpid());
    uo_report("%s exists and was not written by upti: not replaced (upti run "
              "--force-overwrite replaces it); writing under %s instead", which, alt);
    return alt;
}

int uo_write_outputs(const char *db_path, const char *base, unsigned formats, const char *stats,
                     int pid)
{
    char err[512];
    sqlite3 *db = uo_open(db_path, 0, err, sizeof err);
    if (db == NULL) {
        uo_report("%s", err);
        return -1;
    }
    int rc = 0;
    const report_def **checked;
    size_t nreports;
    if (stats != NULL && report_parse_list(stats, &checked, &nreports, err, sizeof err) != 0) {
        /* A list no `upti run` checked (UPTI_TRACE_STATS_REPORT): said once, no reports. */
        uo_report("stats: %s", err);
        stats = NULL;
        rc = -1;
    } else if (stats != NULL) {
        free(checked);
    }
    static const unsigned k_formats[] = {UO_FORMAT_PFTRACE, UO_FORMAT_JSON, UO_FORMAT_CSV};
    for (size_t i = 0; i < 3; i++) {
        unsigned f = k_formats[i];
        if (!(formats & f))
            continue;
        char *b = base_for(base, f, pid);
        size_t len = b != NULL ? strlen(b) + 16 : 0;
        char *path = b != NULL ? malloc(len) : NULL;
        if (path == NULL) {
            free(b);
            rc = -1;
            continue;
        }
        int r = 0;
        if (f == UO_FORMAT_PFTRACE) {
            snprintf(path, len, "%s.pftrace", b);
            r = uo_export_pftrace(db, path, err, sizeof err);
        } else if (f == UO_FORMAT_JSON) {
            snprintf(path, len, "%s.json", b);
            r = uo_export_json(db, path, err, sizeof err);
        } else {
            r = uo_export_csv(db, b, 0, NULL, err, sizeof err);
            if (r == 0 && stats != NULL) {
                snprintf(path, len, "%s_stats.csv", b);
                r = report_csv_file(db, path, stats, err, sizeof err);
            }
        }
        if (r != 0)
            uo_report("%s", err), rc = -1;
        free(path);
        free(b);
    }
    if (stats != NULL) {
        fprintf(stderr, "upti: summary of pid %d (%s)\n\n", pid, db_path);
        report_options o = {.format = FORMAT_TABLE};
        if (report_print_list(db, stats, &o, stderr, err, sizeof err) != 0)
            uo_report("%s", err), rc = -1;
    }
    sqlite3_close(db);
    return rc;
}
