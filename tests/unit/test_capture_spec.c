/* SPDX-License-Identifier: MIT */
/* src/common/capture_spec.c: the values of upti run's capture options, each
 * accepted form and the malformed ones, with exact results. */
#include "capture_spec.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "unit_tests.h"

static void test_seconds(void)
{
    static const struct { const char *text; uint64_t ns; } ok[] = {
        {"0", 0}, {"2", 2000000000ull}, {"0.5", 500000000ull}, {"1.25", 1250000000ull},
        {"0.000000001", 1}, {"1000000", 1000000000000000ull},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t ns = 7;
        CHECK_EQ_U64(upti_parse_seconds(ok[i].text, &ns), 0);
        CHECK_EQ_U64(ns, ok[i].ns);
    }
    static const char *const bad[] = {"", "-1", "1s", ".5", "1.", "1.0000000001", "1000001",
                                      " 1", "1 ", "0x1", "1e3", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t ns = 7;
        if (upti_parse_seconds(bad[i], &ns) != -1 || ns != 7) {
            fprintf(stderr, "FAIL seconds '%s' accepted\n", bad[i]);
            test_failures++;
        }
    }
    CHECK_EQ_U64(upti_parse_seconds(NULL, NULL), (uint64_t)-1);
}

static void test_period(void)
{
    upti_collection_period p;
    CHECK_EQ_U64(upti_parse_collection_period("1:0.5:3", &p), 0);
    CHECK_EQ_U64(p.start_ns, 1000000000ull);
    CHECK_EQ_U64(p.duration_ns, 500000000ull);
    CHECK_EQ_U64(p.repeat, 3);
    CHECK_EQ_U64(upti_parse_collection_period("0:2:0", &p), 0);
    CHECK_EQ_U64(p.start_ns, 0);
    CHECK_EQ_U64(p.repeat, 0);
    /* The tool's form, written by the CLI: ns, a zero duration allowed (--delay alone). */
    upti_collection_period q = {1500000000ull, 0, 1};
    char text[96];
    upti_format_period(&q, text, sizeof text);
    CHECK(strcmp(text, "ns:1500000000:0:1") == 0);
    CHECK_EQ_U64(upti_parse_collection_period(text, &p), 0);
    CHECK_EQ_U64(p.start_ns, 1500000000ull);
    CHECK_EQ_U64(p.duration_ns, 0);
    CHECK_EQ_U64(p.repeat, 1);
    static const char *const bad[] = {"", "1", "1:2", "1:2:3:4", "1:0:1", "a:1:1", "1:1:-1",
                                      "1:1:1.5", "::", "1::1", "ns:1.5:1:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (upti_parse_collection_period(bad[i], &p) != -1) {
            fprintf(stderr, "FAIL period '%s' accepted\n", bad[i]);
            test_failures++;
        }
    }
}

static void test_end(void)
{
    uint64_t n = 9;
    CHECK_EQ_U64(upti_parse_capture_end("stop", &n), 0);
    CHECK_EQ_U64(n, 1);
    CHECK_EQ_U64(upti_parse_capture_end("repeat", &n), 0);
    CHECK_EQ_U64(n, 0);
    CHECK_EQ_U64(upti_parse_capture_end("repeat:3", &n), 0);
    CHECK_EQ_U64(n, 3);
    static const char *const bad[] = {"", "repeat:", "repeat:0", "repeat:x", "Stop", "stop-shutdown",
                                      "repeat:3x", "repeat-shutdown:2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (upti_parse_capture_end(bad[i], &n) != -1) {
            fprintf(stderr, "FAIL end '%s' accepted\n", bad[i]);
            test_failures++;
        }
}

static void test_name(void)
{
    char *copy = NULL;
    const char *name, *domain;
    CHECK_EQ_U64(upti_parse_capture_name("solve", &copy, &name, &domain), 0);
    CHECK(strcmp(name, "solve") == 0 && domain == NULL);
    free(copy);
    CHECK_EQ_U64(upti_parse_capture_name("a@b@physics", &copy, &name, &domain), 0);
    CHECK(strcmp(name, "a@b") == 0 && strcmp(domain, "physics") == 0);
    free(copy);
    CHECK_EQ_U64(upti_parse_capture_name("step@*", &copy, &name, &domain), 0);
    CHECK(strcmp(name, "step") == 0 && strcmp(domain, "*") == 0);
    free(copy);
    CHECK_EQ_U64(upti_parse_capture_name("", &copy, &name, &domain), (uint64_t)-1);
    CHECK_EQ_U64(upti_parse_capture_name("@d", &copy, &name, &domain), (uint64_t)-1);
    CHECK_EQ_U64(upti_parse_capture_name("n@", &copy, &name, &domain), (uint64_t)-1);
}

static void test_iterations(void)
{
    upti_iteration_range r;
    CHECK_EQ_U64(upti_parse_iteration_range("[1-3,5]", &r), 0);
    int want[] = {0, 1, 1, 1, 0, 1, 0};
    for (int n = 0; n < 7; n++)
        CHECK_EQ_U64(upti_iteration_in_range(&r, (uint64_t)n), want[n]);
    CHECK_EQ_U64(upti_parse_iteration_range("[1-2],[4-]", &r), 0);
    CHECK_EQ_U64(r.count, 2);
    CHECK_EQ_U64(upti_iteration_in_range(&r, 3), 0);
    CHECK_EQ_U64(upti_iteration_in_range(&r, 4), 1);
    CHECK_EQ_U64(upti_iteration_in_range(&r, 1000000), 1);
    CHECK_EQ_U64(upti_parse_iteration_range("3", &r), 0);
    CHECK_EQ_U64(upti_iteration_in_range(&r, 3), 1);
    CHECK_EQ_U64(upti_iteration_in_range(&r, 2), 0);
    CHECK_EQ_U64(upti_parse_iteration_range("2-", &r), 0);
    CHECK_EQ_U64(upti_iteration_in_range(&r, 1), 0);
    CHECK_EQ_U64(upti_iteration_in_range(&r, 2), 1);
    static const char *const bad[] = {"", "0", "[", "[]", "[1", "1]", "[[1]]", "3-2", "1,,2",
                                      "1,", ",1", "x", "-3", "1-2-3", "[1-2]]", "1 2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (upti_parse_iteration_range(bad[i], &r) != -1) {
            fprintf(stderr, "FAIL iteration range '%s' accepted\n", bad[i]);
            test_failures++;
        }
}

UNIT_TEST(capture_spec)
{
    test_seconds();
    test_period();
    test_end();
    test_name();
    test_iterations();
    return test_result("capture_spec");
}
