/* SPDX-License-Identifier: MIT */
/* Buffers (src/program/sdk/ring.h, buffer.c) and marker ranges, one named case per
 * process (a process configures its tools once):
 *
 *   buffers.wrap     a 4096-byte region wrapped many times by records that
 *                    do not divide it: padding fills each gap, never
 *                    delivered; every record arrives once, in order, intact
 *   buffers.drops    DISCARD: a full region drops exactly the records that
 *                    do not fit, reported once as drop_count; room again
 *                    after a flush
 *   buffers.lossless LOSSLESS with the consumer draining concurrently: a
 *                    writer thread's records of every size all arrive
 *   buffers.reassign LOSSLESS: the buffer moves to another callback thread
 *                    while its writer waits for room; the new thread makes
 *                    room (the writer woke the old one for ever: a hang),
 *                    every record arrives once, in order
 *   buffers.ranges   uptx_range_start on one thread, uptx_range_stop on
 *                    another: both records carry the same range id, each
 *                    its own thread; push/pop depth is per thread
 */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "test_tool.h"
#include "unit_tests.h"

enum { REGION = 4096, RECORD_KIND = 7 };

/* What a test record holds: its sequence number, then bytes derived from it. */
static void fill(unsigned char *data, size_t size, uint32_t seq)
{
    memcpy(data, &seq, sizeof seq);
    for (size_t i = sizeof seq; i < size; i++)
        data[i] = (unsigned char)(seq * 31u + i);
}

static int intact(const upti_tool_record_t *r, uint32_t want_seq, size_t want_size)
{
    if (r->size != want_size)
        return 0;
    unsigned char expect[REGION];
    fill(expect, want_size, want_seq);
    return memcmp(r->data, expect, want_size) == 0;
}

/* ---- what the buffer callback saw ---- */

static pthread_mutex_t g_seen_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_next_seq;   /* the sequence number the next record must have */
static int g_bad;             /* records out of order, damaged, or of another category */
static uint64_t g_drops;      /* sum of drop_count */
static int g_drop_calls;      /* callbacks with drop_count > 0 */
static size_t (*g_size_of)(uint32_t seq);

static void on_records(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **headers,
                       size_t n, void *data, uint64_t drops)
{
    (void)c, (void)b, (void)data;
    pthread_mutex_lock(&g_seen_lock);
    g_drops += drops;
    g_drop_calls += drops > 0;
    for (size_t i = 0; i < n; i++) {
        const upti_record_header_t *h = headers[i];
        const upti_tool_record_t *r = h->payload;
        if (h->category != UPTI_BUFFER_CATEGORY_TOOL || h->kind != RECORD_KIND ||
            !intact(r, g_next_seq, g_size_of(g_next_seq))) {
            if (g_bad++ < 5)
                fprintf(stderr, "record %u: category %u kind %u size %u, want size %zu\n",
                        g_next_seq, h->category, h->kind, r->size, g_size_of(g_next_seq));
        }
        g_next_seq++;
    }
    pthread_mutex_unlock(&g_seen_lock);
}

static upti_status_t write_seq(upti_buffer_id_t b, uint32_t seq)
{
    unsigned char data[REGION];
    size_t size = g_size_of(seq);
    fill(data, size, seq);
    return upti_write_buffer_record(b, RECORD_KIND, data, size);
}

/* ---- the tool ---- */

static void on_markers(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **headers,
                       size_t n, void *data, uint64_t drops);

static upti_buffer_policy_t g_policy;
static size_t g_watermark;
static upti_buffer_id_t g_buffer;
static upti_context_id_t g_ctx;
static int g_trace_markers;
static upti_buffer_id_t g_mover;  /* buffers.reassign (below) */
static upti_callback_thread_t g_thread2;
static int g_with_mover;
static void on_mover(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **headers,
                     size_t n, void *data, uint64_t drops);

static int init_tool(upti_client_finalize_t fin, void *tool_data)
{
    (void)fin, (void)tool_data;
    CHECK_STATUS(upti_create_context(&g_ctx), UPTI_STATUS_SUCCESS);
    upti_buffer_options_t o = UPTI_OPTIONS(upti_buffer_options_t, .region_size = REGION,
                                           .watermark = g_watermark, .policy = g_policy,
                                           .callback = g_trace_markers ? on_markers : on_records);
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &o, &g_buffer), UPTI_STATUS_SUCCESS);
    if (g_trace_markers)
        CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API,
                                                           NULL, 0, g_buffer),
                     UPTI_STATUS_SUCCESS);
    if (g_with_mover) {
        upti_buffer_options_t m = UPTI_OPTIONS(upti_buffer_options_t, .region_size = REGION,
                                               .watermark = 1, .callback = on_mover);
        CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &m, &g_mover), UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_create_callback_thread(&g_thread2), UPTI_STATUS_SUCCESS);
        /* g_thread2 starts now, with a buffer of its own, and sleeps: a thread that starts
         * drains all its buffers once, which would hide the missed wake-up. */
        upti_buffer_id_t parked;
        CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &m, &parked), UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_assign_callback_thread(parked, g_thread2), UPTI_STATUS_SUCCESS);
    }
    CHECK_STATUS(upti_start_context(g_ctx), UPTI_STATUS_SUCCESS);
    return 0;
}

TEST_CONFIGURE(configure, init_tool, NULL)

static void start_tool(upti_buffer_policy_t policy, size_t watermark)
{
    g_policy = policy;
    g_watermark = watermark;
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
}

/* ---- wrap ---- */

/* 8 (ring header) + 16 (tool record header) + 600 = 624: 6 fit in a region,
 * with 352 bytes left at its end; sizes vary so the gap moves. */
static size_t wrap_size(uint32_t seq)
{
    return 600 - (seq % 5) * 40;
}

static void test_wrap(void)
{
    g_size_of = wrap_size;
    /* The callback runs only when flushed: the region wraps under our control. */
    start_tool(UPTI_BUFFER_POLICY_DISCARD, REGION);
    enum { N = 300 };
    for (uint32_t seq = 0; seq < N; seq++) {
        CHECK_STATUS(write_seq(g_buffer, seq), UPTI_STATUS_SUCCESS);
        if (seq % 4 == 3) /* 4 records at most in the region: never full */
            CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    }
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_next_seq, N);
    CHECK_EQ_U64(g_bad, 0);
    CHECK_EQ_U64(g_drops, 0);
}

/* ---- drops ---- */

static size_t drop_size(uint32_t seq)
{
    (void)seq;
    return 600; /* 624 bytes in the ring: 6 fit in 4096 */
}

static void test_drops(void)
{
    g_size_of = drop_size;
    start_tool(UPTI_BUFFER_POLICY_DISCARD, REGION);
    /* The callback thread's first pass delivers a producer that has dropped records,
     * at whatever moment the thread first runs: on a loaded machine, between two of the
     * writes below (CI once saw the first drop delivered, and room made for the next).
     * A flush waits for that pass; from then on only the flushes below deliver. */
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    uint32_t seq = 0;
    for (int i = 0; i < 6; i++)
        CHECK_STATUS(write_seq(g_buffer, seq++), UPTI_STATUS_SUCCESS);
    /* Full: these four are dropped (not given a sequence number the callback expects). */
    for (int i = 0; i < 4; i++)
        CHECK_STATUS(write_seq(g_buffer, seq), UPTI_STATUS_ERROR_OUT_OF_RESOURCES);
    /* Larger than the region: dropped too. */
    unsigned char big[REGION];
    memset(big, 0, sizeof big);
    CHECK_STATUS(upti_write_buffer_record(g_buffer, RECORD_KIND, big, REGION - 16),
                 UPTI_STATUS_ERROR_OUT_OF_RESOURCES);
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_next_seq, 6);
    CHECK_EQ_U64(g_drops, 5);
    CHECK_EQ_U64(g_drop_calls, 1);
    /* Drained: room for six more, and the drops are not reported again. */
    for (int i = 0; i < 6; i++)
        CHECK_STATUS(write_seq(g_buffer, seq++), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_next_seq, 12);
    CHECK_EQ_U64(g_drops, 5);
    CHECK_EQ_U64(g_bad, 0);
}

/* ---- lossless ---- */

enum { LOSSLESS_RECORDS = 20000 };

/* 0 to 1000 bytes: from records that share a cache line to ones of a quarter region. */
static size_t lossless_size(uint32_t seq)
{
    return (seq * 7919u) % 1001u;
}

static void *writer(void *arg)
{
    (void)arg;
    for (uint32_t seq = 0; seq < LOSSLESS_RECORDS; seq++)
        CHECK_STATUS(write_seq(g_buffer, seq), UPTI_STATUS_SUCCESS);
    return NULL;
}

static void test_lossless(void)
{
    g_size_of = lossless_size;
    start_tool(UPTI_BUFFER_POLICY_LOSSLESS, REGION / 4);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, writer, NULL) == 0);
    pthread_join(t, NULL);
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_next_seq, LOSSLESS_RECORDS);
    CHECK_EQ_U64(g_bad, 0);
    CHECK_EQ_U64(g_drops, 0);
}

/* ---- lossless, the buffer moved while its writer waits for room ---- */

/* The default callback thread runs on_mover (buffer g_mover's callback): it waits
 * until the writer of g_buffer waits for room (so the default thread cannot drain
 * g_buffer meanwhile), then moves g_buffer to g_thread2 from there (the flush of the
 * old thread is refused, it is this one) and returns. The writer then gets room only
 * from g_thread2: before the fix it woke the default thread, for ever. */
static pthread_mutex_t g_go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_go_cond = PTHREAD_COND_INITIALIZER;
static int g_go, g_moved;

static void on_mover(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **headers,
                     size_t n, void *data, uint64_t drops)
{
    (void)c, (void)b, (void)headers, (void)data, (void)drops;
    if (n == 0 || g_moved)
        return;
    pthread_mutex_lock(&g_go_lock);
    while (!g_go)
        pthread_cond_wait(&g_go_cond, &g_go_lock);
    pthread_mutex_unlock(&g_go_lock);
    CHECK_STATUS(upti_assign_callback_thread(g_buffer, g_thread2), UPTI_STATUS_SUCCESS);
    g_moved = 1;
}

static void *flush_mover(void *arg)
{
    (void)arg;
    CHECK_STATUS(upti_flush_buffer(g_mover), UPTI_STATUS_SUCCESS);
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL reassign: the writer still waits for room after 30 s\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(1);
    _exit(1);
}

static void test_reassign(void)
{
    g_size_of = lossless_size;
    g_with_mover = 1;
    start_tool(UPTI_BUFFER_POLICY_LOSSLESS, REGION); /* delivered when the writer waits */
    signal(SIGALRM, on_alarm);
    alarm(30);
    /* The default thread enters on_mover and stays there until "go". */
    char one = 1;
    CHECK_STATUS(upti_write_buffer_record(g_mover, RECORD_KIND, &one, sizeof one),
                 UPTI_STATUS_SUCCESS);
    pthread_t flusher, w;
    CHECK(pthread_create(&flusher, NULL, flush_mover, NULL) == 0);
    CHECK(pthread_create(&w, NULL, writer, NULL) == 0);
    /* The writer fills the region within microseconds and waits for room; if it has not
     * by then, the move comes first and the case passes without proving anything. */
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    CHECK(g_next_seq < LOSSLESS_RECORDS); /* it is waiting: nothing drains g_buffer */
    pthread_mutex_lock(&g_go_lock);
    g_go = 1;
    pthread_cond_broadcast(&g_go_cond);
    pthread_mutex_unlock(&g_go_lock);
    pthread_join(w, NULL);
    pthread_join(flusher, NULL);
    alarm(0);
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_moved, 1);
    CHECK_EQ_U64(g_next_seq, LOSSLESS_RECORDS);
    CHECK_EQ_U64(g_bad, 0);
    CHECK_EQ_U64(g_drops, 0);
}

/* ---- ranges across threads ---- */

typedef struct marker_seen {
    uint32_t operation;
    uint64_t range_id;
    upti_thread_id_t tid;
    char message[16];
} marker_seen;

static marker_seen g_markers[16];
static size_t g_nmarkers;

static void on_markers(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **headers,
                       size_t n, void *data, uint64_t drops)
{
    (void)c, (void)b, (void)data, (void)drops;
    for (size_t i = 0; i < n; i++) {
        const upti_buffer_tracing_marker_api_record_t *r = headers[i]->payload;
        if (headers[i]->kind != UPTI_TRACING_KIND_MARKER_API || g_nmarkers == 16)
            continue;
        marker_seen *m = &g_markers[g_nmarkers++];
        m->operation = r->operation;
        m->range_id = r->range_id;
        m->tid = r->thread_id;
        snprintf(m->message, sizeof m->message, "%s", r->message ? r->message : "");
    }
}

static uint64_t g_cross_id;
static int g_pop_other;
static uint64_t g_other_id;

static void *other_thread(void *arg)
{
    (void)arg;
    uptx_range_stop(g_cross_id);     /* a range started on the main thread */
    g_pop_other = uptx_range_pop();  /* this thread pushed nothing */
    g_other_id = uptx_range_start("other");
    return NULL;
}

/* The marker record of this operation, text and range id. */
static const marker_seen *find(uint32_t op, const char *message, uint64_t range_id)
{
    for (size_t i = 0; i < g_nmarkers; i++)
        if (g_markers[i].operation == op && strcmp(g_markers[i].message, message) == 0 &&
            g_markers[i].range_id == range_id)
            return &g_markers[i];
    return NULL;
}

static void test_ranges(void)
{
    g_trace_markers = 1;
    start_tool(UPTI_BUFFER_POLICY_DISCARD, REGION);
    CHECK_EQ_U64(uptx_range_push("outer"), 0);
    g_cross_id = uptx_range_start("cross");
    CHECK(g_cross_id != 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0);
    pthread_join(t, NULL);
    CHECK(g_pop_other == -1); /* depth is per thread: nothing to pop there */
    CHECK(g_other_id != 0 && g_other_id != g_cross_id);
    uptx_range_stop(g_other_id); /* the other way round */
    CHECK_EQ_U64(uptx_range_pop(), 0); /* main's push is still open */
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);

    CHECK_EQ_U64(g_nmarkers, 7);
    const marker_seen *push = find(UPTI_MARKER_API_RANGE_PUSH, "outer", 0);
    const marker_seen *start = find(UPTI_MARKER_API_RANGE_START, "cross", g_cross_id);
    const marker_seen *stop = find(UPTI_MARKER_API_RANGE_STOP, "", g_cross_id);
    const marker_seen *start2 = find(UPTI_MARKER_API_RANGE_START, "other", g_other_id);
    const marker_seen *stop2 = find(UPTI_MARKER_API_RANGE_STOP, "", g_other_id);
    CHECK(push != NULL && start != NULL && stop != NULL && start2 != NULL && stop2 != NULL);
    if (push == NULL || start == NULL || stop == NULL || start2 == NULL || stop2 == NULL)
        return;
    /* Each record is its calling thread's; a range's two ends pair by id alone. */
    CHECK(start->tid == push->tid);
    CHECK(stop->tid != start->tid);
    CHECK(start2->tid == stop->tid);
    CHECK(stop2->tid == start->tid);
    /* Two pops: the other thread's (-1, nothing open) and main's. */
    int pops = 0;
    for (size_t i = 0; i < g_nmarkers; i++)
        pops += g_markers[i].operation == UPTI_MARKER_API_RANGE_POP;
    CHECK_EQ_U64(pops, 2);
}

UNIT_TEST(buffers)
{
    static const unit_sub_case_t cases[] = {{"wrap", test_wrap},         {"drops", test_drops},
                                            {"lossless", test_lossless}, {"reassign", test_reassign},
                                            {"ranges", test_ranges}};
    if (!unit_run_sub_case("buffers", sub, cases, sizeof cases / sizeof *cases))
        return 2;
    return test_result(sub);
}
