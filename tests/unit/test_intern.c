/* SPDX-License-Identifier: MIT */
/* src/collector/output/db.c uo_db_intern(): one id per distinct string (ids 1, 2, 3... in
 * first-seen order), the same id for the same bytes however often and however
 * far the table has grown, 0 for NULL; the string table of the closed database
 * holds each string once, invalid UTF-8 replaced by U+FFFD. */
#include "output.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "unit_db.h"
#include "unit_tests.h"

enum { MANY = 5000 }; /* past the first growth of the slot table and the text arrays (1024) */

static int64_t query_i64(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static char *query_text(sqlite3 *db, int64_t id)
{
    sqlite3_stmt *st = NULL;
    char *v = NULL;
    if (sqlite3_prepare_v2(db, "SELECT string FROM string WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW)
            v = strdup((const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    return v;
}

UNIT_TEST(intern)
{
    char dir[] = "/tmp/upti-intern-XXXXXX", path[256];
    uo_db *db = unit_temp_db(dir, path);
    CHECK(db != NULL);
    if (db == NULL)
        return test_result("intern");

    CHECK_EQ_U64((uint64_t)uo_db_intern(db, NULL), 0);
    /* The creation interns nothing of ours: take the first id as the base. */
    int64_t a = uo_db_intern(db, "alpha");
    CHECK(a > 0);
    int64_t b = uo_db_intern(db, "beta");
    CHECK_EQ_U64((uint64_t)b, (uint64_t)a + 1);
    CHECK_EQ_U64((uint64_t)uo_db_intern(db, "alpha"), (uint64_t)a);
    char copy[] = "beta"; /* equal bytes at another address */
    CHECK_EQ_U64((uint64_t)uo_db_intern(db, copy), (uint64_t)b);
    int64_t empty = uo_db_intern(db, "");
    CHECK_EQ_U64((uint64_t)empty, (uint64_t)b + 1);
    CHECK_EQ_U64((uint64_t)uo_db_intern(db, ""), (uint64_t)empty);
    /* A prefix is another string. */
    CHECK_EQ_U64((uint64_t)uo_db_intern(db, "alph"), (uint64_t)empty + 1);
    /* Invalid UTF-8: the raw bytes are the key, the database gets U+FFFD. */
    int64_t bad = uo_db_intern(db, "x\xff" "y");
    CHECK_EQ_U64((uint64_t)bad, (uint64_t)empty + 2);
    CHECK_EQ_U64((uint64_t)uo_db_intern(db, "x\xff" "y"), (uint64_t)bad);
    CHECK(strcmp(uo_db_string(db, bad), "x\xff" "y") == 0);
    CHECK(strcmp(uo_db_string(db, a), "alpha") == 0);
    CHECK(uo_db_string(db, 0) == NULL);
    CHECK(uo_db_string(db, bad + 1000000) == NULL);

    /* Many strings: each new, then each again after the table grew (same ids). */
    int64_t first = 0;
    char s[32];
    for (int i = 0; i < MANY; i++) {
        snprintf(s, sizeof s, "s%d", i);
        int64_t id = uo_db_intern(db, s);
        if (i == 0)
            first = id;
        if (id != first + i) {
            CHECK_EQ_U64((uint64_t)id, (uint64_t)(first + i));
            break;
        }
    }
    int again_ok = 1;
    for (int i = 0; i < MANY; i++) {
        snprintf(s, sizeof s, "s%d", i);
        if (uo_db_intern(db, s) != first + i || strcmp(uo_db_string(db, first + i), s) != 0)
            again_ok = 0;
    }
    CHECK(again_ok);
    CHECK_EQ_U64((uint64_t)uo_db_intern(db, "alpha"), (uint64_t)a);
    int64_t last = first + MANY - 1;
    CHECK(uo_db_close(db, 1) == 0);

    /* The database: one row per id, each string once. */
    sqlite3 *q = NULL;
    CHECK(sqlite3_open_v2(path, &q, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_U64((uint64_t)query_i64(q, "SELECT count(*) FROM string"),
                 (uint64_t)query_i64(q, "SELECT count(DISTINCT string) FROM string"));
    CHECK_EQ_U64((uint64_t)query_i64(q, "SELECT max(id) FROM string"), (uint64_t)last);
    char *t = query_text(q, bad);
    CHECK(t != NULL && strcmp(t, "x\xEF\xBF\xBDy") == 0);
    free(t);
    t = query_text(q, empty);
    CHECK(t != NULL && strcmp(t, "") == 0);
    free(t);
    snprintf(s, sizeof s, "s%d", MANY - 1);
    t = query_text(q, last);
    CHECK(t != NULL && strcmp(t, s) == 0);
    free(t);
    sqlite3_close(q);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return test_result("intern");
}
