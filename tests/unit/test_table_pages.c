/* SPDX-License-Identifier: MIT */
/* src/collector/output/table_pages.c and index_pages.c: rows and index entries written
 * as SQLite b-tree pages by UPTI, read back by SQLite.
 *
 * 512-byte pages (about 20 rows a leaf) so that a few thousand rows make
 * trees of three and four levels; every row count from 0 to past the first
 * leaves' edges. Each database must pass PRAGMA integrity_check (every page
 * used once, keys in order at every level, leaves at one depth, the index
 * holding exactly the table's rows) and give back every row as written:
 * its id, each integer of every size (0, 1, negatives, 2^47, INT64_MIN/MAX),
 * NULL, empty and long text (past a leaf's local limit: inserted by SQLite
 * after the attach, under the id it would have had), and the index's order.
 *
 *   table_pages.trees    row counts 0..300, 1,070..1,100, 1,785..1,800, 20,000
 *                        (each way a level's pages are balanced); explicit ids with a
 *                        gap and one out of order; tables refused (a REAL
 *                        column, a UNIQUE index, rows already there); index
 *                        entries kept as runs and the leaves written from
 *                        them (keys as correlation ids come), or replayed as
 *                        entries (runs short, overlapping, past INT64_MAX);
 *                        a run of 2 M entries attached with 16 MiB of address
 *                        space to spare (the levels sized by their leaves)
 *   table_pages.rebuild  the index past its entry limit: dropped, rebuilt
 *                        by SQLite (REINDEX), the same rows and order
 *   table_pages.full     a write that fills the disk halfway through a page
 *                        (a file size limit not on a page boundary, as a full
 *                        tmpfs does): in the spool, in the copy of the spool
 *                        (inline and by its own thread),
 *                        in the attach's own pages; the error names the
 *                        reason (EFBIG here, ENOSPC on a full disk), not
 *                        "short write"
 *   table_pages.memory   two databases filled at once past the memory that
 *                        all indexes may hold (uo_index_memory_max): the one
 *                        that would pass it is rebuilt by SQLite, the other
 *                        written from its entries; both whole; nothing held
 *                        once they are freed
 *   table_pages.tmpdir   the REINDEX's sorter (an index past its entry limit,
 *                        more entries than the cache holds) writes its
 *                        temporary files beside the database, never in
 *                        $SQLITE_TMPDIR (watched with inotify); the index whole;
 *                        the spool is closed by the attach, before the sort
 */
#include "index_pages.h"
#include "table_pages.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Builds whose sanitizer reserves terabytes of address space: no RLIMIT_AS there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TP_SANITIZED 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TP_SANITIZED 1
#endif
#endif

#include "check.h"
#include "unit_db.h"
#include "unit_tests.h"

#define INSERT_T "INSERT INTO t(a, b, s) VALUES(?,?,?)"
#define INSERT_S "INSERT INTO s(id, v) VALUES(?,?)"

static const int64_t k_edges[] = {0, 1, -1, 2, 127, 128, -128, -129, 32767, 32768, -32769,
                                  8388607, 8388608, 2147483647, 2147483648LL, -2147483649LL,
                                  140737488355327LL, 140737488355328LL, INT64_MAX, INT64_MIN};
enum { EDGES = sizeof k_edges / sizeof k_edges[0] };

/* 1: the keys of t come mostly in order (row_a); 2: as the correlation ids of
 * rows that 8 threads wrote, some repeated; 3: the same, none repeated; 4:
 * as 3, but the middle row written as a page has the first row's key
 * (g_rows: the row count); 5: as correlation ids are handed out, in blocks
 * of consecutive ids for each thread (runs_key); 6: rising by one from
 * INT64_MAX - 3, past it to INT64_MIN; 7: rising by one, then again from a
 * quarter of the rows; 8: rising by one from minus half the rows (every
 * serial type's edge from -32,769 to 32,768 crossed within a run). */
static int g_keys_mostly_in_order, g_rows;
/* one_tree: rows through SQLite after the spool is made, about this many
 * pages of them; 1: the name a spool would be renamed through
 * (PATH.pages) is taken, by a file that must stay as it is. */
static int g_sqlite_pages_after, g_pages_name_taken;
/* row_s: texts of 40 to 439 bytes (a serial type of two bytes from 57). */
static int g_medium_texts;

/* Case 2's key of row i: each thread's ids in order, the threads' chunks of 16
 * rows interleaved as the spool holds them, every 23rd row the id of the row
 * before it again: within a span of about the row count (index_counted).
 * Case 3's: none again, every 5th id missing (index_placed). */
static int64_t interleaved_key(int i)
{
    if (g_keys_mostly_in_order == 2 && i % 23 == 22)
        i--;
    int chunk = i / 16;
    int64_t k = 8 * ((int64_t)(chunk / 8) * 16 + i % 16) + chunk % 8;
    return g_keys_mostly_in_order >= 3 ? k + k / 4 : k;
}

/* The entries that break the key order, found as they come (uo_index_add):
 * the key order of the kept ones and the row id order of the taken ones (each
 * row's entry once); none taken before an entry came below an earlier key;
 * the scan given up, its entries back in row id order, once one in eight
 * broke it. */
static void index_scan_as_entries_come(void)
{
    /* Past a power of two by less than the entries taken out: an array
     * grown only when the entries kept in it fill it would be too small to
     * merge them back (the room is for all of them: uo_index_add). */
    enum { N = (1 << 17) + 2 };
    size_t budget = 2 * N;
    uo_index_tree ix;
    /* Keys in row order, but a spike far above at row 30,000 and three late
     * calls' keys (10) at rows 50,000, 70,000 and 90,000. */
    CHECK(uo_index_set(&ix, "x", 2, 0, &budget) == 0);
    for (int i = 0; i < N; i++) {
        int64_t key = i;
        if (i == 30000)
            key = (int64_t)1 << 40;
        else if (i == 50000 || i == 70000 || i == 90000)
            key = 10;
        uo_index_add(&ix, key, i + 1);
        if (i == 29999)
            CHECK(ix.scan == 0 && ix.taken == 0 && ix.kept == 0 && ix.n == 30000);
    }
    CHECK(ix.scan == 1 && ix.least == 0 && ix.top == (int64_t)1 << 40);
    CHECK_EQ_U64(ix.taken, 4);
    CHECK_EQ_U64(ix.n, N - 4);
    CHECK_EQ_U64(ix.n - ix.kept, UO_INDEX_LOOKAHEAD);
    CHECK(ix.cap >= ix.n + ix.taken);
    if (ix.taken == 4 && ix.out != NULL) {
        CHECK(ix.out[0].rowid == 30001 && ix.out[0].key == (int64_t)1 << 40);
        CHECK(ix.out[1].rowid == 50001 && ix.out[2].rowid == 70001 && ix.out[3].rowid == 90001);
    }
    int ordered = 1;
    for (size_t i = 1; i < ix.kept; i++)
        ordered &= ix.e[i].key >= ix.e[i - 1].key && ix.e[i].rowid > ix.e[i - 1].rowid;
    CHECK(ordered);
    uo_index_free(&ix);
    /* Eight threads' keys, their chunks of 16 interleaved: given up. */
    g_keys_mostly_in_order = 3;
    CHECK(uo_index_set(&ix, "x", 2, 0, &budget) == 0);
    for (int i = 0; i < N; i++)
        uo_index_add(&ix, interleaved_key(i), i + 1);
    CHECK(ix.scan == -1 && ix.taken == 0 && ix.out == NULL);
    CHECK_EQ_U64(ix.n, N);
    int as_came = 1;
    for (int i = 0; i < N; i++)
        as_came &= ix.e[i].rowid == i + 1 && ix.e[i].key == interleaved_key(i);
    CHECK(as_came);
    uo_index_free(&ix);
    g_keys_mostly_in_order = 0;
}

/* Case 5's key of row i: 8 threads take blocks of 50 consecutive ids in
 * turn; the spool holds 37 rows of one thread, then of the next; in each
 * thread a call at the 6th of each 23 ends after the one it made (nested:
 * the two swap ids); the middle row's key is far above all (a spike). Each
 * key once: runs of up to 50 entries, the leaves written from them. */
static int64_t runs_key(int i)
{
    if (i == g_rows / 2)
        return ((int64_t)1 << 40) + i;
    int chunk = i / 37, thread = chunk % 8;
    int r = (chunk / 8) * 37 + i % 37; /* the thread's r-th row */
    if (r % 23 == 5)
        r++;
    else if (r % 23 == 6)
        r--;
    return ((int64_t)(r / 50) * 8 + thread) * 50 + r % 50;
}

/* Entries kept as runs as they come (uo_index_add): one run while the key
 * and the row id both go up by one, a new one where either does not (a run
 * that passes INT64_MAX goes on: found at the attach); given up for entries,
 * the same ones as if they had come as entries, once past uo_index_runs_min
 * runs of under UO_INDEX_RUN_AVERAGE entries each, or past the budget; their
 * memory counted, and given back. */
static void index_runs_as_entries_come(void)
{
    size_t budget = 1 << 20;
    uo_index_tree ix;
    CHECK(uo_index_set(&ix, "x", 2, 0, &budget) == 0);
    CHECK(ix.in_runs == 1);
    for (int i = 0; i < 1000; i++)
        uo_index_add(&ix, 100 + i, i + 1);
    uo_index_add(&ix, 5000, 1001);
    uo_index_add(&ix, 5001, 1003);
    uo_index_add(&ix, 5002, 1004);
    uo_index_add(&ix, INT64_MAX, 1005);
    uo_index_add(&ix, INT64_MIN, 1006);
    CHECK(ix.in_runs == 1 && ix.n == 0 && ix.e == NULL);
    CHECK_EQ_U64(ix.runs, 4);
    if (ix.runs == 4) {
        CHECK(ix.run[0].key == 100 && ix.run[0].rowid == 1 && ix.run[0].n == 1000);
        CHECK(ix.run[1].key == 5000 && ix.run[1].rowid == 1001 && ix.run[1].n == 1);
        CHECK(ix.run[2].key == 5001 && ix.run[2].rowid == 1003 && ix.run[2].n == 2);
        CHECK(ix.run[3].key == INT64_MAX && ix.run[3].rowid == 1005 && ix.run[3].n == 2);
    }
    CHECK_EQ_U64(uo_index_memory(), ix.runcap * sizeof(uo_index_run));
    CHECK_EQ_U64(budget, (1 << 20) - ix.runcap * 3 / 2);
    uo_index_free(&ix);
    CHECK_EQ_U64(uo_index_memory(), 0);
    CHECK_EQ_U64(budget, 1 << 20);
    /* Runs of two: 256 of them grow to 512 (under uo_index_runs_min), 512
     * are given up; then a key below the others. */
    uo_index_runs_min = 300;
    CHECK(uo_index_set(&ix, "x", 2, 0, &budget) == 0);
    for (int i = 0; i < 2000; i++) {
        uo_index_add(&ix, (i / 2) * 3 + i % 2, i + 1);
        if (i == 1022)
            CHECK(ix.in_runs == 1 && ix.runs == 512 && ix.runcap == 512);
        if (i == 1024)
            CHECK(ix.in_runs == 0 && ix.runs == 0 && ix.run == NULL && ix.n == 1025);
    }
    uo_index_add(&ix, 1, 2001);
    CHECK(ix.in_runs == 0 && ix.n + ix.taken == 2001 && ix.below == 1 && ix.least == 0);
    CHECK(ix.top == 999 * 3 + 1);
    int same = ix.n + ix.taken == 2001;
    for (int i = 0; same && i < 2000; i++)
        same = ix.e[i].key == (i / 2) * 3 + i % 2 && ix.e[i].rowid == i + 1;
    CHECK(same);
    CHECK_EQ_U64(uo_index_memory(), ix.cap * 16 + ix.outcap * 16);
    uo_index_free(&ix);
    /* A budget too small for 256 runs: entries from the first, then dropped. */
    budget = 300;
    CHECK(uo_index_set(&ix, "x", 2, 0, &budget) == 0);
    for (int i = 0; i < 1000; i++)
        uo_index_add(&ix, i, i + 1);
    CHECK(ix.in_runs == 0 && ix.rebuild == 1 && ix.runs == 0 && ix.n == 0);
    uo_index_free(&ix);
    CHECK_EQ_U64(budget, 300);
    CHECK_EQ_U64(uo_index_memory(), 0);
    uo_index_runs_min = UO_INDEX_RUNS_MIN;
}

/* One run of 2 M entries (as many correlation ids in a row) attached with
 * 16 MiB of address space to spare (RLIMIT_AS, in a child): the levels'
 * arrays are sized by the leaves the entries can fill, not by the entries
 * (two arrays of 20 bytes per two entries were 40 MB here, and a run is not
 * bounded by the entries' budget); the tree then reads back whole. */
static void index_run_in_little_memory(const char *path)
{
#ifndef TP_SANITIZED
    enum { N = 2000000 };
    const uint32_t page_size = 65536;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CHECK(fd >= 0);
    pid_t pid = fork();
    if (pid == 0) {
        size_t budget = 1024; /* (the run's room: 256 runs of 24 bytes) */
        uo_index_tree ix;
        if (uo_index_set(&ix, "x", 1, 0, &budget) != 0)
            _exit(2);
        for (int i = 0; i < N; i++)
            uo_index_add(&ix, 1000 + i, i + 1);
        char error[256] = "";
        sqlf_out o = {.fd = fd, .sqlite_fd = fd, .page_size = page_size, .next = 2,
                      .page = malloc(page_size), .error = error, .errlen = sizeof error};
        long pages = 0;
        FILE *statm = fopen("/proc/self/statm", "r");
        if (o.page == NULL || statm == NULL || fscanf(statm, "%ld", &pages) != 1)
            _exit(3);
        fclose(statm);
        struct rlimit as = {(rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (16u << 20),
                            RLIM_INFINITY};
        if (setrlimit(RLIMIT_AS, &as) != 0)
            _exit(4);
        int rc = uo_index_attach(&ix, &o);
        if (rc != 0)
            fprintf(stderr, "attach in little memory: %s\n", error);
        _exit(rc == 0 ? 0 : 5);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The leaves after the root (page 1): every entry once, each in a leaf
     * or as the separator between two. */
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size % page_size == 0);
    uint8_t *page = malloc(page_size);
    uint64_t seen = 0, leaves = 0;
    for (off_t at = page_size; page != NULL && at < st.st_size; at += page_size) {
        if (pread(fd, page, page_size, at) != (ssize_t)page_size || page[0] != SQLF_LEAF_INDEX)
            continue;
        leaves++;
        seen += (uint64_t)page[3] << 8 | page[4];
    }
    /* Each leaf's entries, and one separator between two leaves. */
    CHECK_EQ_U64(seen + leaves - 1, N);
    CHECK(leaves > 300); /* (some 5,460 entries of 12 bytes a leaf) */
    free(page);
    close(fd);
    unlink(path);
#else
    (void)path;
#endif
}

/* Row i of t: a (the indexed key: every size, in no order; or mostly in
 * order, as correlation ids come: rising, equal in pairs, with a key below
 * every 97th row, above every 89th, an edge value every 101st), b, s. */
static int64_t row_a(int i)
{
    if (!g_keys_mostly_in_order)
        return i % 3 == 0 ? k_edges[i % EDGES] : (int64_t)((i * 7919) % 1000) - 500;
    if (g_keys_mostly_in_order == 5)
        return runs_key(i);
    if (g_keys_mostly_in_order == 6)
        return (int64_t)((uint64_t)INT64_MAX - 3 + (uint64_t)i);
    if (g_keys_mostly_in_order == 7)
        return i < g_rows / 2 ? i : i - g_rows / 4;
    if (g_keys_mostly_in_order == 8)
        return i - g_rows / 2;
    if (g_keys_mostly_in_order == 4) /* (a row that row_s gives 600 bytes SQLite inserts) */
        return interleaved_key(i == g_rows / 2 + (g_rows / 2 % 35 == 6) ? 0 : i);
    if (g_keys_mostly_in_order >= 2 && g_keys_mostly_in_order <= 3)
        return interleaved_key(i);
    if (i % 101 == 3)
        return k_edges[(i / 101) % EDGES];
    if (i % 97 == 50)
        return i / 3 - 40;
    if (i % 89 == 7)
        return (int64_t)i * 1000;
    return i / 2;
}
static int64_t row_b(int i) { return (int64_t)i * 1000003; }

/* s: NULL, "", short, or past a 512-byte page's local limit (477 bytes). */
static void row_s(int i, char *buf, size_t cap, const char **s)
{
    int kind = i % 7;
    if (kind == 0) {
        *s = NULL;
        return;
    }
    size_t len = kind == 1                 ? 0
                 : kind == 6 && i % 5 == 1 ? 600
                 : g_medium_texts          ? 40 + (size_t)(i * 7 % 400)
                                           : (size_t)(i % 40);
    if (len >= cap)
        len = cap - 1;
    for (size_t k = 0; k < len; k++)
        buf[k] = (char)('a' + (i + (int)k) % 26);
    buf[len] = '\0';
    *s = buf;
}

static int exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "FAIL: %s: %s\n", sql, msg ? msg : "?");
    sqlite3_free(msg);
    return rc;
}

static int64_t query_i64(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = INT64_MIN;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* PRAGMA integrity_check says "ok". */
static int integrity_ok(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int ok = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const char *r = (const char *)sqlite3_column_text(st, 0);
        ok = r != NULL && strcmp(r, "ok") == 0;
        if (!ok)
            fprintf(stderr, "integrity_check: %s\n", r ? r : "?");
    }
    sqlite3_finalize(st);
    return ok;
}

static sqlite3 *open_db(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return NULL;
    exec(db, "PRAGMA page_size=512; PRAGMA journal_mode=OFF; PRAGMA locking_mode=EXCLUSIVE;");
    return db;
}

/* Writes n rows of t (and of s: ids 10, 20, ... then one out of order), then checks them. */
static void one_tree(const char *path, int n)
{
    g_rows = n;
    unlink(path);
    sqlite3 *db = open_db(path);
    CHECK(db != NULL);
    if (db == NULL)
        return;
    /* With medium texts, the text column before an integer one: the types
     * after a two-byte one move. */
    CHECK(exec(db, g_medium_texts ? "BEGIN; CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER,"
                                    " s TEXT, b INTEGER);"
                                  : "BEGIN; CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER,"
                                    " b INTEGER, s TEXT);") == SQLITE_OK);
    CHECK(exec(db, "CREATE INDEX t_a ON t(a);"
                   "CREATE TABLE s(id INTEGER PRIMARY KEY, v TEXT NOT NULL);"
                   "CREATE TABLE r(id INTEGER PRIMARY KEY, x REAL);"
                   "CREATE TABLE u(id INTEGER PRIMARY KEY, k INTEGER UNIQUE);"
                   "CREATE TABLE f(id INTEGER PRIMARY KEY, k INTEGER);"
                   "INSERT INTO f(k) VALUES(1);"
                   "CREATE TABLE g(id INTEGER PRIMARY KEY, k INTEGER);"
                   "CREATE TRIGGER g_k AFTER INSERT ON g BEGIN UPDATE f SET k = k + 1; END;"
                   "CREATE TABLE c(id INTEGER PRIMARY KEY, k INTEGER CHECK (k > 0));"
                   "CREATE TABLE e(id INTEGER PRIMARY KEY, k INTEGER REFERENCES f(id));"
                   "CREATE TABLE w(id INTEGER PRIMARY KEY AUTOINCREMENT, k INTEGER);") ==
          SQLITE_OK);
    char err[256] = "";
    uo_page_spool *sp = uo_pages_open(db, path, err, sizeof err);
    CHECK(sp != NULL);
    if (sp == NULL) {
        fprintf(stderr, "uo_pages_open: %s\n", err);
        sqlite3_close(db);
        return;
    }
    uo_table_tree *t = uo_pages_table(sp, db, INSERT_T, 3, 2);
    uo_table_tree *s = uo_pages_table(sp, db, INSERT_S, 2, 1);
    CHECK(t != NULL && s != NULL);
    /* A REAL column, a UNIQUE index, a table not empty: SQLite's to fill. */
    CHECK(uo_pages_table(sp, db, "INSERT INTO r(x) VALUES(?)", 1, -1) == NULL);
    CHECK(uo_pages_table(sp, db, "INSERT INTO u(k) VALUES(?)", 1, -1) == NULL);
    CHECK(uo_pages_table(sp, db, "INSERT INTO f(k) VALUES(?)", 1, -1) == NULL);
    /* A trigger, a CHECK, a foreign key, AUTOINCREMENT (its sqlite_sequence),
     * a table that does not exist: SQLite's too. */
    CHECK(uo_pages_table(sp, db, "INSERT INTO g(k) VALUES(?)", 1, -1) == NULL);
    CHECK(uo_pages_table(sp, db, "INSERT INTO c(k) VALUES(?)", 1, -1) == NULL);
    CHECK(uo_pages_table(sp, db, "INSERT INTO e(k) VALUES(?)", 1, -1) == NULL);
    CHECK(uo_pages_table(sp, db, "INSERT INTO w(k) VALUES(?)", 1, -1) == NULL);
    CHECK(uo_pages_table(sp, db, "INSERT INTO nowhere(k) VALUES(?)", 1, -1) == NULL);
    if (t == NULL || s == NULL) {
        uo_pages_free(sp);
        sqlite3_close(db);
        return;
    }
    /* SQLite's pages past those the spool left them (g_sqlite_pages_after). */
    for (int i = 0; i < g_sqlite_pages_after * 40; i++)
        CHECK(exec(db, "INSERT INTO r(x) VALUES(0.5)") == SQLITE_OK);
    char buf[700];
    for (int i = 0; i < n; i++) {
        const char *text;
        row_s(i, buf, sizeof buf, &text);
        int64_t v[3] = {row_a(i), row_b(i), 0};
        CHECK(uo_tree_add(t, v, text) == 0);
        int64_t w[2] = {(int64_t)(i + 1) * 10, 0};
        snprintf(buf, sizeof buf, "v%d", i);
        CHECK(uo_tree_add(s, w, buf) == 0);
    }
    int64_t late[2] = {15, 0}; /* below the last id: SQLite inserts it */
    CHECK(uo_tree_add(s, late, n > 1 ? "late" : "early") == 0);
    CHECK(exec(db, "COMMIT") == SQLITE_OK);
    CHECK(sqlite3_close(db) == SQLITE_OK);
    /* The spool becomes the file from uo_pages_rename_bytes on (0 here: all),
     * with the file's mode. */
    struct stat before, after;
    CHECK(stat(path, &before) == 0);
    CHECK(chmod(path, 0640) == 0);
    unsigned long renamed = uo_pages_moved.spools_renamed;
    char taken[PATH_MAX];
    snprintf(taken, sizeof taken, "%s.pages", path);
    if (g_pages_name_taken) {
        FILE *f = fopen(taken, "w");
        CHECK(f != NULL && fputs("another's", f) >= 0 && fclose(f) == 0);
    }
    int rc = uo_pages_attach(sp, path);
    if (g_pages_name_taken) {
        char got[32] = "";
        FILE *f = fopen(taken, "r");
        CHECK(f != NULL && fgets(got, sizeof got, f) != NULL && fclose(f) == 0);
        CHECK(strcmp(got, "another's") == 0);
        unlink(taken);
    }
    int want = uo_pages_rename_bytes == 0 && uo_pages_renaming && !g_pages_name_taken;
    CHECK_EQ_U64(rc, want);
    CHECK_EQ_U64(uo_pages_moved.spools_renamed, renamed + (unsigned long)want);
    CHECK(stat(path, &after) == 0);
    CHECK_EQ_U64(after.st_mode & 07777, 0640);
    CHECK(want ? after.st_ino != before.st_ino : after.st_ino == before.st_ino);
    if (uo_pages_error(sp) != NULL)
        fprintf(stderr, "attach: %s\n", uo_pages_error(sp));
    db = open_db(path);
    /* The trees as written, before SQLite inserts (and rebalances) anything.
     * integrity_check accepts an interior page with no cell (its right-most
     * child only; SQLite makes one above a root it moves down): none in ours,
     * nor an empty leaf but a root. (An index to rebuild is empty until then.) */
    if (uo_index_entries_max >= (size_t)n)
        CHECK(integrity_ok(db));
    CHECK_EQ_U64(query_i64(db, "SELECT count(*) FROM dbstat WHERE ncell = 0 AND"
                               " name IN ('t', 't_a', 's') AND path != '/'"), 0);
    CHECK_EQ_U64(query_i64(db, "SELECT count(*) FROM dbstat WHERE pagetype = 'internal' AND"
                               " ncell = 0 AND name IN ('t', 't_a', 's')"), 0);
    CHECK(db != NULL && exec(db, "BEGIN") == SQLITE_OK);
    CHECK(uo_pages_insert_deferred(sp, db) == SQLITE_OK);
    CHECK(exec(db, "COMMIT") == SQLITE_OK);
    uo_pages_free(sp);

    CHECK(integrity_ok(db));
    CHECK_EQ_U64(query_i64(db, "SELECT count(*) FROM s"), n + 1);
    CHECK_EQ_U64(query_i64(db, "SELECT count(*) FROM f"), 1);
    sqlite3_stmt *st = NULL;
    int i = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, a, b, s, typeof(a), typeof(s) FROM t ORDER BY id", -1,
                           &st, NULL) == SQLITE_OK) {
        for (; sqlite3_step(st) == SQLITE_ROW; i++) {
            const char *want;
            row_s(i, buf, sizeof buf, &want);
            const char *got = (const char *)sqlite3_column_text(st, 3);
            int same = sqlite3_column_int64(st, 0) == i + 1 && sqlite3_column_int64(st, 1) == row_a(i) &&
                       sqlite3_column_int64(st, 2) == row_b(i) &&
                       strcmp((const char *)sqlite3_column_text(st, 4), "integer") == 0 &&
                       strcmp((const char *)sqlite3_column_text(st, 5), want ? "text" : "null") == 0 &&
                       (want == NULL ? got == NULL : got != NULL && strcmp(got, want) == 0);
            if (!same)
                fprintf(stderr, "row %d of %d differs\n", i, n);
            CHECK(same);
        }
    }
    sqlite3_finalize(st);
    CHECK_EQ_U64(i, n);
    /* Through the index: every row once, by (a, id). */
    int64_t prev_a = INT64_MIN, prev_id = 0;
    int rows = 0, ordered = 1;
    if (sqlite3_prepare_v2(db, "SELECT a, id FROM t INDEXED BY t_a WHERE a >= -9223372036854775808"
                               " ORDER BY a, id", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int64_t a = sqlite3_column_int64(st, 0), id = sqlite3_column_int64(st, 1);
            ordered &= rows == 0 || a > prev_a || (a == prev_a && id > prev_id);
            prev_a = a;
            prev_id = id;
            rows++;
        }
    }
    sqlite3_finalize(st);
    CHECK(ordered);
    CHECK_EQ_U64(rows, n);
    if (n > 3) {
        char q[160];
        snprintf(q, sizeof q, "SELECT count(*) FROM t INDEXED BY t_a WHERE a = %lld",
                 (long long)row_a(3));
        int64_t want = 0;
        for (int k = 0; k < n; k++)
            want += row_a(k) == row_a(3);
        CHECK_EQ_U64(query_i64(db, q), want);
    }
    if (n > 1)
        CHECK_EQ_U64(query_i64(db, "SELECT id FROM s WHERE v = 'late'"), 15);
    CHECK_EQ_U64(query_i64(db, "SELECT max(id) FROM s WHERE v LIKE 'v%'"), n * 10); /* NULL: 0 */
    sqlite3_close(db);
    unlink(path);
}

/* Sets the file size limit (RLIM_INFINITY: none). */
static void limit_files(rlim_t bytes) { CHECK(unit_limit_files(bytes) == 0); }

/* A database at path with table t (index t_a), its spool and t's tree. */
typedef struct open_tree {
    sqlite3 *db;
    uo_page_spool *sp;
    uo_table_tree *t;
} open_tree;

static int open_tree_at(open_tree *o, const char *path)
{
    unlink(path);
    o->db = open_db(path);
    o->sp = NULL;
    o->t = NULL;
    if (o->db == NULL || exec(o->db, "BEGIN; CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER,"
                                     " b INTEGER, s TEXT); CREATE INDEX t_a ON t(a);") != SQLITE_OK)
        return -1;
    char err[256];
    o->sp = uo_pages_open(o->db, path, err, sizeof err);
    o->t = o->sp != NULL ? uo_pages_table(o->sp, o->db, INSERT_T, 3, 2) : NULL;
    return o->t != NULL ? 0 : -1;
}

/* Rows in t through its index t_a. */
static int64_t rows_by_index(sqlite3 *db)
{
    return query_i64(db, "SELECT count(*) FROM t INDEXED BY t_a WHERE a >= -9223372036854775808");
}

/* n rows of t into a fresh database at path, files limited to spool_limit
 * bytes while they are added, and to db_limit bytes (less than the file and
 * its spooled pages: db_limit_rel, added to the file's size before the
 * attach; else absolute) during the attach; RLIM_INFINITY: no limit. The
 * first error of the spool ("" if none); *size: the file's size after a
 * successful attach. */
static void fill_until_full(const char *path, int n, rlim_t spool_limit, rlim_t db_limit,
                            int db_limit_rel, char *error, size_t cap, off_t *size)
{
    error[0] = '\0';
    *size = 0;
    open_tree o;
    CHECK(open_tree_at(&o, path) == 0);
    sqlite3 *db = o.db;
    uo_page_spool *sp = o.sp;
    uo_table_tree *t = o.t;
    if (t == NULL) {
        uo_pages_free(sp);
        sqlite3_close(db);
        return;
    }
    /* The spool's first leaf: after the pages it leaves SQLite's. */
    rlim_t head = (rlim_t)(query_i64(db, "PRAGMA page_count") + uo_pages_head_slack) * 512;
    limit_files(spool_limit == RLIM_INFINITY ? spool_limit : head + spool_limit);
    int failed = 0;
    for (int i = 0; i < n && !failed; i++) {
        int64_t v[3] = {row_a(i), row_b(i), 0};
        failed = uo_tree_add(t, v, "some text of a row") != 0;
    }
    limit_files(RLIM_INFINITY);
    CHECK(exec(db, "COMMIT") == SQLITE_OK);
    CHECK(sqlite3_close(db) == SQLITE_OK);
    if (!failed) {
        struct stat sb;
        CHECK(stat(path, &sb) == 0);
        limit_files(db_limit_rel ? (rlim_t)sb.st_size + db_limit : db_limit);
        int rc = uo_pages_attach(sp, path);
        limit_files(RLIM_INFINITY);
        CHECK(rc == (db_limit == RLIM_INFINITY ? 0 : -1));
        CHECK(stat(path, &sb) == 0);
        *size = rc == 0 ? sb.st_size : 0;
    }
    const char *e = uo_pages_error(sp);
    snprintf(error, cap, "%s", e != NULL ? e : "");
    uo_pages_free(sp);
    unlink(path);
}

/* The files SQLite created (its temporary files are named etilqs_*) in the
 * folders of watches wt and wd, from the events queued on in. */
static void temp_files_created(int in, int wt, int wd, int *in_wt, int *in_wd)
{
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    *in_wt = *in_wd = 0;
    while ((n = read(in, buf, sizeof buf)) > 0)
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (ev->len > 0 && strncmp(ev->name, "etilqs_", 7) == 0) {
                *in_wt += ev->wd == wt;
                *in_wd += ev->wd == wd;
            }
            p += sizeof *ev + ev->len;
        }
}

/* Descriptors open in this process. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

/* The REINDEX of an index past its entry limit, with a cache of 64 KiB:
 * SQLite's sorter spills to temporary files. */
static void reindex_beside(void)
{
    char tmp[] = "/tmp/upti-tp-tmpdir-XXXXXX", dir[] = "/tmp/upti-tp-dbdir-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL && mkdtemp(dir) != NULL);
    /* Read by SQLite once, at its initialization: before its first use here. */
    setenv("SQLITE_TMPDIR", tmp, 1);
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    CHECK(in >= 0);
    int wt = inotify_add_watch(in, tmp, IN_CREATE), wd = inotify_add_watch(in, dir, IN_CREATE);
    CHECK(wt >= 0 && wd >= 0);
    char path[128];
    snprintf(path, sizeof path, "%s/t.db", dir);
    uo_index_entries_max = 5000; /* the budget of the spool opened next */
    open_tree o;
    CHECK(open_tree_at(&o, path) == 0);
    sqlite3 *db = o.db;
    uo_page_spool *sp = o.sp;
    uo_table_tree *t = o.t;
    if (db == NULL)
        return;
    enum { ROWS = 50000 };
    for (int i = 0; i < ROWS && t != NULL; i++) {
        int64_t v[3] = {row_a(i), row_b(i), 0};
        CHECK(uo_tree_add(t, v, NULL) == 0);
    }
    CHECK(exec(db, "COMMIT") == SQLITE_OK);
    CHECK(sqlite3_close(db) == SQLITE_OK);
    /* The attach closes the spool: its space is free before the REINDEX's sort. */
    int fds = open_fds();
    CHECK(sp != NULL && uo_pages_attach(sp, path) == 0);
    CHECK_EQ_U64(open_fds(), fds - 1);
    db = open_db(path);
    CHECK(exec(db, "PRAGMA cache_size=-64; BEGIN") == SQLITE_OK);
    CHECK(sp != NULL && uo_pages_insert_deferred(sp, db) == SQLITE_OK);
    CHECK(exec(db, "COMMIT") == SQLITE_OK);
    uo_pages_free(sp);
    uo_index_entries_max = UO_INDEX_ENTRIES_MAX;
    CHECK(integrity_ok(db));
    CHECK_EQ_U64(rows_by_index(db), ROWS);
    sqlite3_close(db);
    int in_tmp, beside;
    temp_files_created(in, wt, wd, &in_tmp, &beside);
    if (in_tmp != 0 || beside == 0)
        fprintf(stderr, "temporary files: %d in SQLITE_TMPDIR, %d beside the database\n", in_tmp,
                beside);
    CHECK_EQ_U64(in_tmp, 0);
    CHECK(beside > 0);
    close(in);
    unlink(path);
    rmdir(tmp);
    rmdir(dir);
}

/* Trees of every row count up to several leaves (0 to 40), and of those
 * where an index level's last page takes a child (1,785 to 1,800), then
 * with big one of 20,000 rows. */
static void trees_by_count(const char *path, int big)
{
    for (int n = 0; n <= 40; n++)
        one_tree(path, n);
    for (int n = 1785; n <= 1800; n++)
        one_tree(path, n);
    if (big)
        one_tree(path, 20000);
}

static void indexes_past_memory(const char *dir)
{
    enum { ROWS = 20000 };
    char pa[128], pb[128];
    snprintf(pa, sizeof pa, "%s-a.db", dir);
    snprintf(pb, sizeof pb, "%s-b.db", dir);
    open_tree a, b;
    CHECK(open_tree_at(&a, pa) == 0 && open_tree_at(&b, pb) == 0);
    if (a.t == NULL || b.t == NULL)
        return;
    /* Entries grow 4,096, 8,192, 16,384, 32,768 (16 bytes each), a's first:
     * at 32,768 a would hold 512 KiB and b 256 KiB, past 600 KiB. */
    CHECK_EQ_U64(uo_index_memory(), 0);
    uo_index_memory_max = 600 << 10;
    for (int i = 0; i < ROWS; i++) {
        int64_t v[3] = {row_a(i), row_b(i), 0};
        CHECK(uo_tree_add(a.t, v, NULL) == 0);
        CHECK(uo_tree_add(b.t, v, NULL) == 0);
    }
    CHECK_EQ_U64(uo_index_memory(), 32768 * 16); /* b's */
    open_tree *both[2] = {&a, &b};
    const char *paths[2] = {pa, pb};
    for (int k = 0; k < 2; k++) {
        CHECK(exec(both[k]->db, "COMMIT") == SQLITE_OK);
        CHECK(sqlite3_close(both[k]->db) == SQLITE_OK);
        CHECK(uo_pages_attach(both[k]->sp, paths[k]) == 0);
        both[k]->db = open_db(paths[k]);
        /* a's index: dropped, empty until SQLite rebuilds it; b's: written. */
        CHECK_EQ_U64(rows_by_index(both[k]->db), k == 0 ? 0 : ROWS);
        CHECK(exec(both[k]->db, "BEGIN") == SQLITE_OK);
        CHECK(uo_pages_insert_deferred(both[k]->sp, both[k]->db) == SQLITE_OK);
        CHECK(exec(both[k]->db, "COMMIT") == SQLITE_OK);
        uo_pages_free(both[k]->sp);
        CHECK(integrity_ok(both[k]->db));
        CHECK_EQ_U64(rows_by_index(both[k]->db), ROWS);
        CHECK_EQ_U64(query_i64(both[k]->db, "SELECT count(*) FROM t"), ROWS);
        sqlite3_close(both[k]->db);
        unlink(paths[k]);
    }
    CHECK_EQ_U64(uo_index_memory(), 0);
    uo_index_memory_max = UO_INDEX_MEMORY_MAX;
}

UNIT_TEST(table_pages)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/upti-table-pages-%d.db", (int)getpid());
    if (strcmp(sub, "memory") == 0) {
        indexes_past_memory(path);
        return test_result("table_pages.memory");
    }
    if (strcmp(sub, "tmpdir") == 0) {
        reindex_beside();
        return test_result("table_pages.tmpdir");
    }
    if (strcmp(sub, "full") == 0) {
        /* A write past the limit is cut at it (a short write), the next one
         * fails with EFBIG, as a full disk's with ENOSPC. 2,000 rows: about
         * 90 leaves of 512 bytes, a tree of 3 levels. */
        signal(SIGXFSZ, SIG_IGN);
        char error[256], want[256];
        snprintf(want, sizeof want, "cannot write the database's pages to a temporary file: %s",
                 strerror(EFBIG));
        off_t size;
        fill_until_full(path, 2000, 10 * 512 + 100, RLIM_INFINITY, 0, error, sizeof error, &size);
        if (strcmp(error, want) != 0)
            fprintf(stderr, "spool: got '%s'\n", error);
        CHECK(strcmp(error, want) == 0);
        /* Files cut 100 bytes into the eleventh page after SQLite's: the
         * attach's own pages, written into the spool after the leaves, fail
         * first, whether the spool is to be copied or renamed; the copying
         * thread (a spool that cannot be renamed) fails on the leaves while
         * the attach's pages fail too (the copy's error is said: its pages
         * come first). */
        for (int mode = 0; mode < 3; mode++) {
            uo_pages_rename_bytes = mode == 0 ? UO_PAGES_RENAME_BYTES : 0;
            uo_pages_renaming = mode != 2;
            fill_until_full(path, 2000, RLIM_INFINITY, 10 * 512 + 100, 1, error, sizeof error,
                            &size);
            const char *cut = strstr(error, ": ");
            int ok = mode == 2 ? strncmp(error, "cannot copy the database's pages", 32) == 0
                               : strncmp(error, "cannot write page ", 18) == 0;
            if (!ok || cut == NULL || strcmp(cut + 2, strerror(EFBIG)) != 0) {
                fprintf(stderr, "files cut (mode %d): got '%s'\n", mode, error);
                ok = 0;
            }
            CHECK(ok);
        }
        uo_pages_rename_bytes = UO_PAGES_RENAME_BYTES;
        uo_pages_renaming = 1;
        /* The pages the attach writes itself (the last leaf, the index, the
         * levels above): the last one of the file cut 100 bytes in. */
        fill_until_full(path, 2000, RLIM_INFINITY, RLIM_INFINITY, 0, error, sizeof error, &size);
        CHECK(strcmp(error, "") == 0);
        CHECK(size > 100 * 512 && size % 512 == 0);
        snprintf(want, sizeof want, "cannot write page %lld of the database: %s",
                 (long long)(size / 512), strerror(EFBIG));
        fill_until_full(path, 2000, RLIM_INFINITY, (rlim_t)size - 512 + 100, 0, error,
                        sizeof error, &size);
        if (strcmp(error, want) != 0)
            fprintf(stderr, "attach: got '%s', want '%s'\n", error, want);
        CHECK(strcmp(error, want) == 0);
        /* The index's leaves written by two threads (uo_index_split_entries):
         * the file cut in each of its last 40 pages (the table's last leaf and
         * levels, the index's levels, the leaves of its first two fifths, then
         * some of the rest's, which the other thread wrote before them: all
         * written by the attach, after the limit was set), the first page past
         * the cut is the one said, whichever thread wrote it. */
        uo_index_split_entries = 3;
        off_t whole;
        fill_until_full(path, 2000, RLIM_INFINITY, RLIM_INFINITY, 0, error, sizeof error, &whole);
        CHECK(strcmp(error, "") == 0 && whole % 512 == 0);
        uo_pages_moves split_before = uo_pages_moved;
        for (int k = 1; k <= 40; k++) {
            off_t cut = whole - (off_t)k * 512 + 100;
            snprintf(want, sizeof want, "cannot write page %lld of the database: %s",
                     (long long)(cut / 512 + 1), strerror(EFBIG));
            fill_until_full(path, 2000, RLIM_INFINITY, (rlim_t)cut, 0, error, sizeof error, &size);
            if (strcmp(error, want) != 0)
                fprintf(stderr, "split, cut %d pages from the end: got '%s', want '%s'\n", k,
                        error, want);
            CHECK(strcmp(error, want) == 0);
        }
        CHECK_EQ_U64(uo_pages_moved.index_split, split_before.index_split + 40);
        uo_index_split_entries = UO_INDEX_SPLIT_ENTRIES;
        return test_result("table_pages.full");
    }
    if (strcmp(sub, "rebuild") == 0) {
        uo_index_entries_max = 5000;
        one_tree(path, 20000);
        uo_index_entries_max = UO_INDEX_ENTRIES_MAX;
        return test_result("table_pages.rebuild");
    }
    index_runs_as_entries_come();
    index_run_in_little_memory(path);
    /* Entries below an earlier key, counted as they come (how the attach
     * chooses its sort): none for INT64_MIN first, then -5 after -3, 3 after
     * 5, 6 after 7, 5 after 8; equal keys are not below. Kept as entries
     * from the first (uo_index_runs_min), as in every test up to the runs'. */
    uo_index_runs_min = 0;
    {
        size_t budget = 1000;
        uo_index_tree ix;
        CHECK(uo_index_set(&ix, "x", 2, 0, &budget) == 0);
        const int64_t keys[] = {INT64_MIN, -3, -5, 5, 3, 7, 7, 6, 8, 5, 9};
        for (int i = 0; i < 11; i++)
            uo_index_add(&ix, keys[i], i + 1);
        CHECK_EQ_U64(ix.below, 4);
        CHECK(ix.least == INT64_MIN && ix.top == 9 && ix.n + ix.taken == 11);
        uo_index_free(&ix);
        /* The least key: the first one, or one that came below it. */
        const int64_t later[] = {5, 7, 3, 9, 4};
        CHECK(uo_index_set(&ix, "x", 2, 0, &budget) == 0);
        uo_index_add(&ix, later[0], 1);
        CHECK(ix.least == 5 && ix.top == 5);
        for (int i = 1; i < 5; i++)
            uo_index_add(&ix, later[i], i + 1);
        CHECK(ix.least == 3 && ix.top == 9);
        CHECK_EQ_U64(ix.below, 2);
        uo_index_free(&ix);
    }
    index_scan_as_entries_come();
    /* Every count up to several leaves, and those where a level's last page
     * takes a child from the page before it (table levels: 1,075..1,094 rows;
     * index levels: from 1,788; found by trying every count up to 8,000): the
     * counts below must reach each case, or the encoding changed and the
     * ranges must move. */
    uo_pages_moves before = uo_pages_moved;
    for (int n = 0; n <= 300; n++)
        one_tree(path, n);
    for (int n = 1070; n <= 1100; n++)
        one_tree(path, n);
    for (int n = 1785; n <= 1800; n++)
        one_tree(path, n);
    CHECK(uo_pages_moved.table_levels > before.table_levels);
    CHECK(uo_pages_moved.index_leaves > before.index_leaves);
    CHECK(uo_pages_moved.index_levels > before.index_levels);
    one_tree(path, 20000);
    /* Keys mostly in order: sorted by merging the few out of order into the
     * rest, once there are enough of them (one in eight at most); the same
     * trees, rows and order. */
    g_keys_mostly_in_order = 1;
    before = uo_pages_moved;
    for (int n = 0; n <= 120; n++)
        one_tree(path, n);
    CHECK(uo_pages_moved.index_merged > before.index_merged);
    before = uo_pages_moved;
    one_tree(path, 20000);
    CHECK_EQ_U64(uo_pages_moved.index_merged, before.index_merged + 1);
    /* Keys within a span of about their number, in chunks out of order (as the
     * correlation ids of rows several threads wrote): sorted by counting them
     * where some repeat (case 2: equal keys in row id order), else by placing
     * each at its key (case 3); the same trees, rows and order. */
    for (int c = 2; c <= 3; c++) {
        g_keys_mostly_in_order = c;
        before = uo_pages_moved;
        for (int n = 1785; n <= 1800; n++)
            one_tree(path, n);
        one_tree(path, 20000);
        CHECK_EQ_U64(uo_pages_moved.index_counted, before.index_counted + (c == 2 ? 17 : 0));
        CHECK_EQ_U64(uo_pages_moved.index_placed, before.index_placed + (c == 3 ? 17 : 0));
        CHECK_EQ_U64(uo_pages_moved.index_merged, before.index_merged);
        CHECK_EQ_U64(uo_pages_moved.index_runs, before.index_runs);
    }
    g_keys_mostly_in_order = 0;
    uo_index_runs_min = UO_INDEX_RUNS_MIN;
    /* Kept as runs: written from them where the keys are each once (case 5:
     * as correlation ids come; case 3: runs of one entry, fewer than
     * uo_index_runs_min of them; case 8: one long run); else, overlapping (case 7) or passing
     * INT64_MAX (case 6), or with keys that repeat (case 2), sorted as
     * entries; the same trees, rows and order. */
    for (int c = 2; c <= 8; c++) {
        if (c == 4)
            continue;
        g_keys_mostly_in_order = c;
        before = uo_pages_moved;
        trees_by_count(path, 0);
        /* 40 + 16 from 1 row on; case 2's keys are each once below 23 rows,
         * case 6's run passes INT64_MAX from 5 rows on (the 7th row is
         * inserted by SQLite: a row id skipped), case 7's overlap from 4. */
        unsigned long want = c == 5 || c == 3 || c == 8 ? 56 : c == 2 ? 22 : c == 6 ? 4 : 3;
        CHECK_EQ_U64(uo_pages_moved.index_runs, before.index_runs + want);
    }
    /* Leaves written by two threads, from 3 entries on (the smallest with
     * both halves and a separator): every count up to several leaves and
     * those where a level's last page takes a child, keys in order or not,
     * from entries (cases 0 to 3) or runs (cases 5 and 8: each part read
     * from them); the same trees, rows and order. */
    uo_index_split_entries = 3;
    for (int c = 0; c <= 8; c++) {
        if (c == 4 || c == 6 || c == 7)
            continue;
        g_keys_mostly_in_order = c;
        uo_index_runs_min = c >= 5 ? UO_INDEX_RUNS_MIN : 0;
        before = uo_pages_moved;
        trees_by_count(path, 1);
        /* (n = 0, 1, 2: too few to split) */
        CHECK_EQ_U64(uo_pages_moved.index_split, before.index_split + 38 + 16 + 1);
        CHECK_EQ_U64(uo_pages_moved.index_runs, before.index_runs + (c >= 5 ? 40 + 16 + 1 : 0));
    }
    uo_index_runs_min = 0;
    /* Keys unique in each half of the entries, the first's again about where
     * the second half begins: of the two threads that place them
     * (uo_index_split_entries) one finds the other's, or, where both store it
     * at once, the count of the slots filled does; counted instead. */
    g_keys_mostly_in_order = 4;
    before = uo_pages_moved;
    for (int n = 1785; n <= 1800; n++)
        one_tree(path, n);
    one_tree(path, 20000);
    CHECK_EQ_U64(uo_pages_moved.index_placed, before.index_placed);
    CHECK_EQ_U64(uo_pages_moved.index_counted, before.index_counted + 17);
    g_keys_mostly_in_order = 0;
    uo_index_split_entries = UO_INDEX_SPLIT_ENTRIES;
    /* Texts whose serial type takes two bytes, moving the types after it;
     * the same trees, rows and texts. */
    g_medium_texts = 1;
    for (int n = 0; n <= 60; n++)
        one_tree(path, n);
    one_tree(path, 3000);
    g_medium_texts = 0;
    /* The spool laid out as the file: SQLite's pages grew past those it
     * left them (the leaves on theirs go to the end), or not as far (the
     * last leaves fill the pages between; one_tree's default), a tree of
     * fewer leaves than those pages; the same trees. */
    before = uo_pages_moved;
    one_tree(path, 100);
    CHECK(uo_pages_moved.leaves_to_gap > before.leaves_to_gap);
    CHECK_EQ_U64(uo_pages_moved.leaves_to_end, before.leaves_to_end);
    before = uo_pages_moved;
    g_sqlite_pages_after = UO_PAGES_HEAD_SLACK + 5;
    one_tree(path, 100);
    one_tree(path, 20000);
    g_sqlite_pages_after = 0;
    CHECK(uo_pages_moved.leaves_to_end > before.leaves_to_end);
    CHECK_EQ_U64(uo_pages_moved.leaves_to_gap, before.leaves_to_gap);
    /* The spool made the file (and the connection opened again); or, where it
     * cannot be renamed, copied by a thread of its own while the attach
     * writes the rest; or copied after all, its name being taken. */
    uo_pages_rename_bytes = 0;
    for (int mode = 0; mode < 3; mode++) {
        uo_pages_renaming = mode != 1;
        g_pages_name_taken = mode == 2;
        g_sqlite_pages_after = mode == 0 ? UO_PAGES_HEAD_SLACK + 5 : 0;
        for (int n = 1070; n <= 1080; n++)
            one_tree(path, n);
        one_tree(path, 20000);
    }
    uo_pages_renaming = 1;
    g_pages_name_taken = 0;
    g_sqlite_pages_after = 0;
    uo_pages_rename_bytes = UO_PAGES_RENAME_BYTES;
    return test_result("table_pages.trees");
}
