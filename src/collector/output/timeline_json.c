/* SPDX-License-Identifier: MIT */
/* The Chrome trace-event JSON sink of the timeline writer (timeline.h): one
 * pid/tid pair per track, "X" slices, instants, counters and flow events. */
#include "timeline.h"

#include "out_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A track's process and thread, or a counter track's process and name. */
typedef struct js_entry {
    int64_t pid, tid;
    char *name; /* counter tracks: malloc'd */
} js_entry;

/* The tracks or the counter tracks, found by their uuid. */
typedef struct js_table {
    upti_map index; /* uuid → index + 1 into at */
    js_entry *at;
    size_t n, cap;
} js_table;

typedef struct json_sink {
    tl_sink base;
    js_table tracks, counters;
    int64_t next_tid;
    int first;
} json_sink;

/* Adds entry e (its name then the table's) of track uuid to t. */
static void js_add(json_sink *j, js_table *t, uint64_t uuid, js_entry e)
{
    uint64_t *v = NULL;
    if (uo_grow(&t->at, &t->cap, t->n + 1, sizeof *t->at, 64) != 0 ||
        (v = upti_map_insert(&t->index, uuid, NULL)) == NULL) {
        free(e.name);
        j->base.out.error = 1;
        return;
    }
    t->at[t->n] = e;
    *v = ++t->n;
}

/* The entry of track uuid in t, or NULL. */
static const js_entry *js_find(const js_table *t, uint64_t uuid)
{
    const uint64_t *v = upti_map_find(&t->index, uuid);
    return v != NULL ? &t->at[*v - 1] : NULL;
}

static void js_free(js_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->at[i].name);
    free(t->at);
    upti_map_free(&t->index);
}

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

static void js_process(tl_sink *s, uint64_t uuid, int64_t pid, const char *name)
{
    json_sink *j = (json_sink *)s;
    js_add(j, &j->tracks, uuid, (js_entry){pid, pid, NULL});
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
    js_add(j, &j->tracks, uuid, (js_entry){pid, tid, NULL});
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
                  (long long)pid, (long long)tid, (long long)(j->tracks.n));
}

static void js_where(json_sink *j, uint64_t track)
{
    const js_entry *e = js_find(&j->tracks, track);
    uo_buf_printf(&j->base.out, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", e ? (long long)e->pid : 0,
                  e ? (long long)e->tid : 0);
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

/* The start of an event of phase ph (JSON, with what goes with it) up to its "ts". */
static void js_event(json_sink *j, const char *ph, uint64_t track, uint64_t ts, int64_t name_id,
                     const char *cat)
{
    uo_buf *b = &j->base.out;
    js_sep(j);
    uo_buf_puts(b, "{\"ph\":");
    uo_buf_puts(b, ph);
    uo_buf_puts(b, ",\"cat\":\"");
    uo_buf_puts(b, cat);
    uo_buf_puts(b, "\",\"name\":");
    uo_json_string(b, tl_str(&j->base, name_id));
    js_where(j, track);
    js_ts(b, ts);
}

static void js_begin(tl_sink *s, uint64_t track, uint64_t ts, uint64_t end, int64_t name_id,
                     const char *cat, uint64_t flow_out, uint64_t flow_in, const tl_args *args)
{
    json_sink *j = (json_sink *)s;
    uo_buf *b = &s->out;
    js_event(j, "\"X\"", track, ts, name_id, cat);
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
    js_event(j, "\"i\",\"s\":\"t\"", track, ts, name_id, cat);
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
    char *copy = strdup(name);
    if (copy == NULL)
        s->out.error = 1;
    else
        js_add(j, &j->counters, uuid, (js_entry){pid, 0, copy});
}

static void js_counter(tl_sink *s, uint64_t track, uint64_t ts, int64_t value)
{
    json_sink *j = (json_sink *)s;
    const js_entry *e = js_find(&j->counters, track);
    if (e == NULL)
        return;
    uo_buf *b = &s->out;
    js_sep(j);
    uo_buf_puts(b, "{\"ph\":\"C\",\"name\":");
    uo_json_string(b, e->name);
    uo_buf_printf(b, ",\"pid\":%lld,\"ts\":", (long long)e->pid);
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
    j.base = (tl_sink){.process = js_process, .track = js_track, .begin = js_begin, .end = js_end,
                       .instant = js_instant, .counter_track = js_counter_track,
                       .counter = js_counter, .finish = js_finish};
    uo_buf_init(&j.base.out, NULL);
    j.first = 1;
    j.next_tid = 1000000000;
    uo_buf_puts(&j.base.out, UO_JSON_HEAD);
    int rc = tl_export(db, path, &j.base, err, errlen);
    js_free(&j.tracks);
    js_free(&j.counters);
    return rc;
}
