/* SPDX-License-Identifier: MIT */
/* marker_calls: a known number of marker calls, through uptx (marker_calls_uptx)
 * or NVTX v3 (marker_calls_nvtx, built with -DWITH_NVTX), for the tests that
 * count a tool's marker callbacks (docs.writing_a_tool_builds_and_runs).
 *
 *   marker_calls_uptx | marker_calls_nvtx
 *
 * Makes 7 marker calls on the main thread: 3 marks and 2 push/pop pairs.
 * Prints "marker_calls: 7" and exits 0.
 */
#ifdef WITH_NVTX
#include <nvtx3/nvToolsExt.h>
#define MARK(m) nvtxMarkA(m)
#define PUSH(m) nvtxRangePushA(m)
#define POP() nvtxRangePop()
#else
#include <uptx/uptx.h>
#define MARK(m) uptx_mark(m)
#define PUSH(m) uptx_range_push(m)
#define POP() uptx_range_pop()
#endif

#include <stdio.h>

int main(void)
{
    MARK("first");
    PUSH("outer");
    PUSH("inner");
    MARK("inside");
    POP();
    POP();
    MARK("last");
    printf("marker_calls: 7\n");
    return 0;
}
