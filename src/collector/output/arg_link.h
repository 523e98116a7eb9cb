/* SPDX-License-Identifier: MIT */
/* Internal: the arguments of an API call linked to its row as they are
 * written (db.c), so that arg.api_id is inserted with the row instead of
 * filled in afterwards.
 *
 * An UPDATE of every arg row at the close rewrote each row and its index
 * entry: 90% of a conversion of clSetKernelArg calls with their arguments
 * (callgrind: 3.1 G of 3.4 G instructions for 20,000 calls, 88,000 arguments).
 *
 * The api rows of a new database get ids 1, 2, ... in the order they are
 * added, so the writer knows a call's id when it adds the row. A call's
 * arguments come just before its row (the SDK runs the EXIT callbacks that
 * write them, then writes the record) or, from other writers, just after it:
 *   - calls: the ids of the last UO_ARG_LINK_CALLS calls, by correlation id
 *     (direct-mapped: a newer call takes an older one's place);
 *   - waiting: arguments whose call has not been seen yet, written with it.
 * An argument whose call is not among the recent ones and never comes is
 * written with api_id 0 when too many wait, and at the close; the close then
 * joins those few by correlation id, as it did for every argument before.
 */
#ifndef UPTI_OUTPUT_ARG_LINK_H
#define UPTI_OUTPUT_ARG_LINK_H

#include <stddef.h>
#include <stdint.h>

/** Recent calls remembered (a power of two). */
#define UO_ARG_LINK_CALLS 4096u
/** Slots of the table of recent calls zeroed at a time (4 KiB): a slot is
 * zeroed with its chunk when a call first lands there. */
#define UO_ARG_LINK_CHUNK 256u
/** Arguments that may wait for their call before the oldest are written unlinked. */
#define UO_ARG_LINK_WAITING 4096u

typedef struct uo_waiting_arg {
    uint64_t correlation_id;
    uint32_t position;
    int64_t type_id, name_id;
    const char *value; /* as written: NULL, or the text (while it waits: see value_at) */
    size_t value_at;   /* while it waits: offset + 1 of its copy in uo_arg_link.text, 0: NULL */
} uo_waiting_arg;

typedef struct uo_arg_link {
    int64_t calls_added; /* api rows added: the id of the last one */
    struct uo_arg_link_call {
        uint64_t correlation_id;
        int64_t api_id; /* 0: empty */
    } *calls;            /* UO_ARG_LINK_CALLS slots, or NULL (none yet, or no memory) */
    uint32_t calls_zeroed; /* bit c: the chunk of slots c * UO_ARG_LINK_CHUNK on is zeroed */
    uo_waiting_arg *waiting;
    size_t num_waiting, cap_waiting;
    /* The copies of the waiting values, one after the other: emptied when
     * none waits, compacted when those written leave too much behind (a
     * malloc and a free per argument cost 3.8% of a --args conversion). */
    char *text;
    size_t text_len, text_cap;
    size_t text_live; /* the bytes of those still waiting */
} uo_arg_link;

/* A call's slot. Correlation ids come in blocks of 1,024 that each thread
 * takes in turn (src/program/sdk/internal.h): the ids of a block keep
 * neighbouring slots, from an offset hashed from the block's number. So a
 * short process's calls touch a few pages of the table, not every one of
 * them as a hash of each id did (page faults are dear on a virtual machine),
 * and threads calling in step do not meet at the same slots, as they would
 * with the id's low bits alone (blocks 4,096 ids apart). */
static inline size_t uo_arg_link_slot(uint64_t correlation_id)
{
    uint64_t block = correlation_id >> 10;
    return (size_t)(correlation_id + ((block * 0x9e3779b97f4a7c15ull) >> 32)) &
           (UO_ARG_LINK_CALLS - 1);
}

/* The bit of calls_zeroed for slot i's chunk. */
static inline uint32_t uo_arg_link_chunk_bit(size_t i) { return 1u << (i / UO_ARG_LINK_CHUNK); }

/** uo_arg_link_add_call where slot i's chunk is not yet zeroed (or there is no table). */
int64_t uo_arg_link_add_call_first(uo_arg_link *l, uint64_t correlation_id, size_t i);

/** A call's row is added: returns its api id (and remembers it). */
static inline int64_t uo_arg_link_add_call(uo_arg_link *l, uint64_t correlation_id)
{
    size_t i = uo_arg_link_slot(correlation_id);
    if (!(l->calls_zeroed & uo_arg_link_chunk_bit(i)))
        return uo_arg_link_add_call_first(l, correlation_id, i);
    l->calls_added++;
    l->calls[i] = (struct uo_arg_link_call){correlation_id, l->calls_added};
    return l->calls_added;
}

/** The api id of a recent call with this correlation id, or 0. */
int64_t uo_arg_link_find_call(const uo_arg_link *l, uint64_t correlation_id);

/**
 * Keeps an argument until its call comes (value copied). Returns 0, 1 when
 * UO_ARG_LINK_WAITING wait (write them unlinked: uo_arg_link_release with
 * all), or -1 on ENOMEM.
 */
int uo_arg_link_wait(uo_arg_link *l, uint64_t correlation_id, uint32_t position, int64_t type_id,
                     int64_t name_id, const char *value);

/** Writes one argument with its call's api id (0: unlinked). 0, or -1 on failure. */
typedef int (*uo_arg_write_fn)(void *ctx, const uo_waiting_arg *arg, int64_t api_id);

/**
 * Writes the arguments waiting for correlation_id (every one when all is
 * set) through write, in the order they came, with api_id, and forgets them.
 * Returns 0, or -1 when write failed.
 */
int uo_arg_link_release(uo_arg_link *l, uint64_t correlation_id, int all, int64_t api_id,
                        uo_arg_write_fn write, void *ctx);

/** Frees what waits and empties l. */
void uo_arg_link_free(uo_arg_link *l);

#endif
