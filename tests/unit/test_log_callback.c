/* SPDX-License-Identifier: MIT */
/* upti_set_log_callback: libupti's own messages (a tool skipped, the tools
 * configured) and a runtime library's (upti_runtime_warn) reach the tool's
 * callback with their level, below the level are dropped, and none of them
 * reaches stderr. */
#include <upti/runtime.h>
#include <upti/upti.h>

#include <string.h>

#include "capture_stderr.h"
#include "check.h"
#include "unit_tests.h"

#define MAX_SEEN 16
static struct {
    upti_log_level_t level;
    char text[512];
} g_seen[MAX_SEEN];
static int g_num_seen;

static void on_message(upti_log_level_t level, const char *message, void *data)
{
    CHECK(data == &g_num_seen);
    if (g_num_seen < MAX_SEEN) {
        g_seen[g_num_seen].level = level;
        snprintf(g_seen[g_num_seen].text, sizeof g_seen[0].text, "%s", message);
    }
    g_num_seen++;
}

static struct {
    upti_tool_configure_result_t known;
    uint64_t future; /* a field this UPTI does not know, set: the tool is skipped */
} g_result = {{sizeof g_result, NULL, NULL, NULL}, 1};

static upti_tool_configure_result_t *configure(uint32_t v, const char *rv, uint32_t prio,
                                               upti_client_id_t *id)
{
    (void)v, (void)rv, (void)prio, (void)id;
    return &g_result.known;
}

UNIT_TEST(log_callback)
{
    CHECK_STATUS(upti_set_log_callback(UPTI_LOG_LEVEL_LAST, on_message, NULL),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_set_log_callback((upti_log_level_t)-1, on_message, NULL),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);

    capture_stderr_t c;
    CHECK(capture_stderr_begin(&c) == 0);

    CHECK_STATUS(upti_set_log_callback(UPTI_LOG_LEVEL_INFO, on_message, &g_num_seen),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    upti_runtime_warn("test: a runtime's warning");
    CHECK_STATUS(upti_set_log_callback(UPTI_LOG_LEVEL_ERROR, on_message, &g_num_seen),
                 UPTI_STATUS_SUCCESS);
    upti_runtime_warn("test: below the level");

    char said[256];
    size_t got = capture_stderr_end(&c, said, sizeof said);
    CHECK_EQ_U64(got, 0);
    if (got > 0)
        fprintf(stderr, "FAIL: on stderr: %s\n", said);

    /* the skipped tool (error), the tools configured (info), the warning */
    CHECK_EQ_U64(g_num_seen, 3);
    CHECK_EQ_U64(g_seen[0].level, UPTI_LOG_LEVEL_ERROR);
    CHECK(strstr(g_seen[0].text, "tool '") == g_seen[0].text);
    CHECK(strstr(g_seen[0].text, "does not know") != NULL);
    CHECK_EQ_U64(g_seen[1].level, UPTI_LOG_LEVEL_INFO);
    CHECK(strcmp(g_seen[1].text, "0 tool(s) configured, of 1 found") == 0);
    CHECK_EQ_U64(g_seen[2].level, UPTI_LOG_LEVEL_WARNING);
    CHECK(strcmp(g_seen[2].text, "test: a runtime's warning") == 0);
    for (int i = 0; i < g_num_seen && i < MAX_SEEN; i++)
        say("seen %d: %s", (int)g_seen[i].level, g_seen[i].text);
    return test_result("log_callback");
}
