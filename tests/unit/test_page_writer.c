/* SPDX-License-Identifier: MIT */
/* The page writer (src/collector/output/page_writer.h): a bulk database whose
 * page-written rows a second thread writes holds exactly what the same
 * records make without one, for two databases sharing one writer, their
 * records interleaved; and a page write that fails fails the database once,
 * as without a writer.
 *
 *   same  API records of three threads (correlation ids partly out of
 *         order, which the index sorts), kernels, arguments with texts (one
 *         of 70,000 bytes: a row SQLite inserts after the pages), markers,
 *         into databases A and B through one writer and A' and B' without:
 *         every row of every table of A equals A''s, B's B''s.
 *         The writer sleeps once midway (no batch for 30 ms) and is woken
 *         by the next; it must have written every batch of A and B.
 *   full  the same records with files limited to 256 KiB while they are
 *         added: uo_db_close fails, and one report says that the pages could
 *         not be written, with and without a writer; with one, a database
 *         that shares it and gets its records once the limit is lifted is
 *         whole (the failed one's jobs do not stop the writer).
 * Both skip (77) where the writer would not start: one CPU to run on (its
 * affinity, or its cgroup's quota).
 */
#include "output.h"
#include "db_rows.h"
#include "page_writer.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "unit_db.h"
#include "unit_tests.h"

#define API_RECORDS 30000

static int g_skipped; /* no writer: one CPU */
static int g_reports;
static char g_first_report[1024];

static void count_report(void *data, const char *message)
{
    (void)data;
    if (g_reports++ == 0)
        snprintf(g_first_report, sizeof g_first_report, "%s", message);
}

static uo_db *bulk_db(const char *dir, const char *name, int pid)
{
    char path[512], err[256] = "";
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    uo_process_info proc = {.pid = pid, .ppid = 1, .rank = -1, .hostname = "h", .command = name};
    uo_db *db = uo_db_create_bulk(path, &proc, uo_upti_operation_name, err, sizeof err);
    if (db == NULL)
        fprintf(stderr, "uo_db_create_bulk %s: %s\n", path, err);
    CHECK(db != NULL);
    return db;
}

/* Record i of a process whose values are shifted by salt; -1 once db failed. */
static int add_record(uo_db *db, int i, int salt)
{
    static char big[70001];
    if (big[0] == '\0') {
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = '\0';
    }
    upti_buffer_tracing_api_record_t a = {0};
    a.size = sizeof a;
    a.kind = UPTI_TRACING_KIND_OPENCL_API;
    a.operation = 1 + (uint32_t)(i % 40);
    /* Every 7th call's id comes late (another thread's chunk drained later). */
    a.correlation_id.internal = (uint64_t)(i % 7 == 3 ? i + 5 : i) * 2 + 1 + (uint64_t)salt;
    a.correlation_id.external.value = (uint64_t)(i % 3) * 1000003u;
    a.thread_id = 100 + (uint64_t)(i % 3);
    a.start_timestamp = 1000000 + (uint64_t)i * 50 + (uint64_t)salt;
    a.end_timestamp = a.start_timestamp + 20 + (uint64_t)(i % 500) * 4099;
    a.result = i % 11 == 0 ? -(int64_t)(i % 60) : 0;
    if (i % 10 == 4) {
        char text[64];
        snprintf(text, sizeof text, "arg %d of %d", i, salt);
        const char *value = i == 2004 ? big : text;
        if (uo_db_add_arg(db, a.correlation_id.internal, 0, "cl_uint", "n", value) != 0)
            return -1;
    }
    if (uo_db_add_record(db, a.kind, &a) != 0)
        return -1;
    upti_buffer_tracing_kernel_dispatch_record_t k = {
        .size = sizeof k, .kind = UPTI_TRACING_KIND_KERNEL_DISPATCH,
        .operation = UPTI_KERNEL_DISPATCH_NDRANGE, .correlation_id = a.correlation_id,
        .thread_id = a.thread_id, .queue_id = 77, .kernel_name = i % 100 == 7 ? "vadd" : "scale",
        .work_dim = 1, .global_size = {(uint64_t)i}, .start_timestamp = a.end_timestamp + 100,
        .end_timestamp = a.end_timestamp + 100 + (uint64_t)i};
    if (i % 50 == 7 && uo_db_add_record(db, k.kind, &k) != 0)
        return -1;
    upti_buffer_tracing_marker_api_record_t m = {
        .size = sizeof m, .kind = UPTI_TRACING_KIND_MARKER_API, .operation = UPTI_MARKER_API_MARK,
        .thread_id = a.thread_id, .start_timestamp = a.start_timestamp + 1,
        .end_timestamp = a.start_timestamp + 1, .message = i % 2 ? "odd mark" : "even mark"};
    if (i % 97 == 5 && uo_db_add_record(db, m.kind, &m) != 0)
        return -1;
    return 0;
}

/* Whether SQLite finds the file at path sound. */
static int integrity_ok(sqlite3 *db)
{
    sqlite3_stmt *check;
    int ok = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &check, NULL) == SQLITE_OK &&
             sqlite3_step(check) == SQLITE_ROW &&
             strcmp((const char *)sqlite3_column_text(check, 0), "ok") == 0;
    sqlite3_finalize(check);
    return ok;
}

/* Compares every row of every table of the databases at p and q (but
 * metadata and info_process, which name the files), in row id order, value
 * by value (type and text); the rows compared, or -1 at the first difference
 * (said on stderr). */
static int64_t compare(const char *p, const char *q)
{
    sqlite3 *a = NULL, *b = NULL;
    sqlite3_stmt *tables, *ra, *rb;
    int64_t rows = -1;
    if (sqlite3_open_v2(p, &a, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_open_v2(q, &b, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK || !integrity_ok(a) ||
        !integrity_ok(b) ||
        sqlite3_prepare_v2(a, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN"
                              " ('metadata', 'info_process') ORDER BY name",
                           -1, &tables, NULL) != SQLITE_OK)
        goto out;
    rows = 0;
    while (rows >= 0 && sqlite3_step(tables) == SQLITE_ROW) {
        const char *table = (const char *)sqlite3_column_text(tables, 0);
        char *sql = sqlite3_mprintf("SELECT * FROM \"%w\" ORDER BY 1", table);
        if (sql == NULL || sqlite3_prepare_v2(a, sql, -1, &ra, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(b, sql, -1, &rb, NULL) != SQLITE_OK) {
            fprintf(stderr, "cannot read table %s\n", table);
            rows = -1;
        }
        sqlite3_free(sql);
        if (rows < 0)
            break;
        for (;;) {
            int sa = sqlite3_step(ra), sb = sqlite3_step(rb);
            if (sa != sb) {
                fprintf(stderr, "table %s: %s rows than its twin\n", table,
                        sa == SQLITE_ROW ? "more" : "fewer");
                rows = -1;
            }
            if (sa != SQLITE_ROW || sb != SQLITE_ROW)
                break;
            for (int c = 0; c < sqlite3_column_count(ra); c++) {
                const char *va = (const char *)sqlite3_column_text(ra, c);
                const char *vb = (const char *)sqlite3_column_text(rb, c);
                if (sqlite3_column_type(ra, c) != sqlite3_column_type(rb, c) ||
                    (va == NULL) != (vb == NULL) || (va != NULL && strcmp(va, vb) != 0)) {
                    fprintf(stderr, "table %s, row %lld, column %d differs\n", table,
                            (long long)sqlite3_column_int64(ra, 0), c);
                    rows = -1;
                    break;
                }
            }
            if (rows < 0)
                break;
            rows++;
        }
        sqlite3_finalize(ra);
        sqlite3_finalize(rb);
    }
    sqlite3_finalize(tables);
out:
    sqlite3_close(a);
    sqlite3_close(b);
    return rows;
}

static int64_t count_rows(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return n;
}

/* A writer, and a new folder made from dir; NULL where no writer starts (the
 * case is skipped). */
static uo_page_writer *writer_in(char *dir)
{
    uo_page_writer *w = uo_page_writer_start();
    g_skipped = w == NULL;
    if (w != NULL)
        CHECK(mkdtemp(dir) != NULL);
    return w;
}

static void same(void)
{
    char dir[] = "/tmp/upti-page-writer-XXXXXX";
    uo_page_writer *w = writer_in(dir);
    if (w == NULL)
        return;
    uo_db *db[4] = {bulk_db(dir, "a", 10), bulk_db(dir, "b", 11), bulk_db(dir, "ra", 10),
                    bulk_db(dir, "rb", 11)};
    uo_db *a = db[0], *b = db[1], *ra = db[2], *rb = db[3];
    uo_db_set_page_writer(a, w);
    uo_db_set_page_writer(b, w);
    for (int i = 0; i < API_RECORDS && a != NULL && b != NULL && ra != NULL && rb != NULL; i++) {
        if (i == API_RECORDS / 2) { /* the writer runs out of work, and sleeps */
            struct timespec pause = {0, 30 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
        CHECK(add_record(a, i, 0) == 0);
        CHECK(add_record(ra, i, 0) == 0);
        if (i % 2 == 0) { /* B gets half as many, interleaved with A's */
            CHECK(add_record(b, i / 2, 1) == 0);
            CHECK(add_record(rb, i / 2, 1) == 0);
        }
    }
    for (int k = 0; k < 4; k++)
        CHECK(db[k] != NULL && uo_db_close(db[k], 9000000000ull) == 0);
    /* Every full batch of A's and B's api rows went through the writer. */
    CHECK(uo_page_writer_jobs(w) >= (API_RECORDS + API_RECORDS / 2) / UO_ROWS_BATCH);
    uo_page_writer_stop(w);
    const char *names[2][2] = {{"a", "ra"}, {"b", "rb"}};
    for (int k = 0; k < 2; k++) {
        char p[512], rp[512];
        snprintf(p, sizeof p, "%s/%s.db", dir, names[k][0]);
        snprintf(rp, sizeof rp, "%s/%s.db", dir, names[k][1]);
        int64_t calls = k == 0 ? API_RECORDS : API_RECORDS / 2;
        CHECK_EQ_U64(count_rows(p, "SELECT count(*) FROM api"), calls);
        CHECK_EQ_U64(count_rows(p, "SELECT count(*) FROM arg"), calls / 10);
        CHECK_EQ_U64(count_rows(p, "SELECT count(*) FROM arg WHERE length(value) = 70000"), 1);
        /* Through the index, in its order. */
        CHECK_EQ_U64(count_rows(p, "SELECT count(*) FROM api INDEXED BY api_correlation"
                                   " WHERE correlation_id >= 0"),
                     calls);
        /* Every api and arg row, the kernels, markers, strings and threads. */
        int64_t compared = compare(p, rp);
        CHECK(compared > calls + calls / 10 + calls / 50);
        unlink(p);
        unlink(rp);
    }
    rmdir(dir);
}

/* The records into a database, with writer w or none, files limited to 256
 * KiB while they go in; what uo_db_close returned. */
static int fill_past_limit(const char *dir, uo_page_writer *w)
{
    uo_db *db = bulk_db(dir, w != NULL ? "w" : "n", 12);
    if (db == NULL)
        return 0;
    uo_db_set_page_writer(db, w);
    CHECK(unit_limit_files(256 * 1024) == 0);
    int failed_at = -1;
    for (int i = 0; i < API_RECORDS && failed_at < 0; i++)
        if (add_record(db, i, 0) != 0)
            failed_at = i;
    CHECK(unit_limit_files(RLIM_INFINITY) == 0);
    CHECK(failed_at > 0); /* (a later add fails: the writer's error is said at a flush) */
    int rc = uo_db_close(db, 9000000000ull);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.db", dir, w != NULL ? "w" : "n");
    CHECK(access(path, F_OK) != 0); /* not kept, nor its .part */
    strcat(path, ".part");
    CHECK(access(path, F_OK) != 0);
    return rc;
}

static void full(void)
{
    char dir[] = "/tmp/upti-page-writer-XXXXXX";
    uo_page_writer *w = writer_in(dir);
    if (w == NULL)
        return;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    for (int with_writer = 0; with_writer < 2; with_writer++) {
        g_reports = 0;
        g_first_report[0] = '\0';
        uo_set_reporter(count_report, NULL);
        CHECK(fill_past_limit(dir, with_writer ? w : NULL) == -1);
        CHECK_EQ_U64(g_reports, 1);
        if (strstr(g_first_report, "cannot write the database's pages") == NULL)
            fprintf(stderr, "with_writer=%d: %s\n", with_writer, g_first_report);
        CHECK(strstr(g_first_report, "cannot write the database's pages") != NULL);
    }
    uo_set_reporter(uo_report_to_stderr, NULL);
    /* The same writer, for a database whose records come once the limit is lifted. */
    uo_db *whole = bulk_db(dir, "whole", 13);
    uo_db_set_page_writer(whole, w);
    for (int i = 0; i < API_RECORDS && whole != NULL; i++)
        CHECK(add_record(whole, i, 0) == 0);
    CHECK(whole != NULL && uo_db_close(whole, 9000000000ull) == 0);
    uo_page_writer_stop(w);
    char path[512];
    snprintf(path, sizeof path, "%s/whole.db", dir);
    CHECK_EQ_U64(count_rows(path, "SELECT count(*) FROM api"), API_RECORDS);
    unlink(path);
    signal(SIGXFSZ, was);
    rmdir(dir);
}

UNIT_TEST(page_writer)
{
    static const unit_sub_case_t cases[] = {{"same", same}, {"full", full}};
    if (!unit_run_sub_case("page_writer", sub, cases, sizeof cases / sizeof cases[0]))
        return 1;
    if (g_skipped) {
        printf("page_writer.%s: skipped (one CPU to run on, or a quota of one: no writer)\n", sub);
        return 77;
    }
    return test_result("page_writer");
}
