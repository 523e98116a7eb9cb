/* SPDX-License-Identifier: MIT */
/* The trace database writer (db_internal.h): records stream into SQLite through
 * prepared statements inside big transactions, or as pages (bulk); this file
 * holds the SQLite side: statements, transactions, metadata, create, close. */
#include "db_internal.h"
#include "page_writer.h"

#include "out_files.h"
#include "db_template.h"
#include "table_pages.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *const uo_db_directions[5] = {"NONE", "HOST_TO_DEVICE", "DEVICE_TO_HOST",
                                           "DEVICE_TO_DEVICE", "HOST_TO_HOST"};
const char *const uo_db_alloc_types[10] = {"NONE",  "BUFFER", "SUB_BUFFER", "IMAGE",
                                            "PIPE",  "SVM",    "USM_HOST",   "USM_DEVICE",
                                            "USM_SHARED", "DEVICE_MEMORY"};
const char *const uo_db_agent_types[4] = {"NONE", "CPU", "GPU", "ACCELERATOR"};

/* Keeps db's first error (uo_db_error) and reports it once; an error while
 * create() runs is its err instead. */
void db_keep_error(uo_db *db, const char *msg)
{
    if (!db->failed) {
        snprintf(db->error, sizeof db->error, "database %s: %s", db->path, msg);
        if (db->created)
            uo_report("%s", db->error);
    }
    db->failed = 1;
}

static int exec_sql(uo_db *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        db_keep_error(db, msg ? msg : "error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int db_open_txn(uo_db *db)
{
    if (exec_sql(db, "BEGIN") != 0)
        return -1;
    db->in_txn = 1;
    return 0;
}

int db_step(uo_db *db, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        db_keep_error(db, sqlite3_errmsg(db->db));
        return -1;
    }
    db->rows++;
    db->txn_rows++;
    return 0;
}

void db_rows_failed(uo_db *db)
{
    uo_page_writer_sync(db->writer); /* (its error message is then safe to read) */
    const char *pages = uo_pages_error(db->pages);
    db_keep_error(db, pages != NULL ? pages : sqlite3_errmsg(db->db));
}

/* Waits for db's page writer (if any) to have written every row handed to
 * it; rows it could not write fail db (the pages are the caller's again). */
static void sync_pages(uo_db *db)
{
    uo_page_writer_sync(db->writer);
    if (atomic_load(&db->pages_failed))
        db_rows_failed(db);
}

void uo_db_set_page_writer(uo_db *db, uo_page_writer *w)
{
    if (db == NULL || db->pages == NULL)
        return;
    sync_pages(db);
    db->writer = w;
    for (int i = 0; i < ST_COUNT; i++)
        if (db->batch[i].direct != NULL) {
            db->batch[i].writer = w;
            db->batch[i].page_failed = &db->pages_failed;
        }
}

/* Inserts the pending rows of every batched table (before a commit, an index, a join). */
static int flush_rows(uo_db *db)
{
    for (int i = 0; i < ST_COUNT; i++)
        if (db->batch[i].n > 0 && uo_rows_flush(&db->batch[i]) != SQLITE_OK)
            db_rows_failed(db);
    return db->failed ? -1 : 0;
}

void db_row_refused(uo_db *db, int st)
{
    if (db->batch[st].vals == NULL)
        db_keep_error(db, "out of memory");
    else
        db_rows_failed(db);
}

/* Binds text (NULL: SQL NULL) made valid UTF-8 to parameter i of st. */
static void bind_text(sqlite3_stmt *st, int i, const char *text)
{
    int owned;
    const char *clean = uo_utf8_sanitize(text, &owned);
    sqlite3_bind_text(st, i, clean, -1, SQLITE_TRANSIENT);
    if (owned)
        free((void *)clean);
}

int uo_db_set_metadata(uo_db *db, const char *key, const char *value)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->db, "INSERT OR REPLACE INTO metadata(key, value) VALUES(?,?)", -1,
                           &st, NULL) != SQLITE_OK)
        return -1;
    bind_text(st, 1, key);
    bind_text(st, 2, value);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int uo_db_set_process_start(uo_db *db, const char *command, uint64_t start, uint64_t wall_start)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->db, "UPDATE info_process SET command = ?, start = ?, wall_start = ?"
                                   " WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
        return -1;
    bind_text(st, 1, command);
    db_bind_u64(st, 2, start);
    db_bind_u64(st, 3, wall_start);
    sqlite3_bind_int64(st, 4, db->process_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (start < db->first_ts)
        db->first_ts = start;
    return rc == SQLITE_DONE ? 0 : -1;
}

void uo_db_set_kernel_filter(uo_db *db, uo_kernel_filter_fn fn, void *data)
{
    db->filter_fn = fn;
    db->filter_data = data;
}

void uo_db_set_kernel_iterations(uo_db *db, const upti_iteration_range *range)
{
    db->iterations = range;
}

uint64_t uo_db_row_count(const uo_db *db) { return db ? db->rows : 0; }

static void set_metadata_count(uo_db *db, const char *key, uint64_t value)
{
    char v[24];
    snprintf(v, sizeof v, "%llu", (unsigned long long)value);
    uo_db_set_metadata(db, key, v);
}

/* Sets key to a reading of the machine's clocks taken together: "monotonic_raw=N
 * boottime=N monotonic=N realtime=N" (ns). UPTI's clock is CLOCK_MONOTONIC_RAW;
 * the timeline writers declare it to Perfetto with this snapshot (timeline.c). */
static void set_metadata_clock_snapshot(uo_db *db, const char *key)
{
    static const clockid_t k_ids[] = {CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME, CLOCK_MONOTONIC,
                                      CLOCK_REALTIME, CLOCK_MONOTONIC_RAW};
    uint64_t ns[5];
    for (int i = 0; i < 5; i++) {
        struct timespec ts;
        if (clock_gettime(k_ids[i], &ts) != 0)
            return;
        ns[i] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    char v[160];
    /* The raw clock read before and after the others: their midpoint. */
    snprintf(v, sizeof v, "monotonic_raw=%llu boottime=%llu monotonic=%llu realtime=%llu",
             (unsigned long long)(ns[0] + (ns[4] - ns[0]) / 2), (unsigned long long)ns[1],
             (unsigned long long)ns[2], (unsigned long long)ns[3]);
    uo_db_set_metadata(db, key, v);
}

/* records_received/_written/_dropped/_filtered as of the commit under way. */
static void set_tally_metadata(uo_db *db)
{
    set_metadata_count(db, "records_received", db->received);
    set_metadata_count(db, "records_written", db->committed_records + db->txn_records);
    set_metadata_count(db, "records_dropped", db->dropped);
    set_metadata_count(db, "records_filtered", db->filtered);
}

void uo_db_checkpoint(uo_db *db, uint64_t now, uint64_t min_ns)
{
    /* A bulk database commits once, when it is complete. */
    if (db == NULL || db->part != NULL || db->failed || !db->in_txn || db->txn_rows == 0 ||
        now - db->last_commit < min_ns)
        return;
    if (flush_rows(db) != 0)
        return;
    /* What `upti run` tells of a trace it recovers: complete up to here. */
    char stamp[24];
    snprintf(stamp, sizeof stamp, "%llu", (unsigned long long)now);
    uo_db_set_metadata(db, "committed", stamp);
    set_tally_metadata(db);
    db->in_txn = 0;
    if (exec_sql(db, "COMMIT") == 0) {
        db->txn_rows = 0;
        db->last_commit = now;
        db->committed_records += db->txn_records;
        db->txn_records = 0;
    }
}

void uo_db_set_tally(uo_db *db, uint64_t received, uint64_t dropped)
{
    if (db != NULL) {
        db->received = received;
        db->dropped = dropped;
    }
}

uint64_t uo_db_committed_records(const uo_db *db) { return db ? db->committed_records : 0; }
uint64_t uo_db_filtered_records(const uo_db *db) { return db ? db->filtered : 0; }

/* The number of parameters ('?') of an INSERT. */
/* The settings of a database written as its records arrive: a rollback
 * journal (not journal_mode=OFF): a process killed in the middle of a commit,
 * or of a transaction that spilled pages, leaves a hot journal that rolls the
 * file back to its last commit when `upti run` opens it to recover.
 * synchronous=OFF: the OS keeps what a dead process wrote; only a machine
 * crash would need fsync. */
#define PRAGMAS_STREAMING                                                                         \
    "PRAGMA page_size=65536; PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF;"                \
    " PRAGMA application_id=" UO_APPLICATION_ID_SQL ";"                                          \
    " PRAGMA locking_mode=EXCLUSIVE; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-32768;"

/* Both modes create the indexes with the tables. Streaming: rows arrive in
 * about the order of their correlation ids, so each index entry goes near the
 * end of its index, which costs less than sorting every key at the close
 * (callgrind: 7% fewer instructions converting 300k clSetKernelArg calls, 11%
 * for bench_db streaming-trace) and leaves the close of a streaming database
 * (the program's exit without `upti run`) nothing to build. Bulk: the big
 * tables and these indexes are written as pages (table_pages.h, index_pages.h),
 * the indexes at the close from their entries sorted in memory; SQLite fills
 * only the small tables. The bulk pragmas: db_template.h. */

/* A new file at path holding the empty small database (db_template.h).
 * 0, or -1 (nothing left at path). */
static int write_template(const char *path)
{
    int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0)
        return -1;
    int ok = uo_write_at(out, uo_db_template, uo_db_template_size, 0) == 0;
    if (close(out) != 0)
        ok = 0;
    if (!ok)
        unlink(path);
    return ok ? 0 : -1;
}

/* Closes db's connection and statements; with remove, removes its file (a
 * bulk database's PATH.part; nothing else was written). */
static void discard_file(uo_db *db, int remove)
{
    uo_page_writer_sync(db->writer);
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(db->st[i]);
        db->st[i] = NULL;
        uo_rows_free(&db->batch[i]);
    }
    sqlite3_close(db->db);
    db->db = NULL;
    uo_pages_free(db->pages);
    db->pages = NULL;
    if (remove && db->part != NULL)
        unlink(db->part);
    free(db->part);
    db->part = NULL;
}

/* bulk: 1 for uo_db_create_bulk, 2 for a small one (4 KiB pages, uo_db_create_bulk_sized:
 * the empty database of db_template.h, written whole). */
static uo_db *create(const char *path, const uo_process_info *proc, uo_op_name_fn op_name,
                     int bulk, char *err, size_t errlen)
{
    uo_db *db = calloc(1, sizeof *db);
    if (db == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    db->path = strdup(path);
    db->op_name = op_name;
    if (bulk && (db->part = uo_part_path(path)) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* One writer thread at a time (the caller serializes): skip SQLite's own
     * statistics mutex. Refused harmlessly if SQLite is already initialized. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0);
    /* Truncate rather than unlink: the caller may hold a lock on this inode.
     * A bulk database starts afresh in PATH.part (nobody locks it). */
    const char *file = bulk ? db->part : path;
    if ((bulk ? unlink(file) : truncate(file, 0)) != 0 && errno != ENOENT) {
        snprintf(err, errlen, "cannot create %s: %s", file, strerror(errno));
        goto fail;
    }
    int from_template = bulk == 2 && write_template(file) == 0;
    if (sqlite3_open_v2(file, &db->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        snprintf(err, errlen, "cannot create %s: %s", file,
                 db->db ? sqlite3_errmsg(db->db) : "out of memory");
        goto fail;
    }
    /* The page size first: the next pragmas write the file's header. */
    const char *pragmas = from_template ? UO_PRAGMAS_BULK
                          : bulk == 2   ? "PRAGMA page_size=4096;" UO_PRAGMAS_BULK
                          : bulk        ? "PRAGMA page_size=65536;" UO_PRAGMAS_BULK
                                        : PRAGMAS_STREAMING;
    if (exec_sql(db, pragmas) != 0 || exec_sql(db, from_template ? "BEGIN" : UO_SCHEMA_SQL) != 0) {
        snprintf(err, errlen, "cannot create the schema of %s: %s", path, sqlite3_errmsg(db->db));
        goto fail;
    }
    if (bulk) {
        /* The big tables and their indexes written as pages (table_pages.h), where
         * the spool can be made; else inserted (no message: the same database,
         * more slowly). */
        char ignored[256];
        db->pages = uo_pages_open(db->db, file, ignored, sizeof ignored);
    }
    for (int i = 0; i < ST_COUNT; i++) {
        int rc;
        if (uo_db_batched(i)) {
            int ncols = uo_db_params(i), text_col = uo_db_text_param(i);
            rc = uo_rows_init(&db->batch[i], db->db, uo_db_statements[i], ncols, text_col);
            /* From the template: set up as the build read it (db_template.h). */
            if (rc == 0 && db->pages != NULL)
                db->batch[i].direct =
                    from_template ? uo_pages_table_set(db->pages, uo_db_statements[i], ncols,
                                                       &uo_db_template_tables[i])
                                  : uo_pages_table(db->pages, db->db, uo_db_statements[i], ncols,
                                                   text_col);
        } else
            rc = sqlite3_prepare_v3(db->db, uo_db_statements[i], -1, SQLITE_PREPARE_PERSISTENT,
                                    &db->st[i], NULL) == SQLITE_OK ? 0 : -1;
        if (rc != 0) {
            snprintf(err, errlen, "%s: %s", path,
                     uo_db_batched(i) ? "out of memory" : sqlite3_errmsg(db->db));
            goto fail;
        }
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->db,
                           "INSERT INTO info_process(pid, ppid, hostname, rank, command, start,"
                           " wall_start) VALUES(?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db->db));
        goto fail;
    }
    sqlite3_bind_int64(st, 1, proc->pid);
    sqlite3_bind_int64(st, 2, proc->ppid);
    bind_text(st, 3, proc->hostname);
    if (proc->rank >= 0)
        sqlite3_bind_int64(st, 4, proc->rank);
    bind_text(st, 5, proc->command);
    db_bind_u64(st, 6, proc->start);
    db_bind_u64(st, 7, proc->wall_start);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db->db));
        goto fail;
    }
    db->process_id = sqlite3_last_insert_rowid(db->db);
    exec_sql(db, "INSERT INTO metadata(key, value) VALUES('schema_version', '" UO_SCHEMA_VERSION
                 "'), ('writer', 'upti " UPTI_VERSION_STRING "'), ('clock', 'CLOCK_MONOTONIC_RAW ns')");
    db->rows = 1;
    db->txn_rows = 1;
    db->in_txn = 1;
    db->first_ts = proc->start;
    set_metadata_clock_snapshot(db, "clock_snapshot");
    db->created = 1;
    if (db->failed)
        uo_report("%s", db->error);
    return db;
fail:
    discard_file(db, 1);
    free(db->path);
    free(db);
    return NULL;
}


uo_db *uo_db_create(const char *path, const uo_process_info *proc, uo_op_name_fn op_name,
                    char *err, size_t errlen)
{
    return create(path, proc, op_name, 0, err, errlen);
}

uo_db *uo_db_create_bulk(const char *path, const uo_process_info *proc, uo_op_name_fn op_name,
                         char *err, size_t errlen)
{
    return create(path, proc, op_name, 1, err, errlen);
}

uo_db *uo_db_create_bulk_sized(const char *path, const uo_process_info *proc,
                               uo_op_name_fn op_name, uint64_t source_bytes, char *err,
                               size_t errlen)
{
    int small = source_bytes > 0 && source_bytes < UO_DB_SMALL_SOURCE_BYTES;
    return create(path, proc, op_name, small ? 2 : 1, err, errlen);
}

static void free_state(uo_db *db)
{
    for (size_t i = 1; i <= db->nstr; i++)
        free(db->text[i]);
    free(db->text);
    for (size_t i = 0; i < db->nthr; i++)
        free(db->thr[i].stack);
    free(db->thr);
    free(db->pending);
    uo_arg_link_free(&db->args);
    upti_map *maps[] = {&db->str_ids, &db->op_ids, &db->op_domains, &db->threads, &db->ranges, &db->stops,
                        &db->stop_tids, &db->queues, &db->symbols, &db->objects, &db->filter};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        upti_map_free(maps[i]);
    free(db->path);
    free(db);
}

void uo_db_drop(uo_db *db)
{
    if (db == NULL)
        return;
    discard_file(db, 0);
    free_state(db);
}

/* The arguments written before their call was known (api_id 0), joined to it. */
#define JOIN_WAITING_ARGS                                                                          \
    "UPDATE arg SET api_id = (SELECT a.id FROM api a WHERE a.correlation_id = arg.correlation_id)" \
    " WHERE api_id = 0;"

/* The connection opened again on db->part, which the attach replaced (a big
 * spool became the file): the old one reads the file that was there. */
static int reopen_part(uo_db *db)
{
    int rc = sqlite3_close(db->db);
    db->db = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_open_v2(db->part, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        db_keep_error(db, db->db != NULL ? sqlite3_errmsg(db->db) : sqlite3_errstr(rc));
        return -1;
    }
    return exec_sql(db, UO_PRAGMAS_CONNECTION);
}

/* Bulk, with pages: once SQLite has committed, puts in the file the rows
 * written as pages (table_pages.h), then goes on on the same connection for
 * what needs SQLite: the rows not written as pages, the indexes to rebuild,
 * the arguments joined to their call. While the pages go in the connection
 * holds no lock (back to locking_mode NORMAL, which a read makes it release)
 * and keeps its parsed schema: the attach leaves the schema cookie as it was
 * and moves the change counter, so its next transaction drops the pages it
 * cached and reads the file again. A new connection read and parsed the whole
 * schema again (1 to 1.5 ms of a short process's end): only where a big spool
 * became the file (what saves copying its pages). 0, or -1 (reported; the
 * file is not to be kept). */
static int finish_pages(uo_db *db, uo_db_last_fn last, void *arg)
{
    if (exec_sql(db, "PRAGMA locking_mode=NORMAL; SELECT count(*) FROM metadata;") != 0)
        return -1;
    int attached = uo_pages_attach(db->pages, db->part);
    if (attached < 0) {
        db_keep_error(db, uo_pages_error(db->pages));
        return -1;
    }
    if (attached == 1 && reopen_part(db) != 0)
        return -1;
    if (exec_sql(db, "PRAGMA locking_mode=EXCLUSIVE; BEGIN;") == 0) {
        if (uo_pages_insert_deferred(db->pages, db->db) != SQLITE_OK)
            db_keep_error(db, uo_pages_error(db->pages) != NULL ? uo_pages_error(db->pages)
                                                             : sqlite3_errmsg(db->db));
        else if (exec_sql(db, JOIN_WAITING_ARGS) == 0) {
            if (last != NULL)
                last(arg, db->db);
            exec_sql(db, "COMMIT;");
        }
    }
    return db->failed ? -1 : 0;
}

int uo_db_close(uo_db *db, uint64_t end) { return uo_db_close_with(db, end, NULL, NULL); }

int uo_db_close_with(uo_db *db, uint64_t end, uo_db_last_fn last, void *arg)
{
    if (db == NULL)
        return -1;
    int failed = db->failed;
    if (!failed) {
        db_begin(db);
        /* Ranges still open end with the process. */
        for (size_t i = 0; i < db->nthr; i++) {
            thread_state *t = &db->thr[i];
            while (t->depth > 0) {
                t->depth--;
                db_add_region(db, &t->stack[t->depth], t->tid, 0, t->depth, end);
            }
        }
        for (size_t i = 0; i < db->npending; i++)
            db_add_region(db, &db->pending[i], db->pending[i].tid, 1, 0, end);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db->db,
                               "INSERT INTO info_thread(process_id, tid, name_id, start, end)"
                               " VALUES(?,?,?,?,?)",
                               -1, &st, NULL) == SQLITE_OK) {
            for (size_t i = 0; i < db->nthr; i++) {
                thread_state *t = &db->thr[i];
                sqlite3_bind_int64(st, 1, db->process_id);
                db_bind_u64(st, 2, t->tid);
                if (t->name_id)
                    sqlite3_bind_int64(st, 3, t->name_id);
                else
                    sqlite3_bind_null(st, 3);
                db_bind_u64(st, 4, t->first);
                db_bind_u64(st, 5, t->last);
                db_step(db, st);
            }
            sqlite3_finalize(st);
        }
        if (sqlite3_prepare_v2(db->db, "UPDATE info_process SET end = ? WHERE id = ?", -1, &st,
                               NULL) == SQLITE_OK) {
            db_bind_u64(st, 1, end);
            sqlite3_bind_int64(st, 2, db->process_id);
            db_step(db, st);
            sqlite3_finalize(st);
        }
        /* Arguments whose call never came, or came long before them. */
        uo_arg_link_release(&db->args, 0, 1, 0, db_write_arg, db);
        flush_rows(db);
        sync_pages(db);
        /* Those few (api_id 0) are joined to their call by correlation id (with
         * pages: once the rows are in the file, finish_pages). */
        if (db->pages == NULL)
            exec_sql(db, JOIN_WAITING_ARGS);
        set_tally_metadata(db);
        set_metadata_clock_snapshot(db, "clock_snapshot_end");
        if (db->pages == NULL && last != NULL && !db->failed)
            last(arg, db->db); /* (with pages: on the connection after the attach) */
        if (exec_sql(db, "COMMIT") == 0) {
            db->committed_records += db->txn_records;
            db->txn_records = 0;
        }
        failed = db->failed;
    } else {
        uo_page_writer_sync(db->writer);
    }
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(db->st[i]);
        uo_rows_free(&db->batch[i]);
    }
    if (db->pages != NULL) {
        if (!failed && finish_pages(db, last, arg) != 0)
            failed = 1;
        uo_pages_free(db->pages);
    }
    if (sqlite3_close(db->db) != SQLITE_OK)
        failed = 1;
    db->db = NULL;
    if (db->part != NULL) {
        char err[512];
        if (uo_part_finish(db->part, db->path, !failed, err, sizeof err) != 0) {
            if (!failed)
                uo_report("%s", err);
            failed = 1;
        }
        free(db->part);
    }
    free_state(db);
    return failed ? -1 : 0;
}

const char *uo_db_error(const uo_db *db)
{
    return db != NULL && db->failed ? db->error : NULL;
}

void uo_db_abandon(uo_db *db)
{
    /* The parent owns the file; the child leaves the handle and its memory alone. */
    (void)db;
}

sqlite3 *uo_open(const char *path, int writable, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    pid_t writer = uo_writer_pid(path);
    if (writer > 0) {
        snprintf(err, errlen, "%s is in use by pid %d (its trace is still being written)", path,
                 (int)writer);
        return NULL;
    }
    int flags = (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT value FROM metadata WHERE key = 'schema_version'", -1, &st,
                           NULL) != SQLITE_OK) {
        if ((sqlite3_errcode(db) & 0xff) == SQLITE_CORRUPT) /* cut short, or overwritten */
            snprintf(err, errlen, "%s is damaged (%s)", path, sqlite3_errmsg(db));
        else
            snprintf(err, errlen, "%s is not an upti trace database", path);
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_finalize(st);
    return db;
}
