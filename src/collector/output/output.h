/* SPDX-License-Identifier: MIT */
/* Internal: UPTI's trace writers (libupti-output.a), linked into `upti` and `upti-ring`
 * (the collector side: the traced program only records).
 *
 * Design: records stream into one SQLite database per process (db.c) as the
 * collector converts its spool; nothing is kept in memory but interned strings
 * and small per-thread state. Every other format — Perfetto protobuf, Chrome
 * JSON, CSV, summary tables — is produced from a closed database (export.c,
 * timeline.c, summary.c), by the collector and by `upti export`.
 * docs/database.md documents the schema.
 */
#ifndef UPTI_OUTPUT_H
#define UPTI_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <upti/agent.h>
#include <upti/buffer_tracing.h>
#include <upti/marker.h>

#include "hash_map.h"
#include "capture_spec.h"
#include "output_formats.h"

/* ---- byte buffers and safe strings (str.c) ---- */

/**
 * Makes the array at *array (elements of elem bytes, *cap of them) hold at
 * least need elements: doubles from first. On failure returns -1 and leaves
 * *array and *cap as they were.
 */
int uo_grow_slow(void *array, size_t *cap, size_t need, size_t elem, size_t first);
static inline int uo_grow(void *array, size_t *cap, size_t need, size_t elem, size_t first)
{
    return need <= *cap ? 0 : uo_grow_slow(array, cap, need, elem, first);
}

/** A growable byte buffer; when out is set, uo_buf_flush() writes it there. */
typedef struct uo_buf {
    char *data;
    size_t len;
    size_t cap;
    FILE *out;
    int error; /**< set once a write or an allocation failed */
} uo_buf;

void uo_buf_init(uo_buf *b, FILE *out);
void uo_buf_free(uo_buf *b);
/** Makes room for n more bytes; returns a pointer to them (or NULL and sets error). */
char *uo_buf_reserve(uo_buf *b, size_t n);
void uo_buf_put(uo_buf *b, const void *p, size_t n);
void uo_buf_puts(uo_buf *b, const char *s);
void uo_buf_putc(uo_buf *b, char c);
void uo_buf_printf(uo_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void uo_buf_put_u64(uo_buf *b, uint64_t v);
void uo_buf_put_i64(uo_buf *b, int64_t v);
/** Writes the buffered bytes to out when more than threshold are held (0: always). */
void uo_buf_flush(uo_buf *b, size_t threshold);

/** 1 if s[0..n) is valid UTF-8 (no overlongs, no surrogates). */
int uo_utf8_valid(const char *s, size_t n);
/** Where to cut s (longer than n bytes) to keep at most n bytes: n, or less,
 *  so that the cut does not fall inside a UTF-8 character. */
size_t uo_utf8_cut(const char *s, size_t n);
/**
 * s as valid UTF-8: each byte of an invalid sequence becomes U+FFFD.
 * Returns s itself when already valid, else a malloc'd string (*owned = 1).
 */
const char *uo_utf8_sanitize(const char *s, int *owned);
/** Appends s as a JSON string literal with its quotes (s must be valid UTF-8). */
void uo_json_string(uo_buf *b, const char *s);
/** Appends s as one CSV field (RFC 4180): quoted when it holds , " CR LF or a control byte. */
void uo_csv_field(uo_buf *b, const char *s);
/** Appends s for a terminal: control bytes as \n, \t, \xHH. A string of more than
 *  max_chars characters (0: no limit) is cut between characters to max_chars - 3 of
 *  them and "...": max_chars in all (escapes widen it). */
void uo_text_escape(uo_buf *b, const char *s, size_t max_chars);

/* ---- messages (report.c) ---- */

/**
 * Receives one message of src/collector/output: a problem that no return value carries
 * whole (a database's first error, which may come from any call; a format
 * uo_write_outputs could not write; an output written under another name).
 * message has no "upti: " prefix and no newline.
 */
typedef void (*uo_report_fn)(void *data, const char *message);
/**
 * Where src/collector/output's messages go: the program that links it decides (the
 * CLI and upti-ring print them on stderr). NULL (the default): nowhere; a database still keeps its first
 * error (uo_db_error). Set it before any output is written.
 */
void uo_set_reporter(uo_report_fn fn, void *data);
/** A uo_report_fn that prints "upti: <message>" on stderr. */
void uo_report_to_stderr(void *data, const char *message);
/** Formats a message and passes it to the reporter (internal to src/collector/output). */
void uo_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the database writer (db.c) ---- */

typedef struct uo_db uo_db;

/** What describes the traced process. Strings may be NULL. */
typedef struct uo_process_info {
    int64_t pid, ppid;
    int64_t rank; /**< -1 if none */
    const char *hostname;
    const char *command; /**< the command line, arguments separated by spaces */
    uint64_t start;      /**< ns, UPTI's clock */
    uint64_t wall_start; /**< ns since the epoch when it started */
} uo_process_info;

/** Resolves the name of (kind, operation); may return NULL. */
typedef const char *(*uo_op_name_fn)(uint32_t kind, uint32_t operation);
/** The uo_op_name_fn of libupti's name table (upti_get_tracing_operation_name). */
const char *uo_upti_operation_name(uint32_t kind, uint32_t operation);

/**
 * Creates (truncating) the database at path and its schema, and starts the
 * first transaction. err receives a message on failure (NULL returned).
 */
uo_db *uo_db_create(const char *path, const uo_process_info *proc, uo_op_name_fn op_name,
                    char *err, size_t errlen);
/**
 * uo_db_create for a database written after the fact, from records kept
 * elsewhere (`upti-ring convert`): the fastest settings, no crash safety.
 * No rollback journal and no commit before uo_db_close(); the file is
 * written as path.part and renamed to path only once uo_db_close() has
 * completed it. A writer killed before leaves path.part (never a partial
 * file under path, nor a file to recover: convert again).
 */
uo_db *uo_db_create_bulk(const char *path, const uo_process_info *proc, uo_op_name_fn op_name,
                         char *err, size_t errlen);
/**
 * uo_db_create_bulk for a database whose records take at most source_bytes
 * where they are kept (0: unknown). Below UO_DB_SMALL_SOURCE_BYTES its pages
 * are 4 KiB instead of 64 KiB: the empty schema is then about 100 KB instead
 * of 1.4 MB, written and zeroed once per traced process.
 */
#define UO_DB_SMALL_SOURCE_BYTES (4u << 20)
uo_db *uo_db_create_bulk_sized(const char *path, const uo_process_info *proc,
                               uo_op_name_fn op_name, uint64_t source_bytes, char *err,
                               size_t errlen);
/** Sets metadata(key, value). */
int uo_db_set_metadata(uo_db *db, const char *key, const char *value);

/**
 * Names operation op of kind (a RUNTIME_API operation, given out at run time)
 * name, and its api rows' domain `domain` (the runtime's name), for the
 * records added after this call. 0, or -1 (out of memory).
 */
int uo_db_set_operation_name(uo_db *db, uint32_t kind, uint32_t op, const char *domain,
                             const char *name);
/** Sets the process's command line and start (ns, UPTI's clock; wall_start: ns since the
 *  epoch) in info_process: those of the first image of a program that exec'd. 0 or -1. */
int uo_db_set_process_start(uo_db *db, const char *command, uint64_t start, uint64_t wall_start);
/** Interns s (sanitized to UTF-8); returns its string id (> 0), or 0 for NULL. */
int64_t uo_db_intern(uo_db *db, const char *s);
/** Text of an interned id (valid while db is open). */
const char *uo_db_string(uo_db *db, int64_t id);

/** Appends one buffer record of any tracing kind. Returns 0 or -1 on a database error. */
int uo_db_add_record(uo_db *db, uint32_t kind, const void *record);

/** An API call's fields: what uo_db_add_record reads of an API record. */
typedef struct uo_api_call {
    uint32_t kind; /**< UPTI_TRACING_KIND_OPENCL_API, _VULKAN_API or _RUNTIME_API */
    uint32_t operation;
    uint64_t correlation_id, external_id, thread_id, start, end;
    int64_t result;
} uo_api_call;

/** The fields of API record a, of tracing kind `kind`. */
static inline uo_api_call uo_api_call_of(uint32_t kind, const upti_buffer_tracing_api_record_t *a)
{
    return (uo_api_call){kind,
                         a->operation,
                         a->correlation_id.internal,
                         a->correlation_id.external.value,
                         a->thread_id,
                         a->start_timestamp,
                         a->end_timestamp,
                         a->result};
}

/**
 * uo_db_add_record of the API record whose fields c holds: a reader of
 * records that carry only these (the ring's compact API records) makes no
 * record to hand over. Returns 0, or -1 on a database error or where c's
 * kind is not an API's (nothing added).
 */
int uo_db_add_api_call(uo_db *db, const uo_api_call *c);
/**
 * Appends one argument of the API call with this correlation id (arg table;
 * api_id is joined from the api rows when the database is closed).
 */
int uo_db_add_arg(uo_db *db, uint64_t correlation_id, uint32_t position, const char *type,
                  const char *name, const char *value);
/**
 * Commits the current transaction if it holds rows and more than min_ns passed
 * since the last (a bulk database: never; it commits once, at uo_db_close).
 */
void uo_db_checkpoint(uo_db *db, uint64_t now, uint64_t min_ns);
/** Adds an agent row. */
int uo_db_add_agent(uo_db *db, const upti_agent_t *agent);
/** Names a thread (later names win). */
void uo_db_name_thread(uo_db *db, uint64_t tid, const char *name);
/**
 * Closes open regions at end, writes thread rows, the process end time,
 * indexes; closes and frees db. Returns 0, or -1 if the file is not complete
 * (its first error was reported: uo_set_reporter).
 */
int uo_db_close(uo_db *db, uint64_t end);

typedef struct sqlite3 sqlite3;

/** What uo_db_close_with calls last (see there). */
typedef void (*uo_db_last_fn)(void *arg, sqlite3 *conn);

/**
 * uo_db_close, and once every row is in, within the database's last
 * transaction, last(arg, conn) with its connection: for the caller to read
 * back what it needs and add what only it knows, without opening the file
 * again (an open reads the whole schema). Not called when the database
 * failed before (nothing is written then). last may be NULL.
 */
int uo_db_close_with(uo_db *db, uint64_t end, uo_db_last_fn last, void *arg);
/**
 * The first error of db ("database PATH: message"), or NULL while it has had
 * none. It is also reported (uo_set_reporter) once, when it happens; an error
 * of uo_db_create is its err instead. After an error db writes nothing more.
 */
const char *uo_db_error(const uo_db *db);
/** Closes and frees a bulk database (uo_db_create_bulk*) made again at its
 *  path (which removed its file first): nothing more is written to the path. */
void uo_db_drop(uo_db *db);
typedef struct uo_page_writer uo_page_writer;
/**
 * Has w (page_writer.h; NULL: none) write db's page-written rows from now on,
 * beside the caller, which goes on adding records; the rows handed to a
 * writer before are written first. Nothing where db writes no pages. w must
 * outlive db's close, or another call for db.
 */
void uo_db_set_page_writer(uo_db *db, uo_page_writer *w);
/** Abandons the handle without touching the file (a forked child). */
void uo_db_abandon(uo_db *db);
/** The tool's counts of buffer records received and dropped, stored as metadata at each commit. */
void uo_db_set_tally(uo_db *db, uint64_t received, uint64_t dropped);
/** Buffer records stored by the last successful commit (what the file holds). */
uint64_t uo_db_committed_records(const uo_db *db);
/** Kernel dispatches dropped by the kernel filter (neither written nor lost). */
uint64_t uo_db_filtered_records(const uo_db *db);
/** Records written so far (all tables). */
uint64_t uo_db_row_count(const uo_db *db);
/** A kernel-name filter: return 0 to drop the dispatch. name_id is the interned name. */
typedef int (*uo_kernel_filter_fn)(void *data, int64_t name_id, const char *name);
void uo_db_set_kernel_filter(uo_db *db, uo_kernel_filter_fn fn, void *data);
/**
 * --kernel-iteration-range: of each kernel name's dispatches that pass the
 * name filter, only the executions in range (counted from 1, in the order
 * the records are added) are kept; the others count as filtered. range must
 * outlive db; NULL: all.
 */
void uo_db_set_kernel_iterations(uo_db *db, const upti_iteration_range *range);

/* ---- readers of a closed database (export.c, timeline.c, summary.c, merge.c) ---- */


/** Opens a database read-only (read-write if writable); NULL with a message in err. */
sqlite3 *uo_open(const char *path, int writable, char *err, size_t errlen);
/** Runs sql (any number of statements); 0, or -1 with SQLite's message in err. */
int uo_sql_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);
/** The integer in the first column of sql's first row; fallback if none, NULL or an error. */
int64_t uo_sql_int(sqlite3 *db, const char *sql, int64_t fallback);

/** Writes the Perfetto protobuf timeline. Returns 0 or -1 (message in err). */
int uo_export_pftrace(sqlite3 *db, const char *path, char *err, size_t errlen);
/**
 * Writes the OTF2 archive dir/name.otf2 (anchor), dir/name.def and dir/name/
 * (events) through libotf2: one location group per process (MPI rank) and per
 * device of a process, one location per thread, start/stop range lane and
 * device queue lane, one region per (kind, name). Built only with libotf2
 * (UPTI_HAVE_OTF2, target upti-output-otf2). An archive already there is
 * replaced if UPTI wrote it (its creator); otherwise -1. Returns 0 or -1
 * (message in err).
 */
int uo_export_otf2(sqlite3 *db, const char *dir, const char *name, char *err, size_t errlen);
/** Writes the Chrome trace-event JSON timeline (ui.perfetto.dev and chrome://tracing open it). */
int uo_export_json(sqlite3 *db, const char *path, char *err, size_t errlen);
/**
 * Writes one CSV per record kind: <prefix>_api_trace.csv, _kernel_trace.csv,
 * _memory_copy_trace.csv, _memory_allocation_trace.csv, _marker_api_trace.csv,
 * _region_trace.csv; kinds with no rows are skipped unless all_files.
 * *files receives the number written.
 */
int uo_export_csv(sqlite3 *db, const char *prefix, int all_files, int *files, char *err,
                  size_t errlen);
/** Output formats (bits of uo_write_outputs' formats). */
enum {
    UO_FORMAT_DB = UPTI_FORMAT_DB,
    UO_FORMAT_PFTRACE = UPTI_FORMAT_PFTRACE,
    UO_FORMAT_JSON = UPTI_FORMAT_JSON,
    UO_FORMAT_CSV = UPTI_FORMAT_CSV,
};
/**
 * Writes the formats other than db of the closed database db_path next to it
 * (<base>.pftrace, <base>.json, <base>_*.csv) and, if stats (a list of
 * report names, stats_reports.h), those reports on stderr (headed with pid)
 * and, with csv, in <base>_stats.csv. Each problem is reported
 * (uo_set_reporter), once. Returns 0, or -1 if something was not written.
 */
int uo_write_outputs(const char *db_path, const char *base, unsigned formats, const char *stats,
                     int pid);

/** Merges the inputs into a new database at out_path (truncated). */
int uo_merge(const char *out_path, const char *const *inputs, int n, char *err, size_t errlen);

/** The placeholders uo_expand_placeholders knows, as an error message lists them. */
#define UO_PLACEHOLDERS_KNOWN "%pid% %ppid% %hostname% %rank% %argv0% %env{NAME}% %%"

/**
 * Expands %pid% %ppid% %hostname% %rank% %argv0% %env{NAME}% and %% (a literal
 * '%'); returns malloc'd text. A '%' that starts none of them (%foo%, a lone
 * '%') is an error: NULL, and err says "unknown placeholder '%foo%' (known:
 * ...)". NULL with err empty: out of memory.
 */
char *uo_expand_placeholders(const char *pattern, char *err, size_t errlen);

/** What the placeholders stand for (uo_expand_placeholders takes the calling process's). */
typedef struct uo_placeholder_values {
    long long pid, ppid;
    const char *hostname, *rank, *argv0; /**< NULL: "unknown", "0", "" */
    /** %env{NAME}%: the value, or NULL for an empty expansion. */
    const char *(*getenv)(void *data, const char *name);
    void *getenv_data;
} uo_placeholder_values;

/** uo_expand_placeholders with the values given (the collector names another process's outputs). */
char *uo_expand_placeholders_with(const char *pattern, const uo_placeholder_values *values,
                                  char *err, size_t errlen);

/** The MPI rank of this process from the launchers' variables (OMPI_COMM_WORLD_RANK,
 *  PMI_RANK, PMIX_RANK, SLURM_PROCID, MPI_LOCALRANKID), or "0". */
const char *uo_rank_string(void);


#endif
