/* SPDX-License-Identifier: MIT */
/* Contexts switched from inside marker callbacks, as capture windows do
 * (src/program/recorder/capture.c), checked record by record:
 *  - a control context's callbacks start the recording context R at the
 *    push of range "open" and at uptx_profiler_resume, and stop it at the
 *    pop and at uptx_profiler_pause;
 *  - R's buffer holds exactly the calls from the opening one to the closing
 *    one, both included (a call is recorded in the contexts a callback
 *    started during it), in order, and nothing outside;
 *  - the two new operations are named uptx_profiler_pause and uptx_profiler_resume.
 */
#include <upti/upti.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <uptx/uptx.h>

#include <string.h>

#include "check.h"
#include "test_tool.h"

static upti_context_id_t g_control, g_rec;
static upti_buffer_id_t g_buffer;
static int g_depth_open; /* push depth at which "open" was pushed, + 1 */

typedef struct seen_t {
    uint32_t op;
    char text[16];
} seen_t;
static seen_t g_seen[64];
static int g_num_seen;

static void on_records(upti_context_id_t context, upti_buffer_id_t buffer,
                       upti_record_header_t **headers, size_t n, void *data, uint64_t drops)
{
    (void)context, (void)buffer, (void)data;
    CHECK_EQ_U64(drops, 0);
    for (size_t i = 0; i < n; i++) {
        if (headers[i]->category != UPTI_BUFFER_CATEGORY_TRACING ||
            headers[i]->kind != UPTI_TRACING_KIND_MARKER_API || g_num_seen == 64)
            continue;
        const upti_buffer_tracing_marker_api_record_t *r = headers[i]->payload;
        seen_t *s = &g_seen[g_num_seen++];
        s->op = r->operation;
        snprintf(s->text, sizeof s->text, "%s", r->message ? r->message : "");
    }
}

static void on_control(upti_callback_tracing_record_t r, upti_user_data_t *user_data, void *data)
{
    (void)user_data, (void)data;
    const upti_callback_tracing_marker_api_data_t *p = r.payload;
    switch (r.operation) {
    case UPTI_MARKER_API_RANGE_PUSH: /* opened at ENTER */
        if (r.phase == UPTI_CALLBACK_PHASE_ENTER && strcmp(p->args.range_push.message, "open") == 0) {
            g_depth_open = 1;
            CHECK_STATUS(upti_start_context(g_rec), UPTI_STATUS_SUCCESS);
        }
        break;
    case UPTI_MARKER_API_RANGE_POP: /* closed at EXIT */
        if (r.phase == UPTI_CALLBACK_PHASE_EXIT && g_depth_open && p->retval.int_retval == 0) {
            g_depth_open = 0;
            CHECK_STATUS(upti_stop_context(g_rec), UPTI_STATUS_SUCCESS);
        }
        break;
    case UPTI_MARKER_API_PROFILER_RESUME:
        if (r.phase == UPTI_CALLBACK_PHASE_EXIT)
            CHECK_STATUS(upti_start_context(g_rec), UPTI_STATUS_SUCCESS);
        break;
    case UPTI_MARKER_API_PROFILER_PAUSE:
        if (r.phase == UPTI_CALLBACK_PHASE_ENTER)
            CHECK_STATUS(upti_stop_context(g_rec), UPTI_STATUS_SUCCESS);
        break;
    default:
        break;
    }
}

static int tool_init(upti_client_finalize_t fini, void *tool_data)
{
    (void)fini, (void)tool_data;
    static const uint32_t ops[] = {UPTI_MARKER_API_RANGE_PUSH, UPTI_MARKER_API_RANGE_POP,
                                   UPTI_MARKER_API_PROFILER_PAUSE, UPTI_MARKER_API_PROFILER_RESUME};
    CHECK_STATUS(upti_create_context(&g_control), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_context(&g_rec), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_callback_tracing_service(g_control, UPTI_TRACING_KIND_MARKER_API,
                                                         ops, 4, on_control, NULL),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_buffer(g_rec, 1 << 16, 1 << 15, UPTI_BUFFER_POLICY_LOSSLESS,
                                    on_records, NULL, &g_buffer),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_buffer_tracing_service(g_rec, UPTI_TRACING_KIND_MARKER_API, NULL,
                                                       0, g_buffer),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(g_control), UPTI_STATUS_SUCCESS);
    return 0;
}

TEST_CONFIGURE(configure, tool_init, NULL)

int main(void)
{
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    uptx_mark("before");
    uptx_range_push("open");
    uptx_mark("in");
    uptx_range_push("inner");
    uptx_range_pop();
    uptx_range_pop();
    uptx_mark("after");
    uptx_profiler_resume();
    uptx_mark("resumed");
    uptx_profiler_pause();
    uptx_mark("paused");
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);

    static const seen_t want[] = {
        {UPTI_MARKER_API_RANGE_PUSH, "open"},     {UPTI_MARKER_API_MARK, "in"},
        {UPTI_MARKER_API_RANGE_PUSH, "inner"},    {UPTI_MARKER_API_RANGE_POP, ""},
        {UPTI_MARKER_API_RANGE_POP, ""},          {UPTI_MARKER_API_PROFILER_RESUME, ""},
        {UPTI_MARKER_API_MARK, "resumed"},        {UPTI_MARKER_API_PROFILER_PAUSE, ""},
    };
    size_t n = sizeof want / sizeof want[0];
    CHECK_EQ_U64(g_num_seen, n);
    for (size_t i = 0; i < n && i < (size_t)g_num_seen; i++) {
        if (g_seen[i].op != want[i].op || strcmp(g_seen[i].text, want[i].text) != 0) {
            fprintf(stderr, "FAIL record %zu: op %u '%s', expected op %u '%s'\n", i, g_seen[i].op,
                    g_seen[i].text, want[i].op, want[i].text);
            test_failures++;
        }
    }
    const char *name = NULL;
    CHECK_STATUS(upti_get_tracing_operation_name(UPTI_TRACING_KIND_MARKER_API,
                                                 UPTI_MARKER_API_PROFILER_PAUSE, &name),
                 UPTI_STATUS_SUCCESS);
    CHECK(name != NULL && strcmp(name, "uptx_profiler_pause") == 0);
    CHECK_STATUS(upti_get_tracing_operation_name(UPTI_TRACING_KIND_MARKER_API,
                                                 UPTI_MARKER_API_PROFILER_RESUME, &name),
                 UPTI_STATUS_SUCCESS);
    CHECK(name != NULL && strcmp(name, "uptx_profiler_resume") == 0);
    return test_result("context_switch");
}
