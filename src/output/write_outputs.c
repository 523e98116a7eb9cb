/* The formats derived from a closed trace database: written by
 * libupti-trace.so when its process ends, and by `upti run` for a process
 * whose database it recovered (recover.c). */
#include "output.h"
#include "safe_open.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(const char *err)
{
    fprintf(stderr, "upti: %s\n", err);
}

int uo_write_outputs(const char *db_path, const char *base, unsigned formats, int stats, int pid)
{
    char err[512];
    sqlite3 *db = uo_open(db_path, 0, err, sizeof err);
    if (db == NULL) {
        say(err);
        return -1;
    }
    int rc = 0;
    size_t len = strlen(base) + 16;
    char *path = malloc(len);
    if (path == NULL) {
        sqlite3_close(db);
        return -1;
    }
    if (formats & UO_FORMAT_PFTRACE) {
        snprintf(path, len, "%s.pftrace", base);
        if (uo_export_pftrace(db, path, err, sizeof err) != 0)
            say(err), rc = -1;
    }
    if (formats & UO_FORMAT_JSON) {
        snprintf(path, len, "%s.json", base);
        if (uo_export_json(db, path, err, sizeof err) != 0)
            say(err), rc = -1;
    }
    if (formats & UO_FORMAT_CSV) {
        if (uo_export_csv(db, base, 0, NULL, err, sizeof err) != 0)
            say(err), rc = -1;
        if (stats) {
            snprintf(path, len, "%s_stats.csv", base);
            FILE *f = uo_fopen_new(path, "w");
            if (f != NULL) {
                uo_summary(db, f, 1, err, sizeof err);
                fclose(f);
            }
        }
    }
    if (stats) {
        fprintf(stderr, "upti: summary of pid %d (%s)\n", pid, db_path);
        if (uo_summary(db, stderr, 0, err, sizeof err) != 0)
            say(err), rc = -1;
    }
    sqlite3_close(db);
    free(path);
    return rc;
}
