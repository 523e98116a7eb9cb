/* SPDX-License-Identifier: MIT */
/* The trace database writer: records stream into SQLite through prepared
 * statements inside big transactions; strings are interned in memory. */
#include "arg_link.h"
#include "db_rows.h"
#include "out_files.h"
#include "output.h"
#include "schema.h"

#include <upti/names.h>

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    ST_STRING,
    ST_API,
    ST_KERNEL,
    ST_COPY,
    ST_ALLOC,
    ST_MARKER,
    ST_REGION,
    ST_QUEUE,
    ST_CATEGORY,
    ST_CODE_OBJECT,
    ST_SYMBOL,
    ST_UNLOAD_OBJECT,
    ST_UNLOAD_SYMBOL,
    ST_AGENT,
    ST_ARG,
    ST_COUNT
};

static const char *const k_statements[ST_COUNT] = {
    [ST_STRING] = "INSERT INTO string(id, string) VALUES(?,?)",
    [ST_API] = "INSERT INTO api(process_id, tid, domain_id, name_id, correlation_id, external_id,"
               " start, end, result) VALUES(?,?,?,?,?,?,?,?,?)",
    [ST_KERNEL] = "INSERT INTO kernel_dispatch(process_id, tid, agent_handle, queue_handle,"
                  " runtime_context, kernel_id, name_id, operation_id, correlation_id,"
                  " external_id, work_dim, grid_x, grid_y, grid_z, workgroup_x, workgroup_y,"
                  " workgroup_z, offset_x, offset_y, offset_z, queued, submit, start, end, status)"
                  " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_COPY] = "INSERT INTO memory_copy(process_id, tid, agent_handle, queue_handle,"
                " runtime_context, operation_id, direction_id, src_agent, dst_agent, bytes,"
                " correlation_id, external_id, queued, submit, start, end, status)"
                " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_ALLOC] = "INSERT INTO memory_allocate(process_id, tid, operation_id, agent_handle,"
                 " runtime_context, type_id, handle, size, flags, correlation_id, external_id,"
                 " timestamp) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_MARKER] = "INSERT INTO marker(process_id, tid, operation, operation_id, correlation_id,"
                  " external_id, timestamp, range_id, domain, category, color, payload_type,"
                  " payload, message_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_REGION] = "INSERT INTO region(process_id, tid, end_tid, kind, name_id, depth, domain,"
                  " category, color, payload_type, payload, correlation_id, start, end)"
                  " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_QUEUE] = "INSERT INTO info_queue(process_id, handle, agent_handle, runtime_context)"
                 " VALUES(?,?,?,?)",
    [ST_CATEGORY] = "INSERT INTO info_category(process_id, domain, category, name_id)"
                    " VALUES(?,?,?,?)",
    [ST_CODE_OBJECT] = "INSERT INTO info_code_object(process_id, code_object_id, runtime_context,"
                       " name_id, load) VALUES(?,?,?,?,?)",
    [ST_SYMBOL] = "INSERT INTO info_kernel_symbol(process_id, kernel_id, code_object_id,"
                  " runtime_context, name_id, load) VALUES(?,?,?,?,?,?)",
    [ST_UNLOAD_OBJECT] = "UPDATE info_code_object SET unload = ? WHERE id = ?",
    [ST_UNLOAD_SYMBOL] = "UPDATE info_kernel_symbol SET unload = ? WHERE id = ?",
    [ST_AGENT] = "INSERT INTO info_agent(process_id, handle, type, runtime, name, vendor,"
                 " driver_version, compute_units, global_memory_bytes, runtime_handle, node_id)"
                 " VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    [ST_ARG] = "INSERT INTO arg(api_id, correlation_id, position, type_id, name_id, value)"
               " VALUES(?,?,?,?,?,?)",
};

/* The (kind, operation) pairs whose name ids op_id() keeps in a table. */
enum { OP_KINDS = 8, OP_OPS = 64 };

/* The argument positions whose last type and name ids uo_db_add_arg() keeps. */
enum { ARG_POSITIONS = 16 };

/* An open push range or a started range. */
typedef struct open_range {
    uint64_t start, correlation, payload, range_id, tid;
    int64_t name_id;
    uint32_t domain, category, color, payload_type;
} open_range;

typedef struct thread_state {
    uint64_t tid;
    uint64_t first, last;
    int64_t name_id;
    open_range *stack;
    size_t depth, cap;
} thread_state;

/* The tables written row by row as records arrive: batched (db_rows.h). */
static int batched(int st)
{
    return st == ST_STRING || st == ST_API || st == ST_KERNEL || st == ST_COPY || st == ST_ALLOC ||
           st == ST_MARKER || st == ST_REGION || st == ST_ARG;
}

struct uo_db {
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT]; /* the statements of the tables not batched */
    uo_rows batch[ST_COUNT];    /* the batched ones */
    int64_t process_id;
    uo_op_name_fn op_name;
    char *path;
    char *part; /* bulk: the file written, renamed to path by uo_db_close */
    /* bulk: the big tables' rows, written as pages (table_pages.h); NULL: all
     * rows go through INSERT (the spool could not be made). */
    uo_page_spool *pages;
    /* Interned strings: text and hash by id, and an id table keyed by hash. */
    char **text;
    uint64_t *hash;
    size_t nstr, strcap;
    uint32_t *slots;
    size_t slotcap;
    uo_map op_ids;     /* (kind << 32 | op) → string id */
    /* The same for the small ones (0: not yet), and table_id()'s ids. */
    int64_t op_small[OP_KINDS][OP_OPS];
    int64_t kind_ids[UPTI_TRACING_KIND_LAST], direction_ids[5], alloc_type_ids[10];
    size_t last_thread; /* index + 1 in thr of the last thread found */
    uo_map threads;    /* tid → index + 1 in thread array */
    thread_state *thr;
    size_t nthr, thrcap;
    uo_map ranges;     /* range id → index + 1 into pending (start seen) */
    uo_map stops;      /* range id → stop timestamp (stop seen first) */
    uo_map stop_tids;  /* range id → stopping thread */
    open_range *pending;
    size_t npending, pendcap;
    uo_map queues;     /* queue handle → 1 */
    uo_map symbols;    /* kernel id → info_kernel_symbol row */
    uo_map objects;    /* code object id → info_code_object row */
    uo_map filter;     /* name id → 1 keep, 2 drop; executions kept so far << 2 (iterations) */
    const upti_iteration_range *iterations; /* --kernel-iteration-range, or NULL */
    uo_kernel_filter_fn filter_fn;
    void *filter_data;
    uint64_t rows, txn_rows, last_commit, first_ts;
    /* Buffer records: added in the open transaction, committed, filtered
     * (dropped by the kernel filter), and the tool's counts (uo_db_set_tally). */
    uint64_t txn_records, committed_records, filtered, received, dropped;
    uo_arg_link args; /* arguments linked to their call's row (arg_link.h) */
    /* The string ids of the last type and name of an argument at each position
     * (mod ARG_POSITIONS): a call's arguments repeat them (uo_db_add_arg). */
    int64_t arg_type_ids[ARG_POSITIONS], arg_name_ids[ARG_POSITIONS];
    int64_t last_message_id; /* the same for markers' messages */
    int failed, in_txn;
    int created;     /* create() has returned it: its errors are reported */
    char error[512]; /* the first error (uo_db_error) */
};

static const char *const k_directions[] = {"NONE", "HOST_TO_DEVICE", "DEVICE_TO_HOST",
                                           "DEVICE_TO_DEVICE", "HOST_TO_HOST"};
static const char *const k_alloc_types[] = {"NONE",  "BUFFER", "SUB_BUFFER", "IMAGE",
                                            "PIPE",  "SVM",    "USM_HOST",   "USM_DEVICE",
                                            "USM_SHARED", "DEVICE_MEMORY"};
static const char *const k_agent_types[] = {"NONE", "CPU", "GPU", "ACCELERATOR"};

static uint64_t str_hash(const char *s, size_t *len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *p = (const unsigned char *)s;
    for (; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    *len = (size_t)(p - (const unsigned char *)s);
    return h ? h : 1;
}

/* Keeps db's first error (uo_db_error) and reports it once; an error while
 * create() runs is its err instead. */
static void keep_error(uo_db *db, const char *msg)
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
        keep_error(db, msg ? msg : "error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int begin(uo_db *db)
{
    if (db->in_txn)
        return 0;
    if (exec_sql(db, "BEGIN") != 0)
        return -1;
    db->in_txn = 1;
    return 0;
}

static int step(uo_db *db, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        keep_error(db, sqlite3_errmsg(db->db));
        return -1;
    }
    db->rows++;
    db->txn_rows++;
    return 0;
}

static void rows_failed(uo_db *db)
{
    const char *pages = uo_pages_error(db->pages);
    keep_error(db, pages != NULL ? pages : sqlite3_errmsg(db->db));
}

/* Inserts the pending rows of every batched table (before a commit, an index, a join). */
static int flush_rows(uo_db *db)
{
    for (int i = 0; i < ST_COUNT; i++)
        if (db->batch[i].n > 0 && uo_rows_flush(&db->batch[i]) != SQLITE_OK)
            rows_failed(db);
    return db->failed ? -1 : 0;
}

/* The values of a new row of table st (batched) to fill, then row_done(). */
static int64_t *row_new(uo_db *db, int st)
{
    int64_t *v = uo_rows_add(&db->batch[st]);
    if (v == NULL)
        rows_failed(db);
    return v;
}

static int row_done(uo_db *db, int st)
{
    uo_rows *r = &db->batch[st];
    db->rows++;
    db->txn_rows++;
    if (uo_rows_full(r) && uo_rows_flush(r) != SQLITE_OK)
        rows_failed(db);
    return db->failed ? -1 : 0;
}

static int slot_grow(uo_db *db)
{
    size_t cap = db->slotcap ? db->slotcap * 2 : 1024;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (size_t id = 1; id <= db->nstr; id++) {
        size_t i = db->hash[id] & (cap - 1);
        while (slots[i])
            i = (i + 1) & (cap - 1);
        slots[i] = (uint32_t)id;
    }
    free(db->slots);
    db->slots = slots;
    db->slotcap = cap;
    return 0;
}

int64_t uo_db_intern(uo_db *db, const char *raw)
{
    if (raw == NULL)
        return 0;
    size_t len;
    uint64_t h = str_hash(raw, &len);
    if ((db->nstr + 1) * 2 > db->slotcap && slot_grow(db) != 0)
        return 0;
    size_t mask = db->slotcap - 1, i = h & mask;
    for (; db->slots[i]; i = (i + 1) & mask) {
        uint32_t id = db->slots[i];
        if (db->hash[id] == h && strcmp(db->text[id], raw) == 0)
            return id;
    }
    /* Two arrays of one capacity: it is raised once both have grown. */
    size_t text_cap = db->strcap, hash_cap = db->strcap;
    if (uo_grow(&db->text, &text_cap, db->nstr + 2, sizeof *db->text, 1024) != 0 ||
        uo_grow(&db->hash, &hash_cap, db->nstr + 2, sizeof *db->hash, 1024) != 0)
        return 0;
    db->strcap = text_cap;
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, raw, len + 1);
    int64_t id = (int64_t)++db->nstr;
    db->text[id] = copy; /* the raw bytes are the key; the database gets valid UTF-8 */
    db->hash[id] = h;
    db->slots[i] = (uint32_t)id;

    int owned;
    const char *clean = uo_utf8_sanitize(copy, &owned);
    int64_t *v = row_new(db, ST_STRING);
    if (v != NULL) {
        v[0] = id;
        if (uo_rows_set_text(&db->batch[ST_STRING], clean) != 0)
            rows_failed(db);
        row_done(db, ST_STRING);
    }
    if (owned)
        free((void *)clean);
    return id;
}

/* uo_db_intern(raw), tried first against the string of *last (the id it
 * returned last time at this place), which is then raw's id: the same id as
 * uo_db_intern's (a string has one id), without hashing raw. For what
 * repeats from one record to the next: an argument's type and name at its
 * position, a marker's message. Callgrind, converting a
 * --args spool (103k calls, 427k arguments): 2,751 M -> 2,664 M instructions. */
static int64_t intern_again(uo_db *db, int64_t *last, const char *raw)
{
    if (raw != NULL && *last != 0 && strcmp(db->text[*last], raw) == 0)
        return *last;
    return *last = uo_db_intern(db, raw);
}

const char *uo_db_string(uo_db *db, int64_t id)
{
    return (id > 0 && (size_t)id <= db->nstr) ? db->text[id] : NULL;
}

static int64_t op_id_slow(uo_db *db, uint32_t kind, uint32_t op)
{
    int inserted;
    uint64_t *v = uo_map_insert(&db->op_ids, ((uint64_t)kind << 32) | op, &inserted);
    if (v == NULL)
        return 0;
    if (inserted) {
        const char *name = db->op_name ? db->op_name(kind, op) : NULL;
        char tmp[32];
        if (name == NULL) {
            snprintf(tmp, sizeof tmp, "operation %u", op);
            name = tmp;
        }
        *v = (uint64_t)uo_db_intern(db, name);
    }
    return (int64_t)*v;
}

/* The string id of (kind, operation)'s name; the common ones from a table. */
static int64_t op_id(uo_db *db, uint32_t kind, uint32_t op)
{
    if (kind >= OP_KINDS || op >= OP_OPS)
        return op_id_slow(db, kind, op);
    int64_t *id = &db->op_small[kind][op];
    if (*id == 0)
        *id = op_id_slow(db, kind, op);
    return *id;
}

/* The string id of names[v] (or of v in decimal); ids[v] keeps it. */
static int64_t table_id(uo_db *db, const char *const *names, int64_t *ids, size_t n, uint32_t v)
{
    if (v < n && ids[v] != 0)
        return ids[v];
    char tmp[32];
    const char *name = tmp;
    if (v < n)
        name = names[v];
    else
        snprintf(tmp, sizeof tmp, "%u", v);
    int64_t id = uo_db_intern(db, name);
    if (v < n)
        ids[v] = id;
    return id;
}

const char *uo_upti_operation_name(uint32_t kind, uint32_t operation)
{
    const char *name = NULL;
    if (upti_get_tracing_operation_name((upti_tracing_kind_t)kind, operation, &name) !=
        UPTI_STATUS_SUCCESS)
        return NULL;
    return name;
}

/* The string id of a kind's name, from the names library (src/names/names.c: the one
 * table of kind names, which the CLI and the tool use too); an unknown kind in decimal. */
static int64_t kind_id(uo_db *db, uint32_t kind)
{
    size_t n = sizeof db->kind_ids / sizeof db->kind_ids[0];
    if (kind < n && db->kind_ids[kind] != 0)
        return db->kind_ids[kind];
    const char *name = NULL;
    char tmp[32];
    if (upti_get_tracing_kind_name((upti_tracing_kind_t)kind, &name) != UPTI_STATUS_SUCCESS ||
        name == NULL) {
        snprintf(tmp, sizeof tmp, "%u", kind);
        name = tmp;
    }
    int64_t id = uo_db_intern(db, name);
    if (kind < n)
        db->kind_ids[kind] = id;
    return id;
}

static thread_state *thread_of(uo_db *db, uint64_t tid, uint64_t ts)
{
    /* Records come in runs of one thread's: the last one found, first. */
    if (db->last_thread != 0 && db->thr[db->last_thread - 1].tid == tid) {
        thread_state *t = &db->thr[db->last_thread - 1];
        if (ts != 0) {
            if (t->first == 0 || ts < t->first)
                t->first = ts;
            if (ts > t->last)
                t->last = ts;
        }
        return t;
    }
    int inserted;
    uint64_t *v = uo_map_insert(&db->threads, tid, &inserted);
    if (v == NULL)
        return NULL;
    if (inserted) {
        if (uo_grow(&db->thr, &db->thrcap, db->nthr + 1, sizeof *db->thr, 16) != 0) {
            uo_map_remove(&db->threads, tid);
            return NULL;
        }
        thread_state *t = &db->thr[db->nthr++];
        memset(t, 0, sizeof *t);
        t->tid = tid;
        t->first = t->last = ts;
        *v = db->nthr;
        /* Best effort: the kernel's name of the thread, if it still runs, where
         * the writer runs in the traced process. Not in a bulk database: its
         * writer (upti run, upti recover) is another process, whose own
         * threads' names a thread id of the program may name. */
        char path[64], comm[64];
        snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)tid);
        FILE *f = db->part == NULL ? fopen(path, "r") : NULL;
        if (f != NULL) {
            if (fgets(comm, sizeof comm, f) != NULL) {
                comm[strcspn(comm, "\n")] = '\0';
                t->name_id = uo_db_intern(db, comm);
            }
            fclose(f);
        }
    }
    db->last_thread = (size_t)*v;
    thread_state *t = &db->thr[*v - 1];
    if (ts != 0) {
        if (t->first == 0 || ts < t->first)
            t->first = ts;
        if (ts > t->last)
            t->last = ts;
    }
    return t;
}

void uo_db_name_thread(uo_db *db, uint64_t tid, const char *name)
{
    thread_state *t = thread_of(db, tid, 0);
    if (t != NULL)
        t->name_id = uo_db_intern(db, name);
}

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v) { sqlite3_bind_int64(st, i, (int64_t)v); }

static int add_region(uo_db *db, const open_range *r, uint64_t end_tid, int kind, size_t depth,
                      uint64_t end)
{
    int64_t *v = row_new(db, ST_REGION);
    if (v == NULL)
        return -1;
    v[0] = db->process_id;
    v[1] = (int64_t)r->tid;
    v[2] = (int64_t)end_tid;
    v[3] = kind;
    v[4] = r->name_id;
    v[5] = (int64_t)depth;
    v[6] = r->domain;
    v[7] = r->category;
    v[8] = r->color;
    v[9] = r->payload_type;
    v[10] = (int64_t)r->payload;
    v[11] = (int64_t)r->correlation;
    v[12] = (int64_t)r->start;
    v[13] = (int64_t)(end < r->start ? r->start : end);
    return row_done(db, ST_REGION);
}

static int add_marker(uo_db *db, const upti_buffer_tracing_marker_api_record_t *m)
{
    uint32_t domain = (uint32_t)(m->domain >> 32), category = (uint32_t)m->domain;
    int64_t msg = intern_again(db, &db->last_message_id, m->message);
    int64_t op = op_id(db, UPTI_TRACING_KIND_MARKER_API, m->operation);
    int64_t *v = row_new(db, ST_MARKER);
    if (v == NULL)
        return -1;
    v[0] = db->process_id;
    v[1] = (int64_t)m->thread_id;
    v[2] = m->operation;
    v[3] = op;
    v[4] = (int64_t)m->correlation_id.internal;
    v[5] = (int64_t)m->correlation_id.external.value;
    v[6] = (int64_t)m->start_timestamp;
    v[7] = (int64_t)m->range_id;
    v[8] = domain;
    v[9] = category;
    v[10] = m->color;
    v[11] = m->payload_type;
    v[12] = (int64_t)m->payload;
    v[13] = msg;
    if (row_done(db, ST_MARKER) != 0)
        return -1;

    thread_state *t = thread_of(db, m->thread_id, m->start_timestamp);
    if (t == NULL)
        return -1;
    open_range r = {m->start_timestamp, m->correlation_id.internal, m->payload, m->range_id,
                    m->thread_id, msg, domain, category, m->color, m->payload_type};
    switch (m->operation) {
    case UPTI_MARKER_API_RANGE_PUSH:
        if (uo_grow(&t->stack, &t->cap, t->depth + 1, sizeof *t->stack, 8) != 0)
            return -1;
        t->stack[t->depth++] = r;
        break;
    case UPTI_MARKER_API_RANGE_POP:
        if (t->depth > 0) {
            t->depth--;
            return add_region(db, &t->stack[t->depth], m->thread_id, 0, t->depth,
                              m->start_timestamp);
        }
        break;
    case UPTI_MARKER_API_RANGE_START: {
        uint64_t *stop = uo_map_find(&db->stops, m->range_id);
        if (stop != NULL) { /* the stop was delivered first (another thread) */
            uint64_t end = *stop, *etid = uo_map_find(&db->stop_tids, m->range_id);
            uint64_t end_tid = etid ? *etid : m->thread_id;
            uo_map_remove(&db->stops, m->range_id);
            uo_map_remove(&db->stop_tids, m->range_id);
            return add_region(db, &r, end_tid, 1, 0, end);
        }
        if (uo_grow(&db->pending, &db->pendcap, db->npending + 1, sizeof *db->pending, 16) != 0)
            return -1;
        db->pending[db->npending] = r;
        uint64_t *v = uo_map_insert(&db->ranges, m->range_id, NULL);
        if (v != NULL)
            *v = ++db->npending;
        break;
    }
    case UPTI_MARKER_API_RANGE_STOP: {
        uint64_t *v = uo_map_find(&db->ranges, m->range_id);
        if (v == NULL) {
            uint64_t *s = uo_map_insert(&db->stops, m->range_id, NULL);
            uint64_t *e = uo_map_insert(&db->stop_tids, m->range_id, NULL);
            if (s)
                *s = m->start_timestamp;
            if (e)
                *e = m->thread_id;
            break;
        }
        size_t idx = *v - 1;
        uo_map_remove(&db->ranges, m->range_id);
        open_range done = db->pending[idx];
        /* Keep pending dense: move the last entry into the hole. */
        db->npending--;
        if (idx != db->npending) {
            db->pending[idx] = db->pending[db->npending];
            uint64_t *mv = uo_map_find(&db->ranges, db->pending[idx].range_id);
            if (mv)
                *mv = idx + 1;
        }
        return add_region(db, &done, m->thread_id, 1, 0, m->start_timestamp);
    }
    case UPTI_MARKER_API_NAME_THREAD:
        t->name_id = msg;
        break;
    case UPTI_MARKER_API_NAME_CATEGORY: {
        sqlite3_stmt *c = db->st[ST_CATEGORY];
        sqlite3_bind_int64(c, 1, db->process_id);
        sqlite3_bind_int64(c, 2, domain);
        sqlite3_bind_int64(c, 3, category);
        sqlite3_bind_int64(c, 4, msg);
        return step(db, c);
    }
    default:
        break;
    }
    return 0;
}

static void note_queue(uo_db *db, uint64_t queue, uint64_t agent, uint64_t context)
{
    int inserted;
    if (uo_map_insert(&db->queues, queue, &inserted) == NULL || !inserted)
        return;
    sqlite3_stmt *st = db->st[ST_QUEUE];
    sqlite3_bind_int64(st, 1, db->process_id);
    bind_u64(st, 2, queue);
    bind_u64(st, 3, agent);
    bind_u64(st, 4, context);
    step(db, st);
}

static int keep_kernel(uo_db *db, int64_t name_id)
{
    if (db->filter_fn == NULL && db->iterations == NULL)
        return 1;
    int inserted;
    uint64_t *v = uo_map_insert(&db->filter, (uint64_t)name_id, &inserted);
    if (v == NULL)
        return 1;
    if (inserted)
        *v = db->filter_fn == NULL ||
                     db->filter_fn(db->filter_data, name_id, uo_db_string(db, name_id)) ? 1 : 2;
    int keep = (*v & 3) == 1;
    if (keep && db->iterations != NULL) {
        *v += 4; /* this name's executions that passed the name filter, from 1 */
        keep = upti_iteration_in_range(db->iterations, *v >> 2);
    }
    if (!keep)
        db->filtered++;
    return keep;
}

static int add_record(uo_db *db, uint32_t kind, const void *record);

/* One arg row (uo_arg_write_fn); api_id 0: its call is joined at the close. */
static int write_arg(void *ctx, const uo_waiting_arg *a, int64_t api_id)
{
    uo_db *db = ctx;
    int64_t *v = row_new(db, ST_ARG);
    if (v == NULL)
        return -1;
    v[0] = api_id;
    v[1] = (int64_t)a->correlation_id;
    v[2] = a->position;
    v[3] = a->type_id;
    v[4] = a->name_id;
    int owned = 0;
    const char *text = a->value != NULL ? uo_utf8_sanitize(a->value, &owned) : NULL;
    if (uo_rows_set_text(&db->batch[ST_ARG], text) != 0)
        rows_failed(db);
    if (owned)
        free((void *)text);
    return row_done(db, ST_ARG);
}

int uo_db_add_record(uo_db *db, uint32_t kind, const void *record)
{
    uint64_t filtered = db != NULL ? db->filtered : 0;
    int rc = add_record(db, kind, record);
    if (rc == 0 && db->filtered == filtered)
        db->txn_records++;
    return rc;
}

static int add_record(uo_db *db, uint32_t kind, const void *record)
{
    if (db == NULL || db->failed)
        return -1;
    if (begin(db) != 0)
        return -1;
    const upti_record_prefix_t *p = record;
    switch (kind) {
    case UPTI_TRACING_KIND_OPENCL_API:
    case UPTI_TRACING_KIND_VULKAN_API: {
        const upti_buffer_tracing_api_record_t *a = record;
        thread_of(db, a->thread_id, a->start_timestamp);
        int64_t domain = kind_id(db, kind);
        int64_t op = op_id(db, kind, a->operation);
        int64_t *v = row_new(db, ST_API);
        if (v == NULL)
            return -1;
        v[0] = db->process_id;
        v[1] = (int64_t)a->thread_id;
        v[2] = domain;
        v[3] = op;
        v[4] = (int64_t)a->correlation_id.internal;
        v[5] = (int64_t)a->correlation_id.external.value;
        v[6] = (int64_t)a->start_timestamp;
        v[7] = (int64_t)a->end_timestamp;
        v[8] = a->result;
        int64_t api_id = uo_arg_link_add_call(&db->args, a->correlation_id.internal);
        if (row_done(db, ST_API) != 0)
            return -1;
        /* Its arguments came first (the SDK writes them in its EXIT callbacks). */
        if (db->args.num_waiting > 0 &&
            uo_arg_link_release(&db->args, a->correlation_id.internal, 0, api_id, write_arg, db) != 0)
            return -1;
        return 0;
    }
    case UPTI_TRACING_KIND_MARKER_API:
        return add_marker(db, record);
    case UPTI_TRACING_KIND_KERNEL_DISPATCH: {
        const upti_buffer_tracing_kernel_dispatch_record_t *k = record;
        int64_t name = uo_db_intern(db, k->kernel_name ? k->kernel_name : "<unknown kernel>");
        if (!keep_kernel(db, name))
            return 0;
        note_queue(db, k->queue_id, k->agent_id.handle, k->runtime_context);
        int64_t op = op_id(db, kind, k->operation);
        int64_t *v = row_new(db, ST_KERNEL);
        if (v == NULL)
            return -1;
        v[0] = db->process_id;
        v[1] = (int64_t)k->thread_id;
        v[2] = (int64_t)k->agent_id.handle;
        v[3] = (int64_t)k->queue_id;
        v[4] = (int64_t)k->runtime_context;
        v[5] = (int64_t)k->kernel_id;
        v[6] = name;
        v[7] = op;
        v[8] = (int64_t)k->correlation_id.internal;
        v[9] = (int64_t)k->correlation_id.external.value;
        v[10] = k->work_dim;
        for (int i = 0; i < 3; i++) {
            v[11 + i] = (int64_t)k->global_size[i];
            v[14 + i] = (int64_t)k->local_size[i];
            v[17 + i] = (int64_t)k->global_offset[i];
        }
        v[20] = (int64_t)k->queued_timestamp;
        v[21] = (int64_t)k->submit_timestamp;
        v[22] = (int64_t)k->start_timestamp;
        v[23] = (int64_t)k->end_timestamp;
        v[24] = k->status;
        return row_done(db, ST_KERNEL);
    }
    case UPTI_TRACING_KIND_MEMORY_COPY: {
        const upti_buffer_tracing_memory_copy_record_t *m = record;
        note_queue(db, m->queue_id, m->agent_id.handle, m->runtime_context);
        int64_t op = op_id(db, kind, m->operation);
        int64_t direction = table_id(db, k_directions, db->direction_ids, 5, m->direction);
        int64_t *v = row_new(db, ST_COPY);
        if (v == NULL)
            return -1;
        v[0] = db->process_id;
        v[1] = (int64_t)m->thread_id;
        v[2] = (int64_t)m->agent_id.handle;
        v[3] = (int64_t)m->queue_id;
        v[4] = (int64_t)m->runtime_context;
        v[5] = op;
        v[6] = direction;
        v[7] = (int64_t)m->src_agent_id.handle;
        v[8] = (int64_t)m->dst_agent_id.handle;
        v[9] = (int64_t)m->bytes;
        v[10] = (int64_t)m->correlation_id.internal;
        v[11] = (int64_t)m->correlation_id.external.value;
        v[12] = (int64_t)m->queued_timestamp;
        v[13] = (int64_t)m->submit_timestamp;
        v[14] = (int64_t)m->start_timestamp;
        v[15] = (int64_t)m->end_timestamp;
        v[16] = m->status;
        return row_done(db, ST_COPY);
    }
    case UPTI_TRACING_KIND_MEMORY_ALLOCATION: {
        const upti_buffer_tracing_memory_allocation_record_t *m = record;
        thread_of(db, m->thread_id, m->timestamp);
        int64_t op = op_id(db, kind, m->operation);
        int64_t type = table_id(db, k_alloc_types, db->alloc_type_ids, 10, m->type);
        int64_t *v = row_new(db, ST_ALLOC);
        if (v == NULL)
            return -1;
        v[0] = db->process_id;
        v[1] = (int64_t)m->thread_id;
        v[2] = op;
        v[3] = (int64_t)m->agent_id.handle;
        v[4] = (int64_t)m->runtime_context;
        v[5] = type;
        v[6] = (int64_t)m->handle;
        v[7] = (int64_t)m->bytes; /* m->size is the record's own size */
        v[8] = (int64_t)m->flags;
        v[9] = (int64_t)m->correlation_id.internal;
        v[10] = (int64_t)m->correlation_id.external.value;
        v[11] = (int64_t)m->timestamp;
        return row_done(db, ST_ALLOC);
    }
    case UPTI_TRACING_KIND_CODE_OBJECT: {
        const upti_buffer_tracing_code_object_record_t *c = record;
        int symbol = c->operation == UPTI_CODE_OBJECT_KERNEL_SYMBOL;
        uo_map *rows = symbol ? &db->symbols : &db->objects;
        uint64_t key = symbol ? c->kernel_id : c->code_object_id;
        if (c->phase == UPTI_CALLBACK_PHASE_UNLOAD) {
            uint64_t *row = uo_map_find(rows, key);
            if (row == NULL)
                return 0;
            sqlite3_stmt *st = db->st[symbol ? ST_UNLOAD_SYMBOL : ST_UNLOAD_OBJECT];
            bind_u64(st, 1, c->timestamp);
            bind_u64(st, 2, *row);
            uo_map_remove(rows, key);
            return step(db, st);
        }
        int64_t name = uo_db_intern(db, c->name);
        sqlite3_stmt *st = db->st[symbol ? ST_SYMBOL : ST_CODE_OBJECT];
        int i = 1;
        sqlite3_bind_int64(st, i++, db->process_id);
        if (symbol)
            bind_u64(st, i++, c->kernel_id);
        bind_u64(st, i++, c->code_object_id);
        bind_u64(st, i++, c->runtime_context);
        sqlite3_bind_int64(st, i++, name);
        bind_u64(st, i++, c->timestamp);
        if (step(db, st) != 0)
            return -1;
        uint64_t *row = uo_map_insert(rows, key, NULL);
        if (row)
            *row = (uint64_t)sqlite3_last_insert_rowid(db->db);
        return 0;
    }
    default:
        (void)p;
        return 0;
    }
}

int uo_db_add_agent(uo_db *db, const upti_agent_t *a)
{
    if (db == NULL || db->failed)
        return -1;
    if (begin(db) != 0)
        return -1;
    sqlite3_stmt *st = db->st[ST_AGENT];
    const char *texts[4] = {a->runtime, a->name, a->vendor, a->driver_version};
    char *clean[4];
    for (int i = 0; i < 4; i++) {
        int owned;
        const char *c = uo_utf8_sanitize(texts[i], &owned);
        clean[i] = owned ? (char *)c : NULL;
        sqlite3_bind_text(st, 4 + i, c, -1, SQLITE_TRANSIENT);
        if (owned)
            free(clean[i]);
    }
    sqlite3_bind_int64(st, 1, db->process_id);
    bind_u64(st, 2, a->id.handle);
    sqlite3_bind_text(st, 3, a->type < 4 ? k_agent_types[a->type] : "UNKNOWN", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, a->compute_units);
    bind_u64(st, 9, a->global_memory_bytes);
    bind_u64(st, 10, a->runtime_handle);
    sqlite3_bind_int64(st, 11, a->node_id);
    return step(db, st);
}

int uo_db_add_arg(uo_db *db, uint64_t correlation_id, uint32_t position, const char *type,
                  const char *name, const char *value)
{
    if (db == NULL || db->failed || begin(db) != 0)
        return -1;
    int64_t type_id = intern_again(db, &db->arg_type_ids[position % ARG_POSITIONS], type);
    int64_t name_id = intern_again(db, &db->arg_name_ids[position % ARG_POSITIONS], name);
    int64_t api_id = uo_arg_link_find_call(&db->args, correlation_id);
    if (api_id != 0) {
        uo_waiting_arg a = {correlation_id, position, type_id, name_id, value, 0};
        return write_arg(db, &a, api_id);
    }
    int rc = uo_arg_link_wait(&db->args, correlation_id, position, type_id, name_id, value);
    if (rc < 0)
        keep_error(db, "out of memory");
    else if (rc > 0 && uo_arg_link_release(&db->args, 0, 1, 0, write_arg, db) != 0)
        return -1;
    return db->failed ? -1 : 0;
}

int uo_db_set_metadata(uo_db *db, const char *key, const char *value)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->db, "INSERT OR REPLACE INTO metadata(key, value) VALUES(?,?)", -1,
                           &st, NULL) != SQLITE_OK)
        return -1;
    int o1, o2;
    const char *k = uo_utf8_sanitize(key, &o1), *v = uo_utf8_sanitize(value, &o2);
    sqlite3_bind_text(st, 1, k, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, v, -1, SQLITE_TRANSIENT);
    if (o1)
        free((void *)k);
    if (o2)
        free((void *)v);
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
    int sanitized;
    const char *cmd = uo_utf8_sanitize(command, &sanitized);
    sqlite3_bind_text(st, 1, cmd, -1, SQLITE_TRANSIENT);
    if (sanitized)
        free((void *)cmd);
    bind_u64(st, 2, start);
    bind_u64(st, 3, wall_start);
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
static int count_params(const char *sql)
{
    int n = 0;
    for (; *sql; sql++)
        n += *sql == '?';
    return n;
}

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

/* Written after the fact (uo_db_create_bulk): no journal at all, the file is
 * PATH.part until it is complete. Pages of 64 KiB, 4 KiB for a small trace
 * (uo_db_create_bulk_sized; set first, in create()). A small cache (2 MiB): pages are appended
 * and written out once; a bigger cache only adds fresh memory to fault in
 * (measured: 1.46 s of CPU for 3.58 M records at 2 MiB, 1.94 s at 32 MiB).
 * temp_store=FILE: a sorter (the join of unlinked arguments at the close)
 * keeps its keys in one growing block instead of one malloc per key.
 *
 * Both modes create the indexes with the tables. Streaming: rows arrive in
 * about the order of their correlation ids, so each index entry goes near the
 * end of its index, which costs less than sorting every key at the close
 * (callgrind: 7% fewer instructions converting 300k clSetKernelArg calls, 11%
 * for bench_db streaming-trace) and leaves the close of a streaming database
 * (the program's exit without `upti run`) nothing to build. Bulk: the big
 * tables and these indexes are written as pages (table_pages.h, index_pages.h),
 * the indexes at the close from their entries sorted in memory; SQLite fills
 * only the small tables. */
#define PRAGMAS_BULK                                                                              \
    " PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"                                          \
    " PRAGMA application_id=" UO_APPLICATION_ID_SQL ";"                                          \
    " PRAGMA locking_mode=EXCLUSIVE; PRAGMA temp_store=FILE; PRAGMA cache_size=-2048;"

/* An empty small bulk database made ahead of time (uo_db_use_template), or NULL. */
static char *g_template;

/* The schema, in one transaction, on db whose pragmas are set. */
#define SCHEMA_SQL "BEGIN;" UO_SCHEMA_TABLES UO_SCHEMA_VIEWS UO_SCHEMA_INDEXES

int uo_db_make_template(const char *path)
{
    sqlite3 *db = NULL;
    if ((unlink(path) != 0 && errno != ENOENT) ||
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA page_size=4096;" PRAGMAS_BULK SCHEMA_SQL "; COMMIT", NULL, NULL,
                     NULL) != SQLITE_OK) {
        sqlite3_close(db);
        unlink(path);
        return -1;
    }
    return sqlite3_close(db) == SQLITE_OK ? 0 : -1;
}

void uo_db_use_template(const char *path)
{
    free(g_template);
    g_template = path != NULL ? strdup(path) : NULL;
}

/* A copy of the template at path (a new file). 0, or -1 (nothing left at path). */
static int copy_template(const char *path)
{
    if (g_template == NULL)
        return -1;
    int in = open(g_template, O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644) : -1;
    int ok = out >= 0;
    char buf[16384];
    ssize_t n;
    while (ok && (n = read(in, buf, sizeof buf)) != 0)
        ok = n > 0 && write(out, buf, (size_t)n) == n;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = 0;
    if (!ok && out >= 0)
        unlink(path);
    return ok ? 0 : -1;
}

/* bulk: 1 for uo_db_create_bulk, 2 for a small one (4 KiB pages, uo_db_create_bulk_sized:
 * a copy of the template when there is one). */
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
    /* Truncate rather than unlink: the caller may hold a lock on this inode.
     * A bulk database starts afresh in PATH.part (nobody locks it). */
    const char *file = bulk ? db->part : path;
    if ((bulk ? unlink(file) : truncate(file, 0)) != 0 && errno != ENOENT) {
        snprintf(err, errlen, "cannot create %s: %s", file, strerror(errno));
        goto fail;
    }
    int from_template = bulk == 2 && copy_template(file) == 0;
    if (sqlite3_open_v2(file, &db->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        snprintf(err, errlen, "cannot create %s: %s", file,
                 db->db ? sqlite3_errmsg(db->db) : "out of memory");
        goto fail;
    }
    /* The page size first: the next pragmas write the file's header. */
    const char *pragmas = from_template ? PRAGMAS_BULK
                          : bulk == 2   ? "PRAGMA page_size=4096;" PRAGMAS_BULK
                          : bulk        ? "PRAGMA page_size=65536;" PRAGMAS_BULK
                                        : PRAGMAS_STREAMING;
    if (exec_sql(db, pragmas) != 0 || exec_sql(db, from_template ? "BEGIN" : SCHEMA_SQL) != 0) {
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
        if (batched(i)) {
            int ncols = count_params(k_statements[i]), text_col = i == ST_STRING ? 1 : i == ST_ARG ? 5 : -1;
            rc = uo_rows_init(&db->batch[i], db->db, k_statements[i], ncols, text_col);
            if (rc == 0 && db->pages != NULL)
                db->batch[i].direct = uo_pages_table(db->pages, db->db, k_statements[i], ncols, text_col);
        } else
            rc = sqlite3_prepare_v3(db->db, k_statements[i], -1, SQLITE_PREPARE_PERSISTENT,
                                    &db->st[i], NULL) == SQLITE_OK ? 0 : -1;
        if (rc != 0) {
            snprintf(err, errlen, "%s: %s", path,
                     batched(i) ? "out of memory" : sqlite3_errmsg(db->db));
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
    int o1, o2;
    const char *host = uo_utf8_sanitize(proc->hostname, &o1);
    const char *cmd = uo_utf8_sanitize(proc->command, &o2);
    sqlite3_bind_int64(st, 1, proc->pid);
    sqlite3_bind_int64(st, 2, proc->ppid);
    sqlite3_bind_text(st, 3, host, -1, SQLITE_TRANSIENT);
    if (proc->rank >= 0)
        sqlite3_bind_int64(st, 4, proc->rank);
    sqlite3_bind_text(st, 5, cmd, -1, SQLITE_TRANSIENT);
    bind_u64(st, 6, proc->start);
    bind_u64(st, 7, proc->wall_start);
    if (o1)
        free((void *)host);
    if (o2)
        free((void *)cmd);
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
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(db->st[i]);
        uo_rows_free(&db->batch[i]);
    }
    sqlite3_close(db->db);
    uo_pages_free(db->pages);
    if (db->part != NULL)
        unlink(db->part);
    free(db->part);
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
    free(db->hash);
    free(db->slots);
    for (size_t i = 0; i < db->nthr; i++)
        free(db->thr[i].stack);
    free(db->thr);
    free(db->pending);
    uo_arg_link_free(&db->args);
    uo_map *maps[] = {&db->op_ids, &db->threads, &db->ranges,  &db->stops,  &db->stop_tids,
                      &db->queues, &db->symbols, &db->objects, &db->filter};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        uo_map_free(maps[i]);
    free(db->path);
    free(db);
}

/* The arguments written before their call was known (api_id 0), joined to it. */
#define JOIN_WAITING_ARGS                                                                          \
    "UPDATE arg SET api_id = (SELECT a.id FROM api a WHERE a.correlation_id = arg.correlation_id)" \
    " WHERE api_id = 0;"

/* Bulk, with pages: once SQLite has committed and closed the file, puts in it
 * the rows written as pages (table_pages.h), then reopens it for what needs
 * SQLite: the rows not written as pages, the indexes to rebuild, the
 * arguments joined to their call. 0, or -1 (reported; the file is not to be kept). */
static int finish_pages(uo_db *db)
{
    if (uo_pages_attach(db->pages, db->part) != 0) {
        keep_error(db, uo_pages_error(db->pages));
        return -1;
    }
    int rc = sqlite3_open_v2(db->part, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        keep_error(db, db->db != NULL ? sqlite3_errmsg(db->db) : "out of memory");
    } else if (exec_sql(db, PRAGMAS_BULK "BEGIN;") == 0) {
        if (uo_pages_insert_deferred(db->pages, db->db) != SQLITE_OK)
            keep_error(db, uo_pages_error(db->pages) != NULL ? uo_pages_error(db->pages)
                                                             : sqlite3_errmsg(db->db));
        else
            exec_sql(db, JOIN_WAITING_ARGS "COMMIT;");
    }
    if (sqlite3_close(db->db) != SQLITE_OK)
        keep_error(db, "cannot close");
    db->db = NULL;
    return db->failed ? -1 : 0;
}

int uo_db_close(uo_db *db, uint64_t end)
{
    if (db == NULL)
        return -1;
    int failed = db->failed;
    if (!failed) {
        begin(db);
        /* Ranges still open end with the process. */
        for (size_t i = 0; i < db->nthr; i++) {
            thread_state *t = &db->thr[i];
            while (t->depth > 0) {
                t->depth--;
                add_region(db, &t->stack[t->depth], t->tid, 0, t->depth, end);
            }
        }
        for (size_t i = 0; i < db->npending; i++)
            add_region(db, &db->pending[i], db->pending[i].tid, 1, 0, end);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db->db,
                               "INSERT INTO info_thread(process_id, tid, name_id, start, end)"
                               " VALUES(?,?,?,?,?)",
                               -1, &st, NULL) == SQLITE_OK) {
            for (size_t i = 0; i < db->nthr; i++) {
                thread_state *t = &db->thr[i];
                sqlite3_bind_int64(st, 1, db->process_id);
                bind_u64(st, 2, t->tid);
                if (t->name_id)
                    sqlite3_bind_int64(st, 3, t->name_id);
                else
                    sqlite3_bind_null(st, 3);
                bind_u64(st, 4, t->first);
                bind_u64(st, 5, t->last);
                step(db, st);
            }
            sqlite3_finalize(st);
        }
        if (sqlite3_prepare_v2(db->db, "UPDATE info_process SET end = ? WHERE id = ?", -1, &st,
                               NULL) == SQLITE_OK) {
            bind_u64(st, 1, end);
            sqlite3_bind_int64(st, 2, db->process_id);
            step(db, st);
            sqlite3_finalize(st);
        }
        /* Arguments whose call never came, or came long before them. */
        uo_arg_link_release(&db->args, 0, 1, 0, write_arg, db);
        flush_rows(db);
        /* Those few (api_id 0) are joined to their call by correlation id (with
         * pages: once the rows are in the file, finish_pages). */
        if (db->pages == NULL)
            exec_sql(db, JOIN_WAITING_ARGS);
        set_tally_metadata(db);
        set_metadata_clock_snapshot(db, "clock_snapshot_end");
        if (exec_sql(db, "COMMIT") == 0) {
            db->committed_records += db->txn_records;
            db->txn_records = 0;
        }
        failed = db->failed;
    }
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(db->st[i]);
        uo_rows_free(&db->batch[i]);
    }
    if (sqlite3_close(db->db) != SQLITE_OK)
        failed = 1;
    db->db = NULL;
    if (db->pages != NULL) {
        if (!failed && finish_pages(db) != 0)
            failed = 1;
        uo_pages_free(db->pages);
    }
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
