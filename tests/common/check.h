/* SPDX-License-Identifier: MIT */
/* Helpers shared by the C test programs: unbuffered output and checks that
 * count failures. */
#ifndef UPTI_TEST_CHECK_H
#define UPTI_TEST_CHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Prints one line on stdout with a single write(): lines from tools, atexit
 * handlers and main never interleave or sit in a stdio buffer. */
static inline void say(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static inline void say(const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
    (void)w;
}

static int test_failures __attribute__((unused));

/* Records a failure (with its location) without stopping the test. */
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U64(got, want)                                                                    \
    do {                                                                                           \
        unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want);        \
        if (g_ != w_) {                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s == %llu, expected %llu\n", __FILE__, __LINE__, #got,   \
                    g_, w_);                                                                       \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define CHECK_STATUS(expr, want)                                                                   \
    do {                                                                                           \
        upti_status_t s_ = (expr);                                                                 \
        if (s_ != (want)) {                                                                        \
            const char *gn_ = upti_get_status_name(s_);                                          \
            const char *wn_ = upti_get_status_name(want);                                        \
            fprintf(stderr, "FAIL %s:%d: %s returned %s (%d), expected %s\n", __FILE__, __LINE__,  \
                    #expr, gn_ ? gn_ : "?", (int)s_, wn_ ? wn_ : "?");                             \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

/* Prints a failure (what, with two values) while *counter, the failures of
 * its kind so far, is under 5: a stress test's flood stays readable. */
static inline void report_first(uint64_t *counter, const char *what, uint64_t a, uint64_t b)
    __attribute__((unused));
static inline void report_first(uint64_t *counter, const char *what, uint64_t a, uint64_t b)
{
    if ((*counter)++ < 5)
        fprintf(stderr, "FAIL: %s (%llu, %llu)\n", what, (unsigned long long)a,
                (unsigned long long)b);
}

/* Exit status of a test: 0 only if no CHECK failed. */
static inline int test_result(const char *name) __attribute__((unused));
static inline int test_result(const char *name) {
    if (test_failures == 0) {
        fprintf(stderr, "%s: PASS\n", name);
        return 0;
    }
    fprintf(stderr, "%s: %d check(s) FAILED\n", name, test_failures);
    return 1;
}

#endif
