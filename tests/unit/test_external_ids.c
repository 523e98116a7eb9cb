/* SPDX-License-Identifier: MIT */
/* upti_runtime_correlation_t holds the external ids of 4 contexts: with 6
 * contexts that pushed one on the thread, a captured correlation carries the
 * first 4 (by context index) with their exact values, and UPTI says once, as
 * a warning, that the others are left out. */
#include <upti/runtime.h>
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <string.h>

#include "check.h"
#include "unit_tests.h"

enum { CONTEXTS = 6 };
static upti_context_id_t g_ctx[CONTEXTS];
static upti_runtime_correlation_t g_captured;
static int g_marks;
static int g_warnings;
static char g_warning[512];

static void on_mark(upti_callback_tracing_record_t record, upti_user_data_t *user_data, void *data)
{
    (void)user_data, (void)data;
    if (record.phase != UPTI_CALLBACK_PHASE_ENTER)
        return;
    g_marks++;
    /* what a runtime does at an enqueue, for the device record it reports later */
    upti_runtime_capture_correlation(NULL, &g_captured);
}

static void on_message(upti_log_level_t level, const char *message, void *data)
{
    (void)data;
    if (strstr(message, "external correlation id") != NULL) {
        CHECK_EQ_U64(level, UPTI_LOG_LEVEL_WARNING);
        g_warnings++;
        snprintf(g_warning, sizeof g_warning, "%s", message);
    }
}

static int init(upti_client_finalize_t fin, void *tool_data)
{
    (void)fin, (void)tool_data;
    for (int i = 0; i < CONTEXTS; i++)
        CHECK_STATUS(upti_create_context(&g_ctx[i]), UPTI_STATUS_SUCCESS);
    uint32_t mark = UPTI_MARKER_API_MARK;
    CHECK_STATUS(upti_configure_callback_tracing_service(g_ctx[0], UPTI_TRACING_KIND_MARKER_API, &mark,
                                                         1, on_mark, NULL),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(g_ctx[0]), UPTI_STATUS_SUCCESS);
    return 0;
}

static upti_tool_configure_result_t *configure(uint32_t v, const char *rv, uint32_t prio,
                                               upti_client_id_t *id)
{
    (void)v, (void)rv, (void)prio, (void)id;
    static upti_tool_configure_result_t r = {sizeof r, init, NULL, NULL};
    return &r;
}

UNIT_TEST(external_ids)
{
    CHECK_STATUS(upti_set_log_callback(UPTI_LOG_LEVEL_WARNING, on_message, NULL), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    for (int i = 0; i < CONTEXTS; i++)
        CHECK_STATUS(upti_push_external_correlation_id(g_ctx[i], (upti_user_data_t){.value = 100u + (unsigned)i}),
                     UPTI_STATUS_SUCCESS);
    uptx_mark("one");
    uptx_mark("two");
    CHECK_EQ_U64(g_marks, 2);
    CHECK(g_captured.internal != 0);
    CHECK_EQ_U64(g_captured.num_external, 4);
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_EQ_U64(g_captured.context_index[i], i);
        CHECK_EQ_U64(g_captured.external[i].value, 100u + i);
    }
    CHECK_EQ_U64(g_warnings, 1);
    say("warning: %s", g_warning);
    return test_result("external_ids");
}
