/* SPDX-License-Identifier: MIT */
/* The empty small database built into UPTI (db_template.h) is what its SQL
 * makes now: the same schema, object by object, and the same settings kept in
 * the file. A database made by uo_db_create_bulk_sized for a small trace
 * starts from it and holds the same schema. */
#include "db_template.h"
#include "output.h"

#include <sqlite3.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

/* The schema and the settings a file keeps, as one text; NULL if path cannot be read. */
static char *describe(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    static const char schema[] = "SELECT type || ' ' || name || ' ' || tbl_name || ' ' || "
                                 "coalesce(sql, '') FROM sqlite_master ORDER BY type, name";
    static const char *const queries[] = {schema,
                                          "PRAGMA page_size",
                                          "PRAGMA application_id",
                                          "PRAGMA user_version",
                                          "PRAGMA auto_vacuum",
                                          "PRAGMA encoding",
                                          "PRAGMA integrity_check"};
    size_t len = 0, cap = 1 << 16;
    char *text = malloc(cap);
    if (text != NULL)
        text[0] = '\0';
    for (size_t q = 0; text != NULL && q < sizeof queries / sizeof queries[0]; q++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, queries[q], -1, &st, NULL) != SQLITE_OK)
            continue;
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(st, 0);
            int n = snprintf(text + len, cap - len, "%s\n", v != NULL ? v : "NULL");
            if (n > 0 && (size_t)n < cap - len)
                len += (size_t)n;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return text;
}

static int write_all(const char *path, const unsigned char *bytes, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int ok = fd >= 0 && write(fd, bytes, n) == (ssize_t)n;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

UNIT_TEST(db_template)
{
    char dir[] = "/tmp/upti-db-template-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char made[256], built[256], trace[256], part[300];
    snprintf(made, sizeof made, "%s/made.db", dir);
    snprintf(built, sizeof built, "%s/built.db", dir);
    snprintf(trace, sizeof trace, "%s/trace.db", dir);
    snprintf(part, sizeof part, "%s.part", trace);

    /* What the SQL makes today. */
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(made, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, UO_TEMPLATE_SQL, NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_close(db) == SQLITE_OK);
    CHECK(uo_db_template_size > 0 && uo_db_template_size % 4096 == 0);
    CHECK(write_all(built, uo_db_template, uo_db_template_size) == 0);
    char *want = describe(made), *got = describe(built);
    CHECK(want != NULL && got != NULL);
    CHECK(want != NULL && strstr(want, "table api api CREATE TABLE") != NULL);
    CHECK(want != NULL && strstr(want, "\n4096\n1431327817\n") != NULL);
    CHECK(want != NULL && strstr(want, "\nok\n") != NULL);
    if (want != NULL && got != NULL && strcmp(want, got) != 0)
        fprintf(stderr, "db_template: the built-in database differs from its SQL:\n--- SQL\n%s"
                        "--- built in\n%s", want, got);
    CHECK(want != NULL && got != NULL && strcmp(want, got) == 0);

    /* Its page-written tables' setup, read when UPTI was built, is what
     * uo_pages_table reads from it now, table by table. */
    CHECK(sqlite3_open_v2(built, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    char perr[256];
    uo_page_spool *spool = uo_pages_open(db, built, perr, sizeof perr);
    CHECK(spool != NULL);
    int paged = 0;
    for (int st = 0; spool != NULL && st < ST_COUNT; st++) {
        const uo_table_setup *b = &uo_db_template_tables[st];
        uo_table_tree *t = uo_db_batched(st) ? uo_pages_table(spool, db, uo_db_statements[st],
                                                              uo_db_params(st), uo_db_text_param(st))
                                             : NULL;
        CHECK((t != NULL) == (b->layout.tcols > 0));
        if (t == NULL)
            continue;
        paged++;
        uo_table_setup r;
        uo_pages_table_setup(t, &r);
        const uo_table_layout *rl = &r.layout, *bl = &b->layout;
        CHECK(rl->root == bl->root && rl->tcols == bl->tcols && rl->rowid_at == bl->rowid_at &&
              rl->text_at == bl->text_at && rl->text_not_null == bl->text_not_null &&
              r.nindex == b->nindex);
        CHECK(memcmp(rl->from, bl->from, (size_t)rl->tcols * sizeof rl->from[0]) == 0);
        for (int i = 0; i < r.nindex && i < b->nindex; i++)
            CHECK(strcmp(r.index[i].name, b->index[i].name) == 0 &&
                  r.index[i].root == b->index[i].root && r.index[i].key_at == b->index[i].key_at);
    }
    /* string, api, kernel_dispatch, memory_copy, memory_allocate, marker, region, arg */
    CHECK(paged == 8);
    uo_pages_free(spool);
    sqlite3_close(db);

    /* A small trace's database starts from it. */
    uo_process_info proc = {.pid = 7, .ppid = 1, .rank = -1, .hostname = "h", .command = "c"};
    char err[512] = "";
    uo_db *small = uo_db_create_bulk_sized(trace, &proc, NULL, 1000, err, sizeof err);
    CHECK(small != NULL);
    if (small != NULL)
        CHECK(uo_db_close(small, 10) == 0);
    char *closed = describe(trace);
    CHECK(closed != NULL && want != NULL &&
          strncmp(closed, want, (size_t)(strstr(want, "\n4096\n") - want)) == 0);
    CHECK(closed != NULL && strstr(closed, "\n4096\n1431327817\n") != NULL);
    CHECK(access(part, F_OK) != 0);
    free(want);
    free(got);
    free(closed);
    unlink(made);
    unlink(built);
    unlink(trace);
    CHECK(rmdir(dir) == 0);
    return test_result("db_template");
}
