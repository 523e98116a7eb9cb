/* SPDX-License-Identifier: MIT */
/* Internal: the index of a page-written table (table_pages.h), written as
 * SQLite index b-tree pages too (index_pages.c).
 *
 * An index on one integer column of a table whose rows are written as pages
 * gets its entries (key, row id) kept in memory while the rows are written.
 * First as runs: entries whose key and row id both go up by one from the
 * entry before (the correlation ids of one thread's calls, a block of them
 * for each thread, its rows written together) are one run, kept as its first
 * entry and its length; at the attach the runs are sorted by their first key
 * and, where none overlaps another, the leaves are written from them (no
 * array of every entry: 32 MB for a 2 M-call run, fresh memory). Where the
 * runs are short (keys that repeat, or no such order), or overlap at the
 * attach, they are replayed as entries, as if they had just come: kept one by
 * one (big_array.h: past 4 MiB in memory that 2 MiB pages can back), counting
 * those that come below an earlier key; at the attach they are sorted by
 * key, then row id (not at all where none came below): entries that arrive
 * mostly in key order (a table's correlation ids, in about call order) by
 * merging the few out of order into the rest in place (those few found as
 * the entries come, uo_index_tree.scan); keys within a span
 * of twice their number (the correlation ids of several threads, their
 * chunks interleaved: many below an earlier key, this tried first) by
 * placing each row id at its key in a table of the span where none repeats,
 * else by counting them; others by a stable radix sort of entries that
 * arrive in row id order. Then the b-tree is built bottom-up:
 * leaves (type 10) of consecutive entries, and between two neighbours one
 * entry lifted into the level above (type 2), as in every B-tree (an index
 * holds each entry once, interior pages included). The top goes into the
 * index's root page, which CREATE INDEX made on the empty table.
 *
 * Through CREATE INDEX after the rows, SQLite spends about 2,200
 * instructions per entry (reading the table, its sorter, the b-tree inserts);
 * here about 60. The indexes of one database share UO_INDEX_ENTRIES_MAX
 * entries (128 MiB; sorting one that is out of order takes as much again for
 * the time it is written): an index that would pass it (or when memory runs
 * out) drops its entries, and SQLite rebuilds it from the table after the
 * attach (REINDEX), in bounded memory. The entries taken out of key order
 * as they come (uo_index_tree.scan) take a quarter as much at most, counted
 * in uo_index_memory().
 */
#ifndef UPTI_OUTPUT_INDEX_PAGES_H
#define UPTI_OUTPUT_INDEX_PAGES_H

#include "sqlite_format.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/** Entries kept in memory for the indexes of one database (16 bytes each). */
#define UO_INDEX_ENTRIES_MAX (8u << 20)

/** The limit in force for the databases opened from now: UO_INDEX_ENTRIES_MAX (tests lower it). */
extern size_t uo_index_entries_max;

/**
 * Bytes of entries that the indexes of every database open in this process
 * may hold together: a converter has every process's database open until the
 * spool is read through, and a job of 64 processes of 8 M calls each would
 * otherwise hold 8 GiB (128 MiB each). Past it, the index that would grow is
 * rebuilt by SQLite instead (as past its database's UO_INDEX_ENTRIES_MAX).
 * 512 MiB: four databases at UO_INDEX_ENTRIES_MAX each.
 */
#define UO_INDEX_MEMORY_MAX ((size_t)512 << 20)

/** The limit in force: UO_INDEX_MEMORY_MAX (tests lower it). */
extern size_t uo_index_memory_max;

/**
 * Entries from which an index's entries are placed at their keys
 * (place_unique) and its leaves written by two threads: 256 Ki (some 1,000
 * leaves of 4 KiB; a thread costs some 50 us to make).
 */
#define UO_INDEX_SPLIT_ENTRIES ((size_t)256 << 10)
/** The limit in force: UO_INDEX_SPLIT_ENTRIES (tests lower it). */
extern size_t uo_index_split_entries;
/** Bytes of entries the indexes of this process hold now. */
size_t uo_index_memory(void);

typedef struct uo_index_entry {
    int64_t key, rowid;
} uo_index_entry;

/** Entries (key + i, rowid + i) for i in [0, n). */
typedef struct uo_index_run {
    int64_t key, rowid, n;
} uo_index_run;

/**
 * Runs an index keeps before it may give them up for entries, where they are
 * then short (under UO_INDEX_RUN_AVERAGE entries each): 4,096 (96 KiB).
 */
#define UO_INDEX_RUNS_MIN ((size_t)4 << 10)
/** Entries a run must hold on average for runs to be kept past UO_INDEX_RUNS_MIN of them. */
#define UO_INDEX_RUN_AVERAGE 8
/** The limit in force: UO_INDEX_RUNS_MIN; 0: entries from the first (tests). */
extern size_t uo_index_runs_min;

/**
 * Entries an entry's place in key order is judged by, as they come: the one
 * after it and the one this many after it (index_pages.c, is_spike).
 */
#define UO_INDEX_LOOKAHEAD 8

typedef struct uo_index_tree {
    char *name;
    uint32_t root;     /**< the index's root page */
    int key_at;        /**< the row value that is the key */
    /** 1 while the entries are kept as runs (run[0..runs), room for runcap,
     *  in row id order); 0 once they are entries (e). */
    int in_runs;
    uo_index_run *run;
    size_t runs, runcap;
    uo_index_entry *e; /**< the entries, in row id order (but those taken out) */
    size_t n, cap;     /**< entries in e (taken ones aside), room for n + taken */
    /** Entries whose key is below an earlier one's (0: in key order), and the
     *  least and greatest keys so far: how the attach sorts them, found as they come. */
    size_t below;
    int64_t least, top;
    /**
     * The scan for the entries that break the key order, done as they come
     * from the first one below an earlier key (scan 0 before it, 1 while it
     * runs, -1 once too many broke it or there was no memory for those taken
     * out: the attach sorts them all). e[0..kept)
     * are in key order, last the greatest of their keys; e[kept..n) wait for
     * the entries after them to be judged; the ones taken out are
     * out[0..taken) (room for outcap), in row id order. The attach only sorts
     * those and merges them in.
     */
    int scan;
    size_t kept, taken, outcap;
    int64_t last;
    uo_index_entry *out;
    int rebuild;       /**< the entries were dropped: SQLite rebuilds it (REINDEX) */
    size_t *budget;    /**< entries the database's indexes may still take */
} uo_index_tree;

/**
 * Sets up ix for index name of a table whose columns' values are
 * from[0..tcols) (a row value's index, -1 for none) with the text value at
 * text_at: 0 if it is an index on one integer column filled from a value, in
 * ascending order with the BINARY collation, neither UNIQUE nor partial;
 * else -1 (the table is then inserted through SQLite).
 */
int uo_index_setup(uo_index_tree *ix, sqlite3 *db, const char *name, const int *from, int tcols,
                   int text_at, size_t *budget);

/**
 * Sets ix up as uo_index_setup found it (uo_table_setup): the index name of
 * the table, its root page, and the row value that is its key. 0, or -1 on
 * ENOMEM.
 */
int uo_index_set(uo_index_tree *ix, const char *name, uint32_t root, int key_at, size_t *budget);

/**
 * Grows ix's entries; on failure, past its database's budget or past
 * uo_index_memory_max for the indexes of all databases, drops them and marks
 * it for rebuilding (then keeps no more).
 */
void uo_index_grow(uo_index_tree *ix);

/** Judges the entries of ix that wait (uo_index_tree.scan), but the last UO_INDEX_LOOKAHEAD. */
void uo_index_scan(uo_index_tree *ix);

/**
 * Adds the entry (key, rowid) to ix's runs where it does not extend the last
 * (or there is none); gives the runs up for entries where they are too short,
 * or without the memory for more.
 */
void uo_index_add_run(uo_index_tree *ix, int64_t key, int64_t rowid);

/** Adds the entry of row rowid whose key is key (rows come in row id order). */
static inline void uo_index_add(uo_index_tree *ix, int64_t key, int64_t rowid)
{
    if (ix->in_runs) {
        /* (unsigned: no overflow; a run that passes INT64_MAX is found at the attach) */
        uo_index_run *r = ix->runs != 0 ? &ix->run[ix->runs - 1] : NULL;
        if (r != NULL && (uint64_t)key - (uint64_t)r->key == (uint64_t)r->n &&
            (uint64_t)rowid - (uint64_t)r->rowid == (uint64_t)r->n)
            r->n++;
        else
            uo_index_add_run(ix, key, rowid);
        return;
    }
    if (ix->n + ix->taken == ix->cap) {
        uo_index_grow(ix);
        if (ix->rebuild)
            return;
    }
    ix->e[ix->n].key = key;
    ix->e[ix->n].rowid = rowid;
    ix->n++;
    if (key < ix->top) {
        ix->below++;
        if (key < ix->least)
            ix->least = key;
    } else {
        if (ix->n + ix->taken == 1) /* the first: the least so far */
            ix->least = key;
        ix->top = key;
    }
    if (ix->below != 0 && ix->scan >= 0 && ix->n - ix->kept > UO_INDEX_LOOKAHEAD)
        uo_index_scan(ix);
}

/**
 * Sorts ix's entries and writes its b-tree: pages appended through out, the
 * top into ix->root (nothing when there is no entry: the root stays an empty
 * leaf), then frees them. 0, or -1 (out->error says why).
 */
int uo_index_attach(uo_index_tree *ix, sqlf_out *out);

void uo_index_free(uo_index_tree *ix);

#endif
