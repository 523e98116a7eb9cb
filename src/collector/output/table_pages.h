/* SPDX-License-Identifier: MIT */
/* Internal: the rows of a bulk database's big tables written by UPTI as
 * SQLite table b-tree pages, in SQLite's file format, instead of through
 * INSERT (table_pages.c; used by db.c for uo_db_create_bulk only).
 *
 * Why: through a multi-row INSERT, SQLite spends about 4,300 instructions on
 * each row (its virtual machine, the b-tree insert, the indexes); encoding a
 * row into a page here costs about 150. The conversion after a run (`upti-ring
 * convert`, `upti recover`) writes millions of rows into tables that no one
 * reads until the file is complete, with ascending row ids: the case where a
 * b-tree can be built bottom-up, leaf after leaf, without ever being searched.
 *
 * How (the format: https://www.sqlite.org/fileformat2.html, sections 1.6,
 * 2.1 and 2.3):
 *  - A table is written this way only if it is empty, has an INTEGER PRIMARY
 *    KEY (the row id), no trigger, CHECK, REFERENCES or generated column, no
 *    index but on one of its integer columns (those are written as pages too:
 *    index_pages.h), integer columns that receive the integers and a text
 *    column that receives the text (uo_pages_table checks; any other table
 *    keeps INSERT).
 *  - Each row becomes a cell of a table leaf page (type 13): its record (a
 *    header of serial types, then the values) under its row id. A full leaf
 *    goes to the spool, an unlinked temporary file beside the database, at
 *    the offset it will have in the database's file.
 *  - uo_pages_attach, once SQLite has committed the database: places the
 *    spooled leaves after SQLite's last page, then each table's last leaf and
 *    the interior pages (type 5) above its leaves, written into the table's
 *    root page (sqlite_master.rootpage) at the top; sets the header's page
 *    count and change counter. A big spool, SQLite's pages put into it,
 *    becomes the database's file; a small one is copied into the file.
 *    Every leaf is at the same depth; no page is free or used twice, and
 *    none is the page of SQLite's lock bytes (offset 2^30: left a hole, as
 *    SQLite does) (PRAGMA integrity_check: tests).
 *  - A row a leaf cannot hold whole (a payload over the page's local limit,
 *    which would need overflow pages) is kept in memory and inserted through
 *    SQLite after the attach (uo_pages_insert_deferred), under the row id it
 *    would have had. The same for a row whose given id is not above the last.
 * Row ids are those SQLite would give: one more than the last, or the one the
 * row names (the INSERT's id column). Values are stored as SQLite would store
 * them (the smallest integer serial type; 0 and 1 as types 8 and 9, schema
 * format 4), so that readers see the same table either way.
 */
#ifndef UPTI_OUTPUT_TABLE_PAGES_H
#define UPTI_OUTPUT_TABLE_PAGES_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct uo_page_spool uo_page_spool;
typedef struct uo_table_tree uo_table_tree;

/** Writes len bytes of buf at off in fd, whole (a short write goes on; EINTR
 *  is retried). 0, or -1 with errno (EIO for a write that made no progress). */
int uo_write_at(int fd, const void *buf, size_t len, off_t off);

/**
 * The spool of db's page-written tables: a temporary file in the folder of
 * path (the database file; unlinked at once). db's page size is read now and
 * must stay. NULL (err says why) if the file cannot be made: the caller then
 * inserts every row through SQLite.
 */
uo_page_spool *uo_pages_open(sqlite3 *db, const char *path, char *err, size_t errlen);

/**
 * The tree of the table that insert ("INSERT INTO t(c1, ...) VALUES(?, ...)",
 * ncols values, the text one at text_col, -1 if none) fills, or NULL if that
 * table cannot be written as pages (see above) or out of memory.
 */
uo_table_tree *uo_pages_table(uo_page_spool *s, sqlite3 *db, const char *insert, int ncols,
                              int text_col);

/** The most columns of a page-written table, and indexes on it. */
#define UO_TABLE_COLS_MAX 64
#define UO_TABLE_INDEXES_MAX 4

/** Where a row's values go in a page-written table's records. */
typedef struct uo_table_layout {
    uint32_t root;                 /**< the table's root page */
    int tcols;                     /**< columns of the table */
    int from[UO_TABLE_COLS_MAX];   /**< per column: its value's index, -1 NULL (row id alias) */
    int rowid_at;                  /**< the value that names the row id, or -1: the last + 1 */
    int text_at;                   /**< the text value, or -1 */
    int text_not_null;             /**< the text column is NOT NULL */
} uo_table_layout;

/**
 * What uo_pages_table reads from the schema to set a table up (its root
 * page, where each column's value comes from, its indexes): the same table of
 * a database made from the same schema is then set up without a query
 * (uo_pages_table_set). The empty small database's are read when UPTI is
 * built (db_template.h): reading them took a short process's database some
 * 30 statements to prepare, a quarter of upti's instructions.
 */
typedef struct uo_table_setup {
    uo_table_layout layout;
    int nindex;
    struct {
        const char *name;
        uint32_t root;
        int key_at;                /**< the value that is the key */
    } index[UO_TABLE_INDEXES_MAX];
} uo_table_setup;

/** t's setup; its index names are t's (valid while t is). */
void uo_pages_table_setup(const uo_table_tree *t, uo_table_setup *setup);

/**
 * The table of insert set up as setup says, as uo_pages_table would have set
 * it up from a database whose schema gave setup, which must be empty; NULL
 * when out of memory.
 */
uo_table_tree *uo_pages_table_set(uo_page_spool *s, const char *insert, int ncols,
                                  const uo_table_setup *setup);

/**
 * Adds one row: vals are the insert's ncols values (the text column's ignored),
 * text the text column's value (NULL: NULL). 0, or -1 on a write error or
 * ENOMEM (uo_pages_error says which).
 */
int uo_tree_add(uo_table_tree *t, const int64_t *vals, const char *text);

/** The first error of s's trees or of its attach, or NULL. */
const char *uo_pages_error(const uo_page_spool *s);

/**
 * Puts every table's pages into path, which SQLite has committed (its
 * connection may stay open, holding no lock), and updates its header; closes
 * the spool (its disk space is freed). 0: the pages were written into path's
 * file; 1: the spool, with SQLite's pages put into it, was renamed to path (a
 * connection open on the old file must be opened again); -1: uo_pages_error
 * says why, and the file is then damaged and must be discarded. Once only.
 */
int uo_pages_attach(uo_page_spool *s, const char *path);

/**
 * Inserts through db (path reopened after uo_pages_attach, in a transaction)
 * the rows that were not written as pages, and rebuilds the indexes whose
 * entries were too many to keep (index_pages.h), with SQLite's temporary
 * files beside the database (its sorter's, as big as the index). 0, or
 * SQLite's error code (uo_pages_error says why where db's message may not).
 */
int uo_pages_insert_deferred(uo_page_spool *s, sqlite3 *db);

/**
 * From how many bytes of spooled leaves uo_pages_attach makes the spool the
 * database file (its pages are laid out as the file's) instead of copying
 * them into it: 16 MiB, about 4 ms of copying; below it the connection that
 * the caller opens again costs more than the copy. Where the spool cannot be
 * given a name (a file system without O_TMPFILE, no /proc), a spool this big
 * is copied by a thread of its own while the attach writes the index and
 * interior pages. uo_pages_rename_bytes: the size in force (tests lower it).
 */
#define UO_PAGES_RENAME_BYTES ((size_t)16 << 20)
extern size_t uo_pages_rename_bytes;

/**
 * Pages the spool leaves before its first leaf beyond the database's page
 * count when it is made: SQLite's pages grow to about that many by the attach
 * (strings, threads, kernels), so that few leaves move there. 8;
 * uo_pages_head_slack: the number in force (tests change it).
 */
#define UO_PAGES_HEAD_SLACK 8u
extern uint32_t uo_pages_head_slack;

/** 0: spools made from now on are never renamed, but copied (tests). */
extern int uo_pages_renaming;

/**
 * How often the last page of a level was given the last child (or entry) of
 * the page before it, so as not to be left with one child or the last leaf
 * with no entry: in table levels, index leaves, index levels; how often an
 * index's entries, few of them out of key order, were sorted by merging those
 * into the rest (index_merged), and how often by placing each at its key, all
 * unique within a span of twice their number (index_placed), or by counting
 * them where some repeat (index_counted, index_pages.c), and how often its
 * leaves were written in two parts (index_split: by two threads, where one
 * could be made), and how often from its runs (index_runs); how
 * many spooled leaves the attach moved to the end, off pages SQLite's took
 * (leaves_to_end), or into pages SQLite's left (leaves_to_gap); how often a
 * spool became the database file (spools_renamed). Counted for the tests,
 * which must reach every case.
 */
typedef struct uo_pages_moves {
    unsigned long table_levels, index_leaves, index_levels, index_merged, index_placed;
    unsigned long index_counted, index_split, index_runs;
    unsigned long leaves_to_end, leaves_to_gap, spools_renamed;
} uo_pages_moves;
extern uo_pages_moves uo_pages_moved;

/** Closes the spool and frees its trees. */
void uo_pages_free(uo_page_spool *s);

#endif
