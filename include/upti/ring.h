/* SPDX-License-Identifier: MIT */
/* The shared ring format: how a traced process (the producer, libupti) hands
 * records to a collector in another process through a file-backed shared
 * mapping that outlives the producer. It is the one contract between the two
 * sides of UPTI (`upti`'s collector is one reader; a tool may write its own),
 * public and versioned like perf's perf_event_mmap_page: UPTI_RING_VERSION
 * changes with any change of layout or meaning, and the layout test
 * (tests/abi) holds every offset below for as long as it does not.
 *
 * One ring file per (process, shared buffer), created by
 * upti_create_shared_buffer() (<upti/buffer.h>), by default in /dev/shm.
 * docs/shared-rings.md explains the design; this header is the contract.
 * A C11 header (<stdatomic.h>): the atomic fields are read and written with
 * the orders named below.
 *
 * File layout (all offsets in bytes from the start of the file):
 *
 *   0                      upti_ring_header_t (one page, UPTI_RING_HEADER_BYTES)
 *   UPTI_RING_HEADER_BYTES max_slots x upti_ring_slot_t (UPTI_RING_SLOT_BYTES each)
 *   slot->data_offset      the slot's data: slot_size bytes (a power of two),
 *                          page aligned
 *
 * Slots. Each producing thread claims one slot (compare-and-swap of owner
 * from 0, or from the tid of an exited thread whose slot is fully drained)
 * and is its only writer: a single-producer, single-consumer ring.
 * Positions (head, tail) are byte counts since the slot was created; they
 * only grow; the byte of position p is data[p & (slot_size - 1)].
 *
 * Records. Each record starts with upti_ring_record_header_t {len, kind}:
 * len counts the header, is a multiple of 8, and a record never wraps: where
 * one would not fit before the end of the data, a padding record (kind
 * UPTI_RING_KIND_PADDING) fills the gap. A producer may also go back to
 * the data's start early (while the consumer keeps up it writes only the
 * first MiB of a large slot): a padding record then covers the rest, whose
 * bytes were never written; a consumer skips a padding record that reaches
 * the data's end without reading what it covers. Every byte the producer
 * writes has its storage reserved first (libupti: a slot's data when the
 * slot is first claimed; a slot of 1 MiB or less 128 KiB first, then as much
 * again as it has when its producer goes further), so no write through the
 * mapping faults. kind is
 *   - a upti_tracing_kind_t: the payload is that kind's public record struct
 *     (include/upti/buffer_tracing.h, the producer's ABI), followed by the
 *     bytes of its string (kernel_name, name, message), if any; the string
 *     pointer holds the producer's address of that copy: subtract
 *     producer_base + (position & (slot_size - 1)) to find it in the record;
 *   - UPTI_RING_KIND_COMPACT_MARKER: upti_ring_compact_marker_t, then the
 *     NUL-terminated message if has_message (the thread is the slot's);
 *   - UPTI_RING_KIND_COMPACT_API (version 2): upti_ring_compact_api_t, an
 *     API call without an external correlation id (the thread is the
 *     slot's); other calls are written as their public record;
 *   - UPTI_RING_KIND_COMPACT_MARK (version 2): upti_ring_compact_mark_t, a
 *     marker call without an external correlation id, then its value (8
 *     bytes) if flags has UPTI_RING_MARK_VALUE, then its NUL-terminated
 *     message if flags has UPTI_RING_MARK_MESSAGE (the thread is the
 *     slot's); in a file of version 2 every marker call without an external
 *     correlation id is written so, the others as compact marker records;
 *   - UPTI_RING_KIND_THREAD: upti_ring_thread_t, the first record a thread
 *     writes into a slot it claimed: the records after it are that thread's.
 *   - UPTI_RING_KIND_AGENT: upti_ring_agent_t then its four strings; libupti
 *     writes one per agent into every shared buffer: the agents known when
 *     the first thread of the process writes to the buffer (in that thread's
 *     slot, right after its THREAD record), and each agent registered later
 *     (in the registering thread's slot). Each agent once per file; one
 *     dropped by a full ring (counted) is written at the next occasion.
 *   - UPTI_RING_KIND_TOOL: upti_ring_tool_t then size bytes (padded to 8
 *     with zeros): upti_write_buffer_record().
 *
 * Commit ordering. The producer writes a record's bytes, then publishes it
 * with a store-release of slot->head. The consumer load-acquires head, reads
 * [tail, head), stores what it read durably (its spool), and only then
 * store-releases tail, which gives the space back; the producer load-acquires
 * tail before reusing space. A record is committed once head covers it: from
 * then on it survives the producer's death (SIGKILL, a crash, _exit), because
 * the file's pages belong to the file, not to the process.
 *
 * Full ring. The producer never spills records into its own memory or files.
 * policy DISCARD: the record is dropped at once. LOSSLESS: the producer waits
 * for the consumer, but only while the consumer makes progress: when tail
 * has not moved for header->full_wait_ns (default 50 ms; the collector is
 * absent, stopped or too slow), the record is dropped, and so is every later
 * one, without waiting, until tail moves again. A waiting producer sets
 * slot->starving and sleeps in FUTEX_WAIT on the low 32 bits of slot->tail
 * (timeout 1 ms); a consumer that moves tail while starving is set calls
 * FUTEX_WAKE on that word (ring_futex.h). Before each store of tail that
 * moves it the consumer stores the time in slot->room_at (CLOCK_MONOTONIC ns,
 * relaxed: the tail's release publishes it): a producer that finds the room it
 * waited for reads when it was made, and counts the part of its wait after
 * then (woken, waiting to run again) apart, in slot->after_room_ns, of
 * wait_ns. Every dropped record
 * is counted, exactly: slot->dropped (the slot's producer), or
 * header->no_slot_drops (a thread found no free slot).
 *
 * Doorbell. A consumer may sleep between its passes instead of polling: it
 * stores 1 in header->doorbell (seq_cst), then reads every slot's head, tail
 * and starving, and sleeps in FUTEX_WAIT on header->doorbell, expecting 1,
 * only if no slot holds UPTI_RING_DOORBELL_BYTES(slot_size) unread bytes or
 * more and none is starving; it stores 0 once awake. A producer whose commit
 * leaves that many unread bytes in its slot (by the tail it last read; it
 * reads tail again first) and finds header->doorbell at 1 exchanges it for 0
 * and, if it got the 1, calls FUTEX_WAKE on it; so does a producer about to
 * wait for room, after it set starving (seq_cst). The producer's commit reads
 * the doorbell without a fence, so a sleeping consumer can miss the one commit
 * that crosses the mark; the next commit above it rings again, and the
 * consumer's sleep has a timeout for a producer that stops right there (a
 * producer waiting for room never misses: it fences). (libupti rings at the
 * first commit past the mark, then, while the slot stays above it, once per
 * 4 KiB of records; and once as it stores UPTI_RING_STATE_CLOSED, so that a
 * collector drains the ring while the process exits.) Nothing else depends on
 * the doorbell: a consumer that never sets it is never woken, a producer that
 * never rings it is drained when the consumer's sleep times out. Added in
 * version 1 without a change of the version: files made before it hold 0 there.
 */
#ifndef UPTI_RING_ABI_H
#define UPTI_RING_ABI_H

#include <stdatomic.h>
#include <stdint.h>

#define UPTI_RING_MAGIC 0x474e495249545055ull /* "UPTIRING" little-endian */
/** 2: UPTI_RING_KIND_COMPACT_API and UPTI_RING_KIND_COMPACT_MARK. A reader of
 *  version 2 reads version 1 files too (the same layout, without those kinds).
 *  libupti writes version 2 files only into the folder of a collector of upti's
 *  (`upti run`'s, UPTI_TRACE_RING_DIR), whose reader is upti; elsewhere (a tool's
 *  own folder, /dev/shm) version 1, as before. */
#define UPTI_RING_VERSION 2u
#define UPTI_RING_HEADER_BYTES 4096u
#define UPTI_RING_SLOT_BYTES 384u
/** The file name suffix of ring files (what a collector scanning a folder takes). */
#define UPTI_RING_SUFFIX ".upti-ring"
/** A forked child's claim, upti-PID-N.upti-pending beside the ring files (made only
 *  in a collector's folder of upti's, which removes them: a run folder, named
 *  UPTI_RUN_FOLDER_PREFIX..., of upti run or the record-only helper, or the folder
 *  UPTI_TRACE_RING_DIR names; never in /dev/shm itself): a child
 *  forked without exec makes its ring file only at its first record (one that
 *  execs at once leaves none), so until then this file, which it holds locked
 *  with flock(LOCK_EX) on a close-on-exec descriptor, says that it may still
 *  record. The lock goes with the child's end or exec, and the child removes
 *  the file once its ring file exists. A collector that finds the file
 *  unlocked (flock(LOCK_NB) succeeds) knows nothing more will come from it;
 *  while it is locked, the collector waits (a daemon that records after its
 *  parent ended is collected). The child makes it under another name, locks
 *  it and renames it into place: a collector never sees it unlocked before. */
#define UPTI_RING_PENDING_SUFFIX ".upti-pending"
/** Default of header->full_wait_ns (UPTI_RING_FULL_WAIT_MS overrides it at creation). */
#define UPTI_RING_DEFAULT_FULL_WAIT_NS (50ull * 1000 * 1000)
/** Unread bytes in a slot from which a producer rings the doorbell: 256 KiB, or a
 *  quarter of a smaller slot (slot_size is a power of two). */
#define UPTI_RING_DOORBELL_BYTES(slot_size) \
    ((slot_size) / 4 < (256ull << 10) ? (uint64_t)(slot_size) / 4 : (256ull << 10))

/** header->state. */
enum {
    UPTI_RING_STATE_CREATING = 0, /**< not yet usable: a reader skips the file */
    UPTI_RING_STATE_LIVE = 1,     /**< the producer may write */
    UPTI_RING_STATE_CLOSED = 2,   /**< the buffer was destroyed: nothing more will be written */
};

/** Ring record kinds that are not upti_tracing_kind_t values. */
enum {
    UPTI_RING_KIND_PADDING = 0,
    UPTI_RING_KIND_COMPACT_MARKER = 0x100, /**< same value as libupti's in-process rings */
    UPTI_RING_KIND_COMPACT_API = 0x101,    /**< the same (version 2) */
    UPTI_RING_KIND_COMPACT_MARK = 0x102,   /**< the same (version 2) */
    UPTI_RING_KIND_THREAD = 0x200,
    UPTI_RING_KIND_AGENT = 0x201,
    UPTI_RING_KIND_TOOL = 0x202,
};

/** The first page of a ring file. Written once by the producer before state becomes LIVE,
 *  except the fields marked atomic. */
typedef struct upti_ring_header_t {
    uint64_t magic;       /**< UPTI_RING_MAGIC */
    uint32_t version;     /**< UPTI_RING_VERSION */
    uint32_t header_bytes;/**< UPTI_RING_HEADER_BYTES */
    uint32_t slot_bytes;  /**< UPTI_RING_SLOT_BYTES */
    uint32_t max_slots;   /**< number of slots */
    uint64_t slot_size;   /**< data bytes of each slot, a power of two */
    uint64_t file_size;   /**< bytes of the whole file */
    uint32_t policy;      /**< upti_buffer_policy_t */
    uint32_t record_abi;  /**< sizeof(void *) of the producer: its records' pointer size */
    uint64_t full_wait_ns;/**< LOSSLESS: how long a producer waits without progress */
    uint64_t uid;         /**< unique among ring files (random) */
    int64_t pid;          /**< the producer process */
    int64_t ppid;         /**< its parent */
    uint64_t proc_start_ticks; /**< its start time (/proc/PID/stat field 22): tells a reused pid */
    uint64_t clock_start; /**< ns on UPTI's clock (CLOCK_MONOTONIC_RAW) at creation */
    uint64_t wall_start;  /**< ns since the epoch at creation */
    _Atomic uint32_t state;         /**< UPTI_RING_STATE_*; LIVE is stored with release */
    uint32_t reserved0;   /**< 0 */
    _Atomic uint64_t no_slot_drops; /**< records of threads that found no free slot */
    _Atomic int64_t collector_pid;  /**< the collector attached to the file, 0 if none */
    char hostname[64];    /**< NUL-terminated */
    char command[1024];   /**< the command line, arguments separated by spaces, NUL-terminated */
    /** 1 while the consumer sleeps on it (FUTEX_WAIT, shared): see "Doorbell" above. */
    _Atomic uint32_t doorbell;
    uint32_t reserved1;   /**< 0 */
    /** How many slots at the end of the table no producer has claimed yet: slots
     *  [max_slots - slots_unused, max_slots) are all zero, and a consumer need not
     *  read them (nor fault in their pages). The producer stores max_slots before
     *  state becomes LIVE, and lowers it (atomic, release) before its first write to
     *  a slot it claims for the first time; slots are claimed lowest first. A value
     *  above max_slots is read as 0. Added in version 1 without a change of the
     *  version: files made before it hold 0 there (every slot is read). */
    _Atomic uint32_t slots_unused;
    uint32_t reserved2;   /**< 0 */
} upti_ring_header_t;

/**
 * One slot's control block. The producer keeps its private state (libupti's
 * struct upti_producer) in the first 320 bytes; the fields named here are at
 * fixed offsets, and libupti asserts at compile time that its own fields sit
 * there. Cache lines: the producer's per-record state never shares a line
 * with what the consumer writes.
 */
typedef struct upti_ring_slot_t {
    uint64_t producer_base;         /**< 0: the producer's address of the slot's data */
    uint64_t producer_private0[15]; /**< 8: the producer's */
    _Atomic uint64_t dropped;       /**< 128: records the slot's producers dropped (only grows) */
    uint8_t producer_private1a;     /**< 136: the producer's */
    /** 137: 1 while a LOSSLESS producer waits for room in this slot: drain it without delay. */
    _Atomic uint8_t starving;
    uint8_t producer_private1b[54]; /**< 138: the producer's */
    _Atomic uint64_t head;          /**< 192: committed position (producer, store-release) */
    uint64_t producer_private2[7];  /**< 200: the producer's */
    _Atomic uint64_t tail;          /**< 256: consumed position (consumer, store-release) */
    uint64_t producer_private3[7];  /**< 264: the producer's */
    _Atomic uint64_t owner;         /**< 320: tid of the thread holding the slot, 0 = never used */
    /** 328: where the slot's data starts in the file; 0 until the slot is first claimed
     *  (written before the producer's first store of head). */
    uint64_t data_offset;
    /** 336: LOSSLESS, the producer's: tail + 1 where it last gave up waiting (0: never).
     *  While tail is still there the collector is stalled: it drops without waiting again. */
    uint64_t stalled_at;
    /** 344: LOSSLESS, the producer's: how many times it waited for room (a full ring), and
     *  for how long in all (ns). Only grow; the collector reports them (the program's cost
     *  of a collector that did not keep up). Written only while waiting, never per record. */
    _Atomic uint64_t waits;
    _Atomic uint64_t wait_ns;
    union {
        uint64_t reserved[3]; /**< 360: what UPTI 1.0 left reserved (0), now the fields below */
        struct {
            /** 360: the consumer's: CLOCK_MONOTONIC ns read just before its last store of
             *  tail that moved it (0: never). A producer that waited takes it as when the
             *  room it found was made. */
            _Atomic uint64_t room_at;
            /** 368: LOSSLESS, the producer's: of wait_ns, the time after the consumer had
             *  made the room (room_at) until the thread ran again (woken, it waited for a
             *  CPU, or was stopped); the rest of wait_ns is the wait for room. Only grows.
             *  Both fields were added without a change of the version: a consumer that
             *  never writes room_at leaves this 0, which counts every wait as for room. */
            _Atomic uint64_t after_room_ns;
            uint64_t reserved_end; /**< 376: 0 */
        };
    };
} upti_ring_slot_t;

_Static_assert(sizeof(upti_ring_header_t) <= UPTI_RING_HEADER_BYTES, "ring header size");
_Static_assert(sizeof(upti_ring_slot_t) == UPTI_RING_SLOT_BYTES, "ring slot size");

/** Every record's header. */
typedef struct upti_ring_record_header_t {
    uint32_t len;  /**< bytes of the record, header included, a multiple of 8 */
    uint32_t kind; /**< upti_tracing_kind_t or UPTI_RING_KIND_* */
} upti_ring_record_header_t;

/** UPTI_RING_KIND_COMPACT_MARKER: a marker call (MARKER_API), half the public record. */
typedef struct upti_ring_compact_marker_t {
    uint32_t operation;      /**< upti_marker_api_operation_t */
    uint32_t has_message;    /**< 1: the NUL-terminated text follows */
    uint64_t correlation_id; /**< the call's correlation id */
    uint64_t external;       /**< external correlation id, 0 if none */
    uint64_t timestamp;      /**< ns, UPTI's clock */
    uint64_t value;          /**< the range id, or the category of NAME_CATEGORY */
} upti_ring_compact_marker_t;

/** upti_ring_compact_mark_t.flags: what follows the record. */
enum {
    UPTI_RING_MARK_MESSAGE = 1, /**< the NUL-terminated message (last) */
    UPTI_RING_MARK_VALUE = 2,   /**< the value, 8 bytes (first): the range id, or the
                                     category of NAME_CATEGORY; absent: 0 */
};

/**
 * UPTI_RING_KIND_COMPACT_MARK: a marker call without an external correlation
 * id, 24 bytes where the compact marker record takes 40 (the 16 M marks of 16
 * threads: 40-byte records of "tick" instead of 56). A value of 0 and a call
 * without a message take no room.
 */
typedef struct upti_ring_compact_mark_t {
    uint32_t operation;      /**< upti_marker_api_operation_t */
    uint32_t flags;          /**< UPTI_RING_MARK_*: what follows */
    uint64_t correlation_id; /**< the call's correlation id */
    uint64_t timestamp;      /**< ns, UPTI's clock */
} upti_ring_compact_mark_t;

/**
 * UPTI_RING_KIND_COMPACT_API: an API call without an external correlation id:
 * upti_buffer_tracing_api_record_t less its size, thread (the slot's) and
 * external id, 48 bytes with its header where the public record takes 72.
 */
typedef struct upti_ring_compact_api_t {
    uint32_t kind;            /**< upti_tracing_kind_t of the call */
    uint32_t operation;       /**< the operation within the kind */
    uint64_t correlation_id;  /**< the call's correlation id */
    uint64_t start_timestamp; /**< ns, UPTI's clock */
    uint64_t end_timestamp;   /**< ns, UPTI's clock */
    int64_t result;           /**< what the call returned, or UPTI_API_RESULT_NONE */
} upti_ring_compact_api_t;

/** UPTI_RING_KIND_THREAD: the thread that writes the records after it. */
typedef struct upti_ring_thread_t {
    uint64_t tid;       /**< gettid() */
    uint64_t timestamp; /**< when it claimed the slot */
} upti_ring_thread_t;

/** UPTI_RING_KIND_AGENT: an agent (upti_agent_t). Its strings follow, each
 *  NUL-terminated, in this order: runtime, name, vendor, driver_version; each
 *  *_len counts the NUL (1 for an absent string). */
typedef struct upti_ring_agent_t {
    uint64_t id;                  /**< upti_agent_id_t handle */
    uint32_t type;                /**< upti_agent_type_t */
    uint32_t compute_units;       /**< upti_agent_t.compute_units */
    uint64_t global_memory_bytes; /**< upti_agent_t.global_memory_bytes */
    uint64_t runtime_handle;      /**< upti_agent_t.runtime_handle */
    uint32_t node_id;             /**< upti_agent_t.node_id */
    uint16_t runtime_len;         /**< bytes of runtime, its NUL included */
    uint16_t name_len;            /**< bytes of name, its NUL included */
    uint16_t vendor_len;          /**< bytes of vendor, its NUL included */
    uint16_t driver_version_len;  /**< bytes of driver_version, its NUL included */
    uint32_t reserved;            /**< 0 */
} upti_ring_agent_t;

/** UPTI_RING_KIND_TOOL: a tool's own record; size bytes of data follow. */
typedef struct upti_ring_tool_t {
    uint32_t kind; /**< the tool's */
    uint32_t size; /**< bytes of data */
} upti_ring_tool_t;

/** The slot control block i of a mapped ring file. */
static inline upti_ring_slot_t *upti_ring_slot(void *file, uint32_t i)
{
    return (upti_ring_slot_t *)((char *)file + UPTI_RING_HEADER_BYTES +
                                (uint64_t)i * UPTI_RING_SLOT_BYTES);
}

#endif
