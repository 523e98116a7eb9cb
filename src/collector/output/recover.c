/* SPDX-License-Identifier: MIT */
/* Recovery of a trace database whose process died before closing it.
 *
 * libupti-trace.so commits what it has received at least every flush
 * interval (docs/reliability.md), so a process killed by SIGKILL, or one that
 * ends in _exit() or a crash its handlers could not finish, leaves a
 * database that holds every committed record but lacks what uo_db_close()
 * adds: thread rows (with the names uptx/NVTX gave), the process end, the
 * regions of ranges still open when it died, indexes. `upti run` calls
 * uo_db_recover() on it once the process is gone. Opening the file rolls an
 * interrupted transaction back (SQLite's hot journal), so what is recovered
 * is exactly the last commit.
 */
#include "output.h"
#include "schema.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

/* Every (process, thread, time) a record of the trace carries. */
#define RECORD_TIMES                                                                        \
    "SELECT process_id, tid, start AS t0, end AS t1 FROM api"                                \
    " UNION ALL SELECT process_id, tid, timestamp, timestamp FROM marker"                    \
    " UNION ALL SELECT process_id, tid, timestamp, timestamp FROM memory_allocate"           \
    " UNION ALL SELECT process_id, tid, start, end FROM region"                              \
    " UNION ALL SELECT process_id, tid, start, end FROM kernel_dispatch"                     \
    " UNION ALL SELECT process_id, tid, start, end FROM memory_copy"

/* Ranges still open at the end: pushes without their pop (replayed per
 * thread in call order) and starts without a stop become regions ending at
 * end, as uo_db_close() would have made them. */
/* A region (?1 kind, ?2 depth) ending at ?3 from the markers that match WHERE. */
#define REGION_FROM_MARKERS(WHERE)                                                          \
    "INSERT INTO region(process_id, tid, end_tid, kind, name_id, depth, domain, category,"  \
    " color, payload_type, payload, correlation_id, start, end)"                            \
    " SELECT process_id, tid, tid, ?1, message_id, ?2, domain, category, color,"           \
    " payload_type, payload, correlation_id, timestamp, max(timestamp, ?3)"                 \
    " FROM marker s WHERE " WHERE

static int close_open_ranges(sqlite3 *db, int64_t end)
{
    sqlite3_stmt *q = NULL, *ins = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, tid, operation FROM marker WHERE operation IN (?1, ?2)"
                           " ORDER BY tid, correlation_id",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, REGION_FROM_MARKERS("id = ?4"), -1, &ins, NULL) != SQLITE_OK)
        goto out;
    sqlite3_bind_int(q, 1, UPTI_MARKER_API_RANGE_PUSH);
    sqlite3_bind_int(q, 2, UPTI_MARKER_API_RANGE_POP);
    int64_t *stack = NULL, tid = 0;
    size_t depth = 0, cap = 0;
    int stepped, failed = 0;
    for (;;) {
        stepped = sqlite3_step(q);
        int64_t row_tid = stepped == SQLITE_ROW ? sqlite3_column_int64(q, 1) : 0;
        if (stepped != SQLITE_ROW || row_tid != tid) {
            /* The previous thread's ranges still open, innermost last. */
            for (size_t i = 0; i < depth && !failed; i++) {
                sqlite3_bind_int(ins, 1, 0);
                sqlite3_bind_int64(ins, 2, (int64_t)i);
                sqlite3_bind_int64(ins, 3, end);
                sqlite3_bind_int64(ins, 4, stack[i]);
                failed = sqlite3_step(ins) != SQLITE_DONE;
                sqlite3_reset(ins);
            }
            depth = 0;
            tid = row_tid;
        }
        if (stepped != SQLITE_ROW || failed)
            break;
        if (sqlite3_column_int(q, 2) == UPTI_MARKER_API_RANGE_PUSH) {
            if (uo_grow(&stack, &cap, depth + 1, sizeof *stack, 16) != 0) {
                failed = 1;
                break;
            }
            stack[depth++] = sqlite3_column_int64(q, 0);
        } else if (depth > 0) {
            depth--;
        }
    }
    free(stack);
    if (failed || stepped != SQLITE_DONE)
        goto out;
    sqlite3_finalize(ins);
    ins = NULL;
    if (sqlite3_prepare_v2(db,
                           REGION_FROM_MARKERS("operation = ?4 AND NOT EXISTS (SELECT 1 FROM marker e"
                                               " WHERE e.operation = ?5 AND e.range_id = s.range_id)"),
                           -1, &ins, NULL) != SQLITE_OK)
        goto out;
    sqlite3_bind_int(ins, 1, 1);
    sqlite3_bind_int(ins, 2, 0);
    sqlite3_bind_int64(ins, 3, end);
    sqlite3_bind_int(ins, 4, UPTI_MARKER_API_RANGE_START);
    sqlite3_bind_int(ins, 5, UPTI_MARKER_API_RANGE_STOP);
    rc = sqlite3_step(ins) == SQLITE_DONE ? 0 : -1;
out:
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    return rc;
}

int uo_db_recover(const char *path, const char *reason, uint64_t *committed, char *err, size_t errlen)
{
    if (committed != NULL)
        *committed = 0;
    sqlite3 *db = uo_open(path, 1, err, errlen);
    if (db == NULL)
        return -1;
    int rc = -1;
    /* The first read rolls back a transaction the dead process left open. */
    int64_t processes = uo_sql_int(db, "SELECT count(*) FROM info_process", -1);
    if (processes != 1) {
        snprintf(err, errlen, "not a trace database of one process");
        goto out;
    }
    if (uo_sql_int(db, "SELECT end IS NOT NULL FROM info_process", 0)) {
        rc = 0; /* closed by its process */
        goto out;
    }
    if (committed != NULL)
        *committed = (uint64_t)uo_sql_int(
            db, "SELECT CAST(value AS INTEGER) FROM metadata WHERE key = 'committed'", 0);
    sqlite3_stmt *st = NULL;
    if (uo_sql_exec(db, "BEGIN", err, errlen) != 0)
        goto out;
    if (uo_sql_exec(db,
                    "INSERT INTO info_thread(process_id, tid, start, end)"
                " SELECT process_id, tid, min(t0), max(t1) FROM (" RECORD_TIMES ")"
                " WHERE tid IS NOT NULL GROUP BY process_id, tid;"
                "UPDATE info_process SET end = max(start, coalesce((SELECT max(end)"
                " FROM info_thread), start));",
                    err, errlen) != 0)
        goto rollback;
    /* Names given by uptx/NVTX (the last one); the process's own comm is not
     * readable any more. */
    char names[256];
    snprintf(names, sizeof names,
             "UPDATE info_thread SET name_id = (SELECT m.message_id FROM marker m WHERE"
             " m.operation = %d AND m.tid = info_thread.tid ORDER BY m.correlation_id DESC LIMIT 1)",
             (int)UPTI_MARKER_API_NAME_THREAD);
    if (uo_sql_exec(db, names, err, errlen) != 0)
        goto rollback;
    if (close_open_ranges(db, uo_sql_int(db, "SELECT end FROM info_process", 0)) != 0) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        goto rollback;
    }
    if (uo_sql_exec(db, UO_SCHEMA_INDEXES
                "UPDATE arg SET api_id = (SELECT a.id FROM api a"
                " WHERE a.correlation_id = arg.correlation_id) WHERE api_id IS NULL;",
                    err, errlen) != 0)
        goto rollback;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO metadata(key, value) VALUES('ended', ?)", -1,
                           &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        goto rollback;
    }
    sqlite3_bind_text(st, 1, reason != NULL ? reason : "without closing its trace", -1, SQLITE_STATIC);
    int stepped = sqlite3_step(st);
    sqlite3_finalize(st);
    if (stepped != SQLITE_DONE) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        goto rollback;
    }
    if (uo_sql_exec(db, "COMMIT", err, errlen) == 0)
        rc = 1;
    goto out;
rollback:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
out:
    sqlite3_close(db);
    return rc;
}
