/* SPDX-License-Identifier: MIT */
/* Internal: the database writer's state and the functions its three files
 * share: db.c (SQLite: statements, transactions, create, close, metadata),
 * db_strings.c (interned strings and the names of kinds and operations),
 * db_records.c (threads, ranges and records into rows). */
#ifndef UPTI_OUTPUT_DB_INTERNAL_H
#define UPTI_OUTPUT_DB_INTERNAL_H

#include "arg_link.h"
#include "db_rows.h"
#include "db_statements.h"
#include "output.h"

#include <sqlite3.h>
#include <stdint.h>



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
    uo_page_writer *writer; /* writes pages' rows beside the caller, or NULL (page_writer.h) */
    _Atomic int pages_failed; /* the writer's trees could not take rows (page_writer.h) */
    /* Interned strings: text by id, and the ids keyed by their text's hash. */
    char **text;
    size_t nstr, strcap;
    upti_map str_ids;
    upti_map op_ids;     /* (kind << 32 | op) → string id */
    upti_map op_domains; /* (kind << 32 | op) → string id of its api domain, where not the kind's */
    /* The same for the small ones (0: not yet), and table_id()'s ids. */
    int64_t op_small[OP_KINDS][OP_OPS];
    int64_t kind_ids[UPTI_TRACING_KIND_LAST], direction_ids[5], alloc_type_ids[10];
    size_t last_thread; /* index + 1 in thr of the last thread found */
    upti_map threads;    /* tid → index + 1 in thread array */
    thread_state *thr;
    size_t nthr, thrcap;
    upti_map ranges;     /* range id → index + 1 into pending (start seen) */
    upti_map stops;      /* range id → stop timestamp (stop seen first) */
    upti_map stop_tids;  /* range id → stopping thread */
    open_range *pending;
    size_t npending, pendcap;
    upti_map queues;     /* queue handle → 1 */
    upti_map symbols;    /* kernel id → info_kernel_symbol row */
    upti_map objects;    /* code object id → info_code_object row */
    upti_map filter;     /* name id → 1 keep, 2 drop; executions kept so far << 2 (iterations) */
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

/** Names of the copy directions, allocation types and agent types (by value). */
extern const char *const uo_db_directions[5];
extern const char *const uo_db_alloc_types[10];
extern const char *const uo_db_agent_types[4];

/* db.c */
/** Keeps db's first error (uo_db_error) and reports it. */
void db_keep_error(uo_db *db, const char *msg);
/** Opens db's transaction (db_begin, where none is open). 0 or -1. */
int db_open_txn(uo_db *db);
/** Opens db's transaction if none is open. 0 or -1. */
static inline int db_begin(uo_db *db) { return db->in_txn ? 0 : db_open_txn(db); }
/** Steps and resets a statement of a table not batched. 0 or -1. */
int db_step(uo_db *db, sqlite3_stmt *st);
/** A batched table's rows could not be written: db fails. */
void db_rows_failed(uo_db *db);
/** db_row_new found no room: db fails (said). */
void db_row_refused(uo_db *db, int st);

/** The next row of batched table st, NULL on failure; db_row_done() when filled. */
static inline int64_t *db_row_new(uo_db *db, int st)
{
    int64_t *v = uo_rows_add(&db->batch[st]);
    if (v == NULL)
        db_row_refused(db, st);
    return v;
}

/** The row db_row_new gave is filled: a full batch goes to its table. 0, or -1 once db failed. */
static inline int db_row_done(uo_db *db, int st)
{
    uo_rows *r = &db->batch[st];
    db->rows++;
    db->txn_rows++;
    if (uo_rows_full(r) && uo_rows_flush(r) != SQLITE_OK)
        db_rows_failed(db);
    return db->failed ? -1 : 0;
}

static inline void db_bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
    sqlite3_bind_int64(st, i, (int64_t)v);
}

/* db_strings.c */
/** The string id of raw, the last one (*last) again without a lookup when equal. */
int64_t db_intern_again(uo_db *db, int64_t *last, const char *raw);
/** db_op_id and db_kind_id where their tables do not hold the id yet; the
 *  domain of a RUNTIME_API operation (the others': their kind's name). */
int64_t db_op_id_lookup(uo_db *db, uint32_t kind, uint32_t op);
int64_t db_kind_id_lookup(uo_db *db, uint32_t kind);
int64_t db_runtime_domain_id(uo_db *db, uint32_t op);

/** The string id of the name of operation op of kind; the common ones from a table. */
static inline int64_t db_op_id(uo_db *db, uint32_t kind, uint32_t op)
{
    if (kind < OP_KINDS && op < OP_OPS && db->op_small[kind][op] != 0)
        return db->op_small[kind][op];
    return db_op_id_lookup(db, kind, op);
}
/** The string id of names[v] (n names; ids caches them), or of v in decimal. */
int64_t db_table_id(uo_db *db, const char *const *names, int64_t *ids, size_t n, uint32_t v);
/** The string id of a kind's name (src/names/names.c's; an unknown kind in decimal). */
static inline int64_t db_kind_id(uo_db *db, uint32_t kind)
{
    if (kind < sizeof db->kind_ids / sizeof db->kind_ids[0] && db->kind_ids[kind] != 0)
        return db->kind_ids[kind];
    return db_kind_id_lookup(db, kind);
}

/** The string id of (kind, op)'s api domain. */
static inline int64_t db_domain_id(uo_db *db, uint32_t kind, uint32_t op)
{
    return kind == UPTI_TRACING_KIND_RUNTIME_API ? db_runtime_domain_id(db, op)
                                                 : db_kind_id(db, kind);
}

/* db_records.c */
/** One arg row (uo_arg_write_fn, ctx the db); api_id 0: its call is joined at the close. */
int db_write_arg(void *ctx, const uo_waiting_arg *a, int64_t api_id);
/** Writes range r as a region row ending at end (on thread end_tid). */
int db_add_region(uo_db *db, const open_range *r, uint64_t end_tid, int kind, size_t depth,
                  uint64_t end);

#endif
