/* SPDX-License-Identifier: MIT */
/* Buffer tracing under load: THREADS threads each make ITERATIONS
 * uptx_range_push + uptx_range_pop pairs.
 *   prog_buffer_stress lossless [iterations]   64 KiB regions, producers wait
 *   prog_buffer_stress discard [iterations]    4 KiB regions, records dropped
 * lossless: every record is delivered exactly once (2 * THREADS * ITERATIONS,
 * plus the main thread's one warm-up pair), per thread in order (correlation
 * ids increase, push and pop alternate, the message is copied). discard:
 * delivered + sum(drop_count) == produced, and what is delivered is still in
 * order per thread. Both: nothing more arrives after upti_flush_buffer()
 * (checked again in the tool's finalize, after the final flush at exit).
 *
 * The main thread makes one push/pop before starting the workers, so that
 * libuptx has registered before they run: calls racing with that first
 * registration are the subject of prog_first_call_race.c, not of this test. */
#include <upti/upti.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <uptx/uptx.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"
#include "test_tool.h"

#define THREADS 8
#define DEFAULT_ITERATIONS 1000000

typedef struct per_thread_t {
    upti_thread_id_t tid;
    uint64_t last_corr;
    uint64_t last_ts;
    uint64_t records;
    uint32_t next_op; /* lossless: the operation the next record must have */
    uint64_t errors;
} per_thread_t;

static int g_lossless;
static long g_iterations = DEFAULT_ITERATIONS;
static upti_context_id_t g_ctx;
static upti_buffer_id_t g_buffer;
static per_thread_t g_threads[THREADS + 1]; /* [THREADS]: the main thread */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_delivered, g_dropped, g_callbacks, g_bad_records, g_unknown_thread;
static pthread_barrier_t g_barrier;
/* discard: once every worker has made its first records (so that its region
 * exists), deliveries wait until every worker is done: the regions are then
 * certain to overflow, and drops are not a matter of timing. */
static pthread_cond_t g_done_cond = PTHREAD_COND_INITIALIZER;
static int g_workers_done;
static _Atomic int g_workers_started;

static per_thread_t *find_thread(upti_thread_id_t tid)
{
    for (int i = 0; i <= THREADS; i++)
        if (g_threads[i].tid == tid)
            return &g_threads[i];
    return NULL;
}

static void on_buffer(upti_context_id_t ctx, upti_buffer_id_t buffer, upti_record_header_t **headers,
                      size_t n, void *data, uint64_t drop_count)
{
    (void)data;
    pthread_mutex_lock(&g_lock);
    if (!g_lossless && atomic_load(&g_workers_started) == THREADS)
        while (!g_workers_done)
            pthread_cond_wait(&g_done_cond, &g_lock);
    g_callbacks++;
    if (ctx.handle != g_ctx.handle || buffer.handle != g_buffer.handle)
        report_first(&g_bad_records, "callback for another context or buffer", ctx.handle,
                     buffer.handle);
    g_dropped += drop_count;
    for (size_t i = 0; i < n; i++) {
        const upti_record_header_t *h = headers[i];
        if (h->category != UPTI_BUFFER_CATEGORY_TRACING || h->kind != UPTI_TRACING_KIND_MARKER_API) {
            report_first(&g_bad_records, "record category/kind", h->category, h->kind);
            continue;
        }
        const upti_buffer_tracing_marker_api_record_t *r = h->payload;
        if (r->size < sizeof *r || r->kind != UPTI_TRACING_KIND_MARKER_API)
            report_first(&g_bad_records, "record size/kind", r->size, r->kind);
        per_thread_t *t = find_thread(r->thread_id);
        if (t == NULL) {
            report_first(&g_unknown_thread, "record of an unknown thread", r->thread_id, 0);
            continue;
        }
        g_delivered++;
        t->records++;
        if (r->correlation_id.internal <= t->last_corr)
            report_first(&t->errors, "correlation ids do not increase", t->last_corr,
                         r->correlation_id.internal);
        t->last_corr = r->correlation_id.internal;
        if (r->start_timestamp != r->end_timestamp || r->start_timestamp < t->last_ts)
            report_first(&t->errors, "marker timestamps", r->start_timestamp, r->end_timestamp);
        t->last_ts = r->start_timestamp;
        if (r->operation == UPTI_MARKER_API_RANGE_PUSH) {
            if (r->message == NULL || strcmp(r->message, "x") != 0)
                report_first(&t->errors, "push message not copied", 0, 0);
        } else if (r->operation != UPTI_MARKER_API_RANGE_POP) {
            report_first(&t->errors, "operation", r->operation, 0);
        }
        if (g_lossless) {
            if (r->operation != t->next_op)
                report_first(&t->errors, "push/pop do not alternate (got, expected)", r->operation,
                             t->next_op);
            t->next_op = r->operation == UPTI_MARKER_API_RANGE_PUSH ? UPTI_MARKER_API_RANGE_POP
                                                                    : UPTI_MARKER_API_RANGE_PUSH;
        }
    }
    pthread_mutex_unlock(&g_lock);
}

static int tool_init(upti_client_finalize_t fini, void *tool_data)
{
    (void)fini, (void)tool_data;
    CHECK_STATUS(upti_create_context(&g_ctx), UPTI_STATUS_SUCCESS);
    size_t size = g_lossless ? 65536 : 4096;
    CHECK_STATUS(upti_create_buffer(g_ctx, size, size / 2,
                                    g_lossless ? UPTI_BUFFER_POLICY_LOSSLESS
                                               : UPTI_BUFFER_POLICY_DISCARD,
                                    on_buffer, NULL, &g_buffer),
                 UPTI_STATUS_SUCCESS);
    test_trace_markers(g_ctx, g_buffer);
    return 0;
}

static uint64_t g_delivered_at_flush, g_dropped_at_flush;

static void tool_fini(void *tool_data)
{
    (void)tool_data;
    pthread_mutex_lock(&g_lock);
    uint64_t delivered = g_delivered, dropped = g_dropped;
    pthread_mutex_unlock(&g_lock);
    if (delivered != g_delivered_at_flush || dropped != g_dropped_at_flush) {
        fprintf(stderr,
                "FAIL: after upti_flush_buffer, finalization delivered %llu more records and "
                "%llu more drops\n",
                (unsigned long long)(delivered - g_delivered_at_flush),
                (unsigned long long)(dropped - g_dropped_at_flush));
        _exit(1);
    }
}

TEST_CONFIGURE(configure, tool_init, tool_fini)

static void *worker(void *arg)
{
    per_thread_t *t = arg;
    upti_get_thread_id(&t->tid);
    pthread_barrier_wait(&g_barrier); /* every tid is known before any record */
    long bad = 0;
    bad += uptx_range_push("x") != 0;
    bad += uptx_range_pop() != 0;
    atomic_fetch_add(&g_workers_started, 1);
    for (long i = 1; i < g_iterations; i++) {
        bad += uptx_range_push("x") != 0;
        bad += uptx_range_pop() != 0;
    }
    return (void *)bad;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "lossless") != 0 && strcmp(argv[1], "discard") != 0)) {
        fprintf(stderr, "usage: %s lossless|discard [iterations]\n", argv[0]);
        return 2;
    }
    g_lossless = strcmp(argv[1], "lossless") == 0;
    if (argc > 2)
        g_iterations = atol(argv[2]);
    /* Sanitizer CI: fewer iterations (UPTI_TEST_SCALE=N divides them); the
     * assertions below stay exact. */
    const char *scale = getenv("UPTI_TEST_SCALE");
    if (scale != NULL && atol(scale) > 1)
        g_iterations = g_iterations / atol(scale) > 0 ? g_iterations / atol(scale) : 1;
    for (int i = 0; i <= THREADS; i++)
        g_threads[i].next_op = UPTI_MARKER_API_RANGE_PUSH;

    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    upti_get_thread_id(&g_threads[THREADS].tid);
    CHECK_EQ_U64(uptx_range_push("x"), 0); /* warm-up: libuptx registers now */
    CHECK_EQ_U64(uptx_range_pop(), 0);
    pthread_barrier_init(&g_barrier, NULL, THREADS);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, &g_threads[i]) == 0);
    long bad_returns = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad_returns += (long)r;
    }
    CHECK_EQ_U64(bad_returns, 0);
    pthread_mutex_lock(&g_lock);
    g_workers_done = 1;
    pthread_cond_broadcast(&g_done_cond);
    pthread_mutex_unlock(&g_lock);
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);

    const uint64_t produced = 2ull * THREADS * (uint64_t)g_iterations + 2;
    pthread_mutex_lock(&g_lock);
    g_delivered_at_flush = g_delivered;
    g_dropped_at_flush = g_dropped;
    fprintf(stderr, "%s: produced %llu delivered %llu dropped %llu in %llu callbacks\n", argv[1],
            (unsigned long long)produced, (unsigned long long)g_delivered,
            (unsigned long long)g_dropped, (unsigned long long)g_callbacks);
    CHECK_EQ_U64(g_bad_records, 0);
    CHECK_EQ_U64(g_unknown_thread, 0);
    for (int i = 0; i <= THREADS; i++)
        CHECK_EQ_U64(g_threads[i].errors, 0);
    if (g_lossless) {
        CHECK_EQ_U64(g_delivered, produced);
        CHECK_EQ_U64(g_dropped, 0);
        for (int i = 0; i <= THREADS; i++) {
            CHECK_EQ_U64(g_threads[i].records, i < THREADS ? 2ull * (uint64_t)g_iterations : 2);
            CHECK_EQ_U64(g_threads[i].next_op, UPTI_MARKER_API_RANGE_PUSH);
        }
    } else {
        CHECK_EQ_U64(g_delivered + g_dropped, produced);
        /* No delivery happened while the producers ran: all but what fits in
         * the regions was dropped. */
        CHECK(g_dropped > 0);
        CHECK(g_delivered < produced);
    }
    pthread_mutex_unlock(&g_lock);
    return test_result(g_lossless ? "buffer_stress lossless" : "buffer_stress discard");
}
