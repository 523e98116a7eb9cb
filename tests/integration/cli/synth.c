/* SPDX-License-Identifier: MIT */
/* upti-synth: writes a trace database from synthesized records (no SDK needed),
 * then optionally the other formats. Used by the writer tests and bench/output.
 *
 *   upti-synth OUT.db N [--nasty] [--formats db,pftrace,json,csv,stats] [--quiet]
 *
 * N is the number of records, the mix of synth_trace.h. Prints "records/s"
 * lines per format.
 */
#include "output.h"
#include "stats_reports.h"
#include "synth_trace.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *const k_api[] = {"NONE", "clEnqueueNDRangeKernel", "clEnqueueReadBuffer",
                                    "clFinish"};
static const char *const k_marker[] = {"NONE", "uptx_range_push", "uptx_range_pop",
                                       "uptx_range_start", "uptx_range_stop", "uptx_mark",
                                       "uptx_name_thread", "uptx_name_category"};

static const char *op_name(uint32_t kind, uint32_t op)
{
    if (kind == UPTI_TRACING_KIND_OPENCL_API && op < 4)
        return k_api[op];
    if (kind == UPTI_TRACING_KIND_MARKER_API && op < 8)
        return k_marker[op];
    if (kind == UPTI_TRACING_KIND_KERNEL_DISPATCH)
        return "NDRANGE";
    if (kind == UPTI_TRACING_KIND_MEMORY_COPY)
        return "READ_BUFFER";
    if (kind == UPTI_TRACING_KIND_MEMORY_ALLOCATION)
        return op == 1 ? "ALLOCATE" : "FREE";
    return NULL;
}

static const char *const k_plain[] = {"vector_add", "matrix_mul", "reduce"};
/* Every hazard a string can hold: quotes, commas, newlines, control bytes, invalid UTF-8. */
static const char *const k_nasty[] = {
    "he said \"hi\", then left",
    "line1\nline2\r\nline3",
    "tab\there\x01\x02\x1f\x7f end",
    "bad utf8 \xff\xfe \xc3\x28 \xe2\x82 \xed\xa0\x80 \xf8\x88\x80\x80\x80",
    "unicode \xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80",
    "back\\slash </script> ' ; DROP TABLE api; --",
};

int main(int argc, char **argv)
{
    uo_set_reporter(uo_report_to_stderr, NULL);
    if (argc < 3) {
        fprintf(stderr, "usage: upti-synth OUT.db N [--nasty] [--formats LIST] [--quiet]\n");
        return 2;
    }
    const char *out = argv[1];
    uint64_t n = strtoull(argv[2], NULL, 10);
    int nasty = 0, quiet = 0;
    const char *formats = "db";
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--nasty") == 0)
            nasty = 1;
        else if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
        else if (strcmp(argv[i], "--formats") == 0 && i + 1 < argc)
            formats = argv[++i];
    }
    const char *const *names = nasty ? k_nasty : k_plain;
    size_t nnames = nasty ? sizeof k_nasty / sizeof *k_nasty : sizeof k_plain / sizeof *k_plain;

    uo_process_info proc = {1234, 1, -1, "synth-host", nasty ? k_nasty[3] : "synth", 1000, 0};
    char err[512];
    uint64_t t0 = now_ns();
    uo_db *db = uo_db_create(out, &proc, op_name, err, sizeof err);
    if (db == NULL) {
        fprintf(stderr, "upti-synth: %s\n", err);
        return 1;
    }
    uint64_t end;
    uint64_t written = synth_trace(db, n, names, nnames, &end);
    uo_db_name_thread(db, 1234, nasty ? k_nasty[0] : "main");
    uint64_t t1 = now_ns();
    if (uo_db_close(db, end) != 0) {
        fprintf(stderr, "upti-synth: closing %s failed\n", out);
        return 1;
    }
    uint64_t t2 = now_ns();
    if (!quiet)
        printf("db: %llu records in %.3f s (inserts %.3f s, indexes+close %.3f s): %.0f records/s\n",
               (unsigned long long)written, (t2 - t0) / 1e9, (t1 - t0) / 1e9, (t2 - t1) / 1e9,
               written / ((t2 - t0) / 1e9));

    sqlite3 *rdb = uo_open(out, 0, err, sizeof err);
    if (rdb == NULL) {
        fprintf(stderr, "upti-synth: %s\n", err);
        return 1;
    }
    char base[4096];
    snprintf(base, sizeof base, "%s", out);
    char *dot = strrchr(base, '.');
    if (dot && strcmp(dot, ".db") == 0)
        *dot = '\0';
    int rc = 0;
    char path[4200];
    static const struct {
        const char *name;
        int (*write)(sqlite3 *db, const char *path, char *err, size_t errlen);
    } k_files[] = {{"pftrace", uo_export_pftrace}, {"json", uo_export_json}};
    for (size_t i = 0; i < sizeof k_files / sizeof *k_files; i++) {
        if (!strstr(formats, k_files[i].name))
            continue;
        snprintf(path, sizeof path, "%s.%s", base, k_files[i].name);
        uint64_t a = now_ns();
        rc |= k_files[i].write(rdb, path, err, sizeof err);
        uint64_t b = now_ns();
        if (!quiet)
            printf("%s: %.3f s: %.0f records/s\n", k_files[i].name, (b - a) / 1e9,
                   written / ((b - a) / 1e9));
    }
    if (strstr(formats, "csv")) {
        uint64_t a = now_ns();
        int files = 0;
        rc |= uo_export_csv(rdb, base, 0, &files, err, sizeof err);
        uint64_t b = now_ns();
        if (!quiet)
            printf("csv: %d files %.3f s: %.0f records/s\n", files, (b - a) / 1e9,
                   written / ((b - a) / 1e9));
    }
    if (strstr(formats, "stats")) {
        uint64_t a = now_ns();
        report_options o = {.format = FORMAT_TABLE};
        rc |= report_print_list(rdb, report_default_list, &o, stdout, err, sizeof err);
        uint64_t b = now_ns();
        if (!quiet)
            printf("stats: %.3f s\n", (b - a) / 1e9);
    }
    if (rc != 0)
        fprintf(stderr, "upti-synth: %s\n", err);
    sqlite3_close(rdb);
    return rc ? 1 : 0;
}
