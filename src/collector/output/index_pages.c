/* SPDX-License-Identifier: MIT */
/* An index of a page-written table, written as index b-tree pages (index_pages.h). */
#include "index_pages.h"

#include "big_array.h"
#include "table_pages.h"

#include <pthread.h>
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

/* Bytes of entries held by every index: of every database, whichever thread
 * adds their rows (a converter's and a page writer's, page_writer.h). */
static _Atomic size_t g_index_bytes;

size_t uo_index_memory(void) { return atomic_load_explicit(&g_index_bytes, memory_order_relaxed); }

/* Frees the entries ix's scan took out (uo_index_tree.out), counted in g_index_bytes. */
static void free_taken(uo_index_tree *ix)
{
    atomic_fetch_sub_explicit(&g_index_bytes, ix->outcap * sizeof *ix->out, memory_order_relaxed);
    free(ix->out);
    ix->out = NULL;
    ix->taken = ix->outcap = 0;
}

/* The budget (in entries) that room for runs takes: 24 bytes each, 16 an entry. */
static size_t runs_budget(size_t runs)
{
    return (runs * sizeof(uo_index_run) + sizeof(uo_index_entry) - 1) / sizeof(uo_index_entry);
}

/* ix's runs, no longer its own nor counted: its room back to the budget. *runs: how many. */
static uo_index_run *take_runs(uo_index_tree *ix, size_t *runs)
{
    uo_index_run *run = ix->run;
    *runs = ix->runs;
    atomic_fetch_sub_explicit(&g_index_bytes, ix->runcap * sizeof *run, memory_order_relaxed);
    if (ix->budget != NULL)
        *ix->budget += runs_budget(ix->runcap);
    ix->run = NULL;
    ix->runs = ix->runcap = 0;
    return run;
}

/* Frees ix's entries (and runs) and gives their room back to the budget. */
static void drop_entries(uo_index_tree *ix)
{
    size_t runs;
    free(take_runs(ix, &runs));
    atomic_fetch_sub_explicit(&g_index_bytes, ix->cap * sizeof *ix->e, memory_order_relaxed);
    uo_big_array_free(ix->e, ix->cap * sizeof *ix->e);
    if (ix->budget != NULL)
        *ix->budget += ix->cap;
    ix->e = NULL;
    ix->n = ix->cap = 0;
    ix->below = 0;
    ix->least = INT64_MAX;
    ix->top = INT64_MIN;
    free_taken(ix);
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
    uo_index_entry *e = more > 0 && uo_index_memory() + bytes <= uo_index_memory_max
                            ? uo_big_array_resize(ix->e, ix->cap * sizeof *e,
                                                  (ix->cap + more) * sizeof *e)
                            : NULL;
    if (e == NULL) {
        drop_entries(ix);
        ix->rebuild = 1;
        return;
    }
    *ix->budget -= more;
    atomic_fetch_add_explicit(&g_index_bytes, bytes, memory_order_relaxed);
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
    if (units > *ix->budget || uo_index_memory() + bytes > uo_index_memory_max)
        return -1;
    uo_index_run *run = realloc(ix->run, (ix->runcap + more) * sizeof *run);
    if (run == NULL)
        return -1;
    *ix->budget -= units;
    atomic_fetch_add_explicit(&g_index_bytes, bytes, memory_order_relaxed);
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
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
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

/* ---- sorting: by key, then row id ---- */

/* Entries ahead of the one read that a pass over an index's entries asks
 * for (1 KiB): on the virtual machines measured, the processor did not fetch
 * them ahead itself. The pass that writes the leaves of a 2 M-call run's
 * index, its entries out of the cache, waited a quarter of its time for
 * them: 19 to 20 ms, 11.5 with this (128 and 256 ahead did no better).
 * Placing the entries of an 8-thread run at their keys (place_unique) took
 * 8.3 ms, 7.1 with this. */
#define UO_INDEX_PREFETCH 64

/* Asks for e[i + UO_INDEX_PREFETCH] of e[0..n) to be fetched, if there is one. */
static inline void prefetch_ahead(const uo_index_entry *e, size_t i, size_t n)
{
    if (i + UO_INDEX_PREFETCH < n)
        __builtin_prefetch(&e[i + UO_INDEX_PREFETCH]);
}

static uint64_t radix_key(int64_t k) { return (uint64_t)k ^ (1ULL << 63); }

/* Sorts e[0..n) by key, keeping the row id order of equal keys (a stable LSD
 * radix sort, a byte at a time, skipping the bytes every key shares), through
 * tmp. Returns the array that holds the result: e or tmp. */
static uo_index_entry *radix_sort(uo_index_entry *e, uo_index_entry *tmp, size_t n)
{
    uint64_t first = radix_key(e[0].key), differ = 0;
    for (size_t i = 1; i < n; i++)
        differ |= radix_key(e[i].key) ^ first;
    for (int shift = 0; shift < 64; shift += 8) {
        if (((differ >> shift) & 0xff) == 0)
            continue;
        size_t at[256] = {0};
        for (size_t i = 0; i < n; i++)
            at[(radix_key(e[i].key) >> shift) & 0xff]++;
        size_t sum = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = at[d];
            at[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[at[(radix_key(e[i].key) >> shift) & 0xff]++] = e[i];
        uo_index_entry *swap = e;
        e = tmp;
        tmp = swap;
    }
    return e;
}

/* Whether n keys from lo to hi lie within a span under twice their number:
 * then *span is hi - lo. */
static int narrow_keys(size_t n, int64_t lo, int64_t hi, uint64_t *span)
{
    *span = (uint64_t)hi - (uint64_t)lo; /* (two's complement: no overflow) */
    return n < UINT32_MAX && *span < 2 * (uint64_t)n;
}

/* Zeroed memory for count 32-bit slots (UO_BIG_ARRAY_MIN bytes or more: mapped),
 * freed by uo_big_array_free(slots, count * 4). */
static uint32_t *zeroed_slots(size_t count)
{
    size_t bytes = count * sizeof(uint32_t);
    return bytes >= UO_BIG_ARRAY_MIN ? uo_big_array_resize(NULL, 0, bytes) : calloc(count, 4);
}

typedef struct halves {
    void (*fn)(void *, int);
    void *arg;
} halves;

static void *second_half(void *p)
{
    const halves *h = p;
    h->fn(h->arg, 1);
    return NULL;
}

/* Runs fn(arg, 1) on a thread of its own and fn(arg, 0) on this one, then
 * waits for both; with split 0, or without a thread, one after the other. */
static void both_halves(void (*fn)(void *, int), void *arg, int split)
{
    halves h = {fn, arg};
    pthread_t thread;
    int made = split && pthread_create(&thread, NULL, second_half, &h) == 0;
    fn(arg, 0);
    if (made)
        pthread_join(thread, NULL);
    else
        fn(arg, 1);
}

/* place_unique's work: each half of the entries placed, each half of the
 * table read back. The table's slots are read and written atomically (plain
 * loads and stores, relaxed): two threads store into the same slot only for a
 * key that repeats, which the count of the slots filled then finds. */
typedef struct placing {
    uo_index_entry *e;
    size_t n, slots;
    uint32_t *at; /* at[k - lo]: k's row id - first + 1, or 0 */
    int64_t lo, first;
    size_t count[2]; /* per half of the table: its slots filled */
    int repeat[2];   /* per half of the entries: a key found twice */
    int split;       /* by two threads (else the second half starts where the first ended) */
} placing;

static void place_half(void *arg, int half)
{
    placing *p = arg;
    size_t from = half ? p->n / 2 : 0, to = half ? p->n : p->n / 2;
    for (size_t i = from; i < to; i++) {
        prefetch_ahead(p->e, i, to);
        uint32_t *slot = &p->at[(uint64_t)p->e[i].key - (uint64_t)p->lo];
        if (__atomic_load_n(slot, __ATOMIC_RELAXED) != 0) {
            p->repeat[half] = 1;
            return;
        }
        __atomic_store_n(slot, (uint32_t)((uint64_t)p->e[i].rowid - (uint64_t)p->first) + 1,
                         __ATOMIC_RELAXED);
    }
}

static void count_half(void *arg, int half)
{
    placing *p = arg;
    size_t from = half ? p->slots / 2 : 0, to = half ? p->slots : p->slots / 2, c = 0;
    for (size_t k = from; k < to; k++)
        c += __atomic_load_n(&p->at[k], __ATOMIC_RELAXED) != 0;
    p->count[half] = c;
}

/* Reads half of the table back into e, the second from the first's count on. */
static void read_back_half(void *arg, int half)
{
    placing *p = arg;
    size_t from = half ? p->slots / 2 : 0, to = half ? p->slots : p->slots / 2;
    size_t w = half ? p->count[0] : 0;
    for (size_t k = from; k < to; k++) {
        uint32_t v = __atomic_load_n(&p->at[k], __ATOMIC_RELAXED);
        if (v != 0)
            p->e[w++] = (uo_index_entry){p->lo + (int64_t)k, p->first + (int64_t)v - 1};
    }
    if (!p->split && !half)
        p->count[0] = w;
}

/* Sorts e[0..n) in place where no key repeats, the keys lying within span of lo
 * (narrow_keys) and the row ids within 2^32 - 2 of the first: each entry's row
 * id goes to its key's place in a table of the span, read back in key order
 * into e. The correlation ids of a table that several threads wrote are so
 * (each call has its own). The table takes 4 bytes a key, where count_sort
 * takes as much for its counts and 16 more for a copy of the entries: fresh
 * memory, which the kernel zeroes at its first touch (for a 2 M-call run of 8
 * threads, a fifth of the time after the program's end). From
 * uo_index_split_entries entries on, two threads place half the entries each,
 * count the slots filled in half the table each (all n: no key repeats), and
 * read half the table back each. 0, or -1 with e unchanged where a key repeats
 * or there is no memory for the table. */
static int place_unique(uo_index_entry *e, size_t n, int64_t lo, uint64_t span)
{
    int64_t first = e[0].rowid; /* the least: e is in row id order */
    if ((uint64_t)e[n - 1].rowid - (uint64_t)first >= UINT32_MAX - 1)
        return -1;
    placing p = {.e = e, .n = n, .slots = (size_t)span + 1, .lo = lo, .first = first};
    if ((p.at = zeroed_slots(p.slots)) == NULL)
        return -1;
    p.split = n >= uo_index_split_entries;
    both_halves(place_half, &p, p.split);
    int unique = !p.repeat[0] && !p.repeat[1];
    if (unique && p.split) {
        both_halves(count_half, &p, 1);
        unique = p.count[0] + p.count[1] == n;
    }
    if (unique)
        both_halves(read_back_half, &p, p.split);
    uo_big_array_free(p.at, p.slots * sizeof *p.at);
    if (!unique)
        return -1;
    uo_pages_moved.index_placed++;
    return 0;
}

/* Sorts e[0..n) as radix_sort does, into tmp, where the keys lie within span
 * of lo (narrow_keys): one pass counts each key, one puts each entry in its
 * place (a radix sort passes over them once per byte of the span: three times
 * for two million keys). The keys of such a table where some repeat. NULL
 * where there is no memory for the counts: then radix_sort. */
static uo_index_entry *count_sort(uo_index_entry *e, uo_index_entry *tmp, size_t n, int64_t lo,
                                  uint64_t span)
{
    /* at[k - lo + 1]: how many keys are k; then at[k - lo]: where the next k goes. */
    size_t slots = (size_t)span + 2;
    uint32_t *at = zeroed_slots(slots);
    if (at == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        at[(uint64_t)e[i].key - (uint64_t)lo + 1]++;
    for (size_t k = 1; k < slots; k++)
        at[k] += at[k - 1];
    for (size_t i = 0; i < n; i++) /* in row id order: equal keys stay so */
        tmp[at[(uint64_t)e[i].key - (uint64_t)lo]++] = e[i];
    uo_big_array_free(at, slots * sizeof *at);
    uo_pages_moved.index_counted++;
    return tmp;
}

static int entry_cmp(const void *a, const void *b)
{
    const uo_index_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

/* Entries that arrive mostly in key order (the correlation ids of a table
 * written in about call order, a call that ended late here and there) are
 * sorted without moving the rest through a second array: the entries that
 * break the order go into out[], the others close up in e, and the two sorted
 * runs are merged in place from the back.
 *
 * An entry breaks the order if its key is below the last one kept, or if the
 * entry after it or the one UO_INDEX_LOOKAHEAD after it lies between the two (it is a
 * spike: keeping it would make the entries after it break the order; two
 * probes, not a scan of the window, as this runs for each of millions of
 * entries). Which entries are taken out only decides the cost: the kept ones
 * are in order whatever the probes say. */
static int is_spike(const uo_index_entry *e, size_t n, size_t i, int64_t last)
{
    int64_t k = e[i].key;
    if (i + 1 < n && e[i + 1].key < k && e[i + 1].key >= last)
        return 1;
    size_t j = i + UO_INDEX_LOOKAHEAD < n ? i + UO_INDEX_LOOKAHEAD : n - 1;
    return j > i + 1 && e[j].key < k && e[j].key >= last;
}

/* e[0..kept) and out[0..taken), each in row id order, merged into
 * e[0..kept + taken) in row id order, as they came. */
static void merge_back(uo_index_entry *e, size_t kept, const uo_index_entry *out, size_t taken)
{
    size_t a = kept, b = taken, w = kept + taken;
    while (b > 0)
        e[--w] = a > 0 && e[a - 1].rowid > out[b - 1].rowid ? e[--a] : out[--b];
}

static size_t take_out_of_order(uo_index_entry *e, size_t n, uo_index_entry *out, size_t max)
{
    size_t kept = 0, taken = 0, i;
    int64_t last = INT64_MIN;
    for (i = 0; i < n; i++) {
        int64_t k = e[i].key;
        if (k < last || is_spike(e, n, i, last)) {
            if (taken == max)
                break;
            out[taken++] = e[i];
        } else {
            e[kept++] = e[i];
            last = k;
        }
    }
    if (i == n)
        return taken;
    merge_back(e, kept, out, taken); /* too many: e[0..i) as it was */
    return max + 1;
}

/* The sorted entries s[0..taken) merged into e[0..kept) (in key order), in
 * place: e[0..kept + taken) in key order. From the end, the kept entries above
 * each taken one move up as a block (found by bisection), where comparing
 * each cost a pass of comparisons over all of them (another thread's early
 * ids taken out move nearly every entry). */
static void merge_in(uo_index_entry *e, size_t kept, const uo_index_entry *s, size_t taken)
{
    size_t i = kept, j = taken;
    while (j > 0) {
        const uo_index_entry *x = &s[j - 1];
        size_t lo = 0, hi = i; /* the first of e[0..i) above x */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (entry_cmp(&e[mid], x) > 0)
                hi = mid;
            else
                lo = mid + 1;
        }
        memmove(&e[lo + j], &e[lo], (i - lo) * sizeof *e);
        i = lo;
        e[i + --j] = *x;
    }
}

/* Sorts e[0..n) in place where few entries break the key order (n / 8 at
 * most): one pass takes them out, a counting pass before it cost the 2 M-entry
 * index of a 2 M-call run 5 ms more; the two sorted runs are then merged. 0,
 * or -1 with e unchanged where too many break it or there is no memory. */
static int merge_out_of_order(uo_index_entry *e, size_t n)
{
    /* Room for n / 8 of them and the radix sort's: only what they take is touched. */
    size_t max = n / 8;
    uo_index_entry *out = malloc((2 * max + 1) * sizeof *out);
    size_t taken = out != NULL ? take_out_of_order(e, n, out, max) : max + 1;
    if (taken > max) {
        free(out);
        return -1;
    }
    /* out[0..taken) is in row id order: the radix sort keeps equal keys so. */
    merge_in(e, n - taken, taken > 1 ? radix_sort(out, out + taken, taken) : out, taken);
    free(out);
    uo_pages_moved.index_merged++;
    return 0;
}

/* ---- the same, as the entries come (uo_index_tree.scan) ----
 *
 * The attach's pass over every entry (take_out_of_order) was 6.7 of the 9 ms
 * that sorting the 2 M-entry index of a 2 M-call run took after the program's
 * end, reading and writing 32 MB that had long left the cache. Judged as it
 * comes, an entry is in the cache, and one kept is not moved. */

/* ix's scan given up: its entries put back in row id order. */
static void stop_scan(uo_index_tree *ix)
{
    /* e[kept..n) came after every entry taken out. */
    memmove(&ix->e[ix->kept + ix->taken], &ix->e[ix->kept], (ix->n - ix->kept) * sizeof *ix->e);
    merge_back(ix->e, ix->kept, ix->out, ix->taken);
    ix->n += ix->taken;
    free_taken(ix);
    ix->kept = 0;
    ix->scan = -1;
}

/* Takes e[kept] out of ix's entries e[0..n). 0, or -1 where the scan was
 * given up: without the memory, or with one in eight of the entries taken
 * out (as merge_out_of_order), found where out must grow (the attach judges
 * the rest, and when finishing); out so holds a quarter of them at most,
 * counted in g_index_bytes. */
static int take_front(uo_index_tree *ix, int finishing)
{
    if (ix->taken == ix->outcap) {
        size_t all = ix->n + ix->taken, cap = ix->outcap ? 2 * ix->outcap : 256;
        uo_index_entry *out = !finishing && ix->taken >= all / 8
                                  ? NULL
                                  : realloc(ix->out, cap * sizeof *out);
        if (out == NULL) {
            stop_scan(ix);
            return -1;
        }
        atomic_fetch_add_explicit(&g_index_bytes, (cap - ix->outcap) * sizeof *out,
                                  memory_order_relaxed);
        ix->out = out;
        ix->outcap = cap;
    }
    uo_index_entry *e = ix->e;
    size_t k = ix->kept;
    ix->out[ix->taken++] = e[k];
    memmove(&e[k], &e[k + 1], (ix->n - k - 1) * sizeof *e); /* (those that wait: a few) */
    ix->n--;
    return 0;
}

/* Judges ix's entries that wait while more than after of them do: each is
 * kept, or taken out as take_out_of_order would (is_spike). 0, or -1 where
 * the scan was given up. */
static int judge(uo_index_tree *ix, size_t after, int finishing)
{
    if (ix->scan == 0) {
        /* The first entry below an earlier key is the last one, or among the
         * last UO_INDEX_LOOKAHEAD + 1 (the scan starts once they have come):
         * those judged by entries before it are kept. */
        ix->scan = 1;
        size_t n = ix->n;
        ix->kept = n > UO_INDEX_LOOKAHEAD + 1 ? n - 1 - UO_INDEX_LOOKAHEAD : 0;
        ix->last = ix->kept > 0 ? ix->e[ix->kept - 1].key : INT64_MIN;
    }
    while (ix->n - ix->kept > after) {
        const uo_index_entry *e = ix->e;
        size_t k = ix->kept;
        if (e[k].key < ix->last || is_spike(e, ix->n, k, ix->last)) {
            if (take_front(ix, finishing) != 0)
                return -1;
        } else {
            ix->last = e[k].key;
            ix->kept++;
        }
    }
    return 0;
}

void uo_index_scan(uo_index_tree *ix)
{
    if (ix->scan >= 0) /* (given up: the attach sorts them all) */
        (void)judge(ix, UO_INDEX_LOOKAHEAD, 0);
}

/* Ends ix's scan: the entries that wait judged, those taken out sorted and
 * merged into the rest. 1 where its entries are then in key order, else 0
 * (in row id order: too many were taken out, or there was no memory). */
static int finish_scan(uo_index_tree *ix)
{
    if (ix->scan != 1 || judge(ix, 0, 1) != 0)
        return 0;
    size_t taken = ix->taken, all = ix->n + taken;
    uo_index_entry *tmp = taken > 1 && taken <= all / 8 ? malloc(taken * sizeof *tmp) : NULL;
    if (taken > all / 8 || (taken > 1 && tmp == NULL)) {
        free(tmp);
        stop_scan(ix);
        return 0;
    }
    /* out[0..taken) is in row id order: the radix sort keeps equal keys so. */
    merge_in(ix->e, ix->kept, taken > 1 ? radix_sort(ix->out, tmp, taken) : ix->out, taken);
    free(tmp);
    free_taken(ix);
    ix->n = all;
    ix->kept = 0;
    uo_pages_moved.index_merged++;
    return 1;
}

/* Sorts ix's entries e[0..n) (n >= 2, in row id order; below of them below
 * an earlier key, their keys from least to top, uo_index_add) by key then row
 * id: by merging the few out of order
 * into the rest; where the keys lie within a span of twice their number
 * and none repeats, by placing each at its key; else through *tmp (n
 * entries, made here: the caller frees it with uo_big_array_free), by
 * counting them within such a span or by a radix sort; without the memory,
 * by qsort (scanned: the scan as they came found too many out of order to
 * merge, finish_scan). Returns the array that holds the result: e or *tmp.
 *
 * Where many came below an earlier key (over n / 64), placing them is tried
 * first: several threads' calls, their chunks interleaved, break the order
 * for far more than n / 8 of them, and the merge's pass that finds so, then
 * puts them back, was 9 ms of a 2 M-entry index of 8 threads' calls. A few
 * late calls, or one thread's early calls after another's, are merged first
 * (placing takes a table of the span, memory to fault in). */
static uo_index_entry *sort_entries(const uo_index_tree *ix, int scanned, uo_index_entry **tmp)
{
    uo_index_entry *e = ix->e;
    size_t n = ix->n, below = ix->below;
    int many = below > n / 64;
    if (!scanned && !many && merge_out_of_order(e, n) == 0)
        return e;
    int64_t lo = ix->least;
    uint64_t span;
    int narrow = narrow_keys(n, lo, ix->top, &span);
    if (narrow && place_unique(e, n, lo, span) == 0)
        return e;
    /* Many below, yet few out of order (a key far above the rest, then the
     * others below it): merged where the keys are not narrow, or where so few
     * came below that merging may do; else counted. */
    if (!scanned && many && (!narrow || below <= n / 8) && merge_out_of_order(e, n) == 0)
        return e;
    *tmp = uo_big_array_resize(NULL, 0, n * sizeof **tmp);
    if (*tmp != NULL) {
        uo_index_entry *counted = narrow ? count_sort(e, *tmp, n, lo, span) : NULL;
        return counted != NULL ? counted : radix_sort(e, *tmp, n);
    }
    qsort(e, n, sizeof *e, entry_cmp);
    return e;
}

/* ---- the pages ---- */

/* The payload of entry x: its record (key, row id). */
static uint32_t entry_payload(const uo_index_entry *x)
{
    int kb, rb;
    sqlf_int_type(x->key, &kb);
    sqlf_int_type(x->rowid, &rb);
    return 3 + (uint32_t)kb + (uint32_t)rb; /* header: its size, two serial types */
}

/* Writes x's payload size and record at p (its key's and row id's serial types
 * kt, rt and sizes kb, rb); returns the end. */
static uint8_t *put_entry_typed(uint8_t *p, const uo_index_entry *x, int kt, int kb, int rt, int rb)
{
    *p++ = (uint8_t)(3 + kb + rb);
    *p++ = 3;
    *p++ = (uint8_t)kt;
    *p++ = (uint8_t)rt;
    p = sqlf_put_int(p, x->key, kb);
    return sqlf_put_int(p, x->rowid, rb);
}

/* Writes x's payload size and record at p; returns the end. */
static uint8_t *put_entry(uint8_t *p, const uo_index_entry *x)
{
    int kb, rb;
    int kt = sqlf_int_type(x->key, &kb), rt = sqlf_int_type(x->rowid, &rb);
    return put_entry_typed(p, x, kt, kb, rt, rb);
}

/* A level of the tree being built: its pages, and between two neighbours the
 * entry that separates them. */
typedef struct level {
    uint32_t *page;
    uo_index_entry *sep;
    size_t n; /* pages; n - 1 separators */
} level;

/* The entries in key order that the leaves are written from: e[0..n), or
 * the runs run[0..runs), run r's entries the first[r]-th on. */
typedef struct sorted_entries {
    const uo_index_entry *e;
    const uo_index_run *run;
    const size_t *first;
    size_t runs, n;
} sorted_entries;

/* Reads a part of the sorted entries, up to end, in order: from e itself,
 * or from runs through buf, where a window of them is written out
 * (entries base..base + len, cap at most). */
typedef struct entry_reader {
    const sorted_entries *src;
    size_t end, ahead;
    uo_index_entry *buf;
    size_t cap, base, len;
    size_t run; /* the run that holds entry base */
} entry_reader;

/* Sets r up to read src up to end, for leaves of page_size bytes. 0, or -1
 * (out of memory). */
static int reader_init(entry_reader *r, const sorted_entries *src, size_t end, uint32_t page_size)
{
    /* A leaf holds (page_size - its header) / 6 entries at most (a record of
     * 4 bytes and its place): packing one reads one more, and where the
     * window stops short of end, the one after (pack_leaf's "j + 1 == n"
     * must not hold at its end). Four times that: each refill reads the
     * entries after a leaf at most once more. */
    *r = (entry_reader){.src = src, .end = end};
    r->ahead = (page_size - SQLF_LEAF_HEADER) / 6 + 2;
    r->cap = 4 * r->ahead;
    if (src->e != NULL)
        return 0;
    r->buf = malloc(r->cap * sizeof *r->buf);
    return r->buf != NULL ? 0 : -1;
}

/* The i-th of the sorted entries. */
static uo_index_entry entry_at(const sorted_entries *s, size_t i)
{
    if (s->e != NULL)
        return s->e[i];
    size_t lo = 0, hi = s->runs; /* the last run whose first entry is at or before i */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->first[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    int64_t at = (int64_t)(i - s->first[lo]);
    return (uo_index_entry){s->run[lo].key + at, s->run[lo].rowid + at};
}

/* The entries from the i-th on (i at or after the one read before, below
 * end): q[0..*avail), all those to end or r->ahead of them at least. */
static const uo_index_entry *read_entries(entry_reader *r, size_t i, size_t *avail)
{
    const sorted_entries *s = r->src;
    if (s->e != NULL) {
        *avail = r->end - i;
        return s->e + i;
    }
    if (i + r->ahead > r->base + r->len && r->base + r->len < r->end) {
        while (s->first[r->run + 1] <= i)
            r->run++;
        size_t len = r->end - i < r->cap ? r->end - i : r->cap;
        size_t at = i - s->first[r->run];
        uo_index_entry *w = r->buf;
        for (size_t run = r->run; w < r->buf + len; run++, at = 0) {
            const uo_index_run *x = &s->run[run];
            size_t in = (size_t)x->n - at, room = len - (size_t)(w - r->buf);
            int64_t key = x->key + (int64_t)at, rowid = x->rowid + (int64_t)at;
            for (size_t k = 0; k < (in < room ? in : room); k++)
                *w++ = (uo_index_entry){key + (int64_t)k, rowid + (int64_t)k};
        }
        r->base = i;
        r->len = len;
    }
    *avail = r->base + r->len - i;
    return r->buf + (i - r->base);
}

static int level_alloc(level *l, size_t max, sqlf_out *out)
{
    l->page = malloc(max * sizeof *l->page);
    l->sep = malloc(max * sizeof *l->sep);
    l->n = 0;
    if (l->page == NULL || l->sep == NULL) {
        snprintf(out->error, out->errlen, "out of memory");
        return -1;
    }
    return 0;
}

static void level_free(level *l)
{
    free(l->page);
    free(l->sep);
}

/* Packs the leaf that starts at e[i] (i < n) into p, or only sizes it where p
 * is NULL: its entries are e[i..*end), and e[*end], if *end < n, separates it
 * from the next leaf. Each entry is written as it is found to fit (its serial
 * types found once: an index of millions of entries is written after the
 * program's end). */
static inline void pack_leaf(uint8_t *p, uint32_t page_size, const uo_index_entry *e, size_t i,
                             size_t n, size_t *end, unsigned long *moved)
{
    uint32_t content = page_size, room = page_size - SQLF_LEAF_HEADER, last = 0;
    size_t j = i;
    while (j < n) {
        int kb, rb;
        prefetch_ahead(e, j, n);
        int kt = sqlf_int_type(e[j].key, &kb), rt = sqlf_int_type(e[j].rowid, &rb);
        uint32_t record = 1 + 3 + (uint32_t)kb + (uint32_t)rb; /* with its size's byte */
        if (record + 2 > room)
            break;
        room -= record + 2;
        content -= record;
        if (p != NULL) {
            put_entry_typed(p + content, &e[j], kt, kb, rt, rb);
            sqlf_put_be16(p + SQLF_LEAF_HEADER + 2 * (j - i), content);
        }
        last = record;
        j++;
    }
    if (j + 1 == n) { /* the separator e[j] would leave the next leaf empty */
        j--;
        content += last; /* e[j] (the last written) goes up instead */
        (*moved)++;
    }
    if (p != NULL)
        sqlf_page_header(p, SQLF_LEAF_INDEX, (uint32_t)(j - i), content);
    *end = j;
}

/* Packs the leaves of the entries from the i-th to r's end into pages, one
 * after the other, or only counts them where p is NULL (fn(arg, pgno) for
 * each, or nothing where fn is NULL): *moved counts the last leaves given an
 * entry of the one before. 0, or what fn returned where it was not 0. */
static int pack_leaves(entry_reader *r, size_t i, uint8_t *p, uint32_t page_size,
                       int (*fn)(void *, size_t, size_t, const uo_index_entry *), void *arg,
                       unsigned long *moved)
{
    while (i < r->end) {
        size_t avail, j;
        const uo_index_entry *q = read_entries(r, i, &avail);
        pack_leaf(p, page_size, q, 0, avail, &j, moved);
        /* the leaf: entries i..i + j - 1; q[j] separates it from the next, if any */
        int rc = fn != NULL ? fn(arg, i, i + j, &q[j]) : 0;
        if (rc != 0)
            return rc;
        i += j + 1;
    }
    return 0;
}

/* write_leaves's state: where the pages go. */
typedef struct leaf_writer {
    sqlf_out *out;
    uint32_t root;
    size_t n;
    level *up;
} leaf_writer;

/* Writes the leaf packed into out->page, of the entries from..to - 1, sep after it (if to < n). */
static int put_leaf(void *arg, size_t from, size_t to, const uo_index_entry *sep)
{
    leaf_writer *w = arg;
    uint32_t pgno = w->root != 0 && from == 0 && to == w->n ? w->root : sqlf_new_page(w->out);
    if (sqlf_write_page(w->out, pgno, w->out->page) != 0)
        return -1;
    w->up->page[w->up->n] = pgno;
    w->up->sep[w->up->n] = to < w->n ? *sep : (uo_index_entry){0, 0};
    w->up->n++;
    return 0;
}

/* The leaves of the entries from the from-th to r's end: up's pages and
 * separators; *moved counts the last leaves given an entry of the one before.
 * A single leaf goes into root, unless root is 0 (a part of the leaves). */
static int write_leaves(sqlf_out *out, entry_reader *r, size_t from, uint32_t root, level *up,
                        unsigned long *moved)
{
    leaf_writer w = {out, root, r->end, up};
    return pack_leaves(r, from, out->page, out->page_size, put_leaf, &w, moved);
}

/* Takes the page of a leaf that another thread writes (the pages after this one's). */
static int skip_leaf(void *arg, size_t from, size_t to, const uo_index_entry *sep)
{
    (void)from, (void)to, (void)sep;
    (void)sqlf_new_page(arg); /* (past the lock page, as the other half's) */
    return 0;
}

/* write_leaves_split's work: this thread's half (0) and the other's (1). */
typedef struct leaves_split {
    entry_reader read[3]; /* the first part, the second (counted), the second (written) */
    size_t m, n;
    sqlf_out *out; /* half 0's: the database's */
    level *up;
    unsigned long *moved;
    sqlf_out second; /* half 1's: the database's, with a page and an error of its own */
    level second_up;
    unsigned long second_moved;
    int rc[2];
    char error[256];
} leaves_split;

static void leaves_half(void *arg, int half)
{
    leaves_split *s = arg;
    if (half) {
        s->rc[1] = write_leaves(&s->second, &s->read[2], s->m + 1, 0, &s->second_up,
                                &s->second_moved);
        return;
    }
    unsigned long counted = 0;
    (void)pack_leaves(&s->read[1], s->m + 1, NULL, s->out->page_size, skip_leaf, s->out,
                      &counted);
    s->rc[0] = write_leaves(s->out, &s->read[0], 0, 0, s->up, s->moved);
}

/* The leaves of e[0..n), written in two parts by two threads: the first
 * part's leaves (e[0..m)), e[m] the separator between the parts, the second
 * part's leaves (e[m + 1..n)); the first part's last leaf ends at e[m - 1],
 * where write_leaves alone would have packed on. A thread of its own writes
 * the second part into the pages that come next (this one does, after its
 * own, where no thread can be made), while this one counts them, then writes
 * the first part into the pages after them: the same pages in the same order
 * whatever the timing (m and the packing depend only on the entries), the
 * first part's after the second's in the file, in key order in the level
 * above. After a program's end the second CPU was idle while one thread wrote
 * the leaves of a 2 M-entry index. 1 where the entries are too few for two
 * parts or there is no memory for the second (nothing written: the caller
 * writes them alone), else 0 or -1 (out->error says why). */
static int write_leaves_split(sqlf_out *out, const sorted_entries *e, level *up,
                              unsigned long *moved)
{
    size_t n = e->n;
    /* Counting an entry costs a third of writing it (the 2 M-entry index of a
     * 2 M-call run: 1.8 against 5.8 ms a third of them, prefetch_ahead):
     * with two fifths of the entries, this thread's count of the other three
     * fifths and its writing end with the other thread's (10.2 to 10.8 ms,
     * against 11.5 to 12.1 with a third). */
    size_t m = 2 * n / 5;
    if (m == 0 || m + 1 >= n)
        return 1;
    leaves_split *s = malloc(sizeof *s);
    if (s == NULL)
        return 1;
    *s = (leaves_split){.m = m, .n = n, .out = out, .up = up, .moved = moved, .second = *out};
    int readers = 0;
    for (int k = 0; k < 3; k++)
        readers += reader_init(&s->read[k], e, k == 0 ? m : n, out->page_size) == 0;
    s->second.page = malloc(out->page_size);
    s->second.error = s->error;
    s->second.errlen = sizeof s->error;
    size_t max = (n - m) / 2 + 2; /* (as uo_index_attach's levels) */
    s->second_up.page = malloc(max * sizeof *s->second_up.page);
    s->second_up.sep = malloc(max * sizeof *s->second_up.sep);
    int rc = 1;
    if (readers == 3 && s->second_up.page != NULL && s->second_up.sep != NULL &&
        s->second.page != NULL) {
        both_halves(leaves_half, s, 1);
        rc = s->rc[0] != 0 ? -1 : 0;
        if (rc == 0) /* the first part's last leaf, and the separator between the parts */
            up->sep[up->n - 1] = entry_at(e, m);
        if (s->rc[1] != 0) { /* its error first: its pages come first in the file */
            snprintf(out->error, out->errlen, "%s", s->error);
            rc = -1;
        }
        memcpy(up->page + up->n, s->second_up.page, s->second_up.n * sizeof *up->page);
        memcpy(up->sep + up->n, s->second_up.sep, s->second_up.n * sizeof *up->sep);
        up->n += s->second_up.n;
        *moved += s->second_moved;
        uo_pages_moved.index_split++;
    }
    level_free(&s->second_up);
    for (int k = 0; k < 3; k++)
        free(s->read[k].buf);
    free(s->second.page);
    free(s);
    return rc;
}

/* The interior pages above below (two pages or more): up's. */
static int write_interior(sqlf_out *out, const level *below, uint32_t root, level *up)
{
    size_t last = below->n - 1;
    for (size_t c = 0; c <= last;) {
        size_t k = c;
        uint32_t room = out->page_size - SQLF_INTERIOR_HEADER;
        while (k < last) { /* the cell of page k and separator k, page k + 1 after it */
            uint32_t cell = 4 + 1 + entry_payload(&below->sep[k]) + 2;
            if (cell > room)
                break;
            room -= cell;
            k++;
        }
        if (k + 1 == last) { /* page last would be left alone */
            k--;
            uo_pages_moved.index_levels++;
        }
        /* Cells c..k-1, right-most child page k; separator k (if k < last) goes up. */
        uint8_t *p = out->page;
        uint32_t content = out->page_size;
        for (size_t x = c; x < k; x++) {
            const uo_index_entry *s = &below->sep[x];
            content -= 4 + 1 + entry_payload(s);
            sqlf_put_be32(p + content, below->page[x]);
            put_entry(p + content + 4, s);
            sqlf_put_be16(p + SQLF_INTERIOR_HEADER + 2 * (x - c), content);
        }
        sqlf_page_header(p, SQLF_INTERIOR_INDEX, (uint32_t)(k - c), content);
        sqlf_put_be32(p + 8, below->page[k]);
        uint32_t pgno = c == 0 && k == last ? root : sqlf_new_page(out);
        if (sqlf_write_page(out, pgno, p) != 0)
            return -1;
        up->page[up->n] = pgno;
        up->sep[up->n] = k < last ? below->sep[k] : (uo_index_entry){0, 0};
        up->n++;
        c = k + 1;
    }
    return 0;
}

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
    sorted_entries src = {.run = run, .first = first, .runs = ix->runs};
    uo_index_entry *tmp = NULL;
    if (ix->in_runs) {
        src.n = first[ix->runs];
        uo_pages_moved.index_runs++;
    } else {
        /* None below an earlier key: in key order, row ids rising. */
        int scanned = ix->scan == 1;
        int sorted = ix->below == 0 || finish_scan(ix);
        src.n = ix->n;
        src.e = sorted ? ix->e : sort_entries(ix, scanned, &tmp);
    }
    size_t n = src.n;
    level a = {0}, b = {0};
    /* Each leaf holds one entry at least, and takes one more as separator. */
    size_t max = n / 2 + 2;
    int rc = -1;
    unsigned long moved = 0;
    int leaves = -1;
    entry_reader r;
    if (level_alloc(&a, max, out) == 0 && level_alloc(&b, max, out) == 0) {
        leaves = n >= uo_index_split_entries ? write_leaves_split(out, &src, &a, &moved) : 1;
        if (leaves == 1 && reader_init(&r, &src, n, out->page_size) != 0)
            snprintf(out->error, out->errlen, "out of memory");
        else if (leaves == 1) {
            leaves = write_leaves(out, &r, 0, ix->root, &a, &moved);
            free(r.buf);
        }
        uo_pages_moved.index_leaves += moved;
    }
    if (leaves == 0) {
        level *below = &a, *up = &b;
        rc = 0;
        while (rc == 0 && below->n > 1) {
            up->n = 0;
            rc = write_interior(out, below, ix->root, up);
            level *swap = below;
            below = up;
            up = swap;
        }
    }
    level_free(&a);
    level_free(&b);
    uo_big_array_free(tmp, n * sizeof *tmp);
    free(run);
    free(first);
    drop_entries(ix);
    return rc;
}
