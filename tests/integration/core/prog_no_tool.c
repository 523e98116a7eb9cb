/* SPDX-License-Identifier: MIT */
/* A marker application run with no tool (no upti_configure anywhere, no
 * UPTI_TOOL_LIBRARIES): after many uptx calls libupti.so is not mapped, no
 * thread was started and every call returned what the marker API promises.
 * Before the first call uptx_active points at libuptx's init stubs; after
 * it, it is NULL (the inline functions make no call).
 * Built twice: with the header's inline functions, and with UPTX_NO_INLINE
 * (libuptx.so's exported functions, checked to be the ones called). */
#include <uptx/uptx.h>

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* 1 if some mapping's path contains needle. */
static int mapped(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return -1;
    char line[4096];
    int found = 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (strstr(line, needle) != NULL)
            found = 1;
    fclose(f);
    return found;
}

int main(void)
{
    CHECK(getenv("UPTI_TOOL_LIBRARIES") == NULL);
    int threads_before = count_threads();
    CHECK_EQ_U64(threads_before, 1);
    CHECK(__atomic_load_n(&uptx_active, __ATOMIC_ACQUIRE) != NULL); /* the init stubs */
#ifdef UPTX_NO_INLINE
    /* The calls below go to libuptx.so's exported functions. */
    Dl_info info;
    CHECK(dladdr((void *)&uptx_range_push, &info) != 0 && info.dli_fname != NULL &&
          strstr(info.dli_fname, "libuptx.so") != NULL);
#endif

    for (int i = 0; i < 100000; i++) {
        int d0 = uptx_range_push("outer");
        int d1 = uptx_range_push("inner");
        int r1 = uptx_range_pop();
        int r0 = uptx_range_pop();
        if (d0 != 0 || d1 != 1 || r1 != 1 || r0 != 0) {
            fprintf(stderr, "FAIL: depths %d %d %d %d, expected 0 1 1 0\n", d0, d1, r1, r0);
            test_failures++;
            break;
        }
    }
    CHECK_EQ_U64(uptx_range_pop(), -1);
    uint64_t id = uptx_range_start("r");
    CHECK(id != 0);
    uint64_t id2 = uptx_range_start("r2");
    CHECK(id2 != 0 && id2 != id);
    uptx_range_stop(id);
    uptx_range_stop(id2);
    uptx_mark("m");
    uptx_name_thread("main");
    uptx_name_category(1, "c");
    CHECK(__atomic_load_n(&uptx_active, __ATOMIC_ACQUIRE) == NULL); /* registered, no tool */
    CHECK_EQ_U64(uptx_range_push("after"), 0);
    CHECK_EQ_U64(uptx_thread_depth, 1);
    CHECK_EQ_U64(uptx_range_pop(), 0);

    CHECK_EQ_U64(mapped("libuptx.so"), 1);   /* the check itself works */
    CHECK_EQ_U64(mapped("/libupti.so"), 0);  /* the SDK was never loaded */
    CHECK_EQ_U64(count_threads(), threads_before);
    if (mapped("/libupti.so") != 0)
        fprintf(stderr, "libupti.so is mapped although no tool is present\n");
    return test_result("no_tool");
}
