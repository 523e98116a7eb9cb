/* SPDX-License-Identifier: MIT */
/* Timelines from a trace database: the driver (timeline.h); the sinks are
 * timeline_perfetto.c (Perfetto protobuf) and timeline_json.c (Chrome
 * trace-event JSON).
 *
 * The driver walks the database in track order and hands tracks and events to
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
#include "timeline.h"

#include "manifest.h"
#include "out_files.h"
#include "safe_open.h"

#include <upti/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const tl_arg_names[A_COUNT] = {
    NULL, "correlation_id", "grid", "workgroup", "bytes", "direction", "kernel_id",
    "status", "depth", "color", "payload", "external_id", "result"};

const char *tl_str(tl_sink *s, int64_t id)
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

static int64_t pid_of(upti_map *pids, int64_t proc)
{
    uint64_t *pid = upti_map_find(pids, (uint64_t)proc);
    return pid ? (int64_t)*pid : 0;
}

/* Memory allocated per device: + an allocation's size, - the size of the
 * allocation a release names (a release of an allocation made before the
 * trace changes nothing); one value per time it changes. */
static int memory_counters(sqlite3 *db, tl_sink *sink, upti_map *pids, char *err, size_t errlen)
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
    upti_map sizes;
    upti_map_init(&sizes);
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
            upti_map_free(&sizes);
            upti_map_init(&sizes);
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
            uint64_t *v = upti_map_insert(&sizes, handle, NULL);
            if (v)
                *v = (uint64_t)size;
            counter_add(sink, &c, ts, size);
        } else {
            uint64_t *v = upti_map_find(&sizes, handle);
            if (v) {
                counter_add(sink, &c, ts, -(int64_t)*v);
                upti_map_remove(&sizes, handle);
            }
        }
    }
    counter_flush(sink, &c);
    upti_map_free(&sizes);
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* Commands in flight per queue: each kernel and copy from the time it was
 * queued (else submitted, else started) to its end. Queues are numbered as
 * their tracks are. */
static int in_flight_counters(sqlite3 *db, tl_sink *sink, upti_map *pids, char *err, size_t errlen)
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
static int dropped_counter(sqlite3 *db, tl_sink *sink, upti_map *pids, char *err, size_t errlen)
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

static int counters(sqlite3 *db, tl_sink *sink, upti_map *pids, char *err, size_t errlen)
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
    upti_map devcorr, pids;
    upti_map_init(&devcorr);
    upti_map_init(&pids);
    stack stk = {0};
    lanes ln = {0};
    int bad = 0; /* a step that ended in an error (a corrupt database) */

    /* Processes: the track groups, named by their MPI rank first where the
     * launcher gave one (the ranks of a merged run sort and read by rank). */
    if (prepare(db, "SELECT id, pid, hostname, command, rank FROM info_process ORDER BY id", &st,
                err, errlen))
        goto out;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t id = sqlite3_column_int64(st, 0), pid = sqlite3_column_int64(st, 1);
        const char *host = (const char *)sqlite3_column_text(st, 2);
        const char *cmd = (const char *)sqlite3_column_text(st, 3);
        char name[512], rank[32] = "";
        if (sqlite3_column_type(st, 4) != SQLITE_NULL)
            snprintf(rank, sizeof rank, "rank %lld: ", (long long)sqlite3_column_int64(st, 4));
        snprintf(name, sizeof name, "%s%.300s (pid %lld on %.100s)", rank, cmd ? cmd : "process",
                 (long long)pid, host ? host : "?");
        uint64_t *v = upti_map_insert(&pids, (uint64_t)id, NULL);
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
        upti_map_insert(&devcorr, flow_of(sqlite3_column_int64(st, 0),
                                        (uint64_t)sqlite3_column_int64(st, 1)), NULL);
    sqlite3_finalize(st);

    /* Host threads. */
    if (prepare(db, "SELECT process_id, tid, name_id FROM info_thread ORDER BY process_id, tid",
                &st, err, errlen))
        goto out;
    while (step_row(db, st, &bad, err, errlen)) {
        int64_t proc = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
        int64_t name_id = sqlite3_column_int64(st, 2);
        uint64_t *pid = upti_map_find(&pids, (uint64_t)proc);
        char name[300];
        if (name_id > 0)
            snprintf(name, sizeof name, "%.250s", tl_str(sink, name_id));
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
            if (upti_map_find(&devcorr, flow_of(proc, corr)))
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
            uint64_t *pid = upti_map_find(&pids, (uint64_t)proc);
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
            uint64_t *pid = upti_map_find(&pids, (uint64_t)proc);
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
    upti_map_free(&devcorr);
    upti_map_free(&pids);
    return rc;
}
int tl_export(sqlite3 *db, const char *path, tl_sink *sink, char *err, size_t errlen)
{
    char *part;
    FILE *f = uo_part_open(path, "wb", &part, err, errlen);
    if (f == NULL) {
        uo_buf_free(&sink->out); /* what the caller put there already */
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
