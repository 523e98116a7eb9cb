/* SPDX-License-Identifier: MIT */
/* Rows written as SQLite table b-tree pages (table_pages.h). */
#include "table_pages.h"

#include "index_pages.h"
#include "output.h"
#include "sqlite_format.h"
#include "dirs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    COLS_MAX = UO_TABLE_COLS_MAX,
    INDEXES_MAX = UO_TABLE_INDEXES_MAX,
};

/* A page of a tree and the largest row id under it. */
typedef struct page_ref {
    uint32_t page; /* spooled leaves: index in the spool until the attach */
    int64_t max_rowid;
} page_ref;

/* A row kept for SQLite (uo_pages_insert_deferred). */
typedef struct deferred_row {
    int64_t rowid;
    int64_t *vals;
    char *text;
} deferred_row;

struct uo_table_tree {
    uo_page_spool *spool;
    uo_table_tree *next;
    char *table;
    char *deferred_sql; /* the INSERT of a deferred row, with its row id first */
    int ncols;          /* values of a row (the insert's) */
    uo_table_layout layout;
    /* The layout as put_record follows it (plan_columns): the
     * integer columns in order, each with its value's index and its type's
     * place in the header; the text column's place there (-1: none). */
    int nints, ints_before_text, text_place;
    uint8_t int_from[COLS_MAX], int_place[COLS_MAX];
    int64_t last_rowid;
    uo_index_tree index[INDEXES_MAX];
    int nindex;
    /* Made at the first row (a short process leaves most tables empty, and
     * each buffer it made was fresh memory to fault in): one allocation. */
    uint8_t *leaf;      /* the leaf being filled (page_size bytes), or NULL */
    uint8_t *record;    /* a row's record, before it goes into the leaf: after the leaf */
    uint32_t cells, content;
    page_ref *leaves;   /* the full leaves, spooled */
    size_t nleaves, leafcap;
    deferred_row *deferred;
    size_t ndeferred, defcap;
};

/* A table of sqlite_master as its spool first read it (read_tables): its root
 * page, and whether an INSERT into it touches nothing but its rows. */
typedef struct master_table {
    char *name;
    uint32_t root;
    int plain;
} master_table;

struct uo_page_spool {
    int fd;
    char *dir; /* the database's folder: the spool's, and SQLite's sorter's at a REINDEX */
    uint32_t page_size;
    uint32_t pages; /* spooled */
    /* The spool is laid out as the database will be: its leaf i is at page
     * leaf_page(head, i), after head pages left to SQLite's (as many as the
     * database had when the spool was made, and uo_pages_head_slack more), so
     * that the attach can make the spool the database file instead of copying
     * its pages (linkable: an O_TMPFILE file, which can be given a name). */
    uint32_t head;
    int linkable;
    uo_table_tree *trees;
    size_t index_budget; /* entries the indexes may still take (index_pages.h) */
    master_table *tables; /* the database's tables, read at the first uo_pages_table */
    size_t ntables, cap_tables;
    int tables_read;      /* 1: read; -1: could not be (no table is written as pages) */
    char error[256];
};

static void set_error(uo_page_spool *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(uo_page_spool *s, const char *fmt, ...)
{
    if (s->error[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
}

const char *uo_pages_error(const uo_page_spool *s)
{
    return s != NULL && s->error[0] != '\0' ? s->error : NULL;
}

/* Writes (writing 1) len bytes of buf at off, or reads them into it, resuming
 * after a short transfer: 0, or -1 with errno saying why. A full disk writes
 * what fits, then ENOSPC: the reason reported is that, never "short write";
 * an early end of the file is EIO. */
static int transfer_at(int fd, uint8_t *p, size_t len, off_t off, int writing)
{
    while (len > 0) {
        ssize_t n = writing ? pwrite(fd, p, len, off) : pread(fd, p, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

int uo_write_at(int fd, const void *buf, size_t len, off_t off)
{
    return transfer_at(fd, (uint8_t *)(uintptr_t)buf, len, off, 1);
}

static int read_at(int fd, void *buf, size_t len, off_t off)
{
    return transfer_at(fd, buf, len, off, 0);
}

/* ---- setting up ---- */

/* The spool's name beside the database at path (malloc'd; NULL: out of
 * memory): the named spool where there is no O_TMPFILE, unlinked at once,
 * and the name an O_TMPFILE spool is linked under before it becomes the
 * file (spool_becomes_file). */
static char *spool_name(const char *path)
{
    size_t n = strlen(path) + sizeof ".pages";
    char *name = malloc(n);
    if (name != NULL)
        snprintf(name, n, "%s.pages", path);
    return name;
}

uo_page_spool *uo_pages_open(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    int64_t page_size = uo_sql_int(db, "PRAGMA page_size", 0);
    if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0) {
        snprintf(err, errlen, "%s: page size %lld", path, (long long)page_size);
        return NULL;
    }
    char *dir = strdup(path);
    if (dir == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600), linkable = fd >= 0;
    if (fd < 0) { /* a file system without O_TMPFILE: a named file, unlinked at once */
        char *name = spool_name(path);
        if (name != NULL) {
            fd = open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
            if (fd >= 0)
                unlink(name);
            free(name);
        }
    }
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a temporary file in %s: %s", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    uo_page_spool *s = calloc(1, sizeof *s);
    if (s == NULL) {
        close(fd);
        free(dir);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->fd = fd;
    s->dir = dir;
    s->page_size = (uint32_t)page_size;
    s->linkable = linkable && uo_pages_renaming;
    s->head = (uint32_t)uo_sql_int(db, "PRAGMA page_count", 0) + uo_pages_head_slack;
    s->index_budget = uo_index_entries_max;
    return s;
}

/* The names of insert's table and columns: "INSERT INTO t(c1, c2) VALUES(...)"
 * → "t", then "c1", "c2" (in one buffer; names[] point into it). Count, or -1. */
static int parse_insert(const char *insert, char *buf, size_t cap, char **table, char **names,
                        int max)
{
    const char *p = strstr(insert, "INTO ");
    const char *open = p ? strchr(p, '(') : NULL;
    const char *close = open ? strchr(open, ')') : NULL;
    if (close == NULL || (size_t)(close - p) >= cap)
        return -1;
    memcpy(buf, p + 5, (size_t)(close - p - 5));
    buf[close - p - 5] = '\0';
    char *paren = strchr(buf, '(');
    *paren = '\0';
    *table = buf;
    int n = 0;
    for (char *c = strtok(paren + 1, ", "); c != NULL; c = strtok(NULL, ", ")) {
        if (n == max)
            return -1;
        names[n++] = c;
    }
    return n;
}

static int affinity_int(const char *type) { return type != NULL && strcasestr(type, "INT") != NULL; }

static int affinity_text(const char *type)
{
    return type != NULL && !affinity_int(type) &&
           (strcasestr(type, "CHAR") || strcasestr(type, "CLOB") || strcasestr(type, "TEXT"));
}

/* Fills t->layout.from, rowid_at, text_at from the table's columns (PRAGMA
 * table_info). 0 if every column can be written as pages, else -1. */
static int map_columns(uo_table_tree *t, sqlite3 *db, char **names, int ncols, int text_col)
{
    char sql[160];
    snprintf(sql, sizeof sql, "PRAGMA table_info(\"%s\")", t->table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int ok = 1, keys = 0, used = 0;
    t->layout.rowid_at = -1;
    t->layout.text_at = -1;
    t->layout.tcols = 0;
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *type = (const char *)sqlite3_column_text(st, 2);
        int not_null = sqlite3_column_int(st, 3);
        int has_default = sqlite3_column_type(st, 4) != SQLITE_NULL;
        int pk = sqlite3_column_int(st, 5);
        int at = -1;
        for (int i = 0; i < ncols && name != NULL; i++)
            if (strcmp(names[i], name) == 0)
                at = i;
        if (t->layout.tcols == COLS_MAX) {
            ok = 0;
            break;
        }
        int c = t->layout.tcols++;
        t->layout.from[c] = -1;
        if (pk) { /* the row id itself: NULL in the record */
            keys++;
            ok = type != NULL && strcasecmp(type, "INTEGER") == 0;
            t->layout.rowid_at = at;
            used += at >= 0;
            continue;
        }
        if (at < 0) {
            ok = !not_null && !has_default;
            continue;
        }
        used++;
        t->layout.from[c] = at;
        if (at == text_col) {
            ok = affinity_text(type);
            t->layout.text_at = at;
            t->layout.text_not_null = not_null;
        } else {
            ok = affinity_int(type);
        }
    }
    sqlite3_finalize(st);
    return ok && keys == 1 && used == ncols && t->layout.tcols > 0 ? 0 : -1;
}

/* Reads the tables of db's schema into s, in one query: plain where no
 * trigger is on it and its definition has no CHECK, REFERENCES, generated
 * column, WITHOUT ROWID or AUTOINCREMENT. Three queries for each table cost a
 * short process's database 24 statements to prepare of the schema it had
 * just made (some 0.5 ms of CPU beside the program). The schema is not
 * expected to change after the first table is set up. 0, or -1. */
static int read_tables(uo_page_spool *s, sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT m.name, m.rootpage, NOT (m.sql LIKE '%CHECK%' OR m.sql LIKE"
                           " '%REFERENCES%' OR m.sql LIKE '% AS (%' OR m.sql LIKE '%WITHOUT ROWID%'"
                           " OR m.sql LIKE '%AUTOINCREMENT%') AND NOT EXISTS (SELECT 1 FROM"
                           " sqlite_master g WHERE g.type = 'trigger' AND g.tbl_name = m.name)"
                           " FROM sqlite_master m WHERE m.type = 'table'",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (uo_grow(&s->tables, &s->cap_tables, s->ntables + 1, sizeof *s->tables, 16) != 0)
            break;
        master_table *m = &s->tables[s->ntables];
        if (name == NULL || (m->name = strdup(name)) == NULL)
            break;
        int64_t root = sqlite3_column_int64(st, 1);
        m->root = root > 1 && root <= UINT32_MAX ? (uint32_t)root : 0;
        m->plain = sqlite3_column_int(st, 2) != 0;
        s->ntables++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* 0 if nothing but its rows would be touched by an INSERT into t's table
 * (read_tables) and it holds none; t->layout.root set. */
static int plain_table(uo_table_tree *t, sqlite3 *db)
{
    uo_page_spool *s = t->spool;
    if (s->tables_read == 0)
        s->tables_read = read_tables(s, db) == 0 ? 1 : -1;
    const master_table *m = NULL;
    for (size_t i = 0; s->tables_read == 1 && i < s->ntables && m == NULL; i++)
        if (strcmp(s->tables[i].name, t->table) == 0)
            m = &s->tables[i];
    if (m == NULL || !m->plain || m->root == 0)
        return -1;
    t->layout.root = m->root;
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM (SELECT 1 FROM \"%s\" LIMIT 1)", t->table);
    return uo_sql_int(db, sql, 1) == 0 ? 0 : -1;
}

/* Sets up the trees of the table's indexes: 0, or -1 if one cannot be written as pages. */
static int map_indexes(uo_table_tree *t, sqlite3 *db)
{
    char sql[160];
    snprintf(sql, sizeof sql, "PRAGMA index_list(\"%s\")", t->table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int ok = 1;
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        ok = name != NULL && t->nindex < INDEXES_MAX &&
             uo_index_setup(&t->index[t->nindex], db, name, t->layout.from, t->layout.tcols,
                            t->layout.text_at, &t->spool->index_budget) == 0;
        t->nindex += ok;
    }
    sqlite3_finalize(st);
    return ok ? 0 : -1;
}

/* "INSERT INTO t(rowid, c1, ...) VALUES(?, ?, ...)" from insert, or a copy
 * of insert when it names the row id itself. */
static char *deferred_insert(const char *insert, int names_rowid)
{
    size_t n = strlen(insert) + 16;
    char *sql = malloc(n);
    if (sql == NULL)
        return NULL;
    if (names_rowid) {
        memcpy(sql, insert, n - 15);
        return sql;
    }
    const char *open = strchr(insert, '(');
    const char *values = strstr(insert, " VALUES(") + strlen(" VALUES(");
    snprintf(sql, n, "%.*srowid, %.*s?, %s", (int)(open + 1 - insert), insert,
             (int)(values - open - 1), open + 1, values);
    return sql;
}

static void tree_free(uo_table_tree *t)
{
    for (size_t i = 0; i < t->ndeferred; i++) {
        free(t->deferred[i].vals);
        free(t->deferred[i].text);
    }
    free(t->deferred);
    for (int i = 0; i < t->nindex; i++)
        uo_index_free(&t->index[i]);
    free(t->leaves);
    free(t->leaf); /* (and the record after it) */
    free(t->deferred_sql);
    free(t->table);
    free(t);
}

/* A table tree of insert (its table's name from it; its columns' into names,
 * which point into buf), not yet set up: NULL if insert is not one that can
 * be written as pages, or out of memory. */
static uo_table_tree *new_tree(uo_page_spool *s, const char *insert, int ncols, char *buf,
                               size_t cap, char **names)
{
    char *table;
    if (s == NULL || ncols <= 0 || ncols > COLS_MAX || strstr(insert, " VALUES(") == NULL ||
        parse_insert(insert, buf, cap, &table, names, COLS_MAX) != ncols)
        return NULL;
    uo_table_tree *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->spool = s;
    t->ncols = ncols;
    if ((t->table = strdup(table)) == NULL) {
        free(t);
        return NULL;
    }
    return t;
}

/* put_record's plan of t's columns (the layout is checked: every index
 * below COLS_MAX). */
static void plan_columns(uo_table_tree *t)
{
    t->nints = 0;
    t->ints_before_text = 0;
    t->text_place = -1;
    for (int c = 0; c < t->layout.tcols; c++) {
        int at = t->layout.from[c];
        if (at >= 0 && at == t->layout.text_at) {
            t->text_place = c;
            t->ints_before_text = t->nints;
        } else if (at >= 0) {
            t->int_from[t->nints] = (uint8_t)at;
            t->int_place[t->nints++] = (uint8_t)c;
        }
    }
    if (t->text_place < 0)
        t->ints_before_text = t->nints;
}

/* t, set up, joins s's trees; NULL (t freed) when out of memory. */
static uo_table_tree *add_tree(uo_page_spool *s, uo_table_tree *t, const char *insert)
{
    plan_columns(t);
    if ((t->deferred_sql = deferred_insert(insert, t->layout.rowid_at >= 0)) == NULL) {
        tree_free(t);
        return NULL;
    }
    t->content = s->page_size;
    t->next = s->trees;
    s->trees = t;
    return t;
}

uo_table_tree *uo_pages_table(uo_page_spool *s, sqlite3 *db, const char *insert, int ncols,
                              int text_col)
{
    char buf[1024], *names[COLS_MAX];
    uo_table_tree *t = new_tree(s, insert, ncols, buf, sizeof buf, names);
    if (t == NULL)
        return NULL;
    if (map_columns(t, db, names, ncols, text_col) != 0 || plain_table(t, db) != 0 ||
        map_indexes(t, db) != 0) {
        tree_free(t);
        return NULL;
    }
    return add_tree(s, t, insert);
}

void uo_pages_table_setup(const uo_table_tree *t, uo_table_setup *setup)
{
    memset(setup, 0, sizeof *setup);
    setup->layout = t->layout;
    setup->nindex = t->nindex;
    for (int i = 0; i < t->nindex; i++) {
        setup->index[i].name = t->index[i].name;
        setup->index[i].root = t->index[i].root;
        setup->index[i].key_at = t->index[i].key_at;
    }
}

uo_table_tree *uo_pages_table_set(uo_page_spool *s, const char *insert, int ncols,
                                  const uo_table_setup *setup)
{
    char buf[1024], *names[COLS_MAX];
    if (setup->layout.tcols <= 0 || setup->layout.tcols > COLS_MAX || setup->nindex < 0 ||
        setup->nindex > INDEXES_MAX)
        return NULL;
    uo_table_tree *t = new_tree(s, insert, ncols, buf, sizeof buf, names);
    if (t == NULL)
        return NULL;
    t->layout = setup->layout;
    for (int i = 0; i < setup->nindex; i++) {
        if (uo_index_set(&t->index[i], setup->index[i].name, setup->index[i].root,
                         setup->index[i].key_at, &s->index_budget) != 0) {
            tree_free(t);
            return NULL;
        }
        t->nindex++;
    }
    return add_tree(s, t, insert);
}

/* ---- adding rows ---- */

/* The page of spooled leaf i where the leaves follow page base: the one after
 * it, or the next but one past the lock page. */
static uint32_t leaf_page(uint32_t base, uint32_t i, uint32_t lock)
{
    uint32_t page = base + 1 + i;
    return page + (page >= lock && base < lock);
}

/* Writes the leaf's header (and zeroes its free space) for cells cells. */
static void finish_leaf(uo_table_tree *t) { sqlf_page_header(t->leaf, SQLF_LEAF_TABLE, t->cells, t->content); }

static int spool_leaf(uo_table_tree *t)
{
    uo_page_spool *s = t->spool;
    if (t->nleaves == t->leafcap) {
        size_t cap = t->leafcap ? t->leafcap * 2 : 64;
        page_ref *l = realloc(t->leaves, cap * sizeof *l);
        if (l == NULL) {
            set_error(s, "out of memory");
            return -1;
        }
        t->leaves = l;
        t->leafcap = cap;
    }
    finish_leaf(t);
    uint32_t page = leaf_page(s->head, s->pages, sqlf_lock_page(s->page_size));
    off_t at = (off_t)(page - 1) * s->page_size;
    if (uo_write_at(s->fd, t->leaf, s->page_size, at) != 0) {
        set_error(s, "cannot write the database's pages to a temporary file: %s", strerror(errno));
        return -1;
    }
    t->leaves[t->nleaves++] = (page_ref){s->pages, t->last_rowid};
    s->pages++;
    t->cells = 0;
    t->content = s->page_size;
    return 0;
}

static int defer(uo_table_tree *t, int64_t rowid, const int64_t *vals, const char *text)
{
    if (t->ndeferred == t->defcap) {
        size_t cap = t->defcap ? t->defcap * 2 : 8;
        deferred_row *d = realloc(t->deferred, cap * sizeof *d);
        if (d == NULL)
            goto nomem;
        t->deferred = d;
        t->defcap = cap;
    }
    deferred_row *d = &t->deferred[t->ndeferred];
    d->rowid = rowid;
    d->vals = malloc((size_t)t->ncols * sizeof *d->vals);
    d->text = text != NULL ? strdup(text) : NULL;
    if (d->vals == NULL || (text != NULL && d->text == NULL)) {
        free(d->vals);
        free(d->text);
        goto nomem;
    }
    memcpy(d->vals, vals, (size_t)t->ncols * sizeof *vals);
    t->ndeferred++;
    if (rowid > t->last_rowid) /* the rows after it are numbered after it */
        t->last_rowid = rowid;
    return 0;
nomem:
    set_error(t->spool, "out of memory");
    return -1;
}

/* Writes integers ints[0..n) of a row (vals) into its record: each one's type
 * at its place among the header's types h, its bytes at b; returns the end. */
static uint8_t *put_ints(const uo_table_tree *t, int from, int to, const int64_t *vals,
                         uint8_t *h, uint8_t *b)
{
    for (int k = from; k < to; k++) {
        int64_t v = vals[t->int_from[k]];
        int bytes;
        h[t->int_place[k]] = (uint8_t)sqlf_int_type(v, &bytes);
        b = sqlf_put_int_wide(b, v, bytes); /* t->record has 8 spare bytes */
    }
    return b;
}

/* Writes the record of a row (its values, text of text_len bytes) into
 * t->record: the header (its size, a serial type per column), then the
 * values. Returns its size, or 0 if it is over max bytes. Only the integer
 * columns and the text are visited, from the plan (plan_columns); the other
 * types are zeroed at once (NULL). Every type takes one byte but the text's
 * (a varint: two bytes from 57 bytes of text), which moves the types after
 * it; the header's size is one byte (at most 64 + 9 + 1 bytes). */
_Static_assert(COLS_MAX + 9 + 1 < 128, "a record header's size must be a one-byte varint");
static uint32_t put_record(uo_table_tree *t, const int64_t *vals, const char *text,
                           size_t text_len, uint32_t max)
{
    int stored = text != NULL && t->text_place >= 0;
    uint64_t text_type = 13 + 2 * (uint64_t)text_len;
    int text_bytes = stored ? sqlf_varint_len(text_type) : 1;
    uint32_t header = 1 + (uint32_t)t->layout.tcols + (uint32_t)text_bytes - 1;
    if (header + text_len > max) /* then the integers fit in t->record's spare */
        return 0;
    uint8_t *rec = t->record, *h = rec + 1;
    rec[0] = (uint8_t)header;
    /* The types of the columns left NULL are 0: all of a header's bytes zeroed at
     * once, a size the compiler stores inline (t->record has room for it). */
    memset(h, 0, COLS_MAX + 9);
    uint8_t *b = put_ints(t, 0, t->ints_before_text, vals, h, rec + header);
    if (stored) {
        sqlf_put_varint(h + t->text_place, text_type);
        memcpy(b, text, text_len);
        b += text_len;
    }
    b = put_ints(t, t->ints_before_text, t->nints, vals, h + text_bytes - 1, b);
    uint64_t size = (uint64_t)(b - rec);
    return size <= max ? (uint32_t)size : 0;
}

int uo_tree_add(uo_table_tree *t, const int64_t *vals, const char *text)
{
    int64_t rowid = t->layout.rowid_at >= 0 ? vals[t->layout.rowid_at] : t->last_rowid + 1;
    if (rowid <= t->last_rowid || (text == NULL && t->layout.text_not_null))
        return defer(t, rowid, vals, text); /* SQLite says what is wrong with it */
    /* A payload over the page's local limit needs overflow pages: SQLite's to write. */
    uint32_t max = t->spool->page_size - 35;
    if (t->leaf == NULL) {
        /* The record's room: a page, and the spare that put_record may fill before it checks. */
        t->leaf = malloc((size_t)t->spool->page_size * 2 + 8 * COLS_MAX + 8);
        if (t->leaf == NULL) {
            set_error(t->spool, "out of memory");
            return -1;
        }
        t->record = t->leaf + t->spool->page_size;
    }
    size_t text_len = text != NULL ? strlen(text) : 0;
    uint32_t payload = text_len < max ? put_record(t, vals, text, text_len, max) : 0;
    if (payload == 0)
        return defer(t, rowid, vals, text);
    uint32_t cell = (uint32_t)sqlf_varint_len(payload) + (uint32_t)sqlf_varint_len((uint64_t)rowid) + payload;
    if (SQLF_LEAF_HEADER + 2 * (t->cells + 1) + cell > t->content && spool_leaf(t) != 0)
        return -1;
    t->content -= cell;
    uint8_t *p = t->leaf + t->content;
    p = sqlf_put_varint(p, payload);
    p = sqlf_put_varint(p, (uint64_t)rowid);
    memcpy(p, t->record, payload);
    sqlf_put_be16(t->leaf + SQLF_LEAF_HEADER + 2 * t->cells, t->content);
    t->cells++;
    t->last_rowid = rowid;
    for (int i = 0; i < t->nindex; i++)
        uo_index_add(&t->index[i], vals[t->index[i].key_at], rowid);
    return 0;
}

/* ---- the attach ---- */

uo_pages_moves uo_pages_moved;

int sqlf_write_page(sqlf_out *o, uint32_t pgno, const uint8_t *data)
{
    int fd = pgno <= o->sqlite_pages ? o->sqlite_fd : o->fd;
    if (uo_write_at(fd, data, o->page_size, (off_t)(pgno - 1) * o->page_size) == 0)
        return 0;
    if (o->error[0] == '\0')
        snprintf(o->error, o->errlen, "cannot write page %u of the database: %s", pgno,
                 strerror(errno));
    return -1;
}

/* The interior page above children[0..n) (n >= 2), in o->page. */
static void interior_page(sqlf_out *o, const page_ref *children, size_t n)
{
    uint8_t *p = o->page;
    uint32_t content = o->page_size;
    for (size_t i = 0; i + 1 < n; i++) {
        content -= 4 + (uint32_t)sqlf_varint_len((uint64_t)children[i].max_rowid);
        sqlf_put_be32(p + content, children[i].page);
        sqlf_put_varint(p + content + 4, (uint64_t)children[i].max_rowid);
        sqlf_put_be16(p + SQLF_INTERIOR_HEADER + 2 * i, content);
    }
    sqlf_page_header(p, SQLF_INTERIOR_TABLE, (uint32_t)(n - 1), content);
    sqlf_put_be32(p + 8, children[n - 1].page);
}

/* How many of children[0..n) the next interior page holds: as many as fit,
 * leaving two at least to the page after it. */
static size_t group_size(const sqlf_out *o, const page_ref *children, size_t n)
{
    uint32_t room = o->page_size - SQLF_INTERIOR_HEADER;
    size_t k = 1; /* children[0], the right-most so far: in the header */
    while (k < n) {
        uint32_t cell = 2 + 4 + (uint32_t)sqlf_varint_len((uint64_t)children[k - 1].max_rowid);
        if (cell > room)
            break;
        room -= cell;
        k++;
    }
    if (n - k == 1) { /* one child cannot make a page of its own */
        k--;
        uo_pages_moved.table_levels++;
    }
    return k;
}

/* Builds the levels above level[0..n) (n >= 2; each level overwrites the
 * one below in level) and writes the top into root. */
static int build_tree(sqlf_out *o, page_ref *level, size_t n, uint32_t root)
{
    while (n > 1) {
        size_t out = 0;
        for (size_t i = 0; i < n;) {
            size_t k = group_size(o, level + i, n - i);
            interior_page(o, level + i, k);
            uint32_t pgno = i == 0 && k == n ? root : sqlf_new_page(o);
            if (sqlf_write_page(o, pgno, o->page) != 0)
                return -1;
            level[out++] = (page_ref){pgno, level[i + k - 1].max_rowid};
            i += k;
        }
        n = out;
    }
    return 0;
}

static int attach_tree(sqlf_out *o, uo_table_tree *t)
{
    for (int i = 0; i < t->nindex; i++)
        if (uo_index_attach(&t->index[i], o) != 0)
            return -1;
    if (t->nleaves == 0) {
        if (t->cells == 0)
            return 0; /* the root SQLite made stays an empty leaf */
        finish_leaf(t);
        return sqlf_write_page(o, t->layout.root, t->leaf);
    }
    /* The spooled leaves have their pages (place_leaves); the last one follows.
     * (A tree of one leaf was never spooled: a leaf is spooled only when a row
     * follows.) */
    if (t->cells > 0) {
        if (t->nleaves == t->leafcap) {
            page_ref *l = realloc(t->leaves, (t->leafcap + 1) * sizeof *l);
            if (l == NULL) {
                snprintf(o->error, o->errlen, "out of memory");
                return -1;
            }
            t->leaves = l;
            t->leafcap++;
        }
        finish_leaf(t);
        uint32_t pgno = sqlf_new_page(o);
        if (sqlf_write_page(o, pgno, t->leaf) != 0)
            return -1;
        t->leaves[t->nleaves++] = (page_ref){pgno, t->last_rowid};
    }
    return build_tree(o, t->leaves, t->nleaves, t->layout.root);
}

/* Moves a spooled leaf to page to of the spool (o->fd). */
static int move_leaf(sqlf_out *o, page_ref *leaf, uint32_t to)
{
    off_t ps = o->page_size;
    if (read_at(o->fd, o->page, o->page_size, (off_t)(leaf->page - 1) * ps) != 0 ||
        uo_write_at(o->fd, o->page, o->page_size, (off_t)(to - 1) * ps) != 0) {
        snprintf(o->error, o->errlen, "cannot write the database's pages to a temporary file: %s",
                 strerror(errno));
        return -1;
    }
    leaf->page = to;
    return 0;
}

/* Gives each spooled leaf its page in the database, whose first base pages
 * are SQLite's, and sets o->next past the last. Leaf i was written at page
 * leaf_page(s->head, i) of the spool: where SQLite's pages are more than
 * head, the leaves on theirs move to the end; where fewer, the last leaves
 * move into the pages between. The leaves then fill pages base + 1 on,
 * around the lock page; a few move at most (head is the page count SQLite
 * had when the spool was made, and uo_pages_head_slack more). */
static int place_leaves(uo_page_spool *s, sqlf_out *o, uint32_t base)
{
    uint32_t n = s->pages, lock = sqlf_lock_page(s->page_size);
    o->next = base + 1;
    if (n == 0)
        return 0;
    page_ref **at = malloc((size_t)n * sizeof *at); /* the leaves in spool order */
    if (at == NULL) {
        snprintf(o->error, o->errlen, "out of memory");
        return -1;
    }
    for (uo_table_tree *t = s->trees; t != NULL; t = t->next)
        for (size_t j = 0; j < t->nleaves; j++)
            at[t->leaves[j].page] = &t->leaves[j];
    for (uint32_t i = 0; i < n; i++)
        at[i]->page = leaf_page(s->head, i, lock);
    uint32_t last = at[n - 1]->page;
    o->next = (last > base ? last : base) + 1;
    uint32_t first = 0; /* at[first..] stay where they are */
    int rc = 0;
    while (rc == 0 && first < n && at[first]->page <= base) {
        rc = move_leaf(o, at[first++], sqlf_new_page(o));
        uo_pages_moved.leaves_to_end++;
    }
    /* The pages from base + 1 to the first leaf that stays. */
    uint32_t free_page = base + 1, k = n;
    while (rc == 0 && k > first && free_page < at[first]->page) {
        if (free_page != lock) {
            rc = move_leaf(o, at[--k], free_page);
            uo_pages_moved.leaves_to_gap++;
        }
        free_page++;
    }
    if (rc == 0 && k < n) /* the last ones moved: the end is what stayed, or the pages filled */
        o->next = (k > first && at[k - 1]->page >= free_page ? at[k - 1]->page + 1 : free_page);
    free(at);
    return rc;
}

/* Pages [first, end) of the spool copied into the database at the same
 * offsets, around the lock page (left a hole, as SQLite leaves it): by a
 * thread of their own while the attach writes the pages after them, or
 * inline. */
typedef struct page_copy {
    int from, to;       /* the spool's descriptor, the database's */
    uint32_t page_size;
    uint32_t first, end;
    uint8_t *page;      /* a page of room, where copy_file_range cannot copy */
    char error[256];    /* why it failed ("" if it did not) */
} page_copy;

size_t uo_pages_rename_bytes = UO_PAGES_RENAME_BYTES;
uint32_t uo_pages_head_slack = UO_PAGES_HEAD_SLACK;
int uo_pages_renaming = 1;

/* Copies the bytes [in, len) of the spool into the database at the same offsets. */
static int copy_range(page_copy *c, off_t in, off_t len)
{
    off_t out = in;
    while (in < len) {
        ssize_t n = copy_file_range(c->from, &in, c->to, &out, (size_t)(len - in), 0);
        if (n > 0)
            continue;
        if (n < 0 && errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
            snprintf(c->error, sizeof c->error, "cannot copy the database's pages: %s",
                     strerror(errno));
            return -1;
        }
        /* No copy_file_range between these files: page by page (from
         * wherever it stopped). */
        while (in < len) {
            size_t n = len - in < (off_t)c->page_size ? (size_t)(len - in) : c->page_size;
            if (read_at(c->from, c->page, n, in) != 0 || uo_write_at(c->to, c->page, n, in) != 0) {
                snprintf(c->error, sizeof c->error, "cannot copy the database's pages: %s",
                         strerror(errno));
                return -1;
            }
            in += (off_t)n;
        }
    }
    return 0;
}

static void *copy_pages(void *arg)
{
    page_copy *c = arg;
    off_t ps = c->page_size;
    uint32_t lock = sqlf_lock_page(c->page_size);
    if (c->first >= c->end || c->end <= lock || c->first > lock) {
        copy_range(c, (off_t)(c->first - 1) * ps, (off_t)(c->end - 1) * ps);
        return NULL;
    }
    if (copy_range(c, (off_t)(c->first - 1) * ps, (off_t)(lock - 1) * ps) == 0)
        copy_range(c, (off_t)lock * ps, (off_t)(c->end - 1) * ps);
    return NULL;
}

/* The spool, now the whole database but SQLite's pages (1 to base) and the
 * header, made the file at path: those put into it, then given a name and
 * renamed over path (whose inode SQLite's connection still holds open). 1, or
 * 0 where it cannot be (no O_TMPFILE, no /proc, a name taken), s->error
 * untouched: the caller copies the pages instead. -1: s->error says why. */
static int spool_becomes_file(uo_page_spool *s, page_copy *c, const char *path, const uint8_t *h,
                              const struct stat *sb)
{
    if (!s->linkable)
        return 0;
    page_copy back = *c; /* SQLite's pages, from the database into the spool */
    back.from = c->to;
    back.to = c->from;
    back.first = 1;
    back.end = c->first;
    copy_pages(&back);
    if (back.error[0] != '\0') {
        snprintf(s->error, sizeof s->error, "%s", back.error);
        return -1;
    }
    if (uo_write_at(s->fd, h, SQLF_DB_HEADER, 0) != 0 ||
        ftruncate(s->fd, (off_t)(c->end - 1) * c->page_size) != 0 ||
        fchmod(s->fd, sb->st_mode & 07777) != 0) {
        set_error(s, "cannot write the database's pages to a temporary file: %s", strerror(errno));
        return -1;
    }
    char proc[64], *name = spool_name(path);
    if (name == NULL)
        return 0;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", s->fd);
    int linked = linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0;
    int renamed = linked && upti_replace_file(name, path) == 0;
    if (linked && !renamed)
        unlink(name);
    free(name);
    uo_pages_moved.spools_renamed += (unsigned long)renamed;
    return renamed;
}

int uo_pages_attach(uo_page_spool *s, const char *path)
{
    if (s->error[0] != '\0')
        return -1;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    sqlf_out o = {.fd = s->fd, .page_size = s->page_size, .page = malloc(s->page_size),
                  .error = s->error, .errlen = sizeof s->error};
    uint8_t h[SQLF_DB_HEADER];
    struct stat sb;
    int rc = -1;
    page_copy copy = {.from = s->fd, .to = fd, .page_size = s->page_size};
    if (fd < 0 || o.page == NULL) {
        set_error(s, "cannot open %s: %s", path, o.page ? strerror(errno) : "out of memory");
        goto out;
    }
    if (read_at(fd, h, sizeof h, 0) != 0 || fstat(fd, &sb) != 0) {
        set_error(s, "cannot read the header of %s", path);
        goto out;
    }
    uint32_t page_size = (uint32_t)h[16] << 8 | h[17];
    if (page_size == 1)
        page_size = 65536;
    /* What the pages were written for: this page size, no reserved bytes,
     * schema format 4 (serial types 8 and 9), UTF-8, no auto-vacuum. */
    if (memcmp(h, "SQLite format 3", 16) != 0 || page_size != s->page_size || h[20] != 0 ||
        sqlf_get_be32(h + 44) != 4 || sqlf_get_be32(h + 56) != 1 || sqlf_get_be32(h + 52) != 0 ||
        sb.st_size % page_size != 0) {
        set_error(s, "%s: not the database the pages were written for", path);
        goto out;
    }
    uint32_t base = (uint32_t)(sb.st_size / page_size);
    o.sqlite_fd = fd;
    o.sqlite_pages = base;
    if (place_leaves(s, &o, base) != 0)
        goto out;
    /* The database's pages are written into the spool after the leaves. A big
     * spool becomes the database file (spool_becomes_file); where it cannot, or
     * for a small one, its pages are copied into the database: the leaves by a
     * thread of their own while the rest is written, for a big one. */
    int big = (uint64_t)s->pages * page_size >= uo_pages_rename_bytes;
    copy.first = base + 1;
    copy.end = o.next;
    copy.page = malloc(page_size);
    pthread_t copier;
    int threaded = big && !s->linkable && copy.page != NULL &&
                   pthread_create(&copier, NULL, copy_pages, &copy) == 0;
    int trees = copy.page == NULL;
    for (uo_table_tree *t = s->trees; t != NULL && trees == 0; t = t->next)
        trees = attach_tree(&o, t);
    if (threaded)
        pthread_join(copier, NULL);
    if (copy.page == NULL)
        set_error(s, "out of memory");
    if (trees != 0 || s->error[0] != '\0' || copy.error[0] != '\0')
        goto copy_error;
    /* The header: its page count, valid for a new change counter. */
    uint32_t counter = sqlf_get_be32(h + 24) + 1;
    sqlf_put_be32(h + 24, counter);
    sqlf_put_be32(h + 28, o.next - 1);
    sqlf_put_be32(h + 92, counter);
    sqlf_put_be32(h + 96, (uint32_t)sqlite3_libversion_number());
    copy.first = threaded ? copy.end : base + 1;
    copy.end = o.next;
    int became = big && !threaded ? spool_becomes_file(s, &copy, path, h, &sb) : 0;
    if (became != 0) {
        rc = became;
        goto out;
    }
    copy_pages(&copy);
    if (copy.error[0] != '\0')
        goto copy_error;
    if (uo_write_at(fd, h, sizeof h, 0) != 0 ||
        ftruncate(fd, (off_t)(o.next - 1) * page_size) != 0) {
        set_error(s, "cannot write the header of %s: %s", path, strerror(errno));
        goto out;
    }
    rc = 0;
    goto out;
copy_error: /* the copy's error first: its pages come first in the file */
    if (copy.error[0] != '\0')
        snprintf(s->error, sizeof s->error, "%s", copy.error);
out:
    /* The spool's pages are in the file (or the file is discarded): its disk
     * space is freed now, not after SQLite's work on the file (a REINDEX
     * needs room for its sort). */
    close(s->fd);
    s->fd = -1;
    if (fd >= 0 && close(fd) != 0 && rc == 0) {
        set_error(s, "cannot write %s: %s", path, strerror(errno));
        rc = -1;
    }
    free(copy.page);
    free(o.page);
    return rc;
}

int uo_pages_insert_deferred(uo_page_spool *s, sqlite3 *db)
{
    for (uo_table_tree *t = s->trees; t != NULL; t = t->next) {
        if (t->ndeferred == 0)
            continue; /* (the loop below rebuilds the indexes that need it) */
        sqlite3_stmt *st;
        int rc = sqlite3_prepare_v2(db, t->deferred_sql, -1, &st, NULL);
        if (rc != SQLITE_OK)
            return rc;
        int first = t->layout.rowid_at >= 0 ? 1 : 2; /* the parameter of the first value */
        for (size_t i = 0; i < t->ndeferred && rc == SQLITE_OK; i++) {
            const deferred_row *d = &t->deferred[i];
            if (first == 2)
                sqlite3_bind_int64(st, 1, d->rowid);
            for (int c = 0; c < t->ncols; c++) {
                if (c != t->layout.text_at)
                    sqlite3_bind_int64(st, first + c, d->vals[c]);
                else if (d->text != NULL)
                    sqlite3_bind_text(st, first + c, d->text, -1, SQLITE_STATIC);
                else
                    sqlite3_bind_null(st, first + c);
            }
            rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_OK)
            return rc;
    }
    /* A REINDEX sorts the index's entries in temporary files past the cache
     * (2 MiB): as big as the index. SQLite puts them in $SQLITE_TMPDIR,
     * $TMPDIR, else /var/tmp, often a small tmpfs, where a big trace's
     * conversion failed ('database or disk is full') with room to spare
     * beside the database. They go beside the database, like the spool. */
    int rc = SQLITE_OK, moved = 0;
    for (uo_table_tree *t = s->trees; t != NULL && rc == SQLITE_OK; t = t->next)
        for (int i = 0; i < t->nindex && rc == SQLITE_OK; i++) {
            if (!t->index[i].rebuild)
                continue;
            if (!moved) {
                char *sql = sqlite3_mprintf("PRAGMA temp_store_directory = %Q", s->dir);
                moved = sql != NULL && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
                sqlite3_free(sql);
            }
            char sql[160];
            snprintf(sql, sizeof sql, "REINDEX \"%s\"", t->index[i].name);
            rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        }
    if (rc != SQLITE_OK) /* (kept: the next statement replaces db's message) */
        set_error(s, "%s", sqlite3_errmsg(db));
    if (moved) /* (a process-wide setting: back to SQLite's own choice) */
        sqlite3_exec(db, "PRAGMA temp_store_directory = ''", NULL, NULL, NULL);
    return rc;
}

void uo_pages_free(uo_page_spool *s)
{
    if (s == NULL)
        return;
    while (s->trees != NULL) {
        uo_table_tree *t = s->trees;
        s->trees = t->next;
        tree_free(t);
    }
    if (s->fd >= 0)
        close(s->fd);
    for (size_t i = 0; i < s->ntables; i++)
        free(s->tables[i].name);
    free(s->tables);
    free(s->dir);
    free(s);
}
