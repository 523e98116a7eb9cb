/* SPDX-License-Identifier: MIT */
/* The reports of `upti stats --report`: names after `nsys stats`, each one SQL
 * query over the database's tables and views (docs/database.md) and its columns.
 * Documented in docs/cli.md; a new report is one entry of report_defs. */
#include "stats_reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Statistics of a duration (or size) per key: src selects k (the name), k2 (a
 * second key, '' when none) and dur. Columns: percent of the total, total,
 * count, mean, median, min, max, sample standard deviation, k2, k. */
#define STATS_SQL(src)                                                                        \
    "WITH d AS (" src "),"                                                                    \
    " r AS (SELECT k, k2, dur, row_number() OVER (PARTITION BY k, k2 ORDER BY dur) AS rn,"    \
    " count(*) OVER (PARTITION BY k, k2) AS cnt FROM d),"                                     \
    " m AS (SELECT k, k2, avg(dur) AS med FROM r WHERE rn IN ((cnt + 1) / 2, (cnt + 2) / 2)"  \
    " GROUP BY k, k2),"                                                                       \
    " g AS (SELECT k, k2, count(*) AS n, sum(dur) AS total, avg(dur) AS mean, min(dur) AS lo," \
    " max(dur) AS hi FROM d GROUP BY k, k2),"                                                 \
    " v AS (SELECT d.k, d.k2, sum((d.dur - g.mean) * (d.dur - g.mean)) AS ss FROM d"          \
    " JOIN g USING (k, k2) GROUP BY d.k, d.k2)"                                               \
    " SELECT 100.0 * g.total / max((SELECT sum(total) FROM g), 1), g.total, g.n, g.mean,"     \
    " m.med, g.lo, g.hi, CASE WHEN g.n > 1 THEN upti_sqrt(v.ss / (g.n - 1)) ELSE 0.0 END,"   \
    " g.k2, g.k FROM g JOIN m USING (k, k2) JOIN v USING (k, k2)"                             \
    " ORDER BY g.total DESC, g.k, g.k2"

#define STATS_COLS(count_key, count_title, k2_type, k2_key, k2_title, k_type, k_key, k_title) \
    {"time_pct", "Time (%)", RC_PCT}, {"total_time", "Total Time (%s)", RC_TIME},            \
        {count_key, count_title, RC_COUNT}, {"avg", "Avg (%s)", RC_TIME},                     \
        {"med", "Med (%s)", RC_TIME}, {"min", "Min (%s)", RC_TIME},                           \
        {"max", "Max (%s)", RC_TIME}, {"stddev", "StdDev (%s)", RC_TIME},                     \
        {k2_key, k2_title, k2_type}, {k_key, k_title, k_type}

static const report_col k_api_sum[] = {
    STATS_COLS("num_calls", "Num Calls", RC_HIDDEN, "", "", RC_NAME, "name", "Name")};
static const report_col k_kern_sum[] = {
    STATS_COLS("instances", "Instances", RC_HIDDEN, "", "", RC_KERNEL, "name", "Name")};
static const report_col k_mem_time_sum[] = {
    STATS_COLS("count", "Count", RC_HIDDEN, "", "", RC_TEXT, "direction", "Direction")};
static const report_col k_sync_sum[] = {
    STATS_COLS("count", "Count", RC_HIDDEN, "", "", RC_TEXT, "operation", "Operation")};
static const report_col k_marker_sum[] = {
    STATS_COLS("instances", "Instances", RC_TEXT, "style", "Style", RC_NAME, "range", "Range")};

static const report_col k_mem_size_sum[] = {
    {"", "", RC_HIDDEN},           {"total_mb", "Total (MB)", RC_MB},
    {"count", "Count", RC_COUNT},  {"avg_mb", "Avg (MB)", RC_MB},
    {"med_mb", "Med (MB)", RC_MB}, {"min_mb", "Min (MB)", RC_MB},
    {"max_mb", "Max (MB)", RC_MB}, {"stddev_mb", "StdDev (MB)", RC_MB},
    {"", "", RC_HIDDEN},           {"direction", "Direction", RC_TEXT}};

/* A memory_copies row that moves data: not a barrier or a marker, which
 * synchronize a queue and have their own report (sync_sum). */
#define MOVES_DATA "operation NOT IN ('BARRIER', 'MARKER')"

/* A device's name: its info_agent row, else "host" (handle 0) or its handle. */
#define DEVICE_NAME(pid, agent)                                                               \
    "coalesce((SELECT i.name FROM info_agent i WHERE i.process_id = " pid                    \
    " AND i.handle = " agent " LIMIT 1), CASE " agent " WHEN 0 THEN 'host'"                  \
    " ELSE printf('agent %d', " agent ") END)"

static const char k_alloc_sql[] =
    "WITH a AS (SELECT m.id, m.process_id, m.agent_handle, coalesce(t.string, '') AS type,"
    " o.string AS op, m.size, m.timestamp FROM memory_allocate m"
    " LEFT JOIN string o ON o.id = m.operation_id LEFT JOIN string t ON t.id = m.type_id),"
    " l AS (SELECT *, sum(CASE op WHEN 'ALLOCATE' THEN size WHEN 'FREE' THEN -size ELSE 0 END)"
    " OVER (PARTITION BY process_id, agent_handle, type ORDER BY timestamp, id) AS live FROM a)"
    " SELECT sum(op = 'ALLOCATE') AS allocs, sum(op = 'FREE'),"
    " coalesce(sum(CASE op WHEN 'ALLOCATE' THEN size END), 0) AS total,"
    " avg(CASE op WHEN 'ALLOCATE' THEN size END), min(CASE op WHEN 'ALLOCATE' THEN size END),"
    " max(CASE op WHEN 'ALLOCATE' THEN size END), max(max(live), 0),"
    " coalesce(sum(CASE op WHEN 'ALLOCATE' THEN size WHEN 'FREE' THEN -size END), 0), type,"
    " " DEVICE_NAME("l.process_id", "l.agent_handle") ","
    " (SELECT pid FROM info_process p WHERE p.id = l.process_id) AS pid"
    " FROM l GROUP BY process_id, agent_handle, type ORDER BY total DESC, pid, agent_handle, type";

static const report_col k_alloc_sum[] = {
    {"allocs", "Allocs", RC_COUNT},       {"frees", "Frees", RC_COUNT},
    {"total_mb", "Total (MB)", RC_MB},    {"avg_mb", "Avg (MB)", RC_MB},
    {"min_mb", "Min (MB)", RC_MB},        {"max_mb", "Max (MB)", RC_MB},
    {"peak_mb", "Peak (MB)", RC_MB},      {"left_mb", "Left (MB)", RC_MB},
    {"type", "Type", RC_TEXT},            {"device", "Device", RC_TEXT},
    {"pid", "PID", RC_COUNT}};

/* Device operations (kernels and copies) with the time their API call began
 * (else their queued time) and the thread that enqueued them. */
#define GPU_OPS_SQL                                                                           \
    "SELECT process_id, tid, coalesce((SELECT min(a.start) FROM api a"                        \
    " WHERE a.process_id = k.process_id AND a.correlation_id = k.correlation_id"              \
    " AND k.correlation_id != 0), nullif(k.queued, 0), nullif(k.submit, 0)) AS launch,"      \
    " start, end FROM kernel_dispatch k WHERE start > 0 AND end >= start"                     \
    " UNION ALL SELECT process_id, tid, coalesce((SELECT min(a.start) FROM api a"             \
    " WHERE a.process_id = k.process_id AND a.correlation_id = k.correlation_id"              \
    " AND k.correlation_id != 0), nullif(k.queued, 0), nullif(k.submit, 0)), start, end"     \
    " FROM memory_copy k WHERE start > 0 AND end >= start"

/* The device operations in a temporary table, indexed for the ranges' lookups
 * (a range finds its operations by thread and launch time: no scan per range). */
static const char k_proj_prep[] =
    "DROP TABLE IF EXISTS temp.upti_gpu_ops;" /* typed columns: an index on an untyped one */
    "CREATE TEMP TABLE upti_gpu_ops(process_id INTEGER, tid INTEGER, launch INTEGER," /* is not */
    " start INTEGER, end INTEGER);" /* used against the INTEGER columns of region */
    "INSERT INTO upti_gpu_ops " GPU_OPS_SQL ";"
    "CREATE INDEX IF NOT EXISTS temp.upti_gpu_ops_thread ON upti_gpu_ops(process_id, tid, launch);"
    "CREATE INDEX IF NOT EXISTS temp.upti_gpu_ops_launch ON upti_gpu_ops(process_id, launch);";

static const char k_proj_sql[] =
    "WITH m AS (SELECT r.id AS rid, o.start, o.end FROM region r CROSS JOIN upti_gpu_ops o"
    " ON o.process_id = r.process_id AND o.tid = r.tid AND o.launch >= r.start"
    " AND o.launch < r.end WHERE r.kind = 0"
    " UNION ALL SELECT r.id, o.start, o.end FROM region r CROSS JOIN upti_gpu_ops o"
    " ON o.process_id = r.process_id AND o.launch >= r.start AND o.launch < r.end"
    " WHERE r.kind != 0),"
    " a AS (SELECT rid, max(end) - min(start) AS proj, count(*) AS ops, sum(end - start) AS busy"
    " FROM m GROUP BY rid),"
    " p AS (SELECT r.name_id, r.kind, r.end - r.start AS dur, coalesce(a.proj, 0) AS proj,"
    " coalesce(a.ops, 0) AS ops, coalesce(a.busy, 0) AS busy FROM region r"
    " LEFT JOIN a ON a.rid = r.id),"
    " g AS (SELECT name_id, kind, sum(proj) AS total, sum(dur) AS range_total, count(*) AS n,"
    " avg(proj) AS mean, min(proj) AS lo, max(proj) AS hi, sum(ops) AS ops, sum(busy) AS busy"
    " FROM p GROUP BY name_id, kind)"
    " SELECT 100.0 * total / max((SELECT sum(total) FROM g), 1), total, range_total, n, mean,"
    " lo, hi, ops, busy, CASE kind WHEN 0 THEN 'PushPop' ELSE 'StartEnd' END AS style,"
    " coalesce(s.string, '') AS name FROM g LEFT JOIN string s ON s.id = g.name_id"
    " ORDER BY total DESC, name, style";

static const report_col k_proj_sum[] = {
    {"time_pct", "Time (%)", RC_PCT},
    {"total_proj_time", "Total Proj Time (%s)", RC_TIME},
    {"total_range_time", "Total Range Time (%s)", RC_TIME},
    {"range_instances", "Range Instances", RC_COUNT},
    {"proj_avg", "Proj Avg (%s)", RC_TIME},
    {"proj_min", "Proj Min (%s)", RC_TIME},
    {"proj_max", "Proj Max (%s)", RC_TIME},
    {"gpu_ops", "GPU Ops", RC_COUNT},
    {"gpu_time", "GPU Time (%s)", RC_TIME},
    {"style", "Style", RC_TEXT},
    {"range", "Range", RC_NAME}};

/* Each device operation with its API call (the first of its correlation id). */
static const char k_exec_sql[] =
    "WITH o AS (SELECT k.process_id, k.correlation_id, coalesce(n.string, '') AS op, k.submit,"
    " k.start, k.end FROM kernel_dispatch k LEFT JOIN string n ON n.id = k.name_id"
    " WHERE k.start > 0 AND k.correlation_id != 0"
    " UNION ALL SELECT m.process_id, m.correlation_id, coalesce(d.string, ''), m.submit,"
    " m.start, m.end FROM memory_copy m LEFT JOIN string d ON d.id = m.direction_id"
    " WHERE m.start > 0 AND m.correlation_id != 0),"
    " j AS (SELECT coalesce(s.string, '') AS api, o.op, o.start - a.start AS lat,"
    " CASE WHEN o.submit > 0 THEN o.start - o.submit END AS q, o.end - o.start AS dur FROM o"
    " JOIN api a ON a.id = (SELECT min(b.id) FROM api b WHERE b.process_id = o.process_id"
    " AND b.correlation_id = o.correlation_id) LEFT JOIN string s ON s.id = a.name_id)"
    " SELECT count(*), sum(lat) AS total, avg(lat), min(lat), max(lat), avg(q), min(q), max(q),"
    " avg(dur), api, op FROM j GROUP BY api, op ORDER BY total DESC, api, op";

static const report_col k_exec_sum[] = {
    {"count", "Count", RC_COUNT},
    {"total_latency", "Total Latency (%s)", RC_TIME},
    {"latency_avg", "Latency Avg (%s)", RC_TIME},
    {"latency_min", "Latency Min (%s)", RC_TIME},
    {"latency_max", "Latency Max (%s)", RC_TIME},
    {"queue_avg", "Queue Avg (%s)", RC_TIME},
    {"queue_min", "Queue Min (%s)", RC_TIME},
    {"queue_max", "Queue Max (%s)", RC_TIME},
    {"exec_avg", "Exec Avg (%s)", RC_TIME},
    {"api_name", "API Name", RC_TEXT},
    {"operation", "Operation", RC_KERNEL}};

/* Busy time per group of device operations: the union of their intervals
 * (gaps and islands: an island starts where an operation begins after every
 * earlier one of its group ended). part: the group's columns. */
#define BUSY_SQL(part)                                                                        \
    "WITH o AS (SELECT process_id, agent_handle, queue_handle, start, end FROM kernel_dispatch" \
    " WHERE start > 0 AND end >= start UNION ALL SELECT process_id, agent_handle, queue_handle," \
    " start, end FROM memory_copy WHERE start > 0 AND end >= start),"                         \
    " s AS (SELECT *, max(end) OVER (PARTITION BY " part " ORDER BY start, end"               \
    " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before FROM o),"                   \
    " i AS (SELECT *, sum(before IS NULL OR start > before) OVER (PARTITION BY " part         \
    " ORDER BY start, end ROWS UNBOUNDED PRECEDING) AS island FROM s),"                       \
    " b AS (SELECT " part ", island, min(start) AS s0, max(end) AS e0, count(*) AS n,"        \
    " sum(end - start) AS op_time, count(DISTINCT queue_handle) AS queues,"                   \
    " max(agent_handle) AS agent FROM i GROUP BY " part ", island),"                          \
    " q AS (SELECT " part ", sum(e0 - s0) AS busy, max(e0) - min(s0) AS span, sum(n) AS n,"   \
    " sum(op_time) AS op_time, max(agent) AS agent FROM b GROUP BY " part ")"

static const char k_queue_busy_sql[] =
    BUSY_SQL("process_id, queue_handle")
    " SELECT 100.0 * busy / max(span, 1), busy, span, n, op_time, printf('0x%x', queue_handle),"
    " " DEVICE_NAME("q.process_id", "q.agent") ","
    " (SELECT pid FROM info_process p WHERE p.id = q.process_id) AS pid FROM q"
    " ORDER BY busy DESC, pid, queue_handle";

static const report_col k_queue_busy_sum[] = {
    {"busy_pct", "Busy (%)", RC_PCT},     {"busy_time", "Busy Time (%s)", RC_TIME},
    {"span", "Span (%s)", RC_TIME},        {"ops", "Ops", RC_COUNT},
    {"op_time", "Op Time (%s)", RC_TIME},  {"queue", "Queue", RC_TEXT},
    {"device", "Device", RC_TEXT},         {"pid", "PID", RC_COUNT}};

static const char k_dev_busy_sql[] =
    BUSY_SQL("process_id, agent_handle")
    " SELECT 100.0 * busy / max(span, 1), busy, span, n, op_time,"
    " (SELECT count(DISTINCT queue_handle) FROM o WHERE o.process_id = q.process_id"
    " AND o.agent_handle = q.agent_handle),"
    " " DEVICE_NAME("q.process_id", "q.agent_handle") ","
    " (SELECT pid FROM info_process p WHERE p.id = q.process_id) AS pid FROM q"
    " ORDER BY busy DESC, pid, agent_handle";

static const report_col k_dev_busy_sum[] = {
    {"busy_pct", "Busy (%)", RC_PCT},     {"busy_time", "Busy Time (%s)", RC_TIME},
    {"span", "Span (%s)", RC_TIME},        {"ops", "Ops", RC_COUNT},
    {"op_time", "Op Time (%s)", RC_TIME},  {"queues", "Queues", RC_COUNT},
    {"device", "Device", RC_TEXT},         {"pid", "PID", RC_COUNT}};

/* Calls whose result (apis.result, NULL for calls without a status) is not success, per
 * function: errors (< 0: cl_int and VkResult errors), other statuses (> 0: VK_NOT_READY,
 * VK_TIMEOUT...), and the three most frequent results of either, named where known. */
static const char k_err_sql[] =
    "WITH a AS (SELECT coalesce(domain, '') AS dom, coalesce(name, '') AS fn, result FROM apis),"
    " c AS (SELECT dom, fn, result, count(*) AS n FROM a WHERE result != 0 GROUP BY dom, fn, result),"
    " r AS (SELECT *, row_number() OVER (PARTITION BY dom, fn ORDER BY n DESC, result) AS rn FROM c),"
    " t AS (SELECT dom, fn, group_concat(coalesce(upti_result_name(dom, result) || ' (' || result"
    " || ')', result) || ' x' || n, ', ') AS codes FROM (SELECT * FROM r WHERE rn <= 3"
    " ORDER BY dom, fn, rn) GROUP BY dom, fn),"
    " g AS (SELECT dom, fn, count(*) AS calls, coalesce(sum(result < 0), 0) AS errors,"
    " coalesce(sum(result > 0), 0) AS other FROM a GROUP BY dom, fn)"
    " SELECT 100.0 * g.errors / g.calls, g.calls, g.errors, g.other, t.codes, g.fn"
    " FROM g JOIN t USING (dom, fn) ORDER BY g.errors DESC, g.other DESC, g.fn";

static const report_col k_err_sum[] = {
    {"error_pct", "Errors (%)", RC_PCT}, {"num_calls", "Num Calls", RC_COUNT},
    {"errors", "Errors", RC_COUNT},      {"other", "Other Status", RC_COUNT},
    {"results", "Results", RC_TEXT},     {"name", "Name", RC_NAME}};

#define COLS(a) a, sizeof a / sizeof a[0]

const report_def report_defs[] = {
    {"api_sum", "API Summary", "API calls per function: time, calls, avg/med/min/max/stddev",
     STATS_SQL("SELECT coalesce(name, '') AS k, '' AS k2, duration AS dur FROM apis"),
     COLS(k_api_sum), NULL, NULL},
    {"api_err_sum", "API Error Summary",
     "API functions that returned an error or another status: calls, errors, most frequent results",
     k_err_sql, COLS(k_err_sum), NULL, "apis.result"},
    {"kern_sum", "Kernel Summary", "kernels per name: device time, instances, avg/med/min/max/stddev",
     STATS_SQL("SELECT coalesce(name, '') AS k, '' AS k2, duration AS dur FROM kernels"
               " WHERE start > 0"),
     COLS(k_kern_sum), NULL, NULL},
    {"mem_time_sum", "Memory Copy Time Summary",
     "memory copies per direction: device time (barriers and markers: sync_sum)",
     STATS_SQL("SELECT coalesce(direction, '') AS k, '' AS k2, duration AS dur"
               " FROM memory_copies WHERE start > 0 AND " MOVES_DATA),
     COLS(k_mem_time_sum), NULL, NULL},
    {"mem_size_sum", "Memory Copy Size Summary", "memory copies per direction: bytes (MB)",
     STATS_SQL("SELECT coalesce(direction, '') AS k, '' AS k2, bytes AS dur FROM memory_copies"
               " WHERE " MOVES_DATA),
     COLS(k_mem_size_sum), NULL, NULL},
    {"sync_sum", "Synchronization Operation Summary",
     "barriers and markers on device queues: device time per operation",
     STATS_SQL("SELECT coalesce(operation, '') AS k, '' AS k2, duration AS dur"
               " FROM memory_copies WHERE start > 0 AND NOT " MOVES_DATA),
     COLS(k_sync_sum), NULL, NULL},
    {"alloc_sum", "Memory Allocation Summary",
     "allocations per device and memory type: counts, sizes, peak and left allocated",
     k_alloc_sql, COLS(k_alloc_sum), NULL, NULL},
    {"marker_sum", "Marker Range Summary",
     "uptx/NVTX ranges per name and style: time, instances, avg/med/min/max/stddev",
     STATS_SQL("SELECT coalesce(name, '') AS k, CASE kind WHEN 'push' THEN 'PushPop'"
               " ELSE 'StartEnd' END AS k2, duration AS dur FROM regions"),
     COLS(k_marker_sum), NULL, NULL},
    {"marker_gpu_proj_sum", "Marker Range GPU Projection Summary",
     "device time of the kernels and copies enqueued inside each range name", k_proj_sql,
     COLS(k_proj_sum), k_proj_prep, NULL},
    {"kern_exec_sum", "API to Device Latency Summary",
     "per API function and kernel (or copy direction): API start to device start, queue time",
     k_exec_sql, COLS(k_exec_sum), NULL, NULL},
    {"queue_busy_sum", "Queue Busy Summary", "per device queue: busy time (union of operations)",
     k_queue_busy_sql, COLS(k_queue_busy_sum), NULL, NULL},
    {"dev_busy_sum", "Device Busy Summary", "per device: busy time (union over its queues)",
     k_dev_busy_sql, COLS(k_dev_busy_sum), NULL, NULL},
};

const size_t report_count = sizeof report_defs / sizeof report_defs[0];

const report_def *report_find(const char *name)
{
    for (size_t i = 0; i < report_count; i++)
        if (strcmp(report_defs[i].name, name) == 0)
            return &report_defs[i];
    return NULL;
}

const char report_default_list[] =
    "api_sum,api_err_sum,kern_sum,mem_time_sum,mem_size_sum,sync_sum,marker_sum";

/* The names of all reports, ", "-separated, into buf (for messages). */
static void report_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < report_count && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", report_defs[i].name);
}

/* The message of report_parse_list for word (len bytes) of list: printable ASCII only. */
static void unknown_report(const char *list, const char *word, size_t len, char *err, size_t errlen)
{
    char shown[64], names[512];
    const char *what = len == 0 ? "empty report name in" : "unknown report";
    if (len == 0)
        word = list, len = strlen(list);
    size_t w = 0;
    for (size_t i = 0; i < len && w + 1 < sizeof shown; i++)
        shown[w++] = word[i] > ' ' && word[i] < 127 ? word[i] : '?';
    shown[w] = '\0';
    report_names(names, sizeof names);
    snprintf(err, errlen, "%s '%s' (reports: %s)", what, shown, names);
}

int report_parse_list(const char *list, const report_def ***out, size_t *n, char *err,
                      size_t errlen)
{
    *out = NULL;
    *n = 0;
    size_t max = 1;
    for (const char *p = list; *p; p++)
        max += *p == ',';
    const report_def **defs = calloc(max, sizeof *defs);
    if (defs == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        const report_def *d = NULL;
        for (size_t i = 0; i < report_count && d == NULL; i++)
            if (strlen(report_defs[i].name) == len && strncmp(report_defs[i].name, p, len) == 0)
                d = &report_defs[i];
        if (d == NULL) {
            unknown_report(list, p, len, err, errlen);
            free(defs);
            *n = 0;
            return -1;
        }
        defs[(*n)++] = d;
        p += len;
        if (*p == '\0')
            break;
    }
    *out = defs;
    return 0;
}
