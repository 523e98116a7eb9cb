/* SPDX-License-Identifier: MIT */
/* Summary tables computed with SQL: per API function, marker region, kernel and copy direction. */
#include "output.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* A memory_copy row that moves data: not a barrier or marker (they synchronize
 * a queue, and are summed apart). */
#define NOT_SYNC                                                                              \
    "coalesce((SELECT string FROM string WHERE id = m.operation_id), '') NOT IN ('BARRIER', 'MARKER')"

typedef struct summary_def {
    const char *title;
    const char *domain;
    const char *source; /* SELECT key name, duration (ns) */
} summary_def;

static const summary_def k_summaries[] = {
    {"API calls", "API",
     "SELECT d.string || '::' || n.string AS name, a.end - a.start AS dur FROM api a"
     " LEFT JOIN string n ON n.id = a.name_id LEFT JOIN string d ON d.id = a.domain_id"},
    {"Marker ranges", "MARKER", "SELECT s.string AS name, r.end - r.start AS dur FROM region r"
                                " LEFT JOIN string s ON s.id = r.name_id"},
    {"Kernels", "KERNEL_DISPATCH",
     "SELECT s.string AS name, k.end - k.start AS dur FROM kernel_dispatch k"
     " LEFT JOIN string s ON s.id = k.name_id WHERE k.start > 0"},
    {"Memory copies by direction", "MEMORY_COPY",
     "SELECT s.string AS name, m.end - m.start AS dur FROM memory_copy m"
     " LEFT JOIN string s ON s.id = m.direction_id WHERE m.start > 0 AND " NOT_SYNC},
    {"Synchronization operations", "SYNC",
     "SELECT o.string AS name, m.end - m.start AS dur FROM memory_copy m"
     " LEFT JOIN string o ON o.id = m.operation_id WHERE m.start > 0 AND NOT " NOT_SYNC},
};

/* Two passes in SQL: per-name aggregates, then the squared deviations from each mean. */
static const char k_query[] =
    "WITH d AS (%s), g AS (SELECT name, count(*) AS n, sum(dur) AS total, avg(dur) AS mean,"
    " min(dur) AS lo, max(dur) AS hi FROM d GROUP BY name),"
    " v AS (SELECT d.name AS name, sum((d.dur - g.mean) * (d.dur - g.mean)) AS ss FROM d"
    " JOIN g ON d.name IS g.name GROUP BY d.name)"
    " SELECT g.name, g.n, g.total, g.mean, g.lo, g.hi, v.ss,"
    " 100.0 * g.total / max((SELECT sum(total) FROM g), 1) FROM g LEFT JOIN v ON v.name IS g.name"
    " ORDER BY g.total DESC, g.name";

int uo_summary(sqlite3 *db, FILE *out, int flags, char *err, size_t errlen)
{
    int csv = flags & UO_SUMMARY_CSV;
    size_t cut = flags & UO_SUMMARY_FULL_NAMES ? 0 : 48;
    uo_buf b;
    uo_buf_init(&b, out);
    if (csv)
        uo_buf_puts(&b, "Domain,Name,Calls,Total_ns,Average_ns,Min_ns,Max_ns,Stddev_ns,Percent\r\n");
    for (size_t i = 0; i < sizeof k_summaries / sizeof k_summaries[0]; i++) {
        const summary_def *s = &k_summaries[i];
        char sql[2048];
        snprintf(sql, sizeof sql, k_query, s->source);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            snprintf(err, errlen, "%s", sqlite3_errmsg(db));
            uo_buf_free(&b);
            return -1;
        }
        int rows = 0, stepped;
        while ((stepped = sqlite3_step(st)) == SQLITE_ROW) {
            const char *raw = (const char *)sqlite3_column_text(st, 0);
            int owned = 0; /* a database written by another tool may hold invalid UTF-8 */
            const char *name = uo_utf8_sanitize(raw ? raw : "", &owned);
            int64_t n = sqlite3_column_int64(st, 1);
            int64_t total = sqlite3_column_int64(st, 2);
            double mean = sqlite3_column_double(st, 3);
            int64_t lo = sqlite3_column_int64(st, 4), hi = sqlite3_column_int64(st, 5);
            double ss = sqlite3_column_double(st, 6);
            double stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
            double pct = sqlite3_column_double(st, 7);
            if (csv) {
                uo_csv_field(&b, s->domain);
                uo_buf_putc(&b, ',');
                uo_csv_field(&b, name);
                uo_buf_printf(&b, ",%lld,%lld,%.1f,%lld,%lld,%.1f,%.2f\r\n", (long long)n,
                              (long long)total, mean, (long long)lo, (long long)hi, stddev, pct);
                if (owned)
                    free((char *)name);
                continue;
            }
            if (rows++ == 0)
                uo_buf_printf(&b, "\n%s\n%-48s %10s %14s %12s %12s %12s %12s %7s\n", s->title,
                              "NAME", "CALLS", "TOTAL(ns)", "AVERAGE(ns)", "MIN(ns)", "MAX(ns)",
                              "STDDEV(ns)", "PERCENT");
            size_t before = b.len;
            uo_text_escape(&b, name, cut);
            size_t width = 0;
            for (size_t k = before; k < b.len; k++)
                if ((b.data[k] & 0xC0) != 0x80)
                    width++;
            for (; width < 48; width++)
                uo_buf_putc(&b, ' ');
            uo_buf_printf(&b, " %10lld %14lld %12.1f %12lld %12lld %12.1f %6.2f%%\n", (long long)n,
                          (long long)total, mean, (long long)lo, (long long)hi, stddev, pct);
            if (owned)
                free((char *)name);
        }
        if (stepped != SQLITE_DONE) {
            /* A corrupt database: nothing of the summary is printed. */
            snprintf(err, errlen, "%s", sqlite3_errmsg(db));
            sqlite3_finalize(st);
            uo_buf_free(&b);
            return -1;
        }
        sqlite3_finalize(st);
    }
    uo_buf_flush(&b, 0);
    int failed = b.error;
    uo_buf_free(&b);
    fflush(out);
    if (failed) {
        snprintf(err, errlen, "cannot write the summary");
        return -1;
    }
    return 0;
}

int uo_summary_text_is_ours(const char *head)
{
    for (size_t i = 0; i < sizeof k_summaries / sizeof k_summaries[0]; i++) {
        size_t len = strlen(k_summaries[i].title);
        if (head[0] == '\n' && strncmp(head + 1, k_summaries[i].title, len) == 0 &&
            strncmp(head + 1 + len, "\nNAME ", 6) == 0)
            return 1;
    }
    return 0;
}
