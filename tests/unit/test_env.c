/* SPDX-License-Identifier: MIT */
/* src/common/env.c: every UPTI_* variable with a number or a choice parsed one
 * way; a bad value gives exactly one "upti:" line naming the variable, its
 * accepted forms and the default used, and the default. The caller's UPTI_*
 * variables are removed first: the result does not depend on them. */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_stderr.h"
#include "check.h"
#include "unit_tests.h"

extern char **environ;

static void clear_upti_environment(void)
{
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e != NULL; e++) {
            if (strncmp(*e, "UPTI_", 5) != 0)
                continue;
            char name[256];
            size_t n = strcspn(*e, "=");
            snprintf(name, sizeof name, "%.*s", (int)n, *e);
            unsetenv(name);
            again = 1;
            break;
        }
    }
}

/* upti_env_get(id) with var=value and stderr captured into out. */
static uint64_t get_with(upti_env_id id, const char *value, char *out, size_t cap)
{
    if (value != NULL)
        setenv(upti_env_name(id), value, 1);
    else
        unsetenv(upti_env_name(id));
    capture_stderr_t c;
    if (capture_stderr_begin(&c) != 0)
        abort();
    uint64_t v = upti_env_get(id);
    capture_stderr_end(&c, out, cap);
    unsetenv(upti_env_name(id));
    return v;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* value is accepted as want, silently. */
static void good(upti_env_id id, const char *value, uint64_t want)
{
    char err[1024];
    uint64_t v = get_with(id, value, err, sizeof err);
    if (v != want || err[0] != '\0')
        fprintf(stderr, "FAIL %s='%s': %llu (want %llu), stderr '%s'\n", upti_env_name(id), value,
                (unsigned long long)v, (unsigned long long)want, err);
    CHECK(v == want && err[0] == '\0');
}

/* value is refused: the default and exactly the line want. */
static void bad(upti_env_id id, const char *value, uint64_t def, const char *want)
{
    char err[1024];
    uint64_t v = get_with(id, value, err, sizeof err);
    if (v != def || strcmp(err, want) != 0)
        fprintf(stderr, "FAIL %s='%s': %llu (want %llu)\n  got:  %s  want: %s",
                upti_env_name(id), value, (unsigned long long)v, (unsigned long long)def, err, want);
    CHECK(v == def && strcmp(err, want) == 0 && lines(err) == 1);
    char msg[512];
    setenv(upti_env_name(id), value, 1);
    CHECK(upti_env_check(id, msg, sizeof msg) == 1);
    CHECK(strncmp(want, "upti: ", 6) == 0 && strncmp(msg, want + 6, strlen(msg)) == 0);
    unsetenv(upti_env_name(id));
}

#define DURATION_FORMS "is not a duration (digits with an optional ms or s suffix, 1 ms to 3600 s): using 50 ms\n"
#define SIZE_FORMS "is not a size in bytes (digits with an optional k, m or g suffix, 4 KiB to 1 GiB): using 1 MiB\n"

UNIT_TEST(env)
{
    clear_upti_environment();
    uint64_t n = 0;
    CHECK(upti_parse_duration_ms("10", &n) == 0 && n == 10);
    CHECK(upti_parse_duration_ms("10ms", &n) == 0 && n == 10);
    CHECK(upti_parse_duration_ms("3s", &n) == 0 && n == 3000);
    CHECK(upti_parse_duration_ms("10k", &n) == -1);
    CHECK(upti_parse_duration_ms("", &n) == -1);
    CHECK(upti_parse_duration_ms("ms", &n) == -1);
    CHECK(upti_parse_duration_ms("-5", &n) == -1);
    CHECK(upti_parse_duration_ms(" 5", &n) == -1);
    CHECK(upti_parse_duration_ms("5 ms", &n) == -1);
    CHECK(upti_parse_duration_ms("1.5s", &n) == -1);
    CHECK(upti_parse_duration_ms("99999999999999999999", &n) == -1);
    CHECK(upti_parse_duration_ms("18446744073709552s", &n) == -1);
    CHECK(upti_parse_size("4096", &n) == 0 && n == 4096);
    CHECK(upti_parse_size("64k", &n) == 0 && n == 65536);
    CHECK(upti_parse_size("2M", &n) == 0 && n == 2u << 20);
    CHECK(upti_parse_size("1g", &n) == 0 && n == 1u << 30);
    CHECK(upti_parse_size("1kb", &n) == -1);
    CHECK(upti_parse_size("17179869184g", &n) == -1);

    /* Unset and empty: the default, silently. */
    good(UPTI_ENV_RING_FULL_WAIT_MS, NULL, 50);
    good(UPTI_ENV_RING_FULL_WAIT_MS, "", 50);
    good(UPTI_ENV_RING_FULL_WAIT_MS, "10", 10);
    good(UPTI_ENV_RING_FULL_WAIT_MS, "250ms", 250);
    good(UPTI_ENV_RING_FULL_WAIT_MS, "2s", 2000);
    good(UPTI_ENV_RING_FULL_WAIT_MS, "3600s", 3600000);
    /* 10k is not 10,240 ms (a size) nor 10 ms (strtol): it is refused. */
    bad(UPTI_ENV_RING_FULL_WAIT_MS, "10k", 50, "upti: UPTI_RING_FULL_WAIT_MS='10k' " DURATION_FORMS);
    bad(UPTI_ENV_RING_FULL_WAIT_MS, "0", 50, "upti: UPTI_RING_FULL_WAIT_MS='0' " DURATION_FORMS);
    bad(UPTI_ENV_RING_FULL_WAIT_MS, "3601s", 50, "upti: UPTI_RING_FULL_WAIT_MS='3601s' " DURATION_FORMS);
    good(UPTI_ENV_TRACE_BUFFER_SIZE, NULL, 1u << 20);
    good(UPTI_ENV_TRACE_BUFFER_SIZE, "64k", 65536);
    good(UPTI_ENV_TRACE_BUFFER_SIZE, "1G", 1u << 30);
    bad(UPTI_ENV_TRACE_BUFFER_SIZE, "12q", 1u << 20, "upti: UPTI_TRACE_BUFFER_SIZE='12q' " SIZE_FORMS);
    bad(UPTI_ENV_TRACE_BUFFER_SIZE, "100", 1u << 20, "upti: UPTI_TRACE_BUFFER_SIZE='100' " SIZE_FORMS);
    bad(UPTI_ENV_TRACE_BUFFER_SIZE, "2g", 1u << 20, "upti: UPTI_TRACE_BUFFER_SIZE='2g' " SIZE_FORMS);
    /* A count of ring slots: digits, not a size in bytes. */
    good(UPTI_ENV_TRACE_RING_SLOTS, NULL, 256);
    good(UPTI_ENV_TRACE_RING_SLOTS, "1", 1);
    good(UPTI_ENV_TRACE_RING_SLOTS, "65536", 65536);
    bad(UPTI_ENV_TRACE_RING_SLOTS, "0", 256,
        "upti: UPTI_TRACE_RING_SLOTS='0' is not a count (digits, 1 to 65536): using 256\n");
    bad(UPTI_ENV_TRACE_RING_SLOTS, "64k", 256,
        "upti: UPTI_TRACE_RING_SLOTS='64k' is not a count (digits, 1 to 65536): using 256\n");
    /* Switches: 0 or 1. */
    good(UPTI_ENV_TRACE_ARGS, NULL, 0);
    good(UPTI_ENV_TRACE_ARGS, "0", 0);
    bad(UPTI_ENV_TRACE_ARGS, "maybe", 0, "upti: UPTI_TRACE_ARGS='maybe' is neither 0 nor 1: using 0\n");
    bad(UPTI_ENV_TRACE_ARGS, "00", 0, "upti: UPTI_TRACE_ARGS='00' is neither 0 nor 1: using 0\n");
    good(UPTI_ENV_TRACE_STATS, NULL, 0);
    good(UPTI_ENV_TRACE_STATS, "1", 1);
    bad(UPTI_ENV_TRACE_STATS, "yes", 0, "upti: UPTI_TRACE_STATS='yes' is neither 0 nor 1: using 0\n");
    good(UPTI_ENV_TRACE_ARGS, "1", 1);
    good(UPTI_ENV_TRACE_LIST, "0", 0);
    good(UPTI_ENV_TRACE_LIST, "1", 1);
    bad(UPTI_ENV_TRACE_LIST, "on", 0, "upti: UPTI_TRACE_LIST='on' is neither 0 nor 1: using 0\n");
    /* Choices. */
    good(UPTI_ENV_OPENCL_COMPLETION, NULL, UPTI_ENV_COMPLETION_POLL);
    good(UPTI_ENV_OPENCL_COMPLETION, "poll", UPTI_ENV_COMPLETION_POLL);
    good(UPTI_ENV_OPENCL_COMPLETION, "callback", UPTI_ENV_COMPLETION_CALLBACK);
    bad(UPTI_ENV_OPENCL_COMPLETION, "Callback", UPTI_ENV_COMPLETION_POLL,
        "upti: UPTI_OPENCL_COMPLETION='Callback' is not one of poll, callback: using poll\n");
    good(UPTI_ENV_CLOCK, "gettime", UPTI_ENV_CLOCK_GETTIME);
    good(UPTI_ENV_CLOCK, "tsc", UPTI_ENV_CLOCK_TSC);
    bad(UPTI_ENV_CLOCK, "rdtsc", UPTI_ENV_CLOCK_TSC,
        "upti: UPTI_CLOCK='rdtsc' is not one of tsc, gettime: using tsc\n");
    /* The value is data: control bytes are not echoed, long values are cut. */
    bad(UPTI_ENV_TRACE_STATS, "a\nb\033c", 0, "upti: UPTI_TRACE_STATS='a?b?c' is neither 0 nor 1: using 0\n");
    char longv[200];
    memset(longv, '7', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    char want[512];
    snprintf(want, sizeof want, "upti: UPTI_RING_FULL_WAIT_MS='%.64s...' " DURATION_FORMS, longv);
    bad(UPTI_ENV_RING_FULL_WAIT_MS, longv, 50, want);
    /* Every variable has its name; nothing past the table. */
    for (int id = 0; id < UPTI_ENV_COUNT; id++)
        CHECK(upti_env_name((upti_env_id)id) != NULL &&
              strncmp(upti_env_name((upti_env_id)id), "UPTI_", 5) == 0);
    CHECK(upti_env_name(UPTI_ENV_COUNT) == NULL);
    return test_result("env");
}
