/* SPDX-License-Identifier: MIT */
/* The compact mark (<upti/ring.h>, UPTI_RING_KIND_COMPACT_MARK): the same
 * marker calls (marks, pushes and pops, ranges, names of threads and
 * categories; a text, none, a short one and one past the fast path's;
 * values of 0 and not; an external correlation id pushed on some, on another
 * context for others) traced in
 * turn, one buffer at a time (the records after each thread's first take
 * the fast path but the long text's), then into two at once (the slow
 * path's loop over the buffers), into
 *   - a shared buffer in the folder of a collector of upti's (a file of
 *     version 2): each call without an external id as a compact mark of
 *     exactly the bytes its flags say, the others as compact marker records;
 *   - a shared buffer elsewhere (version 1): every call as a compact marker;
 *   - an in-process buffer: every call delivered as the public record.
 * Every record read back is the call's: operation, text, range id or
 * category, external id, correlation ids rising. Where the collector is built
 * both files are collected and converted: the same marker rows but for their
 * correlation ids and times. */
#include <upti/buffer.h>
#include <upti/buffer_tracing.h>
#include <upti/ring.h>
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef UNIT_HAVE_COLLECTOR
#include "collector.h"
#include <sqlite3.h>
#endif

#include "check.h"
#include "compact_records.h"
#include "test_tool.h"
#include "unit_ring_file.h"
#include "unit_tests.h"

enum { GROUPS = 28, BOTH = 7, MAX_CALLS = (GROUPS + BOTH) * 2, V2 = 0, V1 = 1, INPROC = 2,
       BUFFERS = 3 };
static char g_dirs[2][64] = {"/tmp/upti-collect-mark-XXXXXX", "/tmp/upti-mark-XXXXXX"};
static upti_context_id_t g_ctx[BUFFERS];
static upti_buffer_id_t g_buf[BUFFERS];
static const char k_long[] = "a text past the fast path's thirty-one bytes";

/* A marker call as it should read back. */
typedef struct want_call {
    uint32_t operation;
    char message[64]; /* "" with has_message 0: none */
    int has_message;
    uint64_t range_id, domain, external;
} want_call;

static want_call g_want[BUFFERS][MAX_CALLS];
static int g_calls[BUFFERS];
static upti_buffer_tracing_marker_api_record_t g_got[MAX_CALLS];
static char g_got_text[MAX_CALLS][64];
static int g_delivered;

static void on_records(upti_context_id_t ctx, upti_buffer_id_t buf, upti_record_header_t **headers,
                       size_t n, void *data, uint64_t drops)
{
    (void)ctx, (void)buf, (void)data, (void)drops;
    for (size_t i = 0; i < n && g_delivered < MAX_CALLS; i++) {
        if (headers[i]->kind != UPTI_TRACING_KIND_MARKER_API)
            continue;
        const upti_buffer_tracing_marker_api_record_t *m = headers[i]->payload;
        g_got[g_delivered] = *m;
        snprintf(g_got_text[g_delivered], sizeof g_got_text[0], "%s",
                 m->message != NULL ? m->message : "");
        g_got[g_delivered].message = m->message != NULL ? g_got_text[g_delivered] : NULL;
        g_delivered++;
    }
}

static int init(upti_client_finalize_t fin, void *tool_data)
{
    (void)fin, (void)tool_data;
    for (int k = 0; k < BUFFERS; k++) {
        CHECK_STATUS(upti_create_context(&g_ctx[k]), UPTI_STATUS_SUCCESS);
        if (k == INPROC) {
            upti_buffer_options_t o = UPTI_OPTIONS(upti_buffer_options_t, .region_size = 65536,
                                                   .watermark = 1, .callback = on_records);
            CHECK_STATUS(upti_create_buffer_with_options(g_ctx[k], &o, &g_buf[k]),
                         UPTI_STATUS_SUCCESS);
        } else {
            CHECK(mkdtemp(g_dirs[k]) != NULL);
            CHECK_STATUS(upti_create_shared_buffer(g_ctx[k], 65536, UPTI_BUFFER_POLICY_DISCARD,
                                                   g_dirs[k], 4, &g_buf[k]),
                         UPTI_STATUS_SUCCESS);
        }
        CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx[k], UPTI_TRACING_KIND_MARKER_API,
                                                           NULL, 0, g_buf[k]),
                     UPTI_STATUS_SUCCESS);
    }
    return 0;
}
TEST_CONFIGURE(configure, init, NULL)

static void want(int k, uint32_t op, const char *message, uint64_t value, uint64_t external)
{
    want_call *w = &g_want[k][g_calls[k]++];
    int category = op == UPTI_MARKER_API_NAME_CATEGORY;
    *w = (want_call){.operation = op, .has_message = message != NULL,
                     .range_id = category ? 0 : value, .domain = category ? value : 0,
                     .external = external};
    snprintf(w->message, sizeof w->message, "%s", message != NULL ? message : "");
}

/* The records of a call into the buffers of the contexts started (mask), as want(). */
static void want_in(unsigned mask, uint32_t op, const char *message, uint64_t value,
                    uint64_t external)
{
    for (int k = 0; k < BUFFERS; k++)
        if (mask & (1u << k))
            want(k, op, message, value, external);
}

/* The calls of group g into the buffers of the contexts in mask, the ones started. */
static void calls(unsigned mask, int g)
{
    char text[32];
    uint64_t external = g % 5 == 4 ? 700u + (uint64_t)g : 0;
    for (int k = 0; k < BUFFERS && external != 0; k++)
        if (mask & (1u << k))
            CHECK_STATUS(upti_push_external_correlation_id(
                             g_ctx[k], (upti_user_data_t){.value = external}),
                         UPTI_STATUS_SUCCESS);
    /* An id pushed on a context not started is none of these calls': still compact marks. */
    int other = 0;
    while (mask & (1u << other))
        other++;
    if (g % 5 == 2)
        CHECK_STATUS(upti_push_external_correlation_id(g_ctx[other],
                                                       (upti_user_data_t){.value = 99}),
                     UPTI_STATUS_SUCCESS);
    snprintf(text, sizeof text, "t%d", g);
#define want(k, ...) want_in(mask, __VA_ARGS__)
    switch (g % 7) {
    case 0:
        uptx_mark(text);
        want(k, UPTI_MARKER_API_MARK, text, 0, external);
        break;
    case 1:
        uptx_mark(NULL);
        want(k, UPTI_MARKER_API_MARK, NULL, 0, external);
        break;
    case 2:
        uptx_range_push(text);
        want(k, UPTI_MARKER_API_RANGE_PUSH, text, 0, external);
        uptx_range_pop();
        want(k, UPTI_MARKER_API_RANGE_POP, NULL, 0, external);
        break;
    case 3: {
        uint64_t id = uptx_range_start(text);
        want(k, UPTI_MARKER_API_RANGE_START, text, id, external);
        uptx_range_stop(id);
        want(k, UPTI_MARKER_API_RANGE_STOP, NULL, id, external);
        break;
    }
    case 4:
        uptx_name_category((uint32_t)g, text);
        want(k, UPTI_MARKER_API_NAME_CATEGORY, text, (uint64_t)g, external);
        break;
    case 5:
        uptx_name_thread(text);
        want(k, UPTI_MARKER_API_NAME_THREAD, text, 0, external);
        break;
    default:
        uptx_mark(k_long);
        want(k, UPTI_MARKER_API_MARK, k_long, 0, external);
    }
#undef want
    if (g % 5 == 2)
        CHECK_STATUS(upti_pop_external_correlation_id(g_ctx[other], NULL), UPTI_STATUS_SUCCESS);
    for (int k = 0; k < BUFFERS && external != 0; k++)
        if (mask & (1u << k))
            CHECK_STATUS(upti_pop_external_correlation_id(g_ctx[k], NULL), UPTI_STATUS_SUCCESS);
}

/* Whether record r is call w's (its correlation id above *last, which it becomes). */
static int same(const upti_buffer_tracing_marker_api_record_t *r, const want_call *w,
                uint64_t *last)
{
    int ok = r->kind == UPTI_TRACING_KIND_MARKER_API && r->operation == w->operation &&
             (r->message != NULL) == w->has_message &&
             (r->message == NULL || strcmp(r->message, w->message) == 0) &&
             r->range_id == w->range_id && r->domain == w->domain &&
             r->correlation_id.external.value == w->external &&
             r->correlation_id.internal > *last && r->start_timestamp != 0 &&
             r->end_timestamp == r->start_timestamp;
    *last = r->correlation_id.internal;
    return ok;
}

/* The marker records in slot 0 of file k, checked against the calls; *marks: how many
 * were compact marks, each of the bytes its flags say. */
static void check_file(int k, int *marks)
{
    unit_ring_file f;
    *marks = 0;
    if (unit_ring_file_open(g_buf[k], &f) != 0)
        return;
    CHECK_EQ_U64(f.version, k == V2 ? 2 : 1);
    const uint8_t *data = f.data;
    uint64_t last = 0;
    int n = 0, bad = 0;
    for (uint64_t pos = 0; pos < f.head;) {
        upti_ring_record_header_t rh;
        memcpy(&rh, data + pos, sizeof rh);
        const uint8_t *body = data + pos + sizeof rh;
        upti_buffer_tracing_marker_api_record_t r;
        if (rh.kind == UPTI_RING_KIND_COMPACT_MARK && n < g_calls[k]) {
            CHECK(upti_compact_mark_expand(body, rh.len - sizeof rh, 0, &r) == 0);
            const want_call *w = &g_want[k][n];
            size_t len = sizeof rh + sizeof(upti_ring_compact_mark_t) +
                         (w->range_id + w->domain != 0 ? 8 : 0) +
                         (w->has_message ? strlen(w->message) + 1 : 0);
            bad += rh.len != ((len + 7) & ~(size_t)7) || w->external != 0;
            bad += !same(&r, w, &last);
            ++*marks;
            n++;
        } else if (rh.kind == UPTI_RING_KIND_COMPACT_MARKER && n < g_calls[k]) {
            upti_ring_compact_marker_t c;
            memcpy(&c, body, sizeof c);
            upti_compact_marker_expand(&c, 0, c.has_message ? (const char *)(body + sizeof c) : NULL,
                                       &r);
            bad += !same(&r, &g_want[k][n++], &last);
        }
        pos += rh.len;
    }
    unit_ring_file_close(&f);
    CHECK_EQ_U64((uint64_t)n, (uint64_t)g_calls[k]);
    CHECK_EQ_U64((uint64_t)bad, 0);
}

#ifdef UNIT_HAVE_COLLECTOR
/* File k collected and converted: its marker rows (operation, text, category), in order,
 * into rows[0..max), each row's range id checked against the call's; how many. */
static int converted(int k, char rows[][96], int max)
{
    unit_query q;
    sqlite3_stmt *st = unit_collect_query(
        &q, g_buf[k], g_dirs[k],
        "SELECT operation, ifnull(message, '-'), range_id, domain FROM markers ORDER BY id");
    int n = 0;
    while (st != NULL && sqlite3_step(st) == SQLITE_ROW && n < max) {
        /* (Each file's ranges have ids of their own: uptx_range_start counts on.) */
        CHECK_EQ_U64((uint64_t)sqlite3_column_int64(st, 2),
                     n < g_calls[k] ? g_want[k][n].range_id : UINT64_MAX);
        snprintf(rows[n++], sizeof rows[0], "%s %s %lld", sqlite3_column_text(st, 0),
                 sqlite3_column_text(st, 1), (long long)sqlite3_column_int64(st, 3));
    }
    unit_query_end(&q);
    return n;
}
#endif

UNIT_TEST(compact_mark)
{
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    for (int k = 0; k < BUFFERS; k++) {
        CHECK_STATUS(upti_start_context(g_ctx[k]), UPTI_STATUS_SUCCESS);
        for (int g = 0; g < GROUPS; g++)
            calls(1u << k, g);
        CHECK_STATUS(upti_stop_context(g_ctx[k]), UPTI_STATUS_SUCCESS);
    }
    /* Two buffers at once: every call through the slow path's loop. */
    CHECK_STATUS(upti_start_context(g_ctx[V2]), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(g_ctx[INPROC]), UPTI_STATUS_SUCCESS);
    for (int g = GROUPS; g < GROUPS + BOTH; g++)
        calls(1u << V2 | 1u << INPROC, g);
    CHECK_STATUS(upti_stop_context(g_ctx[V2]), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_stop_context(g_ctx[INPROC]), UPTI_STATUS_SUCCESS);
    int marks[2];
    for (int k = V2; k <= V1; k++)
        check_file(k, &marks[k]);
    /* In the version 2 file, the calls without an external id: 36 of the 45 (28 groups
     * alone, 36 calls, then 7 groups, 9 calls, with the in-process buffer; groups 4, 9,
     * ... 34 push one). */
    int plain = 0;
    for (int i = 0; i < g_calls[V2]; i++)
        plain += g_want[V2][i].external == 0;
    CHECK_EQ_U64((uint64_t)g_calls[V2], 45);
    CHECK_EQ_U64((uint64_t)g_calls[V1], 36);
    CHECK_EQ_U64((uint64_t)marks[V2], (uint64_t)plain);
    CHECK_EQ_U64((uint64_t)plain, 36);
    CHECK_EQ_U64((uint64_t)marks[V1], 0);
    CHECK_STATUS(upti_flush_buffer(g_buf[INPROC]), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64((uint64_t)g_delivered, (uint64_t)g_calls[INPROC]);
    uint64_t last = 0;
    int bad = 0;
    for (int i = 0; i < g_delivered && i < g_calls[INPROC]; i++)
        bad += !same(&g_got[i], &g_want[INPROC][i], &last);
    CHECK_EQ_U64((uint64_t)bad, 0);
#ifdef UNIT_HAVE_COLLECTOR
    static char rows[2][MAX_CALLS][96];
    int n2 = converted(V2, rows[V2], MAX_CALLS), n1 = converted(V1, rows[V1], MAX_CALLS);
    CHECK_EQ_U64((uint64_t)n2, (uint64_t)g_calls[V2]);
    CHECK_EQ_U64((uint64_t)n1, (uint64_t)g_calls[V1]);
    for (int i = 0; i < n1 && i < n2; i++) /* (the version 1 file has no two-buffer calls) */
        if (strcmp(rows[V2][i], rows[V1][i]) != 0) {
            fprintf(stderr, "marker row %d: %s (version 2) against %s\n", i, rows[V2][i],
                    rows[V1][i]);
            CHECK(0);
        }
#endif
    for (int k = V2; k <= V1; k++) {
        char path[PATH_MAX];
        CHECK_STATUS(upti_get_shared_buffer_path(g_buf[k], path, sizeof path), UPTI_STATUS_SUCCESS);
        unlink(path);
        rmdir(g_dirs[k]);
    }
    return test_result("compact_mark");
}
