/* SPDX-License-Identifier: MIT */
/* bench/output/bench_db — the database writer alone (src/collector/output/db.c): how
 * many records per second go into SQLite, in the two ways it is used.
 *
 *   bench_db [RECORDS [DIR [ONLY]]]   (default 1000000 records, DIR $TMPDIR or /tmp)
 *
 * ONLY (e.g. "bulk-trace") runs that mode and mix once: for
 * `valgrind --tool=callgrind`.
 *
 * streaming: uo_db_create, the tool inside the traced program (rollback
 * journal, crash-safe commits). bulk: uo_db_create_bulk, the collector's
 * conversion after the run (`upti-ring convert`). Each mode writes three mixes
 * of synthesized records: "trace" (upti-synth's: an API call with its kernel
 * or copy, every 8th iteration a push/mark/pop, two threads; pairs make
 * region rows), "marks" (uptx_mark("m") only, what bench/shared_ring
 * converts) and "args" (clSetKernelArg calls under `upti run --args`: each
 * call's four arguments, then its API record, as the SDK writes them;
 * RECORDS counts both, 5 a call). Printed per run: seconds for the inserts
 * and for the close (open ranges, thread rows, the indexes, the commit), the
 * rate of the whole (records / (inserts + close)) in wall time and in CPU
 * time of this process, and for bulk the ratio of its rate to streaming's.
 * The best of 3 runs is kept. No assertion: bench.db_smoke runs it small.
 */
#include "output.h"
#include "synth_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUNS 3

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *op_name(uint32_t kind, uint32_t op)
{
    static const char *const api[] = {"NONE", "clEnqueueNDRangeKernel", "clEnqueueReadBuffer",
                                      "clSetKernelArg"};
    static const char *const marker[] = {"NONE", "uptx_range_push", "uptx_range_pop",
                                         "uptx_range_start", "uptx_range_stop", "uptx_mark"};
    if (kind == UPTI_TRACING_KIND_OPENCL_API && op < 4)
        return api[op];
    if (kind == UPTI_TRACING_KIND_MARKER_API && op < 6)
        return marker[op];
    if (kind == UPTI_TRACING_KIND_KERNEL_DISPATCH)
        return "NDRANGE";
    if (kind == UPTI_TRACING_KIND_MEMORY_COPY)
        return "READ_BUFFER";
    return NULL;
}

/* uptx_mark("m") from one thread, as bench/shared_ring records them. */
static uint64_t write_marks(uo_db *db, uint64_t n, uint64_t *end)
{
    uint64_t ts = 10000;
    for (uint64_t i = 0; i < n; i++, ts += 40)
        synth_marker(db, UPTI_MARKER_API_MARK, 1234, i + 1, ts, "m", 0xFF00FF00u);
    *end = ts;
    return n;
}

/* clSetKernelArg calls with their four arguments, written first (the SDK's
 * EXIT callbacks), then the call; returns the records written (5 a call). */
static uint64_t write_args(uo_db *db, uint64_t n, uint64_t *end)
{
    static const char *const types[] = {"cl_kernel", "cl_uint", "size_t", "const void *"};
    static const char *const names[] = {"kernel", "arg_index", "arg_size", "arg_value"};
    uint64_t ts = 10000, corr = 0, written = 0;
    char value[32];
    while (written < n) {
        corr++;
        for (uint32_t p = 0; p < 4; p++) {
            if (p == 0)
                snprintf(value, sizeof value, "0x%llx", 0x55aa00001000ull + (corr & 7) * 0x100);
            else
                snprintf(value, sizeof value, "%llu", (unsigned long long)(p == 1 ? corr % 6 : 8));
            uo_db_add_arg(db, corr, p, types[p], names[p], p == 3 ? "0x7ffd5c0" : value);
        }
        upti_buffer_tracing_api_record_t a = {0};
        a.size = sizeof a;
        a.kind = UPTI_TRACING_KIND_OPENCL_API;
        a.operation = 3;
        a.correlation_id.internal = corr;
        a.thread_id = 1234;
        a.start_timestamp = ts;
        a.end_timestamp = ts + 40;
        uo_db_add_record(db, a.kind, &a);
        written += 5;
        ts += 100;
    }
    *end = ts;
    return written;
}

static const char *const k_mixes[] = {"trace", "marks", "args"};

/* One run; rate (records/s, wall) and cpu rate; -1 on failure. */
static int run(const char *path, int bulk, int mix, uint64_t n, double *rate, double *cpu_rate,
               double *inserts, double *close_s)
{
    uo_process_info proc = {1234, 1, -1, "bench-host", "bench", 1000, 0};
    char err[512];
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    uo_db *db = bulk ? uo_db_create_bulk(path, &proc, op_name, err, sizeof err)
                     : uo_db_create(path, &proc, op_name, err, sizeof err);
    if (db == NULL) {
        fprintf(stderr, "bench: %s\n", err);
        return -1;
    }
    uint64_t end;
    static const char *const names[] = {"vector_add", "matrix_mul", "reduce"};
    uint64_t written = mix == 1   ? write_marks(db, n, &end)
                       : mix == 2 ? write_args(db, n, &end)
                                  : synth_trace(db, n, names, 3, &end);
    double t1 = clock_s(CLOCK_MONOTONIC);
    if (uo_db_close(db, end) != 0) {
        fprintf(stderr, "bench: closing %s failed\n", path);
        return -1;
    }
    double t2 = clock_s(CLOCK_MONOTONIC), c2 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    *rate = (double)written / (t2 - t0);
    *cpu_rate = (double)written / (c2 - c0);
    *inserts = t1 - t0;
    *close_s = t2 - t1;
    return 0;
}

int main(int argc, char **argv)
{
    uo_set_reporter(uo_report_to_stderr, NULL);
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    const char *tmp = getenv("TMPDIR");
    const char *dir = argc > 2 ? argv[2] : tmp != NULL && tmp[0] ? tmp : "/tmp";
    const char *only = argc > 3 ? argv[3] : NULL;
    if (n == 0)
        return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/upti-bench-db-%d.db", dir, (int)getpid());
    for (int mix = 0; mix < 3; mix++) {
        double streaming = 0;
        for (int bulk = 0; bulk < 2; bulk++) {
            char name[32];
            snprintf(name, sizeof name, "%s-%s", bulk ? "bulk" : "streaming", k_mixes[mix]);
            if (only != NULL && strcmp(only, name) != 0)
                continue;
            double best = 0, best_cpu = 0, ins = 0, cls = 0;
            for (int r = 0; r < (only != NULL ? 1 : RUNS); r++) {
                double rate, cpu_rate, i, c;
                if (run(path, bulk, mix, n, &rate, &cpu_rate, &i, &c) != 0) {
                    unlink(path);
                    return 1;
                }
                if (rate > best) {
                    best = rate;
                    ins = i;
                    cls = c;
                }
                if (cpu_rate > best_cpu)
                    best_cpu = cpu_rate;
            }
            printf("db mode=%s mix=%s records=%llu inserts=%.3f s close=%.3f s rate=%.2f M "
                   "records/s cpu_rate=%.2f M records/s",
                   bulk ? "bulk" : "streaming", k_mixes[mix], (unsigned long long)n,
                   ins, cls, best / 1e6, best_cpu / 1e6);
            if (bulk)
                printf(" vs_streaming=%.2f", streaming > 0 ? best / streaming : 0.0);
            else
                streaming = best;
            printf("\n");
            fflush(stdout);
        }
    }
    unlink(path);
    return 0;
}
