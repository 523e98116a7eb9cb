/* SPDX-License-Identifier: MIT */
/* `upti-ring convert`: the spool into one SQLite database per process,
 * through the tracing tool's own writer (src/collector/output, uo_db_*): same schema,
 * same views, indexes built once at uo_db_close().
 *
 * Records are checked before use: a record whose length or string does not
 * fit its chunk is counted as malformed and skipped, never read past.
 * Agents and tools' own records: convert_records.c.
 *
 * Each database is committed every COMMIT_RECORDS records: a database that
 * cannot be completed (a full disk, a file size limit) still holds what its
 * last commit stored, and the message says how many records that is and how
 * many were lost, both counted (uo_db_committed_records).
 */
#include "collector.h"
#include "compact_records.h"
#include "convert_records.h"
#include "op_names.h"
#include "output.h"
#include "spool.h"
#include "page_writer.h"
#include <upti/ring.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <upti/upti.h>

#define COMMIT_RECORDS 16384u
/* The spool left to convert at the finish from which a page writer takes
 * half of the work (page_writer.h): some 20,000 records. */
#define WRITER_FROM_BYTES (1u << 20)

/* One ring file (one uid). The ring files of one process (its pid and start
 * time: an exec keeps both, and each image of the program makes its own file)
 * go into one database, that of the first of them in the spool, its owner:
 * owner's db, path, records, malformed, end, tool_skipped and db_failed are
 * the process's. */
struct proc {
    uint64_t uid;
    upti_ring_header_t hdr;
    size_t owner;       /* index of the process's first ring file (itself if first) */
    uo_db *db;
    char *path;
    uint64_t *tid;      /* per slot: the thread of its records (THREAD records) */
    uint64_t *dropped;  /* per slot: the last drop count */
    /* per slot: the program's waits for room (WAITS chunks): how many, ns in all, and ns
     * of those until the collector made the room */
    uint64_t *waits, *wait_ns, *room_ns;
    uint64_t no_slot_drops;
    uint64_t records, malformed, end;
    uint64_t tool_skipped; /* tool records not the converter's to apply */
    ur_op_names names;  /* its RUNTIME_API operations' names (owner) */
    int db_failed;      /* its database failed: the rest is only counted (records) */
    int small;          /* its database was made small (4 KiB pages, spool_bytes) */
};

struct converter {
    const ur_convert_opts *opts;
    const char *prefix;
    struct proc *procs;
    size_t num_procs, cap_procs;
    uint64_t records, next_progress;
    int progress; /* stderr is a terminal */
    int error;
    uint64_t spool_bytes; /* the spool's size: a bound on each process's records */
    /* At the finish: the thread that writes the databases' page-written rows
     * (page_writer.h), while this one reads on; NULL while following (at
     * SCHED_IDLE it would take CPU from the program) and on one CPU. */
    uo_page_writer *writer;
};

static struct proc *find_proc(struct converter *v, uint64_t uid)
{
    for (size_t i = 0; i < v->num_procs; i++)
        if (v->procs[i].uid == uid)
            return &v->procs[i];
    return NULL;
}

/* A process whose outputs could not be set up: what open_proc gave it freed; v fails. */
static void drop_process(struct converter *v, struct proc *p)
{
    free(p->tid);
    free(p->dropped);
    free(p->waits);
    free(p->path);
    v->error = 1;
}

static uo_db *create_db(struct converter *v, struct proc *p);

static void open_proc(struct converter *v, const ur_chunk_t *c, const uint8_t *payload)
{
    /* A spool written before the header grew holds the shorter header (up to command):
     * read as it was, the fields added since zero. */
    if (find_proc(v, c->ring_uid) != NULL || c->bytes < offsetof(upti_ring_header_t, doorbell))
        return;
    if (v->num_procs == v->cap_procs) {
        size_t cap = v->cap_procs ? 2 * v->cap_procs : 8;
        struct proc *n = realloc(v->procs, cap * sizeof *n);
        if (n == NULL) {
            v->error = 1;
            return;
        }
        v->procs = n;
        v->cap_procs = cap;
    }
    struct proc *p = &v->procs[v->num_procs];
    memset(p, 0, sizeof *p);
    p->uid = c->ring_uid;
    memcpy(&p->hdr, payload, c->bytes < sizeof p->hdr ? (size_t)c->bytes : sizeof p->hdr);
    p->hdr.hostname[sizeof p->hdr.hostname - 1] = '\0';
    p->hdr.command[sizeof p->hdr.command - 1] = '\0';
    if (p->hdr.max_slots == 0 || p->hdr.max_slots > 65536 ||
        (p->hdr.slot_size & (p->hdr.slot_size - 1)) != 0)
        return;
    p->tid = calloc(p->hdr.max_slots, sizeof *p->tid);
    p->dropped = calloc(p->hdr.max_slots, sizeof *p->dropped);
    p->waits = calloc(3 * (size_t)p->hdr.max_slots, sizeof *p->waits);
    p->owner = v->num_procs;
    for (size_t i = 0; i < v->num_procs && p->owner == v->num_procs; i++)
        if (v->procs[i].owner == i && v->procs[i].hdr.pid == p->hdr.pid &&
            v->procs[i].hdr.proc_start_ticks == p->hdr.proc_start_ticks)
            p->owner = i; /* another image of a process already seen (exec) */
    if (p->owner != v->num_procs && p->tid != NULL && p->dropped != NULL && p->waits != NULL) {
        p->wait_ns = p->waits + p->hdr.max_slots;
        p->room_ns = p->wait_ns + p->hdr.max_slots;
        v->num_procs++;
        return;
    }
    size_t len = strlen(v->prefix) + 64;
    p->path = malloc(len);
    if (p->tid == NULL || p->dropped == NULL || p->waits == NULL || p->path == NULL) {
        drop_process(v, p);
        return;
    }
    /* Two processes of one pid (a reused pid): the later gets its uid too. */
    int dup = 0;
    for (size_t i = 0; i < v->num_procs; i++)
        dup |= v->procs[i].owner == i && v->procs[i].hdr.pid == p->hdr.pid;
    if (dup)
        snprintf(p->path, len, "%s-%lld-%016llx.db", v->prefix, (long long)p->hdr.pid,
                 (unsigned long long)p->uid);
    else
        snprintf(p->path, len, "%s-%lld.db", v->prefix, (long long)p->hdr.pid);
    if ((p->db = create_db(v, p)) == NULL) {
        drop_process(v, p);
        return;
    }
    p->wait_ns = p->waits + p->hdr.max_slots;
    p->room_ns = p->wait_ns + p->hdr.max_slots;
    p->end = p->hdr.clock_start;
    v->num_procs++;
}

/* The database of process p at p->path, sized by v->spool_bytes; NULL (said) if it
 * could not be made. */
static uo_db *create_db(struct converter *v, struct proc *p)
{
    uo_process_info info = {p->hdr.pid,         p->hdr.ppid,        -1, p->hdr.hostname,
                            p->hdr.command,     p->hdr.clock_start, p->hdr.wall_start};
    char err[512];
    uo_db *db = uo_db_create_bulk_sized(p->path, &info, uo_upti_operation_name, v->spool_bytes,
                                        err, sizeof err);
    if (db == NULL) {
        uo_report("%s", err);
        return NULL;
    }
    p->small = v->spool_bytes > 0 && v->spool_bytes < UO_DB_SMALL_SOURCE_BYTES;
    uo_db_set_page_writer(db, v->writer);
    uo_db_set_metadata(db, "source", "shared-ring");
    if (v->opts->kernel_filter != NULL)
        uo_db_set_kernel_filter(db, v->opts->kernel_filter, v->opts->kernel_filter_data);
    uo_db_set_kernel_iterations(db, v->opts->kernel_iterations);
    return db;
}

/* The databases made ahead (ur_converter_follow, while the spool was small) for
 * a spool that has grown past UO_DB_SMALL_SOURCE_BYTES: made again with big
 * pages, as a conversion of the whole spool makes them (none holds a record yet).
 * One that cannot be made again keeps the first (whose file that try removed:
 * it is then said not to be complete, and the spool is kept). */
static void size_made_ahead(struct converter *v)
{
    if (v->spool_bytes < UO_DB_SMALL_SOURCE_BYTES)
        return;
    for (size_t i = 0; i < v->num_procs; i++) {
        struct proc *p = &v->procs[i];
        if (p->owner != i || !p->small || p->records != 0)
            continue;
        uo_db *db = create_db(v, p);
        if (db != NULL) {
            uo_db_drop(p->db);
            p->db = db;
        }
    }
}

/* Each kind's public struct: its size, the offset of its last timestamp and of its
 * string pointer (0: none). */
#define LAYOUT(type, time) {sizeof(type), offsetof(type, time), 0}
#define LAYOUT_STRING(type, time, string) {sizeof(type), offsetof(type, time), offsetof(type, string)}
static const struct {
    size_t size, time_offset, string_offset;
} k_layouts[UPTI_TRACING_KIND_LAST] = {
    [UPTI_TRACING_KIND_OPENCL_API] = LAYOUT(upti_buffer_tracing_api_record_t, end_timestamp),
    [UPTI_TRACING_KIND_VULKAN_API] = LAYOUT(upti_buffer_tracing_api_record_t, end_timestamp),
    [UPTI_TRACING_KIND_RUNTIME_API] = LAYOUT(upti_buffer_tracing_api_record_t, end_timestamp),
    [UPTI_TRACING_KIND_MARKER_API] =
        LAYOUT_STRING(upti_buffer_tracing_marker_api_record_t, end_timestamp, message),
    [UPTI_TRACING_KIND_KERNEL_DISPATCH] =
        LAYOUT_STRING(upti_buffer_tracing_kernel_dispatch_record_t, end_timestamp, kernel_name),
    [UPTI_TRACING_KIND_MEMORY_COPY] = LAYOUT(upti_buffer_tracing_memory_copy_record_t, end_timestamp),
    [UPTI_TRACING_KIND_MEMORY_ALLOCATION] =
        LAYOUT(upti_buffer_tracing_memory_allocation_record_t, timestamp),
    [UPTI_TRACING_KIND_CODE_OBJECT] =
        LAYOUT_STRING(upti_buffer_tracing_code_object_record_t, timestamp, name),
};
#undef LAYOUT
#undef LAYOUT_STRING

/* The record's last timestamp (the process's end is the latest). */
static uint64_t record_time(uint32_t kind, const void *rec)
{
    if (kind >= UPTI_TRACING_KIND_LAST || k_layouts[kind].size == 0)
        return 0;
    uint64_t t;
    memcpy(&t, (const char *)rec + k_layouts[kind].time_offset, sizeof t);
    return t;
}

/* sizeof the public struct of kind (0: not a kind of the rings) and the offset of its
 * string pointer (0: none). */
static size_t kind_layout(uint32_t kind, size_t *string_offset)
{
    *string_offset = kind < UPTI_TRACING_KIND_LAST ? k_layouts[kind].string_offset : 0;
    return kind < UPTI_TRACING_KIND_LAST ? k_layouts[kind].size : 0;
}

/* The text at [s, end) if NUL-terminated there, else NULL. */
static const char *text_in(const char *s, const char *end)
{
    return s < end && memchr(s, '\0', (size_t)(end - s)) != NULL ? s : NULL;
}

/* The owner of the process that forked p (a process of the spool whose pid is p's parent
 * and which started before it), or NULL. */
static const struct proc *parent_of(const struct converter *v, const struct proc *p)
{
    for (size_t i = 0; i < v->num_procs; i++) {
        const struct proc *q = &v->procs[i];
        if (q->owner == i && q != p && q->hdr.pid == p->hdr.ppid &&
            q->hdr.clock_start <= p->hdr.clock_start)
            return q;
    }
    return NULL;
}

/* A RUNTIME_API operation p's own ring never named: a child forked without exec calls its
 * parent's runtimes, registered before the fork, by their ids. It takes their names
 * from the nearest ancestor that has them. -2 if the database failed, else 0. */
static int inherit_name(const struct converter *v, struct proc *p, uint32_t op)
{
    const struct proc *q = p;
    for (int depth = 0; depth < 64 && (q = parent_of(v, q)) != NULL; depth++) {
        const ur_op_name *n = ur_op_names_find(&q->names, op);
        if (n == NULL)
            continue;
        if (uo_db_set_operation_name(p->db, UPTI_TRACING_KIND_RUNTIME_API, op, n->domain, n->name) != 0)
            return -2;
        ur_op_names_add(&p->names, op, n->domain, n->name);
        break;
    }
    return 0;
}

/* An API call into p's database (the name of a RUNTIME_API operation first,
 * from the process it inherited it from). 0, or -2 on a database error. */
static int store_api_call(const struct converter *v, struct proc *p, const uo_api_call *call)
{
    if (call->kind == UPTI_TRACING_KIND_RUNTIME_API &&
        call->operation < UPTI_RUNTIME_API_MAX_OPERATIONS &&
        !ur_op_names_known(&p->names, call->operation) && inherit_name(v, p, call->operation) != 0)
        return -2;
    if (call->end > p->end)
        p->end = call->end;
    p->records++;
    return uo_db_add_api_call(p->db, call) == 0 ? 0 : -2;
}

/* A compact API record (most of a spool): its fields go to the database as
 * they are, with the slot's thread, no public record made of them. */
static int convert_compact_api(const struct converter *v, const struct proc *ring, struct proc *p,
                               const ur_chunk_t *c, const uint8_t *body, size_t body_len)
{
    upti_ring_compact_api_t a;
    if (body_len < sizeof a)
        return -1;
    memcpy(&a, body, sizeof a);
    if (!upti_api_kind(a.kind))
        return -1;
    uo_api_call call = {a.kind, a.operation, a.correlation_id, 0, ring->tid[c->slot],
                        a.start_timestamp, a.end_timestamp, a.result};
    return store_api_call(v, p, &call);
}

/* One ring record (header at r, len bytes, at ring position pos) into p's database.
 * Returns UR_RECORD_DONE, UR_RECORD_MALFORMED or UR_RECORD_DB_ERROR. */
static int convert_record(const struct converter *v, struct proc *ring, struct proc *p,
                          const ur_chunk_t *c, const uint8_t *r, uint32_t len, uint64_t pos)
{
    const upti_ring_record_header_t *h = (const upti_ring_record_header_t *)r;
    const uint8_t *body = r + sizeof *h, *end = r + len;
    size_t body_len = len - sizeof *h;
    if (h->kind == UPTI_RING_KIND_COMPACT_API)
        return convert_compact_api(v, ring, p, c, body, body_len);
    union {
        upti_buffer_tracing_api_record_t api;
        upti_buffer_tracing_marker_api_record_t marker;
        upti_buffer_tracing_kernel_dispatch_record_t kernel;
        upti_buffer_tracing_memory_copy_record_t copy;
        upti_buffer_tracing_memory_allocation_record_t alloc;
        upti_buffer_tracing_code_object_record_t code;
    } u;
    uint32_t kind = h->kind;
    if (kind == UPTI_RING_KIND_PADDING)
        return 0;
    if (kind == UPTI_RING_KIND_THREAD) {
        if (body_len < sizeof(upti_ring_thread_t))
            return -1;
        upti_ring_thread_t t;
        memcpy(&t, body, sizeof t);
        ring->tid[c->slot] = t.tid;
        return 0;
    }
    if (kind == UPTI_RING_KIND_AGENT)
        return ur_convert_agent(p->db, body, body_len);
    if (kind == UPTI_RING_KIND_TOOL) {
        int rc = ur_convert_tool(p->db, &p->names, body, body_len);
        if (rc == UR_RECORD_SKIPPED)
            p->tool_skipped++;
        return rc == UR_RECORD_SKIPPED ? 0 : rc;
    }
    if (kind == UPTI_RING_KIND_COMPACT_MARKER) {
        upti_ring_compact_marker_t m;
        if (body_len < sizeof m)
            return -1;
        memcpy(&m, body, sizeof m);
        const char *msg = NULL;
        if (m.has_message && (msg = text_in((const char *)body + sizeof m, (const char *)end)) == NULL)
            return -1;
        upti_compact_marker_expand(&m, ring->tid[c->slot], msg, &u.marker);
        kind = UPTI_TRACING_KIND_MARKER_API;
    } else if (kind == UPTI_RING_KIND_COMPACT_MARK) {
        if (upti_compact_mark_expand(body, body_len, ring->tid[c->slot], &u.marker) != 0)
            return -1;
        kind = UPTI_TRACING_KIND_MARKER_API;
    } else {
        size_t string_offset;
        size_t size = kind_layout(kind, &string_offset);
        upti_record_prefix_t prefix;
        if (size == 0 || body_len < size)
            return -1;
        memcpy(&prefix, body, sizeof prefix);
        if (prefix.size != size || prefix.kind != kind)
            return -1;
        memcpy(&u, body, size);
        if (string_offset != 0) {
            uint64_t addr;
            memcpy(&addr, (const uint8_t *)&u + string_offset, sizeof addr);
            const char *s = NULL;
            if (addr != 0) {
                /* The producer's address of the copy inside this record. */
                uint64_t at = c->producer_base + (pos & (ring->hdr.slot_size - 1));
                if (addr < at + sizeof *h + size || addr >= at + len)
                    return -1;
                s = text_in((const char *)r + (addr - at), (const char *)end);
                if (s == NULL)
                    return -1;
            }
            memcpy((uint8_t *)&u + string_offset, &s, sizeof s);
        }
    }
    if (upti_api_kind(kind)) {
        uo_api_call call = uo_api_call_of(kind, &u.api);
        return store_api_call(v, p, &call);
    }
    uint64_t t = record_time(kind, &u);
    if (t > p->end)
        p->end = t;
    p->records++;
    return uo_db_add_record(p->db, kind, &u) == 0 ? 0 : -2;
}

/* The drops counted so far for process `owner` (the index of its first ring
 * file), over all its ring files: those of full rings, and those of threads
 * that found no free slot (*no_slot, if not NULL). */
static uint64_t proc_drops(const struct converter *v, size_t owner, uint64_t *no_slot)
{
    uint64_t full = 0, slotless = 0;
    for (size_t i = owner; i < v->num_procs; i++) {
        const struct proc *r = &v->procs[i];
        if (r->owner != owner)
            continue;
        slotless += r->no_slot_drops;
        for (uint32_t s = 0; s < r->hdr.max_slots; s++)
            full += r->dropped[s];
    }
    if (no_slot != NULL)
        *no_slot = slotless;
    return full + slotless;
}

/* Commits what process owner's database holds so far (its counts as of now in metadata). */
static void commit_proc(struct converter *v, size_t owner)
{
    struct proc *p = &v->procs[owner];
    uo_db_set_tally(p->db, p->records, proc_drops(v, owner, NULL));
    uo_db_checkpoint(p->db, p->end, 0);
}

static void on_chunk(void *arg, const ur_chunk_t *c, const uint8_t *payload)
{
    struct converter *v = arg;
    if (v->error)
        return;
    if (c->type == UR_CHUNK_PROCESS) {
        open_proc(v, c, payload);
        return;
    }
    struct proc *p = find_proc(v, c->ring_uid);
    if (p == NULL)
        return;
    if (c->type == UR_CHUNK_DROPS || c->type == UR_CHUNK_DATA) {
        if (c->slot == UR_NO_SLOT)
            p->no_slot_drops = c->dropped > p->no_slot_drops ? c->dropped : p->no_slot_drops;
        else if (c->slot < p->hdr.max_slots && c->dropped > p->dropped[c->slot])
            p->dropped[c->slot] = c->dropped;
    }
    if (c->type == UR_CHUNK_WAITS && c->slot < p->hdr.max_slots && c->pos_begin >= p->waits[c->slot]) {
        p->waits[c->slot] = c->pos_begin;
        p->wait_ns[c->slot] = c->pos_end;
        /* (The part after the room was made; 0 where nothing counted it: all for room.) */
        p->room_ns[c->slot] = c->pos_end - (c->dropped < c->pos_end ? c->dropped : c->pos_end);
    }
    if (c->type != UR_CHUNK_DATA || c->slot >= p->hdr.max_slots)
        return;
    struct proc *ring = p;
    size_t owner = ring->owner;
    p = &v->procs[owner];
    uint64_t off = 0;
    while (off + sizeof(upti_ring_record_header_t) <= c->bytes) {
        upti_ring_record_header_t h;
        memcpy(&h, payload + off, sizeof h);
        if (h.len < sizeof h || h.len % 8 != 0 || h.len > c->bytes - off) {
            p->malformed++; /* the rest of the chunk cannot be framed */
            break;
        }
        if (p->db_failed) {
            /* Counted, not converted: records the database could not take. */
            p->records += h.kind != UPTI_RING_KIND_PADDING && h.kind != UPTI_RING_KIND_THREAD &&
                          h.kind != UPTI_RING_KIND_AGENT && h.kind != UPTI_RING_KIND_TOOL;
            off += h.len;
            continue;
        }
        int rc = convert_record(v, ring, p, c, payload + off, h.len, c->pos_begin + off);
        if (rc == UR_RECORD_MALFORMED)
            p->malformed++;
        else if (rc == UR_RECORD_DB_ERROR)
            p->db_failed = 1;
        else if (p->records % COMMIT_RECORDS == 0 && p->records > 0 && h.kind != UPTI_RING_KIND_PADDING)
            commit_proc(v, owner);
        off += h.len;
        /* The progress line: only on a terminal (isatty), redrawn in place;
         * messages go through uo_report, this display does not. */
        if (++v->records >= v->next_progress && v->progress) {
            fprintf(stderr, "\rupti: converted %llu records", (unsigned long long)v->records);
            v->next_progress = v->records + 1000000;
        }
    }
}

static void set_metadata_count(uo_db *db, const char *key, uint64_t n)
{
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)n);
    uo_db_set_metadata(db, key, text);
}

/* The images of process owner (each ring file: an exec keeps the pid and its
 * start time, and the program after it makes its own file), in the order
 * they started: metadata "images" = their number, "image.K.command",
 * "image.K.start" (ns, UPTI's clock) and "image.K.wall_start" (ns since the
 * epoch), K from 1. info_process has the first one's command and start. */
static void write_images(struct converter *v, size_t owner)
{
    struct proc *o = &v->procs[owner];
    size_t count = 0;
    const struct proc *first = o;
    for (size_t i = owner; i < v->num_procs; i++) {
        if (v->procs[i].owner != owner)
            continue;
        count++;
        if (v->procs[i].hdr.clock_start < first->hdr.clock_start)
            first = &v->procs[i];
    }
    set_metadata_count(o->db, "images", count);
    if (first != o)
        uo_db_set_process_start(o->db, first->hdr.command, first->hdr.clock_start,
                                first->hdr.wall_start);
    uint64_t after = 0; /* the start of the image written last */
    for (size_t k = 1; k <= count; k++) {
        const struct proc *next = NULL;
        for (size_t i = owner; i < v->num_procs; i++) {
            const struct proc *r = &v->procs[i];
            if (r->owner == owner && (k == 1 || r->hdr.clock_start > after) &&
                (next == NULL || r->hdr.clock_start < next->hdr.clock_start))
                next = r;
        }
        if (next == NULL)
            break;
        after = next->hdr.clock_start;
        char key[48];
        snprintf(key, sizeof key, "image.%zu.command", k);
        uo_db_set_metadata(o->db, key, next->hdr.command);
        snprintf(key, sizeof key, "image.%zu.start", k);
        set_metadata_count(o->db, key, next->hdr.clock_start);
        snprintf(key, sizeof key, "image.%zu.wall_start", k);
        set_metadata_count(o->db, key, next->hdr.wall_start);
    }
}

struct completing {
    const ur_convert_opts *opts;
    const struct proc *p;
};

static void on_last(void *arg, sqlite3 *conn)
{
    const struct completing *c = arg;
    c->opts->completing(c->opts->arg, conn, c->p->path, c->p->hdr.pid);
}

/* Closes p's database; *held: the records its last successful commit stored;
 * *filtered: those the kernel filter left out (neither held nor lost). */
static int close_proc(const ur_convert_opts *opts, struct proc *p, uint64_t *held,
                      uint64_t *filtered)
{
    /* uo_db_close frees the handle: its count is read through a last commit
     * first (which fails, as close would, on a full disk). */
    uo_db_checkpoint(p->db, p->end, 0);
    *held = uo_db_committed_records(p->db);
    *filtered = uo_db_filtered_records(p->db);
    struct completing c = {opts, p};
    int rc = uo_db_close_with(p->db, p->end, opts->completing != NULL ? on_last : NULL, &c);
    if (rc == 0)
        *held = p->records - *filtered;
    return rc;
}

int ur_convert(const char *spool, const char *prefix, int stats)
{
    ur_convert_opts o = {.spool = spool, .prefix = prefix, .stats = stats};
    return ur_convert_with(&o);
}

/* Every process's database is open until the spool is read through, with
 * two descriptors (SQLite's file and the spool of its pages, table_pages.h):
 * a job of 500 processes passes the usual soft limit of 1,024, and the
 * databases past it could not be created. The soft limit is raised to the
 * hard one (the traced programs have ended or keep their own), and set
 * back at the end (a next pass of `upti run -i` starts its program with the
 * limit it was given). *was: the limit before. */
static void raise_fd_limit(struct rlimit *was)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0) {
        was->rlim_cur = RLIM_INFINITY; /* (nothing to set back) */
        return;
    }
    *was = r;
    if (r.rlim_cur >= r.rlim_max)
        return;
    rlim_t want = r.rlim_max;
    r.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &r) != 0 && want > 65536) {
        r.rlim_cur = 65536; /* (above fs.nr_open: EPERM) */
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

#define FOLLOW_READ (256u << 10)

struct ur_converter {
    struct converter v;
    ur_convert_opts opts;
    int fd;
    uint64_t at;          /* the spool read through to here (0: not begun) */
    uint64_t made_ahead;  /* the spool read for its processes' databases only, to here */
    int read_failed, read_errno;
    struct rlimit was;    /* the descriptor limit before (raise_fd_limit) */
    ur_spool_buffer buffer;
};

ur_converter *ur_converter_open(const ur_convert_opts *opts)
{
    ur_converter *c = calloc(1, sizeof *c);
    if (c == NULL) {
        uo_report("cannot convert %s: out of memory", opts->spool);
        return NULL;
    }
    c->fd = open(opts->spool, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0) {
        uo_report("cannot open %s: %s", opts->spool, strerror(errno));
        free(c);
        return NULL;
    }
    /* Reads of FOLLOW_READ bytes: the thread that follows a spool may be
     * interrupted only between system calls (on a kernel without preemption),
     * and a long copy would keep the collecting thread from its CPU. */
    if ((c->buffer.data = malloc(FOLLOW_READ)) != NULL)
        c->buffer.cap = FOLLOW_READ;
    c->opts = *opts;
    c->v.opts = &c->opts;
    c->v.prefix = c->opts.prefix;
    c->v.next_progress = 1000000;
    raise_fd_limit(&c->was);
    return c;
}

/* Reads the spool on from c->at to limit (UINT64_MAX: its end). */
static void read_on(ur_converter *c, uint64_t limit)
{
    if (c->read_failed)
        return;
    uint64_t end = 0;
    if (ur_spool_read_range(c->fd, c->at, limit, on_chunk, &c->v, &end, &c->buffer) != 0) {
        c->read_failed = 1;
        c->read_errno = errno;
    }
    c->at = end;
}

/* The PROCESS chunks only: each process's database made ahead. */
static void on_process_chunk(void *arg, const ur_chunk_t *c, const uint8_t *payload)
{
    struct converter *v = arg;
    if (!v->error && c->type == UR_CHUNK_PROCESS)
        open_proc(v, c, payload);
}

/* The conversion proper begins: the databases are sized by the spool as it is
 * now (the whole of it at the finish), those made ahead too. */
static void begin(ur_converter *c, uint64_t spool_bytes)
{
    c->v.spool_bytes = spool_bytes;
    size_made_ahead(&c->v);
}

/* Converts up to complete (ur_converter_follow, ur_converter_follow_closed). */
static void follow(ur_converter *c, uint64_t complete)
{
    if (c->at == 0)
        begin(c, complete);
    else if (complete > c->v.spool_bytes)
        c->v.spool_bytes = complete; /* a process that starts from now: sized by the spool so far */
    if (complete > c->at)
        read_on(c, complete);
}

void ur_converter_follow(ur_converter *c, uint64_t complete)
{
    if (c->at == 0 && complete < UO_DB_SMALL_SOURCE_BYTES) {
        /* A small spool (a short process, so far): its records wait for the
         * end, where they take little time, but each process's database is
         * made now (its schema, statements and file: most of a short
         * process's conversion), small as the spool is. */
        if (complete > c->made_ahead && !c->read_failed) {
            uint64_t end = 0;
            c->v.spool_bytes = complete;
            if (ur_spool_read_range(c->fd, c->made_ahead, complete, on_process_chunk, &c->v, &end,
                                    &c->buffer) == 0)
                c->made_ahead = end;
        }
        return;
    }
    follow(c, complete);
}

void ur_converter_follow_closed(ur_converter *c, uint64_t complete) { follow(c, complete); }

int ur_convert_with(const ur_convert_opts *opts)
{
    ur_converter *c = ur_converter_open(opts);
    return c != NULL ? ur_converter_finish(c, opts->losses, opts->num_losses) : 1;
}

int ur_converter_finish(ur_converter *c, const ur_loss *losses, size_t num_losses)
{
    c->opts.losses = losses;
    c->opts.num_losses = num_losses;
    const ur_convert_opts *opts = &c->opts;
    const char *spool = opts->spool;
    int stats = opts->stats;
    struct converter *v = &c->v;
    struct stat st;
    uint64_t size = fstat(c->fd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
    if (c->at == 0)
        begin(c, size);
    v->progress = isatty(2); /* (not while the program runs: its terminal) */
    /* A writer for what is left, where that is much: a short process's few
     * records took longer with one (its start, and its waits for work). */
    if (size >= c->at + WRITER_FROM_BYTES && (v->writer = uo_page_writer_start()) != NULL)
        for (size_t i = 0; i < v->num_procs; i++)
            uo_db_set_page_writer(v->procs[i].db, v->writer);
    read_on(c, UINT64_MAX);
    size_t used = (size_t)c->at;
    int read_rc = c->read_failed ? -1 : 0;
    int read_errno = c->read_errno;
    close(c->fd);
    ur_spool_buffer_free(&c->buffer);
    if (v->progress && v->records >= 1000000)
        fprintf(stderr, "\n");
    int rc = used == 0 || v->error || read_rc != 0;
    if (read_rc != 0)
        uo_report("cannot read %s: %s", spool, strerror(read_errno));
    else if (used == 0)
        uo_report("%s is not a spool", spool);
    uint64_t all_records = 0, all_drops = 0;
    size_t num_processes = 0;
    for (size_t i = 0; i < v->num_procs; i++) {
        struct proc *p = &v->procs[i];
        if (p->owner != i)
            continue; /* another image of a process: its counts are the owner's */
        num_processes++;
        uint64_t no_slot = 0, drops = proc_drops(v, i, &no_slot);
        all_records += p->records;
        all_drops += drops;
        uint64_t not_stored = 0;
        for (size_t k = 0; k < opts->num_losses; k++)
            if (opts->losses[k].pid == p->hdr.pid)
                not_stored += opts->losses[k].records;
        uo_db_set_tally(p->db, p->records, drops);
        set_metadata_count(p->db, "records_malformed", p->malformed);
        set_metadata_count(p->db, "tool_records_skipped", p->tool_skipped);
        set_metadata_count(p->db, "records_dropped_no_slot", no_slot);
        set_metadata_count(p->db, "records_not_stored", not_stored);
        uint64_t waits = 0, wait_ns = 0, room_ns = 0;
        for (size_t r = i; r < v->num_procs; r++) {
            if (v->procs[r].owner != i)
                continue;
            for (uint32_t s = 0; s < v->procs[r].hdr.max_slots; s++) {
                waits += v->procs[r].waits[s];
                wait_ns += v->procs[r].wait_ns[s];
                room_ns += v->procs[r].room_ns[s];
            }
        }
        set_metadata_count(p->db, "ring_waits", waits);
        set_metadata_count(p->db, "ring_wait_ns", wait_ns);
        set_metadata_count(p->db, "ring_wait_room_ns", room_ns);
        write_images(v, i);
        if (drops > no_slot)
            uo_report("process %lld: %llu records were dropped (ring full)",
                    (long long)p->hdr.pid, (unsigned long long)(drops - no_slot));
        if (no_slot != 0)
            uo_report("process %lld: %llu records were dropped (a thread found no free slot: "
                      "UPTI_TRACE_RING_SLOTS)", (long long)p->hdr.pid, (unsigned long long)no_slot);
        if (p->malformed != 0)
            uo_report("process %lld: %llu malformed records skipped",
                    (long long)p->hdr.pid, (unsigned long long)p->malformed);
        uint64_t held = 0, filtered = 0;
        int complete = close_proc(opts, p, &held, &filtered) == 0;
        if (!complete) {
            /* Written after the fact (no journal, one commit): a database
             * that cannot be completed holds nothing; the spool still has
             * every record it was given. */
            (void)held;
            uo_report("pid %lld: its database could not be completed: the %llu "
                            "records of the spool are not in a database",
                    (long long)p->hdr.pid, (unsigned long long)(p->records - filtered));
            rc = 1;
        } else if (!opts->quiet) {
            printf("%s\n", p->path);
        }
        if (opts->converted != NULL)
            opts->converted(opts->arg, p->path, p->hdr.pid, complete);
        free(p->path);
    }
    uo_page_writer_stop(v->writer); /* (every database is closed: it has nothing left) */
    for (size_t i = 0; i < v->num_procs; i++) {
        free(v->procs[i].tid);
        free(v->procs[i].dropped);
        free(v->procs[i].waits);
        ur_op_names_free(&v->procs[i].names);
    }
    if (stats)
        printf("converted %llu records, %llu dropped, %zu processes\n",
               (unsigned long long)all_records, (unsigned long long)all_drops, num_processes);
    free(v->procs);
    if (c->was.rlim_cur != RLIM_INFINITY)
        setrlimit(RLIMIT_NOFILE, &c->was); /* (every database is closed) */
    free(c);
    return rc;
}
