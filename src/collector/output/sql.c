/* SPDX-License-Identifier: MIT */
/* Small SQLite helpers shared by the readers and rewriters of a trace
 * database (merge.c, recover.c). */
#include "output.h"

#include <sqlite3.h>
#include <stdio.h>

int uo_sql_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

int64_t uo_sql_int(sqlite3 *db, const char *sql, int64_t fallback)
{
    sqlite3_stmt *st = NULL;
    int64_t v = fallback;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}
