/* SPDX-License-Identifier: MIT */
/* An index of a page-written table, written as index b-tree pages (index_pages.h). */
#include "index_internal.h"

#include "big_array.h"
#include "table_pages.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ix empty, with no key yet, its entries taken from budget. */
static void init_index(uo_index_tree *ix, size_t *budget)
{
    memset(ix, 0, sizeof *ix);
    ix->in_runs = uo_index_runs_min != 0;
    ix->least = INT64_MAX;
    ix->top = INT64_MIN;
    ix->budget = budget;
}

int uo_index_setup(uo_index_tree *ix, sqlite3 *db, const char *name, const int *from, int tcols,
                   int text_at, size_t *budget)
{
    init_index(ix, budget);
    sqlite3_stmt *st;
    int ok = 0;
    if (sqlite3_prepare_v2(db, "SELECT rootpage, sql FROM sqlite_master WHERE type = 'index' AND"
                               " name = ?1", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        /* No sql: made for a UNIQUE or PRIMARY KEY constraint. */
        const char *sql = (const char *)sqlite3_column_text(st, 1);
        ix->root = (uint32_t)sqlite3_column_int64(st, 0);
        ok = sql != NULL && strstr(sql, "UNIQUE") == NULL && strstr(sql, " WHERE ") == NULL &&
             ix->root > 1;
    }
    sqlite3_finalize(st);
    char q[160];
    snprintf(q, sizeof q, "PRAGMA index_xinfo(\"%s\")", name);
    if (!ok || sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int keys = 0, rowids = 0;
    ix->key_at = -1;
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        int cid = sqlite3_column_int(st, 1);
        int desc = sqlite3_column_int(st, 3);
        const char *coll = (const char *)sqlite3_column_text(st, 4);
        if (sqlite3_column_int(st, 5) == 0) { /* the row id that follows the key */
            rowids++;
            ok = cid == -1;
            continue;
        }
        keys++;
        ok = cid >= 0 && cid < tcols && desc == 0 && coll != NULL && strcmp(coll, "BINARY") == 0 &&
             from[cid] >= 0 && from[cid] != text_at;
        if (ok)
            ix->key_at = from[cid];
    }
    sqlite3_finalize(st);
    if (!ok || keys != 1 || rowids != 1 || (ix->name = strdup(name)) == NULL)
        return -1;
    return 0;
}

int uo_index_set(uo_index_tree *ix, const char *name, uint32_t root, int key_at, size_t *budget)
{
    init_index(ix, budget);
    ix->root = root;
    ix->key_at = key_at;
    return (ix->name = strdup(name)) != NULL ? 0 : -1;
}

size_t uo_index_entries_max = UO_INDEX_ENTRIES_MAX;
size_t uo_index_memory_max = UO_INDEX_MEMORY_MAX;
size_t uo_index_runs_min = UO_INDEX_RUNS_MIN;
/* An index of this many entries or more is placed (place_unique) and has its
 * leaves written (write_leaves_split) by two threads. */
size_t uo_index_split_entries = UO_INDEX_SPLIT_ENTRIES;

/* (index_internal.h) */
_Atomic size_t uo_index_bytes;

size_t uo_index_memory(void) { return atomic_load_explicit(&uo_index_bytes, memory_order_relaxed); }

void uo_index_free_taken(uo_index_tree *ix)
{
    atomic_fetch_sub_explicit(&uo_index_bytes, ix->outcap * sizeof *ix->out, memory_order_relaxed);
    free(ix->out);
    ix->out = NULL;
    ix->taken = ix->outcap = 0;
}

/* The budget (in entries) that room for runs takes: 24 bytes each, 16 an entry. */
static size_t runs_budget(size_t runs)
{
    return (runs * sizeof(uo_index_run) + sizeof(uo_index_entry) - 1) / sizeof(uo_index_entry);
}

/* Whether ix may grow by units of its database's budget and bytes of the memory of
 * all indexes (uo_index_memory_max). */
static int has_room(const uo_index_tree *ix, size_t units, size_t bytes)
{
    return units <= *ix->budget && uo_index_memory() + bytes <= uo_index_memory_max;
}

/* ix grew (has_room): units of its budget and bytes of the indexes' memory taken. */
static void take_room(uo_index_tree *ix, size_t units, size_t bytes)
{
    atomic_fetch_add_explicit(&uo_index_bytes, bytes, memory_order_relaxed);
    *ix->budget -= units;
}

/* ix let go of what take_room took. */
static void give_room(uo_index_tree *ix, size_t units, size_t bytes)
{
    atomic_fetch_sub_explicit(&uo_index_bytes, bytes, memory_order_relaxed);
    if (ix->budget != NULL)
        *ix->budget += units;
}

/* ix's runs, no longer its own nor counted: its room back to the budget. *runs: how many. */
static uo_index_run *take_runs(uo_index_tree *ix, size_t *runs)
{
    uo_index_run *run = ix->run;
    *runs = ix->runs;
    give_room(ix, runs_budget(ix->runcap), ix->runcap * sizeof *run);
    ix->run = NULL;
    ix->runs = ix->runcap = 0;
    return run;
}

/* Frees ix's entries (and runs) and gives their room back to the budget. */
static void drop_entries(uo_index_tree *ix)
{
    size_t runs;
    free(take_runs(ix, &runs));
    give_room(ix, ix->cap, ix->cap * sizeof *ix->e);
    uo_big_array_free(ix->e, ix->cap * sizeof *ix->e);
    ix->e = NULL;
    ix->n = ix->cap = 0;
    ix->below = 0;
    ix->least = INT64_MAX;
    ix->top = INT64_MIN;
    uo_index_free_taken(ix);
    ix->scan = 0; /* (its start sets last) */
    ix->kept = 0;
}

void uo_index_grow(uo_index_tree *ix)
{
    if (ix->rebuild)
        return; /* SQLite rebuilds it: no more entries are kept */
    size_t more = ix->cap ? ix->cap : 4096;
    if (more > *ix->budget)
        more = *ix->budget;
    size_t bytes = more * sizeof *ix->e;
    uo_index_entry *e = more > 0 && has_room(ix, more, bytes)
                            ? uo_big_array_resize(ix->e, ix->cap * sizeof *e,
                                                  (ix->cap + more) * sizeof *e)
                            : NULL;
    if (e == NULL) {
        drop_entries(ix);
        ix->rebuild = 1;
        return;
    }
    take_room(ix, more, bytes);
    ix->e = e;
    ix->cap += more;
}

/* ---- runs (uo_index_add_run) ---- */

/* Entries in run[0..runs). */
static size_t run_entries(const uo_index_run *run, size_t runs)
{
    size_t n = 0;
    for (size_t r = 0; r < runs; r++)
        n += (size_t)run[r].n;
    return n;
}

/* ix's runs given up: their entries added as entries, one by one, as they
 * came (uo_index_add: counted, scanned, kept in the budget or dropped). */
static void give_up_runs(uo_index_tree *ix)
{
    size_t runs;
    uo_index_run *run = take_runs(ix, &runs);
    ix->in_runs = 0;
    for (size_t r = 0; r < runs && !ix->rebuild; r++)
        for (int64_t i = 0; i < run[r].n; i++)
            uo_index_add(ix, (int64_t)((uint64_t)run[r].key + (uint64_t)i), run[r].rowid + i);
    free(run);
}

/* Room for more runs in ix. 0, or -1 where they are to be given up: short
 * (past uo_index_runs_min of them, under UO_INDEX_RUN_AVERAGE entries each:
 * the keys repeat, or come in no such order), past the budget or the memory
 * of all indexes (uo_index_grow), or without memory. */
static int grow_runs(uo_index_tree *ix)
{
    if (ix->runs >= uo_index_runs_min &&
        run_entries(ix->run, ix->runs) < UO_INDEX_RUN_AVERAGE * ix->runs)
        return -1;
    size_t more = ix->runcap ? ix->runcap : 256;
    size_t units = runs_budget(ix->runcap + more) - runs_budget(ix->runcap);
    size_t bytes = more * sizeof *ix->run;
    if (!has_room(ix, units, bytes))
        return -1;
    uo_index_run *run = realloc(ix->run, (ix->runcap + more) * sizeof *run);
    if (run == NULL)
        return -1;
    take_room(ix, units, bytes);
    ix->run = run;
    ix->runcap += more;
    return 0;
}

void uo_index_add_run(uo_index_tree *ix, int64_t key, int64_t rowid)
{
    if (ix->runs == ix->runcap && grow_runs(ix) != 0) {
        give_up_runs(ix);
        uo_index_add(ix, key, rowid);
        return;
    }
    ix->run[ix->runs++] = (uo_index_run){key, rowid, 1};
}

static int run_cmp(const void *a, const void *b)
{
    const uo_index_run *x = a, *y = b;
    return uo_index_order(x->key, x->rowid, y->key, y->rowid);
}

/* ix's runs in key order, into *sorted (made here; the caller frees it), and
 * the place of each run's first entry among all in key order into *first
 * (first[r]; first[runs]: all the entries). 0, or -1 where no memory, or
 * where one run's keys reach into the next one's (keys that repeat) or past
 * INT64_MAX: then the entries are sorted. */
static int sort_runs(const uo_index_tree *ix, uo_index_run **sorted, size_t **first)
{
    size_t runs = ix->runs;
    uo_index_run *s = malloc(runs * sizeof *s);
    size_t *f = malloc((runs + 1) * sizeof *f);
    int ok = s != NULL && f != NULL;
    if (ok) {
        memcpy(s, ix->run, runs * sizeof *s);
        size_t r = 1;
        while (r < runs && run_cmp(&s[r - 1], &s[r]) < 0)
            r++;
        if (r < runs) /* (one thread's runs come in key order: others' between them) */
            qsort(s, runs, sizeof *s, run_cmp);
        size_t at = 0;
        for (r = 0; r < runs && ok; r++) {
            int64_t last = INT64_MAX - (s[r].n - 1); /* the greatest first key of such a run */
            ok = s[r].key <= last && (r == 0 || s[r - 1].key + (s[r - 1].n - 1) < s[r].key);
            f[r] = at;
            at += (size_t)s[r].n;
        }
        f[runs] = at;
    }
    if (!ok) {
        free(s);
        free(f);
        return -1;
    }
    *sorted = s;
    *first = f;
    return 0;
}

void uo_index_free(uo_index_tree *ix)
{
    drop_entries(ix);
    free(ix->name);
    memset(ix, 0, sizeof *ix);
}

/* ---- the attach ---- */

int uo_index_attach(uo_index_tree *ix, sqlf_out *out)
{
    uo_index_run *run = NULL;
    size_t *first = NULL;
    if (ix->in_runs && ix->runs != 0 && sort_runs(ix, &run, &first) != 0)
        give_up_runs(ix);
    if (ix->rebuild || (ix->in_runs ? ix->runs : ix->n + ix->taken) == 0) {
        drop_entries(ix);
        return 0;
    }
    uo_sorted_entries src = {.run = run, .first = first, .runs = ix->runs};
    uo_index_entry *tmp = NULL;
    if (ix->in_runs) {
        src.n = first[ix->runs];
        uo_pages_moved.index_runs++;
    } else {
        /* None below an earlier key: in key order, row ids rising. */
        int scanned = ix->scan == 1;
        int sorted = ix->below == 0 || uo_index_finish_scan(ix);
        src.n = ix->n;
        src.e = sorted ? ix->e : uo_index_sort_entries(ix, scanned, &tmp);
    }
    int rc = uo_index_write_tree(&src, ix->root, out);
    uo_big_array_free(tmp, src.n * sizeof *tmp);
    free(run);
    free(first);
    drop_entries(ix);
    return rc;
}
