/* SPDX-License-Identifier: MIT */
/* The b-tree pages of an index, written from its sorted entries (index_internal.h). */
#include "index_internal.h"

#include "table_pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Reads a part of the sorted entries, up to end, in order: from e itself,
 * or from the runs (run: the one that holds the entry read last). */
typedef struct entry_reader {
    const uo_sorted_entries *src;
    size_t end;
    size_t run;
} entry_reader;

static void reader_init(entry_reader *r, const uo_sorted_entries *src, size_t end)
{
    *r = (entry_reader){.src = src, .end = end};
}

/* The i-th of the sorted entries. */
static uo_index_entry entry_at(const uo_sorted_entries *s, size_t i)
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

/* How many integers from v on (v, v + 1, ...) have v's serial type (at least 1). */
static uint64_t same_type_from(int64_t v)
{
    int bytes;
    sqlf_int_type(v, &bytes);
    if (bytes == 0) /* 0 and 1: a type each */
        return 1;
    /* The greatest of the type: 2^(8 bytes - 1) - 1 up from 0; below it, the
     * value under the least of the next smaller size (-1 for one byte). */
    static const int smaller[9] = {0, 0, 1, 2, 3, 0, 4, 0, 6};
    uint64_t top = v >= 0                 ? ((uint64_t)1 << (8 * bytes - 1)) - 1
                   : smaller[bytes] == 0 ? (uint64_t)-1
                                          : -((uint64_t)1 << (8 * smaller[bytes] - 1)) - 1;
    return top - (uint64_t)v + 1;
}

/* Room for the pages of a level of n entries' leaves (the levels above have
 * fewer: each interior page has two children at least). A leaf holds at
 * least as many entries as records of 20 bytes and their places fit in it
 * (a key and a row id of 8 bytes each), and takes one more as separator;
 * the last leaf of n may have fewer, and so may the last of a split's first
 * part. Not n / 2: entries kept as runs are not bounded by their budget, and
 * 2 G entries would have asked for 20 GB, where the leaves take 1 MB. */
static size_t level_room(size_t n, uint32_t page_size)
{
    size_t per_leaf = (page_size - SQLF_LEAF_HEADER) / (20 + 2);
    return n / per_leaf + 3;
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

/* The end of a leaf packed with entries i..j - 1 of those before end, content
 * its cells' start: where the separator, the j-th, would leave the next leaf
 * empty (j + 1 == end), the last entry written (last bytes) goes up instead
 * (*moved counts it). Writes the page's header where p is not NULL; returns
 * the leaf's end, its separator's place. */
static inline size_t close_leaf(uint8_t *p, size_t i, size_t j, size_t end, uint32_t content,
                                uint32_t last, unsigned long *moved)
{
    if (j + 1 == end) {
        j--;
        content += last;
        (*moved)++;
    }
    if (p != NULL)
        sqlf_page_header(p, SQLF_LEAF_INDEX, (uint32_t)(j - i), content);
    return j;
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
    *end = close_leaf(p, i, j, n, content, last, moved);
}

/* Packs the leaf of the runs' entries that starts at the i-th (i < r->end)
 * into p, or only sizes it where p is NULL, as pack_leaf does: returns the
 * entry that separates it from the next leaf (r->end: none). The runs are
 * taken a stretch at a time, entries whose keys and row ids keep their
 * serial types: their records have one size, and how many fit is a
 * division, so that sizing a leaf costs a few steps, not one per entry. */
static size_t pack_run_leaf(entry_reader *r, size_t i, uint8_t *p, uint32_t page_size,
                            unsigned long *moved)
{
    const uo_sorted_entries *s = r->src;
    uint32_t content = page_size, room = page_size - SQLF_LEAF_HEADER, last = 0;
    size_t j = i;
    while (j < r->end) {
        while (s->first[r->run + 1] <= j)
            r->run++;
        const uo_index_run *x = &s->run[r->run];
        uint64_t at = j - s->first[r->run], len = (uint64_t)x->n - at;
        int64_t key = x->key + (int64_t)at, rowid = x->rowid + (int64_t)at;
        int kb, rb;
        int kt = sqlf_int_type(key, &kb), rt = sqlf_int_type(rowid, &rb);
        uint32_t record = 1 + 3 + (uint32_t)kb + (uint32_t)rb; /* with its size's byte */
        uint64_t k_same = same_type_from(key), r_same = same_type_from(rowid);
        len = len < k_same ? len : k_same;
        len = len < r_same ? len : r_same;
        len = len < r->end - j ? len : r->end - j;
        uint64_t fit = room / (record + 2);
        if (fit > len)
            fit = len;
        if (p != NULL) {
            for (uint64_t k = 0; k < fit; k++) {
                uint32_t cell = content - record * (uint32_t)(k + 1);
                uo_index_entry x = {key + (int64_t)k, rowid + (int64_t)k};
                put_entry_typed(p + cell, &x, kt, kb, rt, rb);
                sqlf_put_be16(p + SQLF_LEAF_HEADER + 2 * (j - i + k), cell);
            }
        }
        content -= record * (uint32_t)fit;
        room -= (record + 2) * (uint32_t)fit;
        j += fit;
        if (fit > 0)
            last = record;
        if (fit < len)
            break; /* the next one does not fit */
    }
    return close_leaf(p, i, j, r->end, content, last, moved);
}

/* Packs the leaves of the entries from the i-th to r's end into pages, one
 * after the other, or only sizes them where p is NULL (fn(arg, from, to,
 * sep) for each: its entries from..to - 1, sep after it if to < r->end; or
 * nothing where fn is NULL): *moved counts the last leaves given an entry of
 * the one before. 0, or what fn returned where it was not 0. */
static int pack_leaves(entry_reader *r, size_t i, uint8_t *p, uint32_t page_size,
                       int (*fn)(void *, size_t, size_t, const uo_index_entry *), void *arg,
                       unsigned long *moved)
{
    const uo_sorted_entries *s = r->src;
    while (i < r->end) {
        size_t j;
        if (s->e != NULL) {
            pack_leaf(p, page_size, s->e, i, r->end, &j, moved);
        } else {
            j = pack_run_leaf(r, i, p, page_size, moved);
        }
        uo_index_entry sep = j < r->end ? entry_at(s, j) : (uo_index_entry){0, 0};
        int rc = fn != NULL ? fn(arg, i, j, &sep) : 0;
        if (rc != 0)
            return rc;
        i = j + 1;
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
static int write_leaves_split(sqlf_out *out, const uo_sorted_entries *e, level *up,
                              unsigned long *moved)
{
    size_t n = e->n;
    /* Counting an entry costs a third of writing it (the 2 M-entry index of a
     * 2 M-call run: 1.8 against 5.8 ms a third of them, prefetch_ahead):
     * with two fifths of the entries, this thread's count of the other three
     * fifths and its writing end with the other thread's (10.2 to 10.8 ms,
     * against 11.5 to 12.1 with a third). Sizing leaves of runs costs a few
     * steps a leaf (pack_run_leaf): half each. */
    size_t m = e->e != NULL ? 2 * n / 5 : n / 2;
    if (m == 0 || m + 1 >= n)
        return 1;
    leaves_split *s = malloc(sizeof *s);
    if (s == NULL)
        return 1;
    *s = (leaves_split){.m = m, .n = n, .out = out, .up = up, .moved = moved, .second = *out};
    for (int k = 0; k < 3; k++)
        reader_init(&s->read[k], e, k == 0 ? m : n);
    s->second.page = malloc(out->page_size);
    s->second.error = s->error;
    s->second.errlen = sizeof s->error;
    size_t max = level_room(n - m, out->page_size);
    s->second_up.page = malloc(max * sizeof *s->second_up.page);
    s->second_up.sep = malloc(max * sizeof *s->second_up.sep);
    int rc = 1;
    if (s->second_up.page != NULL && s->second_up.sep != NULL && s->second.page != NULL) {
        uo_index_both_halves(leaves_half, s, 1);
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

int uo_index_write_tree(const uo_sorted_entries *src, uint32_t root, sqlf_out *out)
{
    size_t n = src->n;
    level a = {0}, b = {0};
    size_t max = level_room(n, out->page_size);
    int rc = -1;
    unsigned long moved = 0;
    int leaves = -1;
    entry_reader r;
    if (level_alloc(&a, max, out) == 0 && level_alloc(&b, max, out) == 0) {
        leaves = n >= uo_index_split_entries ? write_leaves_split(out, src, &a, &moved) : 1;
        if (leaves == 1) {
            reader_init(&r, src, n);
            leaves = write_leaves(out, &r, 0, root, &a, &moved);
        }
        uo_pages_moved.index_leaves += moved;
    }
    if (leaves == 0) {
        level *below = &a, *up = &b;
        rc = 0;
        while (rc == 0 && below->n > 1) {
            up->n = 0;
            rc = write_interior(out, below, root, up);
            level *swap = below;
            below = up;
            up = swap;
        }
    }
    level_free(&a);
    level_free(&b);
    return rc;
}
