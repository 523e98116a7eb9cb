/* SPDX-License-Identifier: MIT */
/* The Chrome trace-event JSON sink of the timeline writer (timeline.h): one
 * pid/tid pair per track, "X" slices, instants, counters and flow events. */
#include "timeline.h"

#include "out_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
        uo_buf_puts(b, tl_arg_names[a->name[i]]);
        uo_buf_puts(b, "\":");
        if (a->str[i] == ARG_STRING)
            uo_json_string(b, tl_str(&j->base, (int64_t)a->val[i]));
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
    uo_json_string(b, tl_str(s, name_id));
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
    uo_json_string(b, tl_str(s, name_id));
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
    int rc = tl_export(db, path, &j.base, err, errlen);
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
