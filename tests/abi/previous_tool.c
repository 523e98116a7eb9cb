/* SPDX-License-Identifier: MIT */
/* A tool and program built against the previous release's headers
 * (tests/abi/previous/include, UPTI 0.1.0 as released, and nothing of
 * today's include/), linked against and run with today's libraries: what
 * a tool vendor's binary meets after an upgrade.
 *
 * It uses the 0.1 calls a tool makes (upti_force_configure, contexts,
 * upti_create_buffer with its positional arguments, both tracing services,
 * agents, names, the version) and the marker API's inline bodies, and
 * checks exact results: N marks and N push/pop pairs give 3N buffer records
 * with the messages passed, 6N callbacks (ENTER and EXIT), and the fields of
 * the records read through the old structs. */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <stdio.h>
#include <string.h>

/* check.h names statuses with upti_get_status_name, which UPTI 0.1 called
 * upti_get_status_string (still exported under UPTI_0.1). */
#define upti_get_status_name upti_get_status_string
#include "check.h"

#if UPTI_VERSION_MAJOR != 0 || UPTI_VERSION_MINOR != 1
#error "previous_tool.c must be compiled against tests/abi/previous/include (UPTI 0.1)"
#endif

enum { N = 50 };

static upti_context_id_t g_ctx;
static upti_buffer_id_t g_buffer;
static int g_records[UPTI_MARKER_API_LAST];
static int g_marks_with_text;
static int g_callbacks[UPTI_MARKER_API_LAST][2];
static int g_agents;

static void on_records(upti_context_id_t ctx, upti_buffer_id_t buffer, upti_record_header_t **headers,
                       size_t n, void *data, uint64_t drops)
{
    (void)buffer;
    CHECK(ctx.handle == g_ctx.handle);
    CHECK(data == &g_ctx);
    CHECK_EQ_U64(drops, 0);
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ_U64(headers[i]->category, UPTI_BUFFER_CATEGORY_TRACING);
        CHECK_EQ_U64(headers[i]->kind, UPTI_TRACING_KIND_MARKER_API);
        const upti_buffer_tracing_marker_api_record_t *r = headers[i]->payload;
        CHECK_EQ_U64(r->size, sizeof *r);
        CHECK_EQ_U64(r->kind, UPTI_TRACING_KIND_MARKER_API);
        CHECK(r->operation > UPTI_MARKER_API_NONE && r->operation < UPTI_MARKER_API_LAST);
        CHECK(r->start_timestamp == r->end_timestamp && r->start_timestamp != 0);
        CHECK(r->correlation_id.internal != 0);
        if (r->operation < UPTI_MARKER_API_LAST)
            g_records[r->operation]++;
        if (r->operation == UPTI_MARKER_API_MARK && r->message != NULL &&
            strcmp(r->message, "previous-mark") == 0)
            g_marks_with_text++;
    }
}

static void on_call(upti_callback_tracing_record_t record, upti_user_data_t *user_data, void *data)
{
    (void)data;
    CHECK_EQ_U64(record.size, sizeof record);
    CHECK_EQ_U64(record.kind, UPTI_TRACING_KIND_MARKER_API);
    const upti_callback_tracing_marker_api_data_t *p = record.payload;
    CHECK_EQ_U64(p->size, sizeof *p);
    if (record.operation == UPTI_MARKER_API_RANGE_PUSH)
        CHECK(p->args.range_push.message != NULL &&
              strcmp(p->args.range_push.message, "previous-range") == 0);
    int exit = record.phase == UPTI_CALLBACK_PHASE_EXIT;
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER)
        user_data->value = 7;
    else
        CHECK_EQ_U64(user_data->value, 7);
    if (record.operation < UPTI_MARKER_API_LAST)
        g_callbacks[record.operation][exit]++;
}

static upti_status_t on_agents(const upti_agent_t **agents, size_t n, void *data)
{
    (void)data;
    for (size_t i = 0; i < n; i++) {
        CHECK(agents[i]->size >= sizeof(upti_agent_t));
        CHECK(agents[i]->id.handle != 0);
        CHECK(agents[i]->runtime != NULL && agents[i]->name != NULL);
        if (agents[i]->type == UPTI_AGENT_TYPE_CPU && strcmp(agents[i]->runtime, "host") == 0)
            g_agents++;
    }
    return UPTI_STATUS_SUCCESS;
}

static int tool_init(upti_client_finalize_t fini, void *tool_data)
{
    (void)fini;
    CHECK(tool_data == &g_ctx);
    CHECK_STATUS(upti_create_context(&g_ctx), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_buffer(g_ctx, 64 * 1024, 0, UPTI_BUFFER_POLICY_LOSSLESS, on_records,
                                    &g_ctx, &g_buffer),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                                       g_buffer),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_callback_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API, NULL,
                                                         0, on_call, NULL),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(g_ctx), UPTI_STATUS_SUCCESS);
    return 0;
}

static upti_tool_configure_result_t *configure(uint32_t version, const char *runtime_version,
                                               uint32_t priority, upti_client_id_t *id)
{
    (void)priority;
    /* The library is newer than the headers: the same major, or 1 for these
     * 0.x headers. 1.0 kept every interface of 0.x (its version nodes, the
     * layouts and values of its types); only the soname changed
     * (libupti.so.0 -> .1), so a 0.x tool is relinked, not rebuilt. */
    CHECK(version >= UPTI_VERSION &&
          (version / 10000 == UPTI_VERSION_MAJOR || (UPTI_VERSION_MAJOR == 0 && version / 10000 == 1)));
    CHECK(runtime_version != NULL);
    CHECK_EQ_U64(id->size, sizeof *id);
    id->name = "previous-release";
    say("previous headers %s, library %s", UPTI_VERSION_STRING, runtime_version);
    static upti_tool_configure_result_t result = {sizeof result, tool_init, NULL, &g_ctx};
    return &result;
}

int main(void)
{
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    for (int i = 0; i < N; i++) {
        uptx_range_push("previous-range");
        uptx_mark("previous-mark");
        uptx_range_pop();
    }
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_query_available_agents(on_agents, NULL), UPTI_STATUS_SUCCESS);
    const char *name = NULL;
    CHECK_STATUS(upti_get_tracing_kind_name(UPTI_TRACING_KIND_MARKER_API, &name), UPTI_STATUS_SUCCESS);
    CHECK(name != NULL && strcmp(name, "MARKER_API") == 0);

    CHECK_EQ_U64(g_records[UPTI_MARKER_API_RANGE_PUSH], N);
    CHECK_EQ_U64(g_records[UPTI_MARKER_API_MARK], N);
    CHECK_EQ_U64(g_records[UPTI_MARKER_API_RANGE_POP], N);
    CHECK_EQ_U64(g_marks_with_text, N);
    for (int op = UPTI_MARKER_API_RANGE_PUSH; op <= UPTI_MARKER_API_RANGE_POP; op++)
        for (int ph = 0; ph < 2; ph++)
            CHECK_EQ_U64(g_callbacks[op][ph], N);
    CHECK_EQ_U64(g_callbacks[UPTI_MARKER_API_MARK][0], N);
    CHECK_EQ_U64(g_callbacks[UPTI_MARKER_API_MARK][1], N);
    CHECK(g_agents >= 1);
    if (test_failures == 0)
        say("records push %d mark %d pop %d, callbacks %d: ok", g_records[UPTI_MARKER_API_RANGE_PUSH],
        g_records[UPTI_MARKER_API_MARK], g_records[UPTI_MARKER_API_RANGE_POP],
        g_callbacks[UPTI_MARKER_API_MARK][0] + g_callbacks[UPTI_MARKER_API_MARK][1]);
    return test_failures != 0;
}
