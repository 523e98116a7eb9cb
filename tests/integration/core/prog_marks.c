/* SPDX-License-Identifier: MIT */
/* A marker application: three uptx calls between two lines of output.
 * Built plain (tools come from LD_PRELOAD or UPTI_TOOL_LIBRARIES), linked
 * with two tool libraries (LINKED_TOOLS), or with a tool in the executable
 * itself (EXE_TOOL, ENABLE_EXPORTS). Each tool prints its life; the test
 * compares the output with a golden file. */
#include <uptx/uptx.h>

#include "check.h"

#ifdef LINKED_TOOLS
int tool_a_finalize_calls(void);
int tool_b_finalize_calls(void);
#endif
#ifdef EXPLICIT_FINI
int tool_a_finalize_calls(void);
void tool_a_finalize_now(void);
#endif

int main(void)
{
#ifdef LINKED_TOOLS
    /* Referenced so that both libraries stay NEEDED whatever the linker's defaults. */
    if (tool_a_finalize_calls() != 0 || tool_b_finalize_calls() != 0)
        say("main: a tool was finalized before main");
#endif
    say("main start");
    int push = uptx_range_push("p");
    uptx_mark("m");
    int pop = uptx_range_pop();
    say("main push=%d pop=%d", push, pop);
#ifdef EXPLICIT_FINI
    tool_a_finalize_now();
    say("main finalize_calls=%d", tool_a_finalize_calls());
    uptx_mark("after finalize");
#endif
    say("main end");
    return 0;
}
