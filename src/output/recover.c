/* Recovery of a trace database whose process died before closing it.
 *
 * libupti-trace.so commits what it has received at least every flush
 * interval (docs/reliability.md), so a process killed by SIGKILL, or one that
 * ends in _exit() or a crash its handlers could not finish, leaves a
 * database that holds every committed record but lacks what uo_db_close()
 * adds: thread rows, the process end, indexes. `upti run` calls
 * uo_db_recover() on it once the process is gone. Opening the file rolls an
 * interrupted transaction back (SQLite's hot journal), so what is recovered
 * is exactly the last commit.
 */
#include "output.h"
#include "schema.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs sql; on error fills err and returns -1. */
static int run_sql(sqlite3 *db, const char *sql, const char *path, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

/* The single integer that sql selects, or fallback (NULL, no row, error). */
static int64_t select_int(sqlite3 *db, const char *sql, int64_t fallback)
{
    sqlite3_stmt *st = NULL;
    int64_t v = fallback;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Every (process, thread, time) a record of the trace carries. */
#define RECORD_TIMES                                                                        \
    "SELECT process_id, tid, start AS t0, end AS t1 FROM api"                                \
    " UNION ALL SELECT process_id, tid, timestamp, timestamp FROM marker"                    \
    " UNION ALL SELECT process_id, tid, timestamp, timestamp FROM memory_allocate"           \
    " UNION ALL SELECT process_id, tid, start, end FROM region"                              \
    " UNION ALL SELECT process_id, tid, start, end FROM kernel_dispatch"                     \
    " UNION ALL SELECT process_id, tid, start, end FROM memory_copy"

int uo_db_recover(const char *path, const char *reason, uint64_t *committed, char *err, size_t errlen)
{
    if (committed != NULL)
        *committed = 0;
    sqlite3 *db = uo_open(path, 1, err, errlen);
    if (db == NULL)
        return -1;
    int rc = -1;
    /* The first read rolls back a transaction the dead process left open. */
    int64_t processes = select_int(db, "SELECT count(*) FROM info_process", -1);
    if (processes != 1) {
        snprintf(err, errlen, "%s: not a trace database of one process", path);
        goto out;
    }
    if (select_int(db, "SELECT end IS NOT NULL FROM info_process", 0)) {
        rc = 0; /* closed by its process */
        goto out;
    }
    if (committed != NULL)
        *committed = (uint64_t)select_int(
            db, "SELECT CAST(value AS INTEGER) FROM metadata WHERE key = 'committed'", 0);
    sqlite3_stmt *st = NULL;
    if (run_sql(db, "BEGIN", path, err, errlen) != 0)
        goto out;
    if (run_sql(db,
                "INSERT INTO info_thread(process_id, tid, start, end)"
                " SELECT process_id, tid, min(t0), max(t1) FROM (" RECORD_TIMES ")"
                " WHERE tid IS NOT NULL GROUP BY process_id, tid;"
                "UPDATE info_process SET end = max(start, coalesce((SELECT max(end)"
                " FROM info_thread), start));" UO_SCHEMA_INDEXES
                "UPDATE arg SET api_id = (SELECT a.id FROM api a"
                " WHERE a.correlation_id = arg.correlation_id) WHERE api_id IS NULL;",
                path, err, errlen) != 0)
        goto rollback;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO metadata(key, value) VALUES('ended', ?)", -1,
                           &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
        goto rollback;
    }
    sqlite3_bind_text(st, 1, reason != NULL ? reason : "without closing its trace", -1, SQLITE_STATIC);
    int stepped = sqlite3_step(st);
    sqlite3_finalize(st);
    if (stepped != SQLITE_DONE) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
        goto rollback;
    }
    if (run_sql(db, "COMMIT", path, err, errlen) == 0)
        rc = 1;
    goto out;
rollback:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
out:
    sqlite3_close(db);
    return rc;
}
