/* SPDX-License-Identifier: MIT */
/* An index's entries sorted by key, then row id (index_internal.h): as they
 * come (the few that break the key order) and at the attach. */
#include "index_internal.h"

#include "big_array.h"
#include "table_pages.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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
void uo_index_both_halves(void (*fn)(void *, int), void *arg, int split)
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
    uo_index_both_halves(place_half, &p, p.split);
    int unique = !p.repeat[0] && !p.repeat[1];
    if (unique && p.split) {
        uo_index_both_halves(count_half, &p, 1);
        unique = p.count[0] + p.count[1] == n;
    }
    if (unique)
        uo_index_both_halves(read_back_half, &p, p.split);
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
    return uo_index_order(x->key, x->rowid, y->key, y->rowid);
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
    uo_index_free_taken(ix);
    ix->kept = 0;
    ix->scan = -1;
}

/* Takes e[kept] out of ix's entries e[0..n). 0, or -1 where the scan was
 * given up: without the memory, or with one in eight of the entries taken
 * out (as merge_out_of_order), found where out must grow (the attach judges
 * the rest, and when finishing); out so holds a quarter of them at most,
 * counted in uo_index_bytes. */
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
        atomic_fetch_add_explicit(&uo_index_bytes, (cap - ix->outcap) * sizeof *out,
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
int uo_index_finish_scan(uo_index_tree *ix)
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
    uo_index_free_taken(ix);
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
 * merge, uo_index_finish_scan). Returns the array that holds the result: e or *tmp.
 *
 * Where many came below an earlier key (over n / 64), placing them is tried
 * first: several threads' calls, their chunks interleaved, break the order
 * for far more than n / 8 of them, and the merge's pass that finds so, then
 * puts them back, was 9 ms of a 2 M-entry index of 8 threads' calls. A few
 * late calls, or one thread's early calls after another's, are merged first
 * (placing takes a table of the span, memory to fault in). */
uo_index_entry *uo_index_sort_entries(const uo_index_tree *ix, int scanned, uo_index_entry **tmp)
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
