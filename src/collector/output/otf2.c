/* SPDX-License-Identifier: MIT */
/* An OTF2 archive from a trace database (upti export --format otf2), written
 * through libotf2 (Debian's libotf2-trace-dev) for Score-P's tool chain:
 * Vampir, Scalasca, otf2-print.
 *
 * Location groups: one per process (type PROCESS; named "MPI Rank N" under an
 * MPI launcher, where the group id is the rank), and one per device of a
 * process (type ACCELERATOR, created by the process's group). Locations: one
 * CPU_THREAD per host thread (API calls and push/pop ranges, nested), one
 * CPU_THREAD "ranges" lane per process for start/stop ranges (more lanes where
 * they overlap), one ACCELERATOR_STREAM per device queue (kernels and copies;
 * more lanes where they overlap). Every operation is one Enter and one Leave
 * of a region: one region per (kind, name), each string written once.
 * Timestamps are UPTI's clock (CLOCK_MONOTONIC_RAW, ns): timer resolution
 * 1e9, global offset the first event, the realtime of that offset from the
 * process's wall-clock start. Rows with an unknown start (0) are left out,
 * and so are marks (instants have no OTF2 region events).
 */
#include "fnv1a.h"
#include "manifest.h"
#include "output.h"

#include "out_files.h"
#include "safe_open.h"

#include <dirent.h>
#include <errno.h>
#include <otf2/otf2.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- strings, each text once ---- */
typedef struct string_table {
    char **text;   /* by OTF2 string id */
    size_t n, cap;
    upti_map ids;   /* the ids, keyed by their text's hash */
    size_t cut;     /* strings cut to OTF2_STRING_MAX */
} string_table;

/* A definition must fit OTF2's definition chunk (4 MiB, OTF2_Archive_Open below): a
 * longer string failed the whole export. Longer ones keep their first
 * OTF2_STRING_MAX bytes (not inside a UTF-8 character) and say how long they were. */
#define OTF2_STRING_MAX (1u << 20)

/* s, or its first OTF2_STRING_MAX bytes and " [cut: N bytes]" (*owned: malloc'd). */
static const char *fitting(const char *s, char **owned)
{
    *owned = NULL;
    size_t len = strnlen(s, OTF2_STRING_MAX + 1);
    if (len <= OTF2_STRING_MAX)
        return s;
    size_t whole = strlen(s), keep = uo_utf8_cut(s, OTF2_STRING_MAX);
    *owned = malloc(keep + 48);
    if (*owned == NULL)
        return NULL;
    memcpy(*owned, s, keep);
    snprintf(*owned + keep, 48, " [cut: %zu bytes]", whole);
    return *owned;
}


static uint32_t str_id_of(string_table *t, const char *s);

/* The id of s, added if new; UINT32_MAX when out of memory. */
static uint32_t str_id(string_table *t, const char *s)
{
    if (s == NULL)
        s = "";
    char *owned;
    s = fitting(s, &owned);
    if (s == NULL)
        return UINT32_MAX;
    size_t before = t->n;
    uint32_t id = str_id_of(t, s);
    if (owned != NULL && t->n > before)
        t->cut++; /* (said once per string) */
    free(owned);
    return id;
}

static uint32_t str_id_of(string_table *t, const char *s)
{
    uint64_t h = upti_fnv1a64(UPTI_FNV1A64_BASIS, s), *id;
    for (size_t pos = 0; (id = upti_map_next(&t->ids, h, &pos)) != NULL;)
        if (strcmp(t->text[*id], s) == 0)
            return (uint32_t)*id;
    char *copy = strdup(s);
    if (copy == NULL || uo_grow(&t->text, &t->cap, t->n + 1, sizeof *t->text, 256) != 0 ||
        (id = upti_map_add(&t->ids, h)) == NULL) {
        free(copy);
        return UINT32_MAX;
    }
    t->text[t->n] = copy;
    *id = t->n;
    return (uint32_t)t->n++;
}

/* ---- definitions gathered while the events are written ---- */
enum { K_API, K_RANGE, K_KERNEL, K_COPY }; /* region kinds */

typedef struct region_def {
    uint32_t name, description;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
} region_def;

typedef struct location_def {
    uint32_t name;
    OTF2_LocationType type;
    uint32_t group;
    uint64_t events;
} location_def;

typedef struct group_def {
    uint32_t id, name, node;
    OTF2_LocationGroupType type;
    uint32_t creator; /* OTF2_UNDEFINED_LOCATION_GROUP for a process */
} group_def;

typedef struct process_row {
    int64_t id;
    uint32_t group;
} process_row;

typedef struct writer {
    sqlite3 *db;
    OTF2_Archive *archive;
    string_table str;
    char **dbstr; /* the database's strings, by id */
    size_t ndbstr;
    upti_map regions; /* (kind << 56 | name id) → region id + 1 */
    region_def *reg;
    size_t nreg, capreg;
    location_def *loc;
    size_t nloc, caploc;
    group_def *grp;
    size_t ngrp, capgrp;
    uint32_t *nodes; /* host name string id of each system-tree node after the root */
    size_t nnodes, capnodes;
    process_row *proc;
    size_t nproc, capproc;
    upti_map accel; /* (process id << 32 | agent handle) → group index + 1 */
    uint64_t tmin, tmax, realtime;
    int failed;
    char *err;
    size_t errlen;
} writer;

static const char *dbstr(writer *w, int64_t id)
{
    return id > 0 && (size_t)id < w->ndbstr && w->dbstr[id] ? w->dbstr[id] : "";
}

static void fail(writer *w, const char *what)
{
    if (!w->failed)
        snprintf(w->err, w->errlen, "%s", what);
    w->failed = 1;
}

static void fail_otf2(writer *w, const char *what, OTF2_ErrorCode rc)
{
    char msg[512];
    snprintf(msg, sizeof msg, "OTF2: %s: %s", what, OTF2_Error_GetName(rc));
    fail(w, msg);
}

static uint32_t region_of(writer *w, int kind, int64_t name_id, OTF2_Paradigm paradigm)
{
    int inserted = 0;
    uint64_t *v = upti_map_insert(&w->regions, ((uint64_t)kind << 56) | (uint64_t)name_id, &inserted);
    if (v == NULL || (inserted && uo_grow(&w->reg, &w->capreg, w->nreg + 1, sizeof *w->reg, 64))) {
        fail(w, "out of memory");
        return 0;
    }
    if (inserted) {
        static const OTF2_RegionRole k_role[] = {OTF2_REGION_ROLE_FUNCTION, OTF2_REGION_ROLE_CODE,
                                                 OTF2_REGION_ROLE_FUNCTION,
                                                 OTF2_REGION_ROLE_DATA_TRANSFER};
        static const char *const k_what[] = {"API call", "marker range", "kernel", "memory copy"};
        w->reg[w->nreg] = (region_def){str_id(&w->str, dbstr(w, name_id)),
                                       str_id(&w->str, k_what[kind]), k_role[kind], paradigm};
        *v = ++w->nreg;
    }
    return (uint32_t)*v - 1;
}

static uint32_t location_new(writer *w, const char *name, OTF2_LocationType type, uint32_t group)
{
    if (uo_grow(&w->loc, &w->caploc, w->nloc + 1, sizeof *w->loc, 64) != 0) {
        fail(w, "out of memory");
        return 0;
    }
    w->loc[w->nloc] = (location_def){str_id(&w->str, name), type, group, 0};
    return (uint32_t)w->nloc++;
}

static uint32_t group_new(writer *w, uint32_t id, const char *name, OTF2_LocationGroupType type,
                          uint32_t node, uint32_t creator)
{
    if (uo_grow(&w->grp, &w->capgrp, w->ngrp + 1, sizeof *w->grp, 16) != 0) {
        fail(w, "out of memory");
        return 0;
    }
    w->grp[w->ngrp] = (group_def){id, str_id(&w->str, name), node, type, creator};
    return (uint32_t)w->ngrp++;
}

/* The system-tree node of a host (node 0 is the machine, the root). */
static uint32_t node_of(writer *w, const char *host)
{
    uint32_t sid = str_id(&w->str, host && host[0] ? host : "localhost");
    for (size_t i = 0; i < w->nnodes; i++)
        if (w->nodes[i] == sid)
            return (uint32_t)i + 1;
    if (uo_grow(&w->nodes, &w->capnodes, w->nnodes + 1, sizeof *w->nodes, 8) != 0) {
        fail(w, "out of memory");
        return 0;
    }
    w->nodes[w->nnodes++] = sid;
    return (uint32_t)w->nnodes;
}

static uint32_t next_group_id(const writer *w)
{
    uint32_t id = 0;
    for (size_t i = 0; i < w->ngrp; i++)
        if (w->grp[i].id >= id)
            id = w->grp[i].id + 1;
    return id;
}

/* The group of a process (of a row whose process has no info_process row, in
 * a damaged database: one made for it). */
static uint32_t process_group(writer *w, int64_t proc)
{
    for (size_t i = 0; i < w->nproc; i++)
        if (w->proc[i].id == proc)
            return w->proc[i].group;
    char name[64];
    snprintf(name, sizeof name, "process %lld", (long long)proc);
    uint32_t g = group_new(w, next_group_id(w), name, OTF2_LOCATION_GROUP_TYPE_PROCESS,
                           node_of(w, NULL), OTF2_UNDEFINED_LOCATION_GROUP);
    if (w->failed || uo_grow(&w->proc, &w->capproc, w->nproc + 1, sizeof *w->proc, 16) != 0) {
        fail(w, "out of memory");
        return 0;
    }
    w->proc[w->nproc++] = (process_row){proc, g};
    return g;
}

/* ---- events ---- */
static OTF2_EvtWriter *evt_open(writer *w, uint32_t loc)
{
    OTF2_EvtWriter *ew = OTF2_Archive_GetEvtWriter(w->archive, loc);
    if (ew == NULL)
        fail(w, "OTF2: cannot create an event writer");
    return ew;
}

static void evt_close(writer *w, OTF2_EvtWriter *ew, uint32_t loc)
{
    if (ew == NULL)
        return;
    uint64_t n = 0;
    OTF2_EvtWriter_GetNumberOfEvents(ew, &n);
    w->loc[loc].events = n;
    OTF2_ErrorCode rc = OTF2_Archive_CloseEvtWriter(w->archive, ew);
    if (rc != OTF2_SUCCESS)
        fail_otf2(w, "closing an event writer", rc);
}

/* Writes an Enter (enter) or a Leave event of region at ts to ew. */
static void write_enter_or_leave(writer *w, OTF2_EvtWriter *ew, int enter, uint64_t ts,
                                 uint32_t region)
{
    if (ew == NULL || w->failed)
        return;
    OTF2_ErrorCode rc = enter ? OTF2_EvtWriter_Enter(ew, NULL, ts, region)
                              : OTF2_EvtWriter_Leave(ew, NULL, ts, region);
    if (rc != OTF2_SUCCESS)
        fail_otf2(w, enter ? "Enter" : "Leave", rc);
    if (ts < w->tmin)
        w->tmin = ts;
    if (ts > w->tmax)
        w->tmax = ts;
}

static int prepare(writer *w, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(w->db, sql, -1, st, NULL) != SQLITE_OK) {
        fail(w, sqlite3_errmsg(w->db));
        return -1;
    }
    return 0;
}

/* 1 on a row; 0 at the end (an error sets w->failed). */
static int step(writer *w, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc != SQLITE_DONE)
        fail(w, sqlite3_errmsg(w->db));
    return 0;
}

static int load_strings(writer *w)
{
    sqlite3_stmt *st;
    int64_t max = uo_sql_int(w->db, "SELECT max(id) FROM string", 0);
    w->ndbstr = (size_t)(max > 0 ? max : 0) + 1;
    w->dbstr = calloc(w->ndbstr, sizeof *w->dbstr);
    if (w->dbstr == NULL) {
        fail(w, "out of memory");
        return -1;
    }
    if (prepare(w, "SELECT id, string FROM string", &st))
        return -1;
    while (step(w, st)) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *t = (const char *)sqlite3_column_text(st, 1);
        if (id > 0 && id <= max && t && w->dbstr[id] == NULL)
            w->dbstr[id] = strdup(t);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* Processes: their groups, and the realtime of the trace's start. */
static void write_processes(writer *w)
{
    sqlite3_stmt *st;
    /* MPI ranks as group ids when every process has its own rank. */
    int by_rank = uo_sql_int(w->db, "SELECT count(*) = count(DISTINCT rank) AND count(rank) = count(*)"
                                    " AND min(rank) >= 0 AND max(rank) < 1000000000 FROM info_process", 0) == 1;
    if (prepare(w, "SELECT id, pid, rank, hostname, command FROM info_process ORDER BY id", &st))
        return;
    while (step(w, st)) {
        int64_t id = sqlite3_column_int64(st, 0), pid = sqlite3_column_int64(st, 1);
        int has_rank = sqlite3_column_type(st, 2) != SQLITE_NULL;
        int64_t rank = sqlite3_column_int64(st, 2);
        const char *cmd = (const char *)sqlite3_column_text(st, 4);
        char name[400];
        if (has_rank)
            snprintf(name, sizeof name, "MPI Rank %lld", (long long)rank);
        else
            snprintf(name, sizeof name, "%.300s (pid %lld)", cmd && cmd[0] ? cmd : "process",
                     (long long)pid);
        uint32_t node = node_of(w, (const char *)sqlite3_column_text(st, 3));
        uint32_t gid = by_rank ? (uint32_t)rank : (uint32_t)w->nproc;
        uint32_t g = group_new(w, gid, name, OTF2_LOCATION_GROUP_TYPE_PROCESS, node,
                               OTF2_UNDEFINED_LOCATION_GROUP);
        if (uo_grow(&w->proc, &w->capproc, w->nproc + 1, sizeof *w->proc, 16) != 0) {
            fail(w, "out of memory");
            break;
        }
        w->proc[w->nproc++] = (process_row){id, g};
    }
    sqlite3_finalize(st);
}

/* The group of a device (agent) of a process, created on first use. */
static uint32_t accel_group(writer *w, int64_t proc, int64_t agent, const char *agent_name)
{
    int inserted = 0;
    uint64_t *v = upti_map_insert(&w->accel, ((uint64_t)proc << 32) | ((uint64_t)agent & 0xFFFFFFFFu),
                                &inserted);
    if (v == NULL) {
        fail(w, "out of memory");
        return 0;
    }
    if (inserted) {
        uint32_t pg = process_group(w, proc);
        if (w->failed)
            return 0;
        uint32_t id = next_group_id(w);
        char name[400];
        snprintf(name, sizeof name, "%.300s (agent %lld)", agent_name ? agent_name : "device",
                 (long long)agent);
        *v = (uint64_t)group_new(w, id, name, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
                                 w->grp[pg].node, w->grp[pg].id) + 1;
    }
    return (uint32_t)*v - 1;
}

static OTF2_Paradigm paradigm_of(const char *domain)
{
    return strstr(domain, "OPENCL") ? OTF2_PARADIGM_OPENCL : OTF2_PARADIGM_UNKNOWN;
}

typedef struct open_region {
    uint64_t end;
    uint32_t region;
} open_region;

/* Host threads: API calls and push/pop ranges, nested (an end past its
 * parent's is cut to the parent's). */
static void write_threads(writer *w)
{
    sqlite3_stmt *st;
    if (prepare(w,
                "SELECT h.process_id, h.tid, h.start, h.end, h.name_id, h.k, h.domain,"
                " (SELECT t.name_id FROM info_thread t WHERE t.process_id = h.process_id"
                "  AND t.tid = h.tid LIMIT 1) FROM ("
                " SELECT process_id, tid, start, end, name_id, 0 AS k, domain_id AS domain FROM api"
                " WHERE start > 0"
                " UNION ALL SELECT process_id, tid, start, end, name_id, 1, 0 FROM region"
                " WHERE kind = 0 AND start > 0) h ORDER BY 1, 2, 3, 4 DESC, 6",
                &st))
        return;
    open_region *stk = NULL;
    size_t n = 0, cap = 0;
    int64_t cur_proc = -1, cur_tid = -1;
    OTF2_EvtWriter *ew = NULL;
    uint32_t loc = 0;
    while (!w->failed && step(w, st)) {
        int64_t proc = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
        uint64_t start = (uint64_t)sqlite3_column_int64(st, 2);
        uint64_t end = (uint64_t)sqlite3_column_int64(st, 3);
        if (proc != cur_proc || tid != cur_tid) {
            for (; n > 0; n--)
                write_enter_or_leave(w, ew, 0, stk[n - 1].end, stk[n - 1].region);
            evt_close(w, ew, loc);
            cur_proc = proc;
            cur_tid = tid;
            int64_t tname = sqlite3_column_int64(st, 7);
            char name[300];
            if (tname > 0)
                snprintf(name, sizeof name, "%.250s (%lld)", dbstr(w, tname), (long long)tid);
            else
                snprintf(name, sizeof name, "thread %lld", (long long)tid);
            loc = location_new(w, name, OTF2_LOCATION_TYPE_CPU_THREAD, process_group(w, proc));
            ew = evt_open(w, loc);
        }
        for (; n > 0 && stk[n - 1].end <= start; n--)
            write_enter_or_leave(w, ew, 0, stk[n - 1].end, stk[n - 1].region);
        if (end < start)
            end = start;
        if (n > 0 && end > stk[n - 1].end)
            end = stk[n - 1].end;
        int k = sqlite3_column_int(st, 5);
        uint32_t region = k == 0 ? region_of(w, K_API, sqlite3_column_int64(st, 4),
                                             paradigm_of(dbstr(w, sqlite3_column_int64(st, 6))))
                                 : region_of(w, K_RANGE, sqlite3_column_int64(st, 4),
                                             OTF2_PARADIGM_USER);
        if (uo_grow(&stk, &cap, n + 1, sizeof *stk, 16) != 0) {
            fail(w, "out of memory");
            break;
        }
        write_enter_or_leave(w, ew, 1, start, region);
        stk[n++] = (open_region){end, region};
    }
    for (; n > 0; n--)
        write_enter_or_leave(w, ew, 0, stk[n - 1].end, stk[n - 1].region);
    evt_close(w, ew, loc);
    free(stk);
    sqlite3_finalize(st);
}

/* Lanes of one track: operations that overlap go to further locations. */
typedef struct lane {
    uint64_t end;
    OTF2_EvtWriter *ew;
    uint32_t loc;
} lane;

static void lanes_close(writer *w, lane *l, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        evt_close(w, l[i].ew, l[i].loc);
    *n = 0;
}

/* Start/stop ranges (kind 1: may cross threads), or device operations: each
 * row one Enter/Leave on the first lane of its track free at its start.
 * Rows: process, track key, start, end, name id, kind (K_*), agent, agent name. */
static void write_lanes(writer *w, const char *sql, int device)
{
    sqlite3_stmt *st;
    if (prepare(w, sql, &st))
        return;
    lane *ln = NULL;
    size_t n = 0, cap = 0;
    int64_t cur_proc = -1, cur_key = 0;
    uint64_t index = 0; /* the track's number in its process, from 1 */
    while (!w->failed && step(w, st)) {
        int64_t proc = sqlite3_column_int64(st, 0), key = sqlite3_column_int64(st, 1);
        uint64_t start = (uint64_t)sqlite3_column_int64(st, 2);
        uint64_t end = (uint64_t)sqlite3_column_int64(st, 3);
        int kind = sqlite3_column_int(st, 5);
        if (proc != cur_proc || key != cur_key) {
            lanes_close(w, ln, &n);
            index = proc != cur_proc ? 1 : index + 1;
            cur_proc = proc;
            cur_key = key;
        }
        if (end < start)
            end = start;
        size_t i = 0;
        while (i < n && ln[i].end > start)
            i++;
        if (i == n) {
            if (uo_grow(&ln, &cap, n + 1, sizeof *ln, 4) != 0) {
                fail(w, "out of memory");
                break;
            }
            char name[400];
            int len;
            uint32_t group;
            OTF2_LocationType type;
            if (device) {
                const char *agent_name = (const char *)sqlite3_column_text(st, 7);
                group = accel_group(w, proc, sqlite3_column_int64(st, 6), agent_name);
                type = OTF2_LOCATION_TYPE_ACCELERATOR_STREAM;
                len = snprintf(name, sizeof name, "queue %llu 0x%llx", (unsigned long long)index,
                               (unsigned long long)key);
            } else {
                group = process_group(w, proc);
                type = OTF2_LOCATION_TYPE_CPU_THREAD;
                len = snprintf(name, sizeof name, "ranges");
            }
            if (n > 0 && len > 0 && (size_t)len < sizeof name)
                snprintf(name + len, sizeof name - (size_t)len, " [overlap %zu]", n);
            ln[n].loc = location_new(w, name, type, group);
            ln[n].ew = evt_open(w, ln[n].loc);
            n++;
        }
        OTF2_Paradigm paradigm = kind == K_RANGE ? OTF2_PARADIGM_USER : OTF2_PARADIGM_UNKNOWN;
        const char *runtime = (const char *)sqlite3_column_text(st, 8);
        if (runtime && strcmp(runtime, "opencl") == 0)
            paradigm = OTF2_PARADIGM_OPENCL;
        uint32_t region = region_of(w, kind, sqlite3_column_int64(st, 4), paradigm);
        write_enter_or_leave(w, ln[i].ew, 1, start, region);
        write_enter_or_leave(w, ln[i].ew, 0, end, region);
        ln[i].end = end;
    }
    lanes_close(w, ln, &n);
    free(ln);
    sqlite3_finalize(st);
}

/* The realtime (ns since the epoch) of the first event, from the wall-clock
 * start of a process and its start on UPTI's clock. */
static uint64_t realtime_of(writer *w, uint64_t t)
{
    sqlite3_stmt *st;
    uint64_t r = OTF2_UNDEFINED_TIMESTAMP;
    if (sqlite3_prepare_v2(w->db, "SELECT wall_start, start FROM info_process WHERE wall_start > 0"
                                  " AND start > 0 ORDER BY start LIMIT 1", -1, &st, NULL) != SQLITE_OK)
        return r;
    if (sqlite3_step(st) == SQLITE_ROW) {
        int64_t wall = sqlite3_column_int64(st, 0), start = sqlite3_column_int64(st, 1);
        int64_t v = wall - (start - (int64_t)t);
        if (v > 0)
            r = (uint64_t)v;
    }
    sqlite3_finalize(st);
    return r;
}

static void write_definitions(writer *w)
{
    OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(w->archive);
    if (gw == NULL) {
        fail(w, "OTF2: cannot create the global definition writer");
        return;
    }
    uint64_t t0 = w->tmin <= w->tmax ? w->tmin : 0, len = w->tmin <= w->tmax ? w->tmax - w->tmin : 0;
    OTF2_ErrorCode rc = OTF2_GlobalDefWriter_WriteClockProperties(
        gw, 1000000000ull, t0, len, w->tmin <= w->tmax ? realtime_of(w, t0) : OTF2_UNDEFINED_TIMESTAMP);
    uint32_t machine = str_id(&w->str, "machine"), node = str_id(&w->str, "node");
    uint32_t upti = str_id(&w->str, "upti trace");
    for (size_t i = 0; rc == OTF2_SUCCESS && i < w->str.n; i++)
        rc = OTF2_GlobalDefWriter_WriteString(gw, (OTF2_StringRef)i, w->str.text[i]);
    if (rc == OTF2_SUCCESS)
        rc = OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, upti, machine,
                                                      OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (size_t i = 0; rc == OTF2_SUCCESS && i < w->nnodes; i++)
        rc = OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, (OTF2_SystemTreeNodeRef)i + 1,
                                                      w->nodes[i], node, 0);
    for (size_t i = 0; rc == OTF2_SUCCESS && i < w->ngrp; i++) {
        const group_def *g = &w->grp[i];
        uint32_t creator = g->creator;
        rc = OTF2_GlobalDefWriter_WriteLocationGroup(gw, g->id, g->name, g->type, g->node, creator);
    }
    for (size_t i = 0; rc == OTF2_SUCCESS && i < w->nreg; i++)
        rc = OTF2_GlobalDefWriter_WriteRegion(gw, (OTF2_RegionRef)i, w->reg[i].name, w->reg[i].name,
                                              w->reg[i].description, w->reg[i].role, w->reg[i].paradigm,
                                              OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0);
    for (size_t i = 0; rc == OTF2_SUCCESS && i < w->nloc; i++)
        rc = OTF2_GlobalDefWriter_WriteLocation(gw, (OTF2_LocationRef)i, w->loc[i].name,
                                                w->loc[i].type, w->loc[i].events,
                                                w->grp[w->loc[i].group].id);
    if (rc != OTF2_SUCCESS)
        fail_otf2(w, "writing the definitions", rc);
    rc = OTF2_Archive_CloseGlobalDefWriter(w->archive, gw);
    if (rc != OTF2_SUCCESS)
        fail_otf2(w, "closing the definitions", rc);
}

/* OTF2's callbacks below have fixed signatures: the parameters they do not use are cast to
 * void. */
static OTF2_FlushType pre_flush(void *data, OTF2_FileType type, OTF2_LocationRef loc, void *caller,
                                bool final)
{
    (void)data;
    (void)type;
    (void)loc;
    (void)caller;
    (void)final;
    return OTF2_FLUSH;
}

/* OTF2's own messages go to the err of writer data (the first one; data NULL: nowhere),
 * not to stderr. */
static OTF2_ErrorCode on_otf2_error(void *data, const char *file, uint64_t line, const char *function,
                                    OTF2_ErrorCode code, const char *fmt, va_list va)
    __attribute__((format(printf, 6, 0)));
static OTF2_ErrorCode on_otf2_error(void *data, const char *file, uint64_t line, const char *function,
                                    OTF2_ErrorCode code, const char *fmt, va_list va)
{
    writer *w = data;
    (void)file;
    (void)line;
    (void)function;
    if (w != NULL && !w->failed && fmt != NULL) {
        char msg[400];
        vsnprintf(msg, sizeof msg, fmt, va);
        snprintf(w->err, w->errlen, "OTF2: %s: %s", OTF2_Error_GetName(code), msg);
        w->failed = 1;
    }
    return code;
}

/* Sends OTF2's messages to w's err (NULL: nowhere); returns the callback it
 * replaces. OTF2's callback type has no format attribute: passing ours to it
 * is what -Wmissing-format-attribute would flag. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-format-attribute"
static OTF2_ErrorCallback otf2_errors_to(writer *w)
{
    return OTF2_Error_RegisterCallback(on_otf2_error, w);
}
#pragma GCC diagnostic pop

/* 1 if the archive at anchor was written by UPTI (its creator). A file that
 * does not begin as an OTF2 anchor ("\3BOTF2" here) is not opened with OTF2's
 * reader, which leaks what it allocated when it fails. */
static int archive_is_ours(const char *anchor)
{
    char head[8];
    FILE *f = fopen(anchor, "rb");
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    if (n < sizeof head || memcmp(head + 2, "OTF2", 4) != 0)
        return 0;
    OTF2_ErrorCallback prev = otf2_errors_to(NULL);
    OTF2_Reader *r = OTF2_Reader_Open(anchor);
    if (r == NULL) {
        OTF2_Error_RegisterCallback(prev, NULL);
        return 0;
    }
    char *creator = NULL;
    int ours = OTF2_Reader_GetCreator(r, &creator) == OTF2_SUCCESS && creator != NULL &&
               strncmp(creator, "upti ", 5) == 0;
    free(creator);
    OTF2_Reader_Close(r);
    OTF2_Error_RegisterCallback(prev, NULL);
    return ours;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The paths of the archive dir/name: its anchor, definitions and events folder. */
typedef struct archive_paths {
    char anchor[4096], defs[4096], evts[4096];
} archive_paths;

/* 0, or -1 when a path does not fit. */
static int paths_of(archive_paths *a, const char *dir, const char *name)
{
    int n1 = snprintf(a->anchor, sizeof a->anchor, "%s/%s.otf2", dir, name);
    int n2 = snprintf(a->defs, sizeof a->defs, "%s/%s.def", dir, name);
    int n3 = snprintf(a->evts, sizeof a->evts, "%s/%s", dir, name);
    return n1 < 0 || n2 < 0 || n3 < 0 || (size_t)n1 >= sizeof a->anchor ||
                   (size_t)n2 >= sizeof a->defs || (size_t)n3 >= sizeof a->evts
               ? -1
               : 0;
}

/* 0 if nothing is at dir/name or an archive UPTI wrote is; else -1 with err set. */
static int archive_replaceable(writer *w, const archive_paths *a)
{
    struct stat st, ignored;
    int have_anchor = lstat(a->anchor, &st) == 0, have_defs = lstat(a->defs, &ignored) == 0;
    int have_evts = lstat(a->evts, &ignored) == 0;
    if (!have_anchor && !have_defs && !have_evts)
        return 0;
    if (have_anchor && S_ISREG(st.st_mode) && (uo_force_overwrite() || archive_is_ours(a->anchor)))
        return 0;
    snprintf(w->err, w->errlen, "%.400s exists and was not written by upti: not replaced "
             "(choose another -o)", have_anchor ? a->anchor : have_defs ? a->defs : a->evts);
    return -1;
}

/* Removes the archive at a (the anchor first: a removal cut short leaves no
 * archive that looks whole); in its events folder only OTF2's files. 0, or -1
 * (errno set) if something is still there. */
static int archive_remove(const archive_paths *a)
{
    if ((unlink(a->anchor) != 0 && errno != ENOENT) || (unlink(a->defs) != 0 && errno != ENOENT))
        return -1;
    DIR *d = opendir(a->evts);
    if (d == NULL)
        return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (has_suffix(e->d_name, ".evt") || has_suffix(e->d_name, ".def") ||
            has_suffix(e->d_name, ".snap")) {
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", a->evts, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
    return rmdir(a->evts);
}

/* The archive written at part takes final's place (the anchor last). */
static int archive_rename(writer *w, const archive_paths *part, const archive_paths *final)
{
    if (archive_remove(final) != 0) {
        snprintf(w->err, w->errlen, "cannot replace %.400s: %s", final->anchor, strerror(errno));
        return -1;
    }
    if (rename(part->evts, final->evts) != 0 || rename(part->defs, final->defs) != 0 ||
        rename(part->anchor, final->anchor) != 0) {
        snprintf(w->err, w->errlen, "cannot write %.400s: %s", final->anchor, strerror(errno));
        return -1;
    }
    return 0;
}

static const OTF2_FlushCallbacks k_flush = {pre_flush, NULL}; /* NULL: no BufferFlush events */

/* uo_export_otf2() once NAME.part is this process's to write. */
static int export_archive(sqlite3 *db, const char *dir, const char *name, char *err, size_t errlen)
{
    writer w;
    memset(&w, 0, sizeof w);
    w.db = db;
    w.err = err;
    w.errlen = errlen;
    w.tmin = UINT64_MAX;
    upti_map_init(&w.regions);
    upti_map_init(&w.accel);
    /* Written as NAME.part (.otf2, .def, folder), renamed once complete. */
    archive_paths final, part;
    char part_name[4096];
    int n = snprintf(part_name, sizeof part_name, "%s.part", name);
    if (n < 0 || (size_t)n >= sizeof part_name || paths_of(&final, dir, name) != 0 ||
        paths_of(&part, dir, part_name) != 0) {
        snprintf(err, errlen, "the path %.400s/%.400s is too long", dir, name);
        return -1;
    }
    if (archive_replaceable(&w, &final) != 0)
        return -1;
    if (archive_remove(&part) != 0) { /* one an export cut short left */
        snprintf(err, errlen, "cannot remove %.400s: %s", part.evts, strerror(errno));
        return -1;
    }
    OTF2_ErrorCallback prev = otf2_errors_to(&w);
    w.archive = OTF2_Archive_Open(dir, part_name, OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                  OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (w.archive == NULL) {
        if (!w.failed)
            snprintf(err, errlen, "OTF2: cannot create the archive %s", part.anchor);
        OTF2_Error_RegisterCallback(prev, NULL);
        return -1;
    }
    OTF2_Archive_SetFlushCallbacks(w.archive, &k_flush, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(w.archive);
    OTF2_Archive_SetCreator(w.archive, "upti " UPTI_VERSION_STRING);
    OTF2_Archive_SetDescription(w.archive, "UPTI trace: API calls, marker ranges, kernels and copies");
    OTF2_ErrorCode rc = OTF2_Archive_OpenEvtFiles(w.archive);
    if (rc != OTF2_SUCCESS)
        fail_otf2(&w, "opening the event files", rc);
    if (!w.failed && load_strings(&w) == 0) {
        write_processes(&w);
        write_threads(&w);
        write_lanes(&w,
                    "SELECT process_id, 0, start, end, name_id, 1, 0, NULL, NULL FROM region"
                    " WHERE kind = 1 AND start > 0 ORDER BY process_id, start, end DESC",
                    0);
        write_lanes(&w,
                    "SELECT d.process_id, d.queue_handle, d.start, d.end, d.name_id, d.k,"
                    " d.agent_handle, g.name, g.runtime FROM ("
                    " SELECT process_id, queue_handle, agent_handle, start, end, name_id, 2 AS k"
                    " FROM kernel_dispatch WHERE start > 0"
                    " UNION ALL SELECT process_id, queue_handle, agent_handle, start, end,"
                    " operation_id, 3 FROM memory_copy WHERE start > 0) d"
                    " LEFT JOIN info_agent g ON g.process_id = d.process_id"
                    " AND g.handle = d.agent_handle ORDER BY 1, 2, 3, 4",
                    1);
    }
    rc = OTF2_Archive_CloseEvtFiles(w.archive);
    if (rc != OTF2_SUCCESS)
        fail_otf2(&w, "closing the event files", rc);
    /* Each location's local definitions (none), as OTF2 readers expect the files. */
    rc = OTF2_Archive_OpenDefFiles(w.archive);
    for (size_t i = 0; rc == OTF2_SUCCESS && i < w.nloc; i++) {
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(w.archive, (OTF2_LocationRef)i);
        rc = dw ? OTF2_Archive_CloseDefWriter(w.archive, dw) : OTF2_ERROR_MEM_ALLOC_FAILED;
    }
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Archive_CloseDefFiles(w.archive);
    if (rc != OTF2_SUCCESS)
        fail_otf2(&w, "writing the local definitions", rc);
    if (!w.failed)
        write_definitions(&w);
    rc = OTF2_Archive_Close(w.archive);
    if (rc != OTF2_SUCCESS)
        fail_otf2(&w, "closing the archive", rc);
    OTF2_Error_RegisterCallback(prev, NULL);
    if (w.str.cut > 0)
        uo_report("%zu string%s longer than %u bytes cut in the OTF2 archive (the database "
                  "has them whole)", w.str.cut, w.str.cut == 1 ? "" : "s", OTF2_STRING_MAX);
    for (size_t i = 0; i < w.str.n; i++)
        free(w.str.text[i]);
    free(w.str.text);
    upti_map_free(&w.str.ids);
    for (size_t i = 0; i < w.ndbstr; i++)
        free(w.dbstr[i]);
    free(w.dbstr);
    free(w.reg);
    free(w.loc);
    free(w.grp);
    free(w.nodes);
    free(w.proc);
    upti_map_free(&w.regions);
    upti_map_free(&w.accel);
    if (!w.failed && archive_rename(&w, &part, &final) == 0) {
        uo_note_written(final.anchor);
        return 0;
    }
    int saved = errno;
    archive_remove(&part);
    errno = saved;
    return -1;
}

int uo_export_otf2(sqlite3 *db, const char *dir, const char *name, char *err, size_t errlen)
{
    /* NAME.part.lock, held (flock) while NAME.part is written: another upti exporting to the
     * same name at once keeps off it instead of removing the archive being written
     * (uo_open_new: a lock file left by an export cut short is taken over). */
    char lock[4200];
    int n = snprintf(lock, sizeof lock, "%s/%s.part.lock", dir, name);
    if (n < 0 || (size_t)n >= sizeof lock) {
        snprintf(err, errlen, "the path %.400s/%.400s is too long", dir, name);
        return -1;
    }
    int lock_fd = uo_open_new(lock);
    if (lock_fd < 0) {
        snprintf(err, errlen, "cannot write %.400s/%.400s.part.otf2: %s", dir, name,
                 uo_open_new_reason(errno));
        return -1;
    }
    int rc = export_archive(db, dir, name, err, errlen);
    int saved = errno;
    unlink(lock);
    close(lock_fd);
    errno = saved;
    return rc;
}
