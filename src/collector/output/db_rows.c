/* SPDX-License-Identifier: MIT */
/* The rows of one table, inserted UO_ROWS_BATCH at a time (db_rows.h). */
#include "db_rows.h"

#include "page_writer.h"

#include <stdlib.h>
#include <string.h>

int uo_rows_init(uo_rows *r, sqlite3 *db, const char *insert, int ncols, int text_col)
{
    memset(r, 0, sizeof *r);
    r->db = db;
    r->ncols = ncols;
    r->text_col = text_col;
    uo_buf_init(&r->arena, NULL);
    r->insert = strdup(insert);
    return r->insert != NULL && strstr(insert, " VALUES(") != NULL ? 0 : -1;
}

int64_t *uo_rows_add_first(uo_rows *r)
{
    r->vals = malloc((size_t)UO_ROWS_BATCH * (size_t)r->ncols * sizeof *r->vals);
    r->text = malloc(UO_ROWS_BATCH * sizeof *r->text);
    if (r->vals == NULL || r->text == NULL) {
        free(r->vals);
        free(r->text);
        r->vals = NULL;
        r->text = NULL;
        return NULL;
    }
    return uo_rows_add(r);
}

/* Prepares r->one, the INSERT of one row, or r->many, of UO_ROWS_BATCH:
 * "INSERT INTO t(...) VALUES" then the group "(?,...)" UO_ROWS_BATCH times.
 * SQLITE_OK, or SQLite's error (the connection's message says why). */
static int prepare(uo_rows *r, int many)
{
    if (r->bound == NULL) { /* made with the first statement: rows written as pages bind nothing */
        size_t cells = (size_t)UO_ROWS_BATCH * (size_t)r->ncols;
        if ((r->bound = malloc((cells + (size_t)r->ncols) * sizeof *r->bound)) == NULL)
            return SQLITE_NOMEM;
    }
    if (!many)
        return sqlite3_prepare_v3(r->db, r->insert, -1, SQLITE_PREPARE_PERSISTENT, &r->one, NULL);
    const char *group = strstr(r->insert, " VALUES(") + strlen(" VALUES");
    size_t head = (size_t)(group - r->insert), glen = strlen(group);
    uo_buf sql;
    uo_buf_init(&sql, NULL);
    uo_buf_put(&sql, r->insert, head);
    for (int i = 0; i < UO_ROWS_BATCH; i++) {
        if (i > 0)
            uo_buf_putc(&sql, ',');
        uo_buf_put(&sql, group, glen);
    }
    uo_buf_putc(&sql, '\0');
    int rc = sql.error ? SQLITE_NOMEM
                       : sqlite3_prepare_v3(r->db, sql.data, -1, SQLITE_PREPARE_PERSISTENT,
                                            &r->many, NULL);
    uo_buf_free(&sql);
    return rc;
}

int uo_rows_set_text(uo_rows *r, const char *text)
{
    if (text == NULL || r->n == 0)
        return 0;
    size_t len = strlen(text) + 1, at = r->arena.len;
    uo_buf_put(&r->arena, text, len);
    if (r->arena.error) {
        r->arena.error = 0;
        return -1;
    }
    r->text[r->n - 1] = at + 1;
    return 0;
}

/* Binds count pending rows from first on to st, where bound holds what st
 * has bound: one pass over the values as one array (the text column holds 0,
 * bound as text after), each bound again only where it changed. */
static void bind_rows(uo_rows *r, sqlite3_stmt *st, int64_t *bound, int *primed, int first,
                      int count)
{
    int ncols = r->ncols, cells = count * ncols;
    const int64_t *v = r->vals + (size_t)first * (size_t)ncols;
    if (!*primed) {
        for (int i = 0; i < cells; i++) {
            sqlite3_bind_int64(st, i + 1, v[i]);
            bound[i] = v[i];
        }
        *primed = 1;
    } else {
        for (int i = 0; i < cells; i++)
            if (bound[i] != v[i]) {
                sqlite3_bind_int64(st, i + 1, v[i]);
                bound[i] = v[i];
            }
    }
    if (r->text_col < 0)
        return;
    for (int i = 0; i < count; i++) {
        int param = i * ncols + r->text_col + 1;
        size_t at = r->text[first + i];
        if (at != 0)
            sqlite3_bind_text(st, param, r->arena.data + at - 1, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, param);
    }
}

static int run(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int uo_rows_write_pages(uo_table_tree *t, const int64_t *vals, int ncols, const size_t *text,
                        const char *arena, int n)
{
    for (int i = 0; i < n; i++, vals += ncols)
        if (uo_tree_add(t, vals, text[i] != 0 ? arena + text[i] - 1 : NULL) != 0)
            return -1;
    return 0;
}

/* The pending rows into r->direct's pages: by its writer where it has one.
 * Rows a writer could not write are said at a flush after (db_rows_failed
 * syncs with the writer before it reads the pages' error message). */
static int write_pages(uo_rows *r)
{
    if (r->writer != NULL) {
        if (atomic_load(r->page_failed))
            return SQLITE_IOERR;
        if (uo_page_writer_submit(r->writer, r) == 0)
            return SQLITE_OK;
        uo_page_writer_sync(r->writer); /* (no memory for a job: written here, after its rows) */
    }
    return uo_rows_write_pages(r->direct, r->vals, r->ncols, r->text, r->arena.data, r->n) == 0
               ? SQLITE_OK
               : SQLITE_IOERR;
}

int uo_rows_flush(uo_rows *r)
{
    int rc = SQLITE_OK;
    if (r->direct != NULL) {
        rc = write_pages(r);
    } else if (r->n == UO_ROWS_BATCH) {
        if (r->many == NULL)
            rc = prepare(r, 1);
        if (rc == SQLITE_OK) {
            bind_rows(r, r->many, r->bound, &r->primed_many, 0, r->n);
            rc = run(r->many);
        }
    } else if (r->n > 0) {
        if (r->one == NULL)
            rc = prepare(r, 0);
        for (int i = 0; i < r->n && rc == SQLITE_OK; i++) {
            bind_rows(r, r->one, r->bound + (size_t)UO_ROWS_BATCH * (size_t)r->ncols,
                      &r->primed_one, i, 1);
            rc = run(r->one);
        }
    }
    r->n = 0;
    r->arena.len = 0;
    return rc;
}

void uo_rows_free(uo_rows *r)
{
    sqlite3_finalize(r->one);
    sqlite3_finalize(r->many);
    free(r->insert);
    free(r->vals);
    free(r->bound);
    free(r->text);
    uo_buf_free(&r->arena);
    memset(r, 0, sizeof *r);
}
