/* SPDX-License-Identifier: MIT */
/* Internal: the timeline writers (timeline.c walks a trace database in track
 * order and hands tracks and events to a sink: timeline_perfetto.c writes
 * Perfetto protobuf, timeline_json.c Chrome trace-event JSON). */
#ifndef UPTI_OUTPUT_TIMELINE_H
#define UPTI_OUTPUT_TIMELINE_H

#include "output.h"

#include <sqlite3.h>
#include <stdint.h>

#define MAX_ARGS 6

enum arg_name { A_CORRELATION = 1, A_GRID, A_WORKGROUP, A_BYTES, A_DIRECTION, A_KERNEL_ID,
                A_STATUS, A_DEPTH, A_COLOR, A_PAYLOAD, A_EXTERNAL, A_RESULT, A_COUNT };
/** The argument names, by enum arg_name (timeline.c). */
extern const char *const tl_arg_names[A_COUNT];

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

/** The text of string id, "" for none. */
const char *tl_str(tl_sink *s, int64_t id);

/**
 * Writes the timeline of db to path through sink (its callbacks and out set,
 * out holding what goes first): path.part, renamed once complete; frees the
 * strings and out. 0, or -1 with the reason in err.
 */
int tl_export(sqlite3 *db, const char *path, tl_sink *sink, char *err, size_t errlen);

#endif
