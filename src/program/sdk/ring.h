/* SPDX-License-Identifier: MIT */
/* Internal: the producer side of buffers, inline (the consumer is in buffer.c).
 *
 * A producer reserves space for a record in its own ring, writes it, and
 * commits it with a release store of its head. The fast path takes no lock
 * and makes no call; the slow path (first record of a thread, ring full,
 * wrap-around) is upti_buffer_reserve_slow().
 */
#ifndef UPTI_SDK_RING_H
#define UPTI_SDK_RING_H

#include "internal.h"

#include <upti/ring.h>

typedef struct upti_ring_record_t {
    uint32_t len;  /* bytes of this record in the ring, header included, multiple of 8 */
    uint32_t kind; /* upti_tracing_kind_t (a full record), UPTI_RING_COMPACT_MARKER,
                      UPTI_RING_COMPACT_MARK, UPTI_RING_COMPACT_API, UPTI_RING_TOOL_RECORD,
                      UPTI_RING_AGENT_RECORD, or 0 = padding */
} upti_ring_record_t;

/* Fields are grouped by who writes them, one cache line each, so the
 * producer's per-record writes never share a line with what the consumer reads. */
struct upti_producer {
    /* Read-only after creation. */
    uint8_t *data;
    size_t size;
    struct upti_buffer *buffer;
    upti_thread_id_t tid;
    /* A shared ring's: the bytes from the data's start that have storage (the slot's, kept
     * by its later owners; only grows; limit never passes it). */
    size_t reserved;
    /* Producer only, written per record. */
    _Alignas(UPTI_CACHELINE) size_t local_head; /* where the pending record starts */
    size_t pending_head;                        /* head after it, published at commit */
    size_t cached_tail;
    /* Where the fast path stops writing (a position in the ring, at most size): size in an
     * in-process ring; in a shared one, the end of the part in use (upti_buffer_reserve_slow:
     * the producer goes back to the ring's start there when the collector took everything,
     * so that a large ring costs the pages it needs, not its size). */
    size_t limit;
    /* Pending bytes (by cached_tail) from which a commit checks on its consumer
     * (upti_buffer_commit_check): the buffer's watermark, or further while it catches up. */
    size_t watermark;
    /* Producer, written rarely; read by the consumer. */
    _Alignas(UPTI_CACHELINE) _Atomic uint64_t dropped;
    _Atomic bool orphaned; /* the thread exited: free once drained */
    _Atomic bool starving; /* a lossless producer waits for space */
    /* Published by the producer. */
    _Alignas(UPTI_CACHELINE) _Atomic size_t head;
    /* Consumer side. */
    _Alignas(UPTI_CACHELINE) _Atomic size_t tail;
    uint64_t drops_reported;
    _Atomic uint32_t space; /* futex word bumped when space is freed for a starving producer */
    struct upti_producer *next; /* in the buffer's list, under its lock */
};

struct callback_thread;

/** Ring kind of a compact marker record (upti_ring_compact_marker_t, <upti/ring.h>),
 *  expanded to the public struct at delivery (compact_records.h). */
#define UPTI_RING_COMPACT_MARKER 0x100u

/** Ring kind of a compact API record (upti_ring_compact_api_t, <upti/ring.h>: the
 *  shared format's, in-process rings the same), expanded at delivery. Written by the
 *  inline case of upti_runtime_call_exit (tracing.c) for the calls it holds. */
#define UPTI_RING_COMPACT_API 0x101u
/** Ring kind of a compact mark (upti_ring_compact_mark_t, <upti/ring.h>: a marker call
 *  without an external correlation id, in the buffers that take compact API records),
 *  expanded at delivery. */
#define UPTI_RING_COMPACT_MARK 0x102u
_Static_assert(UPTI_RING_COMPACT_API == UPTI_RING_KIND_COMPACT_API &&
                   UPTI_RING_COMPACT_MARKER == UPTI_RING_KIND_COMPACT_MARKER &&
                   UPTI_RING_COMPACT_MARK == UPTI_RING_KIND_COMPACT_MARK,
               "compact kinds: the shared format's values");

/** Ring kind of a tool's own record (upti_write_buffer_record; tool_record.c). The same
 *  value as the shared format's UPTI_RING_KIND_TOOL. In a shared buffer the body is
 *  upti_ring_tool_t, then the data; in an in-process one it is
 *  upti_inproc_tool_record_t, whose second half is what the callback gets. */
#define UPTI_RING_TOOL_RECORD 0x202u
/** Ring kind of an agent (shared buffers only): UPTI_RING_KIND_AGENT. */
#define UPTI_RING_AGENT_RECORD 0x201u

/** An in-process tool record's body: the tool's kind, then the delivered payload
 *  (upti_tool_record_t: size, reserved, then the data at offset 16, 8-byte aligned). */
typedef struct upti_inproc_tool_record_t {
    uint32_t kind;
    uint32_t reserved0;
    uint32_t size;     /* upti_tool_record_t.size */
    uint32_t reserved; /* upti_tool_record_t.reserved */
} upti_inproc_tool_record_t;

struct upti_buffer {
    uint32_t index;
    int tool;
    upti_context_id_t context;
    size_t size;
    size_t watermark;
    upti_buffer_policy_t policy;
    upti_buffer_tracing_cb_t callback;
    void *callback_data;
    _Atomic bool destroyed;
    /* It takes UPTI_RING_COMPACT_API records, which the inline case of
     * upti_runtime_call_exit writes (one_api_record, context.c), and UPTI_RING_COMPACT_MARK
     * records (marker_tracing.c): every in-process buffer; a shared one whose files are of
     * version 2 (shared_buffer.c). */
    bool compact_api;
    struct callback_thread *_Atomic thread;
    /* The consumer's: guards the producer list, serializes delivery. Taken under
     * g_buffers_lock (fork), and held while the callback runs: a callback may take
     * the contexts' lock under it (lock order: internal.h). */
    pthread_mutex_t lock;
    struct upti_producer *producers;
    /* New producers push themselves here without a lock; the consumer adopts them. */
    struct upti_producer *_Atomic incoming;
    _Atomic uint64_t flush_interval; /* ns; 0: none (upti_set_buffer_flush_interval) */
    uint64_t next_periodic;          /* the callback thread's: when the interval is next due */
    /* A shared buffer (shared_buffer.c): its producers live in a ring file that a
     * collector in another process drains; no callback thread delivers it. */
    struct upti_shared_ring *shared;
};

void *upti_buffer_reserve_slow(struct upti_buffer *b, upti_thread_state_t *s, uint32_t kind,
                               size_t len);
void upti_buffer_wake(struct upti_buffer *b);
/** The end of a commit that left head at or above p->watermark by p's cached tail: reads
 *  the tail again and, still at b's watermark or above, wakes b's consumer
 *  (upti_buffer_wake) and moves p->watermark 4 KiB (or b's watermark / 8) past what is
 *  pending: the next check comes that much further on, not at every record while the
 *  consumer catches up (each reads lines the consumer writes, and costs a call). */
void upti_buffer_commit_check(struct upti_buffer *b, struct upti_producer *p, size_t head);
/** What every buffer creation checks first: not from a subscriber callback, inside a
 *  tool's initialize (else CONFIGURATION_LOCKED), a valid context (else CONTEXT_NOT_FOUND). */
upti_status_t upti_buffer_may_create(upti_context_id_t context_id);
/** Registers a created buffer (starting its callback thread unless it is shared). */
upti_status_t upti_buffer_register(struct upti_buffer *b, upti_buffer_id_t *buffer_id);

/* ---- shared buffers (shared_buffer.c) ---- */
/** Claims a slot of b's ring file for the thread of s; NULL (counted) if none. */
struct upti_producer *upti_shared_producer_create(struct upti_buffer *b, upti_thread_state_t *s);
/** Wakes b's collector if it sleeps on the doorbell of b's ring file (upti/ring.h). */
void upti_shared_ring_doorbell(struct upti_buffer *b);
/** A shared ring's record of len bytes at pos would end past p->limit: true to go back to
 *  the ring's start now (a padding record to its end; the collector is close behind, or
 *  the file has no storage for more), else moves p->limit on (up to the ring's end, the
 *  storage first) and returns false; false with p->limit unchanged: the record fits
 *  nowhere the file has storage for (dropped). */
bool upti_shared_past_limit(struct upti_producer *p, size_t pos, size_t len);
/** LOSSLESS: waits while the collector makes progress; false once it stalled (drop). */
bool upti_shared_wait_for_room(struct upti_producer *p, size_t need);
/** A forked child: gives b a ring file of its own (the parent's stays the parent's). */
void upti_shared_fork_child(struct upti_buffer *b, upti_thread_state_t *self);
/** upti_destroy_buffer(): marks the ring file closed. */
void upti_shared_close(struct upti_buffer *b);

/* ---- agents in shared buffers (shared_agents.c) ---- */
/** A thread's producer of b was just created (its THREAD record written): writes the
 *  agents b's ring file does not have yet into that thread's slot. */
void upti_shared_agents_first_write(struct upti_buffer *b, upti_thread_state_t *s);
/** An agent was registered: the calling thread writes it into b's ring file
 *  (claiming a slot if it has none), unless no thread wrote to the file yet. */
void upti_shared_agents_added(struct upti_buffer *b, upti_thread_state_t *s);
/** A forked child: its ring file (created at its first record) has no agent yet. */
void upti_shared_agents_fork_child(struct upti_buffer *b);

/** upti_buffer_reserve's case without a call: p is s->producers[b->index]; NULL where the
 *  slow path is needed (no producer yet, b destroyed, no room before the region's end). */
static inline void *upti_buffer_reserve_fast(struct upti_buffer *b, struct upti_producer *p,
                                             uint32_t kind, size_t len)
{
    len = (len + sizeof(upti_ring_record_t) + 7) & ~(size_t)7;
    if (upti_likely(p != NULL && !atomic_load_explicit(&b->destroyed, memory_order_relaxed))) {
        size_t head = p->local_head;
        size_t pos = head & (p->size - 1);
        if (upti_likely(pos + len <= p->limit && head + len - p->cached_tail <= p->size)) {
            upti_ring_record_t *r = (upti_ring_record_t *)(p->data + pos);
            r->len = (uint32_t)len;
            r->kind = kind;
            p->pending_head = head + len;
            return r + 1;
        }
    }
    return NULL;
}

/** Reserves len bytes of a record of kind in the calling thread's region of b; NULL if dropped. */
static inline void *upti_buffer_reserve(struct upti_buffer *b, upti_thread_state_t *s,
                                        uint32_t kind, size_t len)
{
    void *r = upti_buffer_reserve_fast(b, s->producers[b->index], kind, len);
    if (upti_likely(r != NULL))
        return r;
    return upti_buffer_reserve_slow(b, s, kind, (len + sizeof(upti_ring_record_t) + 7) & ~(size_t)7);
}

/** Adds v to a count that only the calling thread writes (others read it): a relaxed load
 *  and store, no locked instruction. */
static inline void upti_own_count_add(_Atomic uint64_t *count, uint64_t v)
{
    atomic_store_explicit(count, atomic_load_explicit(count, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/** Publishes the record this thread last reserved in b; p is its producer, s->producers[b->index]. */
static inline void upti_buffer_commit_producer(struct upti_buffer *b, struct upti_producer *p)
{
    size_t head = p->pending_head;
    p->local_head = head;
    atomic_store_explicit(&p->head, head, memory_order_release);
    /* The cached tail is stale (it only moves forward): confirmed apart before waking anyone. */
    if (upti_unlikely(head - p->cached_tail >= p->watermark))
        upti_buffer_commit_check(b, p, head);
}

/** Publishes the record this thread last reserved in b. */
static inline void upti_buffer_commit(struct upti_buffer *b, upti_thread_state_t *s)
{
    upti_buffer_commit_producer(b, s->producers[b->index]);
}

#endif
