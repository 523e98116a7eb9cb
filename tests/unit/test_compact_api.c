/* SPDX-License-Identifier: MIT */
/* The compact API record (<upti/ring.h>, UPTI_RING_KIND_COMPACT_API) in the files
 * of shared buffers, read from the files themselves:
 *   - in the folder of a collector of upti's (named as upti run's run folders),
 *     a file of version 2: every call as the compact record (kind, operation,
 *     correlation id, start, end, result: of every form), but one with an
 *     external correlation id pushed, as the public record;
 *   - in another folder, a file of version 1, whose reader may know no compact
 *     record: every call as the public record.
 * Both files collected and converted (where the collector is built): the
 * database's rows are the calls' fields, as read from the files.
 * In-process buffers (api_records) deliver the compact records expanded. */
#include <upti/buffer.h>
#include <upti/buffer_tracing.h>
#include <upti/ring.h>
#include <upti/runtime.h>
#include <upti/upti.h>

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

enum { OP_V2 = 1, OP_V1 = 2, CALLS = 64 };
static char g_dirs[2][64] = {"/tmp/upti-collect-compact-XXXXXX", "/tmp/upti-compact-XXXXXX"};
static upti_context_id_t g_ctx[2];
static upti_buffer_id_t g_buf[2];

/* Call i's result. */
static int64_t result_of(int i)
{
    switch (i % 6) {
    case 0: return i;
    case 1: return -i;
    case 2: return UPTI_API_RESULT_NONE;
    case 3: return ((int64_t)1 << 40) + i;
    case 4: return INT64_MAX;
    default: return INT32_MIN;
    }
}

/* Whether call i is written as the compact record in a file of version 2 (the thread's
 * first record, which claims its slot, takes the public one's way). */
static int compact(int i)
{
    return i > 0 && i % 8 != 7;
}

static int init(upti_client_finalize_t fin, void *tool_data)
{
    (void)fin, (void)tool_data;
    for (int k = 0; k < 2; k++) {
        CHECK(mkdtemp(g_dirs[k]) != NULL);
        CHECK_STATUS(upti_create_context(&g_ctx[k]), UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_create_shared_buffer(g_ctx[k], 65536, UPTI_BUFFER_POLICY_DISCARD,
                                               g_dirs[k], 4, &g_buf[k]),
                     UPTI_STATUS_SUCCESS);
        const uint32_t op = k == 0 ? OP_V2 : OP_V1;
        CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx[k], UPTI_TRACING_KIND_OPENCL_API,
                                                           &op, 1, g_buf[k]),
                     UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_start_context(g_ctx[k]), UPTI_STATUS_SUCCESS);
    }
    return 0;
}
TEST_CONFIGURE(configure, init, NULL)

/* The API records in slot 0 of buffer k's file (the only thread's), in order, as the
 * public struct; *compacts: how many were compact. */
static int read_calls(int k, upti_buffer_tracing_api_record_t *out, int max, int *compacts,
                      uint32_t *version)
{
    unit_ring_file f;
    *compacts = 0;
    *version = 0;
    if (unit_ring_file_open(g_buf[k], &f) != 0)
        return 0;
    *version = f.version;
    const uint8_t *data = f.data;
    int n = 0;
    for (uint64_t pos = 0; pos < f.head && n < max;) {
        upti_ring_record_header_t rh;
        memcpy(&rh, data + pos, sizeof rh);
        if (rh.kind == UPTI_RING_KIND_COMPACT_API) {
            upti_ring_compact_api_t c;
            memcpy(&c, data + pos + sizeof rh, sizeof c);
            upti_compact_api_expand(&c, 0, &out[n++]); /* (the thread is not compared) */
            CHECK_EQ_U64(rh.len, sizeof rh + sizeof c);
            ++*compacts;
        } else if (rh.kind == UPTI_TRACING_KIND_OPENCL_API) {
            memcpy(&out[n], data + pos + sizeof rh, sizeof out[n]);
            CHECK_EQ_U64(out[n].size, sizeof out[n]);
            n++;
        }
        pos += rh.len;
    }
    unit_ring_file_close(&f);
    return n;
}

#ifdef UNIT_HAVE_COLLECTOR
/* Buffer k's file collected (one pass: this process still runs) and converted: the rows
 * of its database's api table are want[0..n) (the calls read from the file) and its
 * thread's id. */
static void check_converted(int k, const upti_buffer_tracing_api_record_t *want, int n)
{
    upti_thread_id_t tid;
    CHECK_STATUS(upti_get_thread_id(&tid), UPTI_STATUS_SUCCESS);
    unit_query q;
    sqlite3_stmt *st = unit_collect_query(
        &q, g_buf[k], g_dirs[k],
        "SELECT correlation_id, external_id, start, end, result, tid FROM api ORDER BY id");
    int rows = 0, bad = 0;
    while (st != NULL && sqlite3_step(st) == SQLITE_ROW) {
        if (rows < n) {
            const upti_buffer_tracing_api_record_t *w = &want[rows];
            bad += (uint64_t)sqlite3_column_int64(st, 0) != w->correlation_id.internal ||
                   (uint64_t)sqlite3_column_int64(st, 1) != w->correlation_id.external.value ||
                   (uint64_t)sqlite3_column_int64(st, 2) != w->start_timestamp ||
                   (uint64_t)sqlite3_column_int64(st, 3) != w->end_timestamp ||
                   sqlite3_column_int64(st, 4) != w->result ||
                   (uint64_t)sqlite3_column_int64(st, 5) != tid;
        }
        rows++;
    }
    unit_query_end(&q);
    CHECK_EQ_U64((uint64_t)rows, (uint64_t)n);
    CHECK_EQ_U64((uint64_t)bad, 0);
}
#endif

UNIT_TEST(compact_api)
{
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    const upti_operation_plan_t *const *plans = NULL;
    CHECK_STATUS(upti_runtime_get_operation_plans(UPTI_TRACING_KIND_OPENCL_API, &plans, NULL),
                 UPTI_STATUS_SUCCESS);
    uint64_t ids[2][CALLS];
    for (int k = 0; k < 2; k++) {
        const upti_operation_plan_t *plan = upti_runtime_plan(plans, k == 0 ? OP_V2 : OP_V1);
        CHECK(plan != NULL);
        for (int i = 0; i < CALLS; i++) {
            int payload = 0;
            upti_runtime_call_t call;
            if (i % 8 == 7) /* an external correlation id on the call's context */
                CHECK_STATUS(upti_push_external_correlation_id(
                                 g_ctx[k], (upti_user_data_t){.value = 500u + i}),
                             UPTI_STATUS_SUCCESS);
            upti_runtime_call_enter(&call, plan, UPTI_TRACING_KIND_OPENCL_API,
                                    k == 0 ? OP_V2 : OP_V1, &payload);
            ids[k][i] = call.correlation_id;
            upti_runtime_call_exit_result(&call, result_of(i));
            if (i % 8 == 7)
                CHECK_STATUS(upti_pop_external_correlation_id(g_ctx[k], NULL), UPTI_STATUS_SUCCESS);
        }
    }
    int want_compacts = 0;
    for (int i = 0; i < CALLS; i++)
        want_compacts += compact(i);
    for (int k = 0; k < 2; k++) {
        upti_buffer_tracing_api_record_t r[CALLS + 1];
        int compacts;
        uint32_t version;
        int n = read_calls(k, r, CALLS + 1, &compacts, &version);
        CHECK_EQ_U64((uint64_t)n, CALLS);
        CHECK_EQ_U64(version, k == 0 ? 2 : 1);
        CHECK_EQ_U64((uint64_t)compacts, k == 0 ? (uint64_t)want_compacts : 0);
        int bad = 0;
        for (int i = 0; i < n && i < CALLS; i++)
            bad += r[i].kind != UPTI_TRACING_KIND_OPENCL_API ||
                   r[i].operation != (k == 0 ? OP_V2 : OP_V1) ||
                   r[i].correlation_id.internal != ids[k][i] ||
                   r[i].correlation_id.external.value != (i % 8 == 7 ? 500u + (uint64_t)i : 0) ||
                   r[i].result != result_of(i) || r[i].start_timestamp == 0 ||
                   r[i].end_timestamp < r[i].start_timestamp;
        CHECK_EQ_U64((uint64_t)bad, 0);
#ifdef UNIT_HAVE_COLLECTOR
        check_converted(k, r, n);
#endif
    }
    for (int k = 0; k < 2; k++) {
        char path[PATH_MAX];
        CHECK_STATUS(upti_get_shared_buffer_path(g_buf[k], path, sizeof path), UPTI_STATUS_SUCCESS);
        unlink(path);
        rmdir(g_dirs[k]);
    }
    return test_result("compact_api");
}
