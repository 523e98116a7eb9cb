/* SPDX-License-Identifier: MIT */
/* The Perfetto protobuf sink of the timeline writer (timeline.h): a Trace of
 * TracePackets, track descriptors and track events with interned names. The
 * trace declares its clock: UPTI's clock is CLOCK_MONOTONIC_RAW, Perfetto's
 * builtin clock 5; the database's clock snapshots tie it to BOOTTIME,
 * MONOTONIC and REALTIME. */
#include "timeline.h"

#include <stdlib.h>
#include <string.h>


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
            pb_string(&ent, 2, tl_arg_names[i]);
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
        pb_string(&ent, 2, tl_str(&p->base, name_id));
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
            pb_string(&p->tmp, 6, tl_str(&p->base, (int64_t)a->val[i]));
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
int uo_export_pftrace(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    pb_sink p;
    memset(&p, 0, sizeof p);
    p.base = (tl_sink){.process = pb_process, .track = pb_track, .begin = pb_begin, .end = pb_end,
                       .instant = pb_instant, .counter_track = pb_counter_track,
                       .counter = pb_counter, .header = pb_header, .finish = pb_finish};
    uo_buf_init(&p.base.out, NULL);
    uo_buf_init(&p.msg, NULL);
    uo_buf_init(&p.ev, NULL);
    uo_buf_init(&p.tmp, NULL);
    p.first = 1;
    /* interned[] (a flag per string id: its name was already emitted) is sized
     * here from the string table; tl_export() loads the strings themselves. */
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
    int rc = tl_export(db, path, &p.base, err, errlen);
    free(p.interned);
    uo_buf_free(&p.msg);
    uo_buf_free(&p.ev);
    uo_buf_free(&p.tmp);
    return rc;
}
