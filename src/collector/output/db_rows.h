/* SPDX-License-Identifier: MIT */
/* Internal: the rows of one table, inserted UO_ROWS_BATCH at a time (db.c).
 *
 * A row is filled in memory (uo_rows_add), and the batch goes to SQLite as
 * one multi-row INSERT: one sqlite3_step, one cursor, one statement start
 * per UO_ROWS_BATCH rows instead of per row. Bindings outlive
 * sqlite3_reset(), so a value is bound again only where it differs from the
 * one already bound at that place (process ids, agents, queues, sizes and
 * names mostly repeat). Rows keep their order: ids are assigned as if each
 * row had been inserted alone. What is pending is written by
 * uo_rows_flush(), which the writer calls before every commit.
 */
#ifndef UPTI_OUTPUT_DB_ROWS_H
#define UPTI_OUTPUT_DB_ROWS_H

#include "output.h"
#include "table_pages.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>

/**
 * Rows per multi-row INSERT (25 columns x 64 rows: 1,600 parameters, well
 * under SQLite's limit of 32,766). Callgrind, instructions against 16 rows:
 * converting a 260k-record `upti run --sys-trace` spool -3.3% (32 rows:
 * -2.4%; 256 rows: -2.1%), bench_db bulk-trace -2.2%, bulk-marks -2.0%.
 */
#define UO_ROWS_BATCH 64

typedef struct uo_rows {
    sqlite3 *db;
    char *insert;       /**< the INSERT of one row (a copy) */
    /* Prepared when first needed: a table that gets no row, or fewer than
     * UO_ROWS_BATCH, costs no compilation of the multi-row INSERT (callgrind:
     * 7.5 M instructions for the 8 tables, a third of a 1,000-record trace). */
    sqlite3_stmt *one;  /**< INSERT of one row: the rows left over at a flush */
    sqlite3_stmt *many; /**< INSERT of UO_ROWS_BATCH rows */
    int ncols;
    int text_col;     /**< the column (0-based) that holds text, or -1 */
    int n;            /**< rows pending */
    /* vals and text are made at the first row, bound at the first statement:
     * a short process leaves most tables empty, and its rows are written as
     * pages (direct), which bind nothing; each buffer made up front was fresh
     * memory to fault in. */
    int64_t *vals;    /**< UO_ROWS_BATCH rows of ncols values, or NULL */
    size_t *text;     /**< per pending row: offset + 1 of its text in arena, 0 for NULL (and
                           for every row of a table without text) */
    uo_buf arena;     /**< the pending rows' texts, NUL-terminated */
    int64_t *bound;   /**< what is bound at each parameter of many, then of one, or NULL */
    int primed_many;  /**< every parameter of many has been bound once */
    int primed_one;
    /** Set (bulk databases, db.c): the rows are written as pages (table_pages.h), not inserted. */
    uo_table_tree *direct;
    /** Set with direct (db.c, uo_db_set_page_writer): the thread that writes them. */
    struct uo_page_writer *writer;
    /** With writer: set when the database's trees could not take rows it was
     *  handed (its database's pages_failed, page_writer.h). */
    _Atomic int *page_failed;
} uo_rows;

/**
 * The rows of insert, an "INSERT INTO t(c1, ...) VALUES(?,...)" of ncols
 * parameters, the text one (if any) at text_col (0-based, -1 if none); its
 * statements are prepared by the first uo_rows_flush that needs them.
 * Returns 0, or -1 (out of memory, or insert has no " VALUES(").
 */
int uo_rows_init(uo_rows *r, sqlite3 *db, const char *insert, int ncols, int text_col);

/** uo_rows_add's first row: makes the batch's buffers (NULL on ENOMEM). */
int64_t *uo_rows_add_first(uo_rows *r);

/**
 * The values of a new pending row (ncols of them, to fill), or NULL if the
 * batch is full (flush first: db_row_done flushes it as soon as it fills) or
 * out of memory.
 */
static inline int64_t *uo_rows_add(uo_rows *r)
{
    if (r->vals == NULL)
        return uo_rows_add_first(r);
    if (r->n >= UO_ROWS_BATCH)
        return NULL;
    int64_t *v = r->vals + (size_t)r->n * (size_t)r->ncols;
    if (r->text_col >= 0)
        v[r->text_col] = 0; /* bound as text (uo_rows_set_text), never as a number */
    r->text[r->n] = 0;
    r->n++;
    return v;
}

/** Sets the text of the last row added (copied; NULL stores NULL). 0, or -1 on ENOMEM. */
int uo_rows_set_text(uo_rows *r, const char *text);

/** 1 when the batch is full. */
static inline int uo_rows_full(const uo_rows *r) { return r->n >= UO_ROWS_BATCH; }

/**
 * Inserts the pending rows (or writes them as pages: direct). Returns 0, or
 * SQLite's error code (the rows are dropped; the connection's error message
 * says why; SQLITE_IOERR or SQLITE_NOMEM from direct: uo_pages_error does).
 */
int uo_rows_flush(uo_rows *r);

/**
 * Writes n rows into t's pages (uo_tree_add): their values, ncols a row, from
 * vals, and their texts (text[i]: offset + 1 in arena, 0 for none). 0, or -1
 * at the first row t could not take (uo_pages_error says why).
 */
int uo_rows_write_pages(uo_table_tree *t, const int64_t *vals, int ncols, const size_t *text,
                        const char *arena, int n);

/** Finalizes the statements and frees the memory (pending rows are dropped). */
void uo_rows_free(uo_rows *r);

#endif
