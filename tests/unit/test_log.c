/* SPDX-License-Identifier: MIT */
/* src/common/log.c: one error line on stderr, prefixed "upti: ", newlines
 * inside the message flattened, long messages cut, always one line; levels,
 * UPTI_LOG_LEVEL and the callback.
 *
 *   log           the line, the levels, the callback (UPTI_LOG_LEVEL unset)
 *   log.env_info  with UPTI_LOG_LEVEL=info: info said, debug not
 *   log.env_bad   with UPTI_LOG_LEVEL=loud: one line saying so, then the default */
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture_stderr.h"
#include "check.h"
#include "unit_tests.h"

/* Runs upti_log at level with stderr redirected into a pipe; returns what was written. */
static size_t capture_at(upti_log_level_t level, char *out, size_t cap, const char *fmt,
                         const char *arg)
{
    capture_stderr_t c;
    if (capture_stderr_begin(&c) != 0)
        return 0;
    upti_log(level, fmt, arg);
    return capture_stderr_end(&c, out, cap);
}

static size_t capture(char *out, size_t cap, const char *fmt, const char *arg)
{
    return capture_at(UPTI_LOG_LEVEL_ERROR, out, cap, fmt, arg);
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

struct seen {
    int calls;
    upti_log_level_t level;
    char text[1100];
};

static void on_message(upti_log_level_t level, const char *message, void *data)
{
    struct seen *s = data;
    s->calls++;
    s->level = level;
    snprintf(s->text, sizeof s->text, "%s", message);
}

static void on_message_logging(upti_log_level_t level, const char *message, void *data)
{
    on_message(level, message, data);
    upti_log_error("from inside the callback: %s", "to stderr"); /* not back into it */
}

static void test_levels_and_callback(void)
{
    char buf[4096];
    /* default: warning and above */
    capture_at(UPTI_LOG_LEVEL_WARNING, buf, sizeof buf, "w %s", "1");
    CHECK(strcmp(buf, "upti: w 1\n") == 0);
    CHECK(capture_at(UPTI_LOG_LEVEL_INFO, buf, sizeof buf, "i %s", "1") == 0);
    CHECK(!upti_log_enabled(UPTI_LOG_LEVEL_DEBUG) && upti_log_enabled(UPTI_LOG_LEVEL_ERROR));
    /* error only */
    upti_log_configure(UPTI_LOG_LEVEL_ERROR, NULL, NULL);
    CHECK(capture_at(UPTI_LOG_LEVEL_WARNING, buf, sizeof buf, "w %s", "2") == 0);
    capture_at(UPTI_LOG_LEVEL_ERROR, buf, sizeof buf, "e %s", "2");
    CHECK(strcmp(buf, "upti: e 2\n") == 0);
    /* a callback at debug: everything to it, nothing on stderr */
    struct seen seen = {0};
    upti_log_configure(UPTI_LOG_LEVEL_DEBUG, on_message, &seen);
    CHECK(capture_at(UPTI_LOG_LEVEL_DEBUG, buf, sizeof buf, "d %s", "two\nlines") == 0);
    CHECK_EQ_U64(seen.calls, 1);
    CHECK_EQ_U64(seen.level, UPTI_LOG_LEVEL_DEBUG);
    CHECK(strcmp(seen.text, "d two lines") == 0);
    CHECK(capture_at(UPTI_LOG_LEVEL_ERROR, buf, sizeof buf, "e %s", "3") == 0);
    CHECK_EQ_U64(seen.calls, 2);
    CHECK_EQ_U64(seen.level, UPTI_LOG_LEVEL_ERROR);
    /* a callback at warning drops info */
    upti_log_configure(UPTI_LOG_LEVEL_WARNING, on_message, &seen);
    CHECK(capture_at(UPTI_LOG_LEVEL_INFO, buf, sizeof buf, "i %s", "4") == 0);
    CHECK_EQ_U64(seen.calls, 2);
    /* a message the callback causes goes to stderr, once */
    struct seen inner = {0};
    upti_log_configure(UPTI_LOG_LEVEL_WARNING, on_message_logging, &inner);
    capture_at(UPTI_LOG_LEVEL_ERROR, buf, sizeof buf, "e %s", "5");
    CHECK_EQ_U64(inner.calls, 1);
    CHECK(strcmp(inner.text, "e 5") == 0);
    CHECK(strcmp(buf, "upti: from inside the callback: to stderr\n") == 0);
    /* none: nothing anywhere */
    upti_log_configure(UPTI_LOG_LEVEL_NONE, on_message, &seen);
    CHECK(capture_at(UPTI_LOG_LEVEL_ERROR, buf, sizeof buf, "e %s", "6") == 0);
    CHECK_EQ_U64(seen.calls, 2);
    /* back to stderr */
    upti_log_configure(UPTI_LOG_LEVEL_WARNING, NULL, NULL);
    capture_at(UPTI_LOG_LEVEL_ERROR, buf, sizeof buf, "e %s", "7");
    CHECK(strcmp(buf, "upti: e 7\n") == 0);
    CHECK_EQ_U64(seen.calls, 2);

    CHECK_EQ_U64(upti_log_level_of("none"), UPTI_LOG_LEVEL_NONE);
    CHECK_EQ_U64(upti_log_level_of("error"), UPTI_LOG_LEVEL_ERROR);
    CHECK_EQ_U64(upti_log_level_of("warning"), UPTI_LOG_LEVEL_WARNING);
    CHECK_EQ_U64(upti_log_level_of("info"), UPTI_LOG_LEVEL_INFO);
    CHECK_EQ_U64(upti_log_level_of("debug"), UPTI_LOG_LEVEL_DEBUG);
    CHECK(upti_log_level_of("Debug") == -1 && upti_log_level_of("") == -1 &&
          upti_log_level_of(NULL) == -1);
}

UNIT_TEST(log)
{
    char buf[4096];
    const char *mode = sub;
    if (strcmp(mode, "env_info") == 0) {
        capture_at(UPTI_LOG_LEVEL_INFO, buf, sizeof buf, "i %s", "env");
        CHECK(strcmp(buf, "upti: i env\n") == 0);
        CHECK(capture_at(UPTI_LOG_LEVEL_DEBUG, buf, sizeof buf, "d %s", "env") == 0);
        return test_result("log env_info");
    }
    if (strcmp(mode, "env_bad") == 0) {
        /* the first message says the variable is refused, then itself */
        capture_at(UPTI_LOG_LEVEL_WARNING, buf, sizeof buf, "w %s", "env");
        CHECK_EQ_U64(count_char(buf, '\n'), 2);
        CHECK(strncmp(buf, "upti: UPTI_LOG_LEVEL='loud' is not", 34) == 0);
        CHECK(strstr(buf, "\nupti: w env\n") != NULL);
        CHECK(capture_at(UPTI_LOG_LEVEL_INFO, buf, sizeof buf, "i %s", "env") == 0);
        capture_at(UPTI_LOG_LEVEL_WARNING, buf, sizeof buf, "w %s", "again");
        CHECK(strcmp(buf, "upti: w again\n") == 0); /* said once */
        return test_result("log env_bad");
    }
    capture(buf, sizeof buf, "cannot load %s", "libfoo.so");
    CHECK(strcmp(buf, "upti: cannot load libfoo.so\n") == 0);

    capture(buf, sizeof buf, "dlerror: %s", "line one\nline two");
    CHECK(strcmp(buf, "upti: dlerror: line one line two\n") == 0);

    char longarg[3000];
    memset(longarg, 'x', sizeof longarg - 1);
    longarg[sizeof longarg - 1] = '\0';
    size_t n = capture(buf, sizeof buf, "%s", longarg);
    CHECK(n > 6 && n <= 1024);
    CHECK(strncmp(buf, "upti: xxx", 9) == 0);
    CHECK_EQ_U64(count_char(buf, '\n'), 1);
    CHECK(n > 0 && buf[n - 1] == '\n');
    test_levels_and_callback();
    return test_result("log");
}
