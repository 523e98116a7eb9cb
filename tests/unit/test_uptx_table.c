/* SPDX-License-Identifier: MIT */
/* <uptx/uptx.h>'s dispatch through a table of another release's size: each
 * entry is used if the table's size reaches it (offsetof + sizeof of the
 * entry), else the call takes the no-tool path; the same rule in UPTI's
 * wrapper installation (src/program/sdk/marker_tracing.c). One process per case:
 *   uptx_table.header  the inline functions and libuptx's exported ones
 *                      with a version-1 table, one that ends between the
 *                      two profiler entries, a whole one and a larger one
 *   uptx_table.sdk     UPTI wraps the entries a table that ends between
 *                      the profiler entries has, and leaves the rest */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "sdk_entry.h"
#include "unit_tests.h"

enum { PUSH, POP, START, STOP, MARK, NAME_THREAD, NAME_CATEGORY, PAUSE, RESUME, ENTRIES };
static int g_calls[ENTRIES];

static int count_push(const char *m)
{
    (void)m;
    g_calls[PUSH]++;
    return 100;
}

static int count_pop(void)
{
    g_calls[POP]++;
    return 200;
}

static uint64_t count_start(const char *m)
{
    (void)m;
    g_calls[START]++;
    return 300;
}

static void count_stop(uint64_t id)
{
    (void)id;
    g_calls[STOP]++;
}

static void count_mark(const char *m)
{
    (void)m;
    g_calls[MARK]++;
}

static void count_name_thread(const char *n)
{
    (void)n;
    g_calls[NAME_THREAD]++;
}

static void count_name_category(uint32_t c, const char *n)
{
    (void)c, (void)n;
    g_calls[NAME_CATEGORY]++;
}

static void count_pause(void)
{
    g_calls[PAUSE]++;
}

static void count_resume(void)
{
    g_calls[RESUME]++;
}

/* A table with every entry set, followed by room for a later release's entries. */
static struct {
    uptx_dispatch_table_t table;
    void (*later[2])(void);
} g_table = {{0, count_push, count_pop, count_start, count_stop, count_mark, count_name_thread,
              count_name_category, count_pause, count_resume},
             {NULL, NULL}};

/* libuptx's exported functions (dlsym), as a binary built with UPTX_NO_INLINE calls them. */
static void (*g_exported_pause)(void);
static void (*g_exported_resume)(void);
static void (*g_exported_mark)(const char *);

/* Calls every function through a table of size bytes: inline, then exported. */
static void call_all(size_t size, int exported)
{
    memset(g_calls, 0, sizeof g_calls);
    g_table.table.size = size;
    __atomic_store_n(&uptx_active, &g_table.table, __ATOMIC_RELEASE);
    if (exported) {
        g_exported_mark("m");
        g_exported_pause();
        g_exported_resume();
    } else {
        CHECK_EQ_U64(uptx_range_push("p"), 100);
        CHECK_EQ_U64(uptx_range_pop(), 200);
        CHECK_EQ_U64(uptx_range_start("s"), 300);
        uptx_range_stop(300);
        uptx_mark("m");
        uptx_name_thread("t");
        uptx_name_category(1, "c");
        uptx_profiler_pause();
        uptx_profiler_resume();
        for (int e = PUSH; e <= NAME_CATEGORY; e++)
            CHECK_EQ_U64(g_calls[e], 1);
    }
    if (exported)
        CHECK_EQ_U64(g_calls[MARK], 1);
}

static void test_header(void)
{
    g_exported_pause = (void (*)(void))dlsym(RTLD_DEFAULT, "uptx_profiler_pause");
    g_exported_resume = (void (*)(void))dlsym(RTLD_DEFAULT, "uptx_profiler_resume");
    g_exported_mark = (void (*)(const char *))dlsym(RTLD_DEFAULT, "uptx_mark");
    CHECK(g_exported_pause != NULL && g_exported_resume != NULL && g_exported_mark != NULL);
    if (g_exported_pause == NULL || g_exported_resume == NULL || g_exported_mark == NULL)
        return;
    const uptx_dispatch_table_t *before = __atomic_load_n(&uptx_active, __ATOMIC_ACQUIRE);
    /* Each table size, and the calls of pause and resume that reach the tool. */
    static const struct {
        size_t size;
        uint64_t pause, resume;
    } k_sizes[] = {
        /* Version 1: no profiler entries; pause and resume do nothing (no tool). */
        {offsetof(uptx_dispatch_table_t, profiler_pause_fn), 0, 0},
        /* A table that ends after profiler_pause_fn: pause is its, resume is not. */
        {offsetof(uptx_dispatch_table_t, profiler_resume_fn), 1, 0},
        {sizeof(uptx_dispatch_table_t), 1, 1},
        /* A later release's larger table: the entries this header knows are used. */
        {sizeof g_table, 1, 1},
    };
    for (int exported = 0; exported < 2; exported++) {
        for (size_t i = 0; i < sizeof k_sizes / sizeof k_sizes[0]; i++) {
            call_all(k_sizes[i].size, exported);
            CHECK_EQ_U64(g_calls[PAUSE], k_sizes[i].pause);
            CHECK_EQ_U64(g_calls[RESUME], k_sizes[i].resume);
        }
    }
    __atomic_store_n(&uptx_active, before, __ATOMIC_RELEASE);
}

static void test_sdk(void)
{
    /* Registered as libuptx registers its table: UPTI installs its wrappers. */
    uptx_dispatch_table_t t = g_table.table;
    t.size = offsetof(uptx_dispatch_table_t, profiler_resume_fn);
    void *tables[] = {&t};
    upti_sdk_set_api_table_t set_table =
        (upti_sdk_set_api_table_t)dlsym(RTLD_DEFAULT, UPTI_SDK_ENTRY_SYMBOL);
    CHECK(set_table != NULL);
    if (set_table == NULL)
        return;
    CHECK_STATUS(set_table("uptx", UPTX_TABLE_VERSION, 0, tables, 1), UPTI_STATUS_SUCCESS);
    CHECK(t.mark_fn != count_mark);
    CHECK(t.range_push_fn != count_push);
    CHECK(t.profiler_pause_fn != count_pause);   /* inside the table: wrapped */
    CHECK(t.profiler_resume_fn == count_resume); /* beyond it: left alone */
    /* The wrappers call on to what they replaced (no context records them). */
    memset(g_calls, 0, sizeof g_calls);
    t.mark_fn("m");
    t.profiler_pause_fn();
    CHECK_EQ_U64(g_calls[MARK], 1);
    CHECK_EQ_U64(g_calls[PAUSE], 1);
}

UNIT_TEST(uptx_table)
{
    static const unit_sub_case_t cases[] = {{"header", test_header}, {"sdk", test_sdk}};
    if (!unit_run_sub_case("uptx_table", sub, cases, sizeof cases / sizeof *cases))
        return 2;
    return test_result(sub);
}
