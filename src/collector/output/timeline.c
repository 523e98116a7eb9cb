/* SPDX-License-Identifier: MIT */
/* Timelines from a trace database: Perfetto protobuf and Chrome trace-event JSON.
 *
 * One driver walks the database in track order and hands tracks and events to
 * a sink. Tracks: one per process (the group), one per host thread (API
 * slices, push/pop regions nested, marks as instants), lanes for start/stop
 * ranges, and one per device queue (kernels, copies; extra lanes where
 * operations overlap). Flow arrows go from an API call to the device
 * operations with its correlation id. Events on a track are emitted in
 * timestamp order with proper nesting, so both formats need no re-sorting.
 * Counter tracks: memory allocated per device, commands in flight per queue,
 * records dropped. The Perfetto trace declares its clock: UPTI's clock is
 * CLOCK_MONOTONIC_RAW, Perfetto's builtin clock 5; the database's clock
 * snapshots (metadata clock_snapshot, clock_snapshot_end, taken by its
 * writer) tie it to BOOTTIME, MONOTONIC and REALTIME, so the trace lines up
 * with other Perfetto traces of the same machine and boot.
 */
#include "manifest.h"
#include "out_files.h"
#include "output.h"
#include "safe_open.h"

#include <upti/types.h>

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 6

enum arg_name { A_CORRELATION = 1, A_GRID, A_WORKGROUP, A_BYTES, A_DIRECTION, A_KERNEL_ID,
                A_STATUS, A_DEPTH, A_COLOR, A_PAYLOAD, A_EXTERNAL, A_RESULT, A_COUNT };
static const char *const k_arg_names[A_COUNT] = {
    NULL, "correlation_id", "grid", "workgroup", "bytes", "direction", "kernel_id",
    "status", "depth", "color", "payload", "external_id", "result"};

/* How an argument's value reads (tl_args.str): an unsigned number, a string id, a signed number. */
enum { ARG_UINT = 0, ARG_STRING = 1, ARG_INT = 2 };

typedef struct tl_args {
    int n;
    int name[MAX_ARGS];       /* enum arg_name */
    uint64_t val[MAX_ARGS];   /* integer value, or string id if str[i] */
    int str[MAX_ARGS];
} tl_args;

typedef struct tl_sink tl_sink;
struct tl_sink {
    void (*process)(tl_sink *s, uint64_t uuid, int64_t pid, const char *name);
    /* tid < 0: a custom track under its process. */
    void (*track)(tl_sink *s, uint64_t uuid, uint64_t parent, int64_t pid, int64_t tid,
                  const char *name);
    void (*begin)(tl_sink *s, uint64_t track, uint64_t ts, uint64_t end, int64_t name_id,
                  const char *cat, uint64_t flow_out, uint64_t flow_in, const tl_args *args);
    void (*end)(tl_sink *s, uint64_t track, uint64_t ts);
    void (*instant)(tl_sink *s, uint64_t track, uint64_t ts, int64_t name_id, const char *cat,
                    const tl_args *args);
    /* A counter track under a process (bytes: its values are sizes, else counts). */
    void (*counter_track)(tl_sink *s, uint64_t uuid, uint64_t parent, int64_t pid,
                          const char *name, int bytes);
    void (*counter)(tl_sink *s, uint64_t track, uint64_t ts, int64_t value);
    /* Before the first track; may be NULL. */
    void (*header)(tl_sink *s, sqlite3 *db);
    void (*finish)(tl_sink *s);
    uo_buf out;
    char **strings; /* by string id */
    size_t nstrings;
};

static const char *str_of(tl_sink *s, int64_t id)
{
    return (id > 0 && (size_t)id < s->nstrings && s->strings[id]) ? s->strings[id] : "";
}

/* ---- track identities ---- */
enum { T_PROCESS = 0, T_THREAD = 1, T_RANGE = 2, T_QUEUE = 3, T_MEMORY = 4, T_IN_FLIGHT = 5,
       T_DROPPED = 6 };
static uint64_t uuid_of(int64_t process, int type, uint64_t n)
{
    return ((uint64_t)process << 40) | ((uint64_t)type << 36) | (n & 0xFFFFFFFFFull);
}
static uint64_t flow_of(int64_t process, uint64_t corr)
{
    return ((uint64_t)process << 44) ^ corr;
}

/* ================= Perfetto protobuf sink ================= */

typedef struct pb_sink {
    tl_sink base;
    uo_buf msg, ev, tmp; /* scratch: packet body, track event, nested */
    uint8_t *interned;   /* string ids already sent */
    size_t ninterned;
    int first;
} pb_sink;

static void pb_varint(uo_buf *b, uint64_t v)
{
    char *d = uo_buf_reserve(b, 10);
    if (d == NULL)
        return;
    size_t n = 0;
    while (v >= 0x80) {
        d[n++] = (char)((v & 0x7F) | 0x80);
        v >>= 7;
    }
    d[n++] = (char)v;
    b->len += n;
}
static void pb_tag(uo_buf *b, uint32_t field, uint32_t wire) { pb_varint(b, (field << 3) | wire); }
static void pb_uint(uo_buf *b, uint32_t field, uint64_t v)
{
    pb_tag(b, field, 0);
    pb_varint(b, v);
}
static void pb_fixed64(uo_buf *b, uint32_t field, uint64_t v)
{
    pb_tag(b, field, 1);
    char *d = uo_buf_reserve(b, 8);
    if (d == NULL)
        return;
    for (int i = 0; i < 8; i++)
        d[i] = (char)(v >> (8 * i));
    b->len += 8;
}
static void pb_bytes(uo_buf *b, uint32_t field, const void *p, size_t n)
{
    pb_tag(b, field, 2);
    pb_varint(b, n);
    uo_buf_put(b, p, n);
}
static void pb_string(uo_buf *b, uint32_t field, const char *s) { pb_bytes(b, field, s, strlen(s)); }

/* Emits msg as one Trace.packet and clears it. */
static void pb_packet(pb_sink *p)
{
    pb_bytes(&p->base.out, 1, p->msg.data, p->msg.len);
    p->msg.len = 0;
    uo_buf_flush(&p->base.out, 1 << 20);
}

static void pb_seq(pb_sink *p, int needs_state)
{
    pb_uint(&p->msg, 10, 1); /* trusted_packet_sequence_id */
    if (p->first) {
        pb_uint(&p->msg, 13, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
        p->first = 0;
        /* Interned debug-annotation names, sent once. */
        p->tmp.len = 0;
        uo_buf ent;
        uo_buf_init(&ent, NULL);
        for (int i = 1; i < A_COUNT; i++) {
            ent.len = 0;
            pb_uint(&ent, 1, (uint64_t)i);
            pb_string(&ent, 2, k_arg_names[i]);
            pb_bytes(&p->tmp, 3, ent.data, ent.len); /* debug_annotation_names */
        }
        uo_buf_free(&ent);
        pb_bytes(&p->msg, 12, p->tmp.data, p->tmp.len);
    } else if (needs_state) {
        pb_uint(&p->msg, 13, 2); /* SEQ_NEEDS_INCREMENTAL_STATE */
    }
}

static void pb_process(tl_sink *s, uint64_t uuid, int64_t pid, const char *name)
{
    pb_sink *p = (pb_sink *)s;
    p->ev.len = 0;
    pb_uint(&p->ev, 1, uuid);
    p->tmp.len = 0;
    pb_uint(&p->tmp, 1, (uint64_t)pid);
    pb_string(&p->tmp, 6, name);
    pb_bytes(&p->ev, 3, p->tmp.data, p->tmp.len);
    pb_seq(p, 0);
    pb_bytes(&p->msg, 60, p->ev.data, p->ev.len);
    pb_packet(p);
}

static void pb_track(tl_sink *s, uint64_t uuid, uint64_t parent, int64_t pid, int64_t tid,
                     const char *name)
{
    pb_sink *p = (pb_sink *)s;
    p->ev.len = 0;
    pb_uint(&p->ev, 1, uuid);
    if (tid >= 0) {
        p->tmp.len = 0;
        pb_uint(&p->tmp, 1, (uint64_t)pid);
        pb_uint(&p->tmp, 2, (uint64_t)tid);
        pb_string(&p->tmp, 5, name);
        pb_bytes(&p->ev, 4, p->tmp.data, p->tmp.len);
    } else {
        pb_string(&p->ev, 2, name);
        pb_uint(&p->ev, 5, parent);
    }
    pb_seq(p, 0);
    pb_bytes(&p->msg, 60, p->ev.data, p->ev.len);
    pb_packet(p);
}

/* Interns the name in this packet if new; returns its iid. */
static uint64_t pb_name(pb_sink *p, int64_t name_id)
{
    if (name_id <= 0 || (size_t)name_id >= p->ninterned)
        name_id = 0;
    if (!p->interned[name_id]) {
        p->interned[name_id] = 1;
        p->tmp.len = 0;
        uo_buf ent;
        uo_buf_init(&ent, NULL);
        pb_uint(&ent, 1, (uint64_t)name_id + 1);
        pb_string(&ent, 2, str_of(&p->base, name_id));
        pb_bytes(&p->tmp, 2, ent.data, ent.len); /* event_names */
        uo_buf_free(&ent);
        pb_bytes(&p->msg, 12, p->tmp.data, p->tmp.len);
    }
    return (uint64_t)name_id + 1;
}

static void pb_args(pb_sink *p, const tl_args *a)
{
    for (int i = 0; a && i < a->n; i++) {
        p->tmp.len = 0;
        pb_uint(&p->tmp, 1, (uint64_t)a->name[i]); /* name_iid */
        if (a->str[i] == ARG_STRING)
            pb_string(&p->tmp, 6, str_of(&p->base, (int64_t)a->val[i]));
        else if (a->str[i] == ARG_INT)
            pb_uint(&p->tmp, 4, a->val[i]); /* int_value: two's complement varint */
        else
            pb_uint(&p->tmp, 3, a->val[i]); /* uint_value */
        pb_bytes(&p->ev, 4, p->tmp.data, p->tmp.len);
    }
}

static void pb_event(pb_sink *p, int type, uint64_t track, uint64_t ts, int64_t name_id,
                     uint64_t flow_out, uint64_t flow_in, const tl_args *args)
{
    p->ev.len = 0;
    pb_uint(&p->ev, 9, (uint64_t)type);
    pb_uint(&p->ev, 11, track);
    if (type != 2) {
        uint64_t iid = pb_name(p, name_id); /* may add interned_data to msg */
        pb_uint(&p->ev, 10, iid);
        if (flow_out)
            pb_fixed64(&p->ev, 47, flow_out);
        if (flow_in)
            pb_fixed64(&p->ev, 48, flow_in);
        pb_args(p, args);
    }
    pb_uint(&p->msg, 8, ts);
    pb_seq(p, 1);
    pb_bytes(&p->msg, 11, p->ev.data, p->ev.len);
    pb_packet(p);
}

static void pb_begin(tl_sink *s, uint64_t track, uint64_t ts, uint64_t end, int64_t name_id,
                     const char *cat, uint64_t flow_out, uint64_t flow_in, const tl_args *args)
{
    (void)end;
    (void)cat;
    pb_event((pb_sink *)s, 1, track, ts, name_id, flow_out, flow_in, args);
}
static void pb_end(tl_sink *s, uint64_t track, uint64_t ts)
{
    pb_event((pb_sink *)s, 2, track, ts, 0, 0, 0, NULL);
}
static void pb_instant(tl_sink *s, uint64_t track, uint64_t ts, int64_t name_id, const char *cat,
                       const tl_args *args)
{
    (void)cat;
    pb_event((pb_sink *)s, 3, track, ts, name_id, 0, 0, args);
}
static void pb_counter_track(tl_sink *s, uint64_t uuid, uint64_t parent, int64_t pid,
                             const char *name, int bytes)
{
    pb_sink *p = (pb_sink *)s;
    (void)pid;
    p->ev.len = 0;
    pb_uint(&p->ev, 1, uuid);
    pb_string(&p->ev, 2, name);
    pb_uint(&p->ev, 5, parent);
    p->tmp.len = 0;
    pb_uint(&p->tmp, 3, bytes ? 3 : 2); /* CounterDescriptor.unit: UNIT_SIZE_BYTES, UNIT_COUNT */
    pb_bytes(&p->ev, 8, p->tmp.data, p->tmp.len); /* TrackDescriptor.counter */
    pb_seq(p, 0);
    pb_bytes(&p->msg, 60, p->ev.data, p->ev.len);
    pb_packet(p);
}

static void pb_counter(tl_sink *s, uint64_t track, uint64_t ts, int64_t value)
{
    pb_sink *p = (pb_sink *)s;
    p->ev.len = 0;
    pb_uint(&p->ev, 9, 4); /* TYPE_COUNTER */
    pb_uint(&p->ev, 11, track);
    pb_uint(&p->ev, 30, (uint64_t)value); /* counter_value (int64) */
    pb_uint(&p->msg, 8, ts);
    pb_seq(p, 1);
    pb_bytes(&p->msg, 11, p->ev.data, p->ev.len);
    pb_packet(p);
}

/* Perfetto's builtin clock ids (protos/perfetto/common/builtin_clock.proto). */
enum { PB_CLOCK_REALTIME = 1, PB_CLOCK_MONOTONIC = 3, PB_CLOCK_MONOTONIC_RAW = 5,
       PB_CLOCK_BOOTTIME = 6 };

/* A clock snapshot from the database's metadata key: 1 if read. */
static int read_snapshot(sqlite3 *db, const char *key, unsigned long long v[4])
{
    sqlite3_stmt *st;
    int ok = 0;
    if (sqlite3_prepare_v2(db, "SELECT value FROM metadata WHERE key = ?", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        ok = t && sscanf(t, "monotonic_raw=%llu boottime=%llu monotonic=%llu realtime=%llu", &v[0],
                         &v[1], &v[2], &v[3]) == 4;
    }
    sqlite3_finalize(st);
    return ok;
}

/* ClockSnapshot (TracePacket field 6) into msg. */
static void pb_snapshot(pb_sink *p, const unsigned long long v[4])
{
    static const unsigned k_ids[4] = {PB_CLOCK_MONOTONIC_RAW, PB_CLOCK_BOOTTIME, PB_CLOCK_MONOTONIC,
                                      PB_CLOCK_REALTIME};
    p->ev.len = 0;
    for (int i = 0; i < 4; i++) {
        p->tmp.len = 0;
        pb_uint(&p->tmp, 1, k_ids[i]); /* Clock.clock_id */
        pb_uint(&p->tmp, 2, v[i]);     /* Clock.timestamp */
        pb_bytes(&p->ev, 1, p->tmp.data, p->tmp.len);
    }
    pb_bytes(&p->msg, 6, p->ev.data, p->ev.len);
}

/* The first packet: the sequence's state (interned names) and, where the
 * database holds its clock snapshots, the defaults (every timestamp is on
 * MONOTONIC_RAW) and the snapshot; the snapshot at its end in a second one. */
static void pb_header(tl_sink *s, sqlite3 *db)
{
    pb_sink *p = (pb_sink *)s;
    unsigned long long start[4], end[4];
    int have_start = read_snapshot(db, "clock_snapshot", start);
    int have_end = read_snapshot(db, "clock_snapshot_end", end);
    pb_seq(p, 0);
    if (have_start) {
        p->tmp.len = 0;
        pb_uint(&p->tmp, 58, PB_CLOCK_MONOTONIC_RAW); /* TracePacketDefaults.timestamp_clock_id */
        pb_bytes(&p->msg, 59, p->tmp.data, p->tmp.len);
        pb_snapshot(p, start);
    }
    pb_packet(p);
    if (have_start && have_end) {
        pb_uint(&p->msg, 10, 1);
        pb_snapshot(p, end);
        pb_packet(p);
    }
}

static void pb_finish(tl_sink *s) { (void)s; }

/* ================= Chrome JSON sink ================= */

typedef struct json_sink {
    tl_sink base;
    uo_map tracks; /* uuid → index + 1 into pid/tid arrays */
    int64_t *pid, *tid;
    size_t ntracks, cap;
    int64_t next_tid;
    int first;
    uo_map counters; /* counter track uuid → index + 1 into cpid/cname */
    int64_t *cpid;
    char **cname;
    size_t ncounters, ccap;
} json_sink;

static void js_sep(json_sink *j)
{
    if (!j->first)
        uo_buf_puts(&j->base.out, ",\n");
    j->first = 0;
}

static void js_ts(uo_buf *b, uint64_t ns)
{
    char *d = uo_buf_reserve(b, 32);
    if (d == NULL)
        return;
    b->len += (size_t)snprintf(d, 32, "%llu.%03u", (unsigned long long)(ns / 1000),
                               (unsigned)(ns % 1000));
}

static void js_add_track(json_sink *j, uint64_t uuid, int64_t pid, int64_t tid)
{
    /* Two arrays of one capacity: it is raised once both have grown. */
    size_t pid_cap = j->cap, tid_cap = j->cap;
    if (uo_grow(&j->pid, &pid_cap, j->ntracks + 1, sizeof *j->pid, 64) != 0 ||
        uo_grow(&j->tid, &tid_cap, j->ntracks + 1, sizeof *j->tid, 64) != 0) {
        j->base.out.error = 1;
        return;
    }
    j->cap = pid_cap;
    j->pid[j->ntracks] = pid;
    j->tid[j->ntracks] = tid;
    uint64_t *v = uo_map_insert(&j->tracks, uuid, NULL);
    if (v)
        *v = ++j->ntracks;
}

static void js_process(tl_sink *s, uint64_t uuid, int64_t pid, const char *name)
{
    json_sink *j = (json_sink *)s;
    js_add_track(j, uuid, pid, pid);
    js_sep(j);
    uo_buf_printf(&s->out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,\"args\":{\"name\":",
                  (long long)pid);
    uo_json_string(&s->out, name);
    uo_buf_puts(&s->out, "}}");
}

static void js_track(tl_sink *s, uint64_t uuid, uint64_t parent, int64_t pid, int64_t tid,
                     const char *name)
{
    json_sink *j = (json_sink *)s;
    (void)parent;
    if (tid < 0)
        tid = j->next_tid++; /* custom tracks: synthetic thread ids */
    js_add_track(j, uuid, pid, tid);
    js_sep(j);
    uo_buf_printf(&s->out,
                  "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"name\":",
                  (long long)pid, (long long)tid);
    uo_json_string(&s->out, name);
    uo_buf_puts(&s->out, "}}");
    js_sep(j);
    uo_buf_printf(&s->out,
                  "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%lld,\"tid\":%lld,"
                  "\"args\":{\"sort_index\":%lld}}",
                  (long long)pid, (long long)tid, (long long)(j->ntracks));
}

static void js_where(json_sink *j, uint64_t track)
{
    uint64_t *v = uo_map_find(&j->tracks, track);
    int64_t pid = 0, tid = 0;
    if (v) {
        pid = j->pid[*v - 1];
        tid = j->tid[*v - 1];
    }
    uo_buf_printf(&j->base.out, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", (long long)pid,
                  (long long)tid);
}

static void js_args(json_sink *j, const tl_args *a)
{
    if (a == NULL || a->n == 0)
        return;
    uo_buf *b = &j->base.out;
    uo_buf_puts(b, ",\"args\":{");
    for (int i = 0; i < a->n; i++) {
        if (i)
            uo_buf_putc(b, ',');
        uo_buf_putc(b, '"');
        uo_buf_puts(b, k_arg_names[a->name[i]]);
        uo_buf_puts(b, "\":");
        if (a->str[i] == ARG_STRING)
            uo_json_string(b, str_of(&j->base, (int64_t)a->val[i]));
        else if (a->str[i] == ARG_INT)
            uo_buf_put_i64(b, (int64_t)a->val[i]);
        else
            uo_buf_put_u64(b, a->val[i]);
    }
    uo_buf_putc(b, '}');
}

static void js_begin(tl_sink *s, uint64_t track, uint64_t ts, uint64_t end, int64_t name_id,
                     const char *cat, uint64_t flow_out, uint64_t flow_in, const tl_args *args)
{
    json_sink *j = (json_sink *)s;
    uo_buf *b = &s->out;
    js_sep(j);
    uo_buf_puts(b, "{\"ph\":\"X\",\"cat\":\"");
    uo_buf_puts(b, cat);
    uo_buf_puts(b, "\",\"name\":");
    uo_json_string(b, str_of(s, name_id));
    js_where(j, track);
    js_ts(b, ts);
    uo_buf_puts(b, ",\"dur\":");
    js_ts(b, end - ts);
    js_args(j, args);
    uo_buf_putc(b, '}');
    if (flow_out || flow_in) {
        js_sep(j);
        uo_buf_printf(b, "{\"ph\":\"%s\",\"cat\":\"correlation\",\"name\":\"correlation\",\"id\":%llu",
                      flow_out ? "s" : "f\",\"bp\":\"e", (unsigned long long)(flow_out ? flow_out : flow_in));
        js_where(j, track);
        js_ts(b, ts);
        uo_buf_putc(b, '}');
    }
    uo_buf_flush(b, 1 << 20);
}
static void js_end(tl_sink *s, uint64_t track, uint64_t ts)
{
    (void)s;
    (void)track;
    (void)ts;
}
static void js_instant(tl_sink *s, uint64_t track, uint64_t ts, int64_t name_id, const char *cat,
                       const tl_args *args)
{
    json_sink *j = (json_sink *)s;
    uo_buf *b = &s->out;
    js_sep(j);
    uo_buf_puts(b, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"");
    uo_buf_puts(b, cat);
    uo_buf_puts(b, "\",\"name\":");
    uo_json_string(b, str_of(s, name_id));
    js_where(j, track);
    js_ts(b, ts);
    js_args(j, args);
    uo_buf_putc(b, '}');
    uo_buf_flush(b, 1 << 20);
}
static void js_counter_track(tl_sink *s, uint64_t uuid, uint64_t parent, int64_t pid,
                             const char *name, int bytes)
{
    json_sink *j = (json_sink *)s;
    (void)parent;
    (void)bytes;
    size_t pid_cap = j->ccap, name_cap = j->ccap;
    char *copy = strdup(name);
    if (copy == NULL || uo_grow(&j->cpid, &pid_cap, j->ncounters + 1, sizeof *j->cpid, 16) != 0 ||
        uo_grow(&j->cname, &name_cap, j->ncounters + 1, sizeof *j->cname, 16) != 0) {
        free(copy);
        s->out.error = 1;
        return;
    }
    j->ccap = pid_cap;
    j->cpid[j->ncounters] = pid;
    j->cname[j->ncounters] = copy;
    uint64_t *v = uo_map_insert(&j->counters, uuid, NULL);
    if (v)
        *v = ++j->ncounters;
}

static void js_counter(tl_sink *s, uint64_t track, uint64_t ts, int64_t value)
{
    json_sink *j = (json_sink *)s;
    uint64_t *v = uo_map_find(&j->counters, track);
    if (v == NULL)
        return;
    uo_buf *b = &s->out;
    js_sep(j);
    uo_buf_puts(b, "{\"ph\":\"C\",\"name\":");
    uo_json_string(b, j->cname[*v - 1]);
    uo_buf_printf(b, ",\"pid\":%lld,\"ts\":", (long long)j->cpid[*v - 1]);
    js_ts(b, ts);
    uo_buf_printf(b, ",\"args\":{\"value\":%lld}}", (long long)value);
    uo_buf_flush(b, 1 << 20);
}

static void js_finish(tl_sink *s)
{
    uo_buf_puts(&s->out, "\n],\"displayTimeUnit\":\"ns\"}\n");
}

/* ================= the driver ================= */

typedef struct open_slice {
    uint64_t end;
} open_slice;

typedef struct stack {
    open_slice *s;
    size_t n, cap;
} stack;

static void stack_close_until(tl_sink *sink, stack *st, uint64_t track, uint64_t ts)
{
    while (st->n > 0 && st->s[st->n - 1].end <= ts) {
        st->n--;
        sink->end(sink, track, st->s[st->n].end);
    }
}

static int stack_push(stack *st, uint64_t end)
{
    if (uo_grow(&st->s, &st->cap, st->n + 1, sizeof *st->s, 16) != 0)
        return -1;
    st->s[st->n++].end = end;
    return 0;
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, char *err, size_t errlen)
{
    if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}

static void add_arg(tl_args *a, int name, uint64_t v, int is_str)
{
    if (a->n < MAX_ARGS) {
        a->name[a->n] = name;
        a->val[a->n] = v;
        a->str[a->n] = is_str;
        a->n++;
    }
}

/* Lanes: a track where operations overlap gets extra lanes (greedy by start). */
typedef struct lanes {
    uint64_t *end;
    size_t n, cap;
} lanes;

static size_t lane_pick(lanes *l, uint64_t start, uint64_t end, int *is_new)
{
    *is_new = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->end[i] <= start) {
            l->end[i] = end;
            return i;
        }
    }
    if (l->n == 255) { /* cap: reuse the lane that frees first */
        size_t best = 0;
        for (size_t i = 1; i < l->n; i++)
            if (l->end[i] < l->end[best])
                best = i;
        l->end[best] = end;
        return best;
    }
    if (uo_grow(&l->end, &l->cap, l->n + 1, sizeof *l->end, 4) != 0)
        return 0;
    l->end[l->n] = end;
    *is_new = 1;
    return l->n++;
}

/* sqlite3_step for a loop over rows: 1 on a row; 0 at the end, with *bad set
 * (and SQLite's message kept in db) when it ended in an error. */
static int step_row(sqlite3 *db, sqlite3_stmt *st, int *bad, char *err, size_t errlen)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc != SQLITE_DONE && !*bad) {
        *bad = 1;
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
    }
    return 0;
}

static int load_strings(sqlite3 *db, tl_sink *s, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (prepare(db, "SELECT max(id) FROM string", &st, err, errlen))
        return -1;
    int64_t max = 0;
    int bad = 0;
    if (step_row(db, st, &bad, err, errlen))
        max = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (bad)
        return -1;
    s->nstrings = (size_t)max + 1;
    s->strings = calloc(s->nstrings, sizeof *s->strings);
    if (s->strings == NULL)
        return -1;
    if (prepare(db, "SELECT id, string FROM string", &st, err, errlen))
        return -1;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *t = (const char *)sqlite3_column_text(st, 1);
        if (id > 0 && id <= max && t) {
            free(s->strings[id]); /* a corrupt file may repeat an id */
            s->strings[id] = strdup(t);
        }
    }
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* ---- counter tracks ---- */

typedef struct counter_state {
    uint64_t track;
    int64_t value, last;  /* the running value; the one last emitted */
    uint64_t ts;          /* the time of the changes not yet emitted */
    int pending, emitted;
} counter_state;

/* Emits the value reached at c->ts (once all changes at that time are in). */
static void counter_flush(tl_sink *sink, counter_state *c)
{
    if (c->pending && (!c->emitted || c->value != c->last)) {
        sink->counter(sink, c->track, c->ts, c->value);
        c->last = c->value;
        c->emitted = 1;
    }
    c->pending = 0;
}

static void counter_add(tl_sink *sink, counter_state *c, uint64_t ts, int64_t delta)
{
    if (c->pending && ts != c->ts)
        counter_flush(sink, c);
    c->ts = ts;
    c->value += delta;
    c->pending = 1;
}

static int64_t pid_of(uo_map *pids, int64_t proc)
{
    uint64_t *pid = uo_map_find(pids, (uint64_t)proc);
    return pid ? (int64_t)*pid : 0;
}

/* Memory allocated per device: + an allocation's size, - the size of the
 * allocation a release names (a release of an allocation made before the
 * trace changes nothing); one value per time it changes. */
static int memory_counters(sqlite3 *db, tl_sink *sink, uo_map *pids, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (prepare(db, "SELECT m.process_id, m.agent_handle, s.string, m.handle, m.size, m.timestamp,"
                    " (SELECT name FROM info_agent g WHERE g.process_id = m.process_id"
                    " AND g.handle = m.agent_handle LIMIT 1) FROM memory_allocate m"
                    " LEFT JOIN string s ON s.id = m.operation_id WHERE m.timestamp > 0"
                    " AND s.string IN ('ALLOCATE', 'FREE') ORDER BY 1, 2, 6, m.id",
                &st, err, errlen))
        return -1;
    counter_state c = {0};
    uo_map sizes;
    uo_map_init(&sizes);
    int64_t cur_proc = -1, cur_agent = 0;
    int bad = 0;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t proc = sqlite3_column_int64(st, 0), agent = sqlite3_column_int64(st, 1);
        const char *op = (const char *)sqlite3_column_text(st, 2);
        uint64_t handle = (uint64_t)sqlite3_column_int64(st, 3);
        int64_t size = sqlite3_column_int64(st, 4);
        uint64_t ts = (uint64_t)sqlite3_column_int64(st, 5);
        if (proc != cur_proc || agent != cur_agent) {
            counter_flush(sink, &c);
            uo_map_free(&sizes);
            uo_map_init(&sizes);
            cur_proc = proc;
            cur_agent = agent;
            c = (counter_state){.track = uuid_of(proc, T_MEMORY, (uint64_t)agent)};
            const char *dev = (const char *)sqlite3_column_text(st, 6);
            char name[400];
            snprintf(name, sizeof name, "memory allocated: %.300s (agent %lld)",
                     dev ? dev : agent ? "device" : "host", (long long)agent);
            sink->counter_track(sink, c.track, uuid_of(proc, T_PROCESS, 0), pid_of(pids, proc),
                                name, 1);
        }
        if (op != NULL && strcmp(op, "ALLOCATE") == 0) {
            uint64_t *v = uo_map_insert(&sizes, handle, NULL);
            if (v)
                *v = (uint64_t)size;
            counter_add(sink, &c, ts, size);
        } else {
            uint64_t *v = uo_map_find(&sizes, handle);
            if (v) {
                counter_add(sink, &c, ts, -(int64_t)*v);
                uo_map_remove(&sizes, handle);
            }
        }
    }
    counter_flush(sink, &c);
    uo_map_free(&sizes);
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* Commands in flight per queue: each kernel and copy from the time it was
 * queued (else submitted, else started) to its end. Queues are numbered as
 * their tracks are. */
static int in_flight_counters(sqlite3 *db, tl_sink *sink, uo_map *pids, char *err, size_t errlen)
{
    sqlite3_stmt *st;
#define IN_FLIGHT_OF(table)                                                                     \
    " SELECT process_id, queue_handle, CASE WHEN queued > 0 AND queued <= start THEN queued"    \
    " WHEN submit > 0 AND submit <= start THEN submit ELSE start END AS ts, 1 AS d FROM " table \
    " WHERE start > 0 UNION ALL SELECT process_id, queue_handle, max(end, start), -1 FROM "     \
    table " WHERE start > 0"
    if (prepare(db, "SELECT process_id, queue_handle, ts, sum(d) FROM (" IN_FLIGHT_OF(
                        "kernel_dispatch") " UNION ALL" IN_FLIGHT_OF("memory_copy")
                    ") GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
                &st, err, errlen))
        return -1;
#undef IN_FLIGHT_OF
    counter_state c = {0};
    int64_t cur_proc = -1, cur_queue = 0;
    uint64_t qindex = 0;
    int bad = 0;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t proc = sqlite3_column_int64(st, 0), queue = sqlite3_column_int64(st, 1);
        if (proc != cur_proc || queue != cur_queue) {
            counter_flush(sink, &c);
            qindex = proc != cur_proc ? 1 : qindex + 1;
            cur_proc = proc;
            cur_queue = queue;
            c = (counter_state){.track = uuid_of(proc, T_IN_FLIGHT, qindex)};
            char name[128];
            snprintf(name, sizeof name, "commands in flight: queue %llu 0x%llx",
                     (unsigned long long)qindex, (unsigned long long)queue);
            sink->counter_track(sink, c.track, uuid_of(proc, T_PROCESS, 0), pid_of(pids, proc),
                                name, 0);
        }
        counter_add(sink, &c, (uint64_t)sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
    }
    counter_flush(sink, &c);
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* Records dropped (metadata records_dropped: the database's total, known at
 * its end): 0 when its first process starts, the total when it ends. */
static int dropped_counter(sqlite3 *db, tl_sink *sink, uo_map *pids, char *err, size_t errlen)
{
    int64_t dropped = uo_sql_int(db, "SELECT CAST(value AS INTEGER) FROM metadata"
                                     " WHERE key = 'records_dropped'", -1);
    if (dropped < 0)
        return 0;
    sqlite3_stmt *st;
    if (prepare(db, "SELECT id, start, coalesce(nullif(end, 0), (SELECT CAST(value AS INTEGER)"
                    " FROM metadata WHERE key = 'committed'), start) FROM info_process"
                    " WHERE start > 0 ORDER BY id LIMIT 1",
                &st, err, errlen))
        return -1;
    int bad = 0;
    if (step_row(db, st, &bad, err, errlen)) {
        int64_t proc = sqlite3_column_int64(st, 0);
        uint64_t start = (uint64_t)sqlite3_column_int64(st, 1);
        uint64_t end = (uint64_t)sqlite3_column_int64(st, 2);
        uint64_t track = uuid_of(proc, T_DROPPED, 0);
        sink->counter_track(sink, track, uuid_of(proc, T_PROCESS, 0), pid_of(pids, proc),
                            "records dropped", 0);
        sink->counter(sink, track, start, 0);
        sink->counter(sink, track, end > start ? end : start, dropped);
    }
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

static int counters(sqlite3 *db, tl_sink *sink, uo_map *pids, char *err, size_t errlen)
{
    if (memory_counters(db, sink, pids, err, errlen) != 0 ||
        in_flight_counters(db, sink, pids, err, errlen) != 0)
        return -1;
    return dropped_counter(db, sink, pids, err, errlen);
}

static int run_timeline(sqlite3 *db, tl_sink *sink, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    int rc = -1;
    uo_map devcorr, pids;
    uo_map_init(&devcorr);
    uo_map_init(&pids);
    stack stk = {0};
    lanes ln = {0};
    int bad = 0; /* a step that ended in an error (a corrupt database) */

    /* Processes: the track groups. */
    if (prepare(db, "SELECT id, pid, hostname, command FROM info_process ORDER BY id", &st, err,
                errlen))
        goto out;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t id = sqlite3_column_int64(st, 0), pid = sqlite3_column_int64(st, 1);
        const char *host = (const char *)sqlite3_column_text(st, 2);
        const char *cmd = (const char *)sqlite3_column_text(st, 3);
        char name[512];
        snprintf(name, sizeof name, "%.300s (pid %lld on %.100s)", cmd ? cmd : "process",
                 (long long)pid, host ? host : "?");
        uint64_t *v = uo_map_insert(&pids, (uint64_t)id, NULL);
        if (v)
            *v = (uint64_t)pid;
        sink->process(sink, uuid_of(id, T_PROCESS, 0), pid, name);
    }
    sqlite3_finalize(st);

    /* Correlation ids that reached a device: their API calls start flows. The
     * same rows as the device tracks below (start > 0): a command that never
     * ran (failed through an event, or cut short) has no slice to end a flow. */
    if (prepare(db, "SELECT process_id, correlation_id FROM kernel_dispatch WHERE start > 0"
                    " UNION ALL SELECT process_id, correlation_id FROM memory_copy WHERE start > 0",
                &st, err, errlen))
        goto out;
    while (step_row(db, st, &bad, err, errlen))
        uo_map_insert(&devcorr, flow_of(sqlite3_column_int64(st, 0),
                                        (uint64_t)sqlite3_column_int64(st, 1)), NULL);
    sqlite3_finalize(st);

    /* Host threads. */
    if (prepare(db, "SELECT process_id, tid, name_id FROM info_thread ORDER BY process_id, tid",
                &st, err, errlen))
        goto out;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t proc = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
        int64_t name_id = sqlite3_column_int64(st, 2);
        uint64_t *pid = uo_map_find(&pids, (uint64_t)proc);
        char name[300];
        if (name_id > 0)
            snprintf(name, sizeof name, "%.250s", str_of(sink, name_id));
        else
            snprintf(name, sizeof name, "thread %lld", (long long)tid);
        sink->track(sink, uuid_of(proc, T_THREAD, (uint64_t)tid), uuid_of(proc, T_PROCESS, 0),
                    pid ? (int64_t)*pid : 0, tid, name);
    }
    sqlite3_finalize(st);

    /* Host events, per thread in start order (outer first). */
    if (prepare(db,
                "SELECT process_id, tid, start, end, name_id, correlation_id, 0 AS k, external_id,"
                " 0, result FROM api"
                " UNION ALL SELECT process_id, tid, start, end, name_id, correlation_id, 1, depth,"
                " color, payload FROM region WHERE kind = 0"
                " UNION ALL SELECT process_id, tid, timestamp, timestamp, message_id,"
                " correlation_id, 2, 0, color, payload FROM marker WHERE operation = 5"
                " ORDER BY 1, 2, 3, 4 DESC, 7 DESC",
                &st, err, errlen))
        goto out;
    int64_t cur_proc = -1, cur_tid = -1;
    uint64_t track = 0;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t proc = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
        uint64_t start = (uint64_t)sqlite3_column_int64(st, 2);
        uint64_t end = (uint64_t)sqlite3_column_int64(st, 3);
        int64_t name = sqlite3_column_int64(st, 4);
        uint64_t corr = (uint64_t)sqlite3_column_int64(st, 5);
        int k = sqlite3_column_int(st, 6);
        uint64_t x = (uint64_t)sqlite3_column_int64(st, 7);
        uint64_t color = (uint64_t)sqlite3_column_int64(st, 8);
        uint64_t payload = (uint64_t)sqlite3_column_int64(st, 9);
        if (proc != cur_proc || tid != cur_tid) {
            stack_close_until(sink, &stk, track, UINT64_MAX);
            cur_proc = proc;
            cur_tid = tid;
            track = uuid_of(proc, T_THREAD, (uint64_t)tid);
        }
        stack_close_until(sink, &stk, track, start);
        if (end < start)
            end = start;
        if (stk.n > 0 && end > stk.s[stk.n - 1].end)
            end = stk.s[stk.n - 1].end; /* keep nesting proper */
        tl_args a = {0};
        if (k == 2) {
            if (color)
                add_arg(&a, A_COLOR, color, 0);
            if (payload)
                add_arg(&a, A_PAYLOAD, payload, 0);
            sink->instant(sink, track, start, name, "marker", &a);
            continue;
        }
        uint64_t flow = 0;
        if (k == 0) {
            add_arg(&a, A_CORRELATION, corr, 0);
            if (x)
                add_arg(&a, A_EXTERNAL, x, 0);
            if ((int64_t)payload != UPTI_API_RESULT_NONE) /* api: its result in the payload column */
                add_arg(&a, A_RESULT, payload, ARG_INT);
            if (uo_map_find(&devcorr, flow_of(proc, corr)))
                flow = flow_of(proc, corr);
        } else {
            add_arg(&a, A_DEPTH, x, 0);
            if (color)
                add_arg(&a, A_COLOR, color, 0);
            if (payload)
                add_arg(&a, A_PAYLOAD, payload, 0);
        }
        sink->begin(sink, track, start, end, name, k == 0 ? "api" : "marker", flow, 0, &a);
        if (stack_push(&stk, end) != 0)
            goto out_st;
    }
    stack_close_until(sink, &stk, track, UINT64_MAX);
    sqlite3_finalize(st);

    /* Start/stop ranges: lanes under each process. */
    if (prepare(db, "SELECT process_id, start, end, name_id, color, payload FROM region"
                    " WHERE kind = 1 ORDER BY process_id, start",
                &st, err, errlen))
        goto out;
    cur_proc = -1;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t proc = sqlite3_column_int64(st, 0);
        uint64_t start = (uint64_t)sqlite3_column_int64(st, 1);
        uint64_t end = (uint64_t)sqlite3_column_int64(st, 2);
        if (proc != cur_proc) {
            ln.n = 0;
            cur_proc = proc;
        }
        int is_new;
        size_t lane = lane_pick(&ln, start, end, &is_new);
        uint64_t t = uuid_of(proc, T_RANGE, lane);
        if (is_new) {
            char name[64];
            snprintf(name, sizeof name, lane ? "ranges (%zu)" : "ranges", lane + 1);
            uint64_t *pid = uo_map_find(&pids, (uint64_t)proc);
            sink->track(sink, t, uuid_of(proc, T_PROCESS, 0), pid ? (int64_t)*pid : 0, -1, name);
        }
        tl_args a = {0};
        uint64_t color = (uint64_t)sqlite3_column_int64(st, 4);
        uint64_t payload = (uint64_t)sqlite3_column_int64(st, 5);
        if (color)
            add_arg(&a, A_COLOR, color, 0);
        if (payload)
            add_arg(&a, A_PAYLOAD, payload, 0);
        sink->begin(sink, t, start, end, sqlite3_column_int64(st, 3), "marker", 0, 0, &a);
        sink->end(sink, t, end);
    }
    sqlite3_finalize(st);

    /* Device queues: kernels and copies. */
    if (prepare(db,
                "SELECT d.process_id, d.queue_handle, d.start, d.end, d.name_id, d.correlation_id,"
                " d.k, d.a1, d.a2, d.a3, d.status, (SELECT name FROM info_agent g WHERE"
                " g.process_id = d.process_id AND g.handle = d.agent_handle LIMIT 1) FROM ("
                " SELECT process_id, queue_handle, agent_handle, start, end, name_id, correlation_id,"
                " 0 AS k, grid_x * max(grid_y, 1) * max(grid_z, 1) AS a1,"
                " workgroup_x * max(workgroup_y, 1) * max(workgroup_z, 1) AS a2, kernel_id AS a3,"
                " status FROM kernel_dispatch WHERE start > 0"
                " UNION ALL SELECT process_id, queue_handle, agent_handle, start, end, operation_id,"
                " correlation_id, 1, bytes, direction_id, 0, status FROM memory_copy WHERE start > 0"
                ") d ORDER BY 1, 2, 3",
                &st, err, errlen))
        goto out;
    cur_proc = -1;
    int64_t cur_queue = 0;
    uint64_t qindex = 0;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t proc = sqlite3_column_int64(st, 0), queue = sqlite3_column_int64(st, 1);
        uint64_t start = (uint64_t)sqlite3_column_int64(st, 2);
        uint64_t end = (uint64_t)sqlite3_column_int64(st, 3);
        int64_t name = sqlite3_column_int64(st, 4);
        uint64_t corr = (uint64_t)sqlite3_column_int64(st, 5);
        int k = sqlite3_column_int(st, 6);
        if (proc != cur_proc || queue != cur_queue) {
            if (proc != cur_proc)
                qindex = 0;
            qindex++;
            cur_proc = proc;
            cur_queue = queue;
            ln.n = 0;
        }
        if (end < start)
            end = start;
        int is_new;
        size_t lane = lane_pick(&ln, start, end, &is_new);
        uint64_t t = uuid_of(proc, T_QUEUE, (qindex << 8) | lane);
        if (is_new) {
            const char *dev = (const char *)sqlite3_column_text(st, 11);
            char tname[400];
            int n = snprintf(tname, sizeof tname, "queue %llu 0x%llx%s%.300s%s",
                             (unsigned long long)qindex, (unsigned long long)queue,
                             dev ? " (" : "", dev ? dev : "", dev ? ")" : "");
            if (lane > 0 && n > 0 && (size_t)n < sizeof tname)
                snprintf(tname + n, sizeof tname - (size_t)n, " [overlap %zu]", lane);
            uint64_t *pid = uo_map_find(&pids, (uint64_t)proc);
            sink->track(sink, t, uuid_of(proc, T_PROCESS, 0), pid ? (int64_t)*pid : 0, -1, tname);
        }
        tl_args a = {0};
        add_arg(&a, A_CORRELATION, corr, 0);
        if (k == 0) {
            add_arg(&a, A_GRID, (uint64_t)sqlite3_column_int64(st, 7), 0);
            add_arg(&a, A_WORKGROUP, (uint64_t)sqlite3_column_int64(st, 8), 0);
            add_arg(&a, A_KERNEL_ID, (uint64_t)sqlite3_column_int64(st, 9), 0);
        } else {
            add_arg(&a, A_BYTES, (uint64_t)sqlite3_column_int64(st, 7), 0);
            add_arg(&a, A_DIRECTION, (uint64_t)sqlite3_column_int64(st, 8), 1);
        }
        int status = sqlite3_column_int(st, 10);
        if (status != 0)
            add_arg(&a, A_STATUS, (uint64_t)(int64_t)status, 0);
        uint64_t flow = corr ? flow_of(proc, corr) : 0;
        sink->begin(sink, t, start, end, name, k == 0 ? "kernel" : "memory", 0, flow, &a);
        sink->end(sink, t, end);
    }
    sqlite3_finalize(st);
    if (bad || counters(db, sink, &pids, err, errlen) != 0)
        goto out;
    sink->finish(sink);
    rc = 0;
    goto out;
out_st:
    sqlite3_finalize(st);
out:
    free(stk.s);
    free(ln.end);
    uo_map_free(&devcorr);
    uo_map_free(&pids);
    return rc;
}

static int export_with(sqlite3 *db, const char *path, tl_sink *sink, char *err, size_t errlen)
{
    char *part = uo_part_path(path);
    FILE *f = part != NULL ? uo_fopen_new(part, "wb") : NULL;
    if (f == NULL) {
        snprintf(err, errlen, "cannot write %s: %s", part != NULL ? part : path,
                 uo_open_new_reason(errno));
        uo_buf_free(&sink->out); /* what the caller put there already */
        free(part);
        return -1;
    }
    sink->out.out = f;
    int rc = load_strings(db, sink, err, errlen);
    if (rc == 0 && sink->header != NULL)
        sink->header(sink, db);
    if (rc == 0)
        rc = run_timeline(db, sink, err, errlen);
    uo_buf_flush(&sink->out, 0);
    if (sink->out.error && rc == 0) {
        snprintf(err, errlen, "cannot write %s", path);
        rc = -1;
    }
    if (fclose(f) != 0 && rc == 0) {
        snprintf(err, errlen, "cannot write %s: %m", part);
        rc = -1;
    }
    if (uo_part_finish(part, path, rc == 0, err, errlen) != 0)
        rc = -1;
    if (rc == 0)
        uo_note_written(path);
    free(part);
    for (size_t i = 0; i < sink->nstrings; i++)
        free(sink->strings[i]);
    free(sink->strings);
    uo_buf_free(&sink->out);
    return rc;
}

/* Alike on purpose: the Perfetto writer opens, loops and cleans up like the JSON writer above
 * and otf2.c's (each with its own state struct and sink); what they write differs. */
int uo_export_pftrace(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    pb_sink p;
    memset(&p, 0, sizeof p);
    p.base.process = pb_process;
    p.base.track = pb_track;
    p.base.begin = pb_begin;
    p.base.end = pb_end;
    p.base.instant = pb_instant;
    p.base.counter_track = pb_counter_track;
    p.base.counter = pb_counter;
    p.base.header = pb_header;
    p.base.finish = pb_finish;
    uo_buf_init(&p.base.out, NULL);
    uo_buf_init(&p.msg, NULL);
    uo_buf_init(&p.ev, NULL);
    uo_buf_init(&p.tmp, NULL);
    p.first = 1;
    /* interned[] (a flag per string id: its name was already emitted) is sized
     * here from the string table; export_with() loads the strings themselves. */
    sqlite3_stmt *st;
    int64_t max = 0;
    if (sqlite3_prepare_v2(db, "SELECT max(id) FROM string", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            max = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    p.ninterned = (size_t)max + 1;
    p.interned = calloc(p.ninterned, 1);
    if (p.interned == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = export_with(db, path, &p.base, err, errlen);
    free(p.interned);
    uo_buf_free(&p.msg);
    uo_buf_free(&p.ev);
    uo_buf_free(&p.tmp);
    return rc;
}

int uo_export_json(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    json_sink j;
    memset(&j, 0, sizeof j);
    j.base.process = js_process;
    j.base.track = js_track;
    j.base.begin = js_begin;
    j.base.end = js_end;
    j.base.instant = js_instant;
    j.base.counter_track = js_counter_track;
    j.base.counter = js_counter;
    j.base.finish = js_finish;
    uo_buf_init(&j.base.out, NULL);
    uo_map_init(&j.tracks);
    uo_map_init(&j.counters);
    j.first = 1;
    j.next_tid = 1000000000;
    uo_buf_puts(&j.base.out, UO_JSON_HEAD);
    int rc = export_with(db, path, &j.base, err, errlen);
    /* Alike on purpose (duplicates): the clean-up frees its writer's arrays as otf2.c's writer
     * frees its own; each frees its own struct's fields. */
    uo_map_free(&j.tracks);
    uo_map_free(&j.counters);
    for (size_t i = 0; i < j.ncounters; i++)
        free(j.cname[i]);
    free(j.cname);
    free(j.cpid);
    free(j.pid);
    free(j.tid);
    return rc;
}
