/* SPDX-License-Identifier: MIT */
// uptx.h used from C++ with no tool: the inline functions (or, built with
// UPTX_NO_INLINE, libuptx.so's exported ones) return what the marker API
// promises, and the header compiles cleanly as C++.
#include <uptx/uptx.h>

#include <cstdio>

static int failures;

static void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "FAIL: %s\n", what);
        failures++;
    }
}

int main()
{
    check(uptx_range_push("outer") == 0, "push depth 0");
    check(uptx_range_push("inner") == 1, "push depth 1");
    check(uptx_range_pop() == 1, "pop leaves 1");
    check(uptx_range_pop() == 0, "pop leaves 0");
    check(uptx_range_pop() == -1, "pop with no range open");
    uint64_t a = uptx_range_start("a"), b = uptx_range_start("b");
    check(a != 0 && b != 0 && a != b, "range ids");
    uptx_range_stop(a);
    uptx_range_stop(b);
    uptx_mark("m");
    uptx_name_thread("main");
    uptx_name_category(1, "c");
    check(__atomic_load_n(&uptx_active, __ATOMIC_ACQUIRE) == nullptr, "no tool: uptx_active NULL");
    std::fprintf(stderr, "uptx_cxx: %s\n", failures == 0 ? "PASS" : "FAILED");
    return failures == 0 ? 0 : 1;
}
