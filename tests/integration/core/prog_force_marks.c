/* SPDX-License-Identifier: MIT */
/* A tool built into the program and configured with upti_force_configure()
 * before any runtime registers (tool_generic.c compiled in with
 * TOOL_NO_EXPORT, TOOL_ID f), then three uptx calls. */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include "check.h"
#include "test_tool.h"

upti_tool_configure_result_t *tool_f_configure(uint32_t version, const char *runtime_version,
                                               uint32_t priority, upti_client_id_t *client_id);

int main(void)
{
    say("main start");
    test_force_configure(tool_f_configure);
    int push = uptx_range_push("p");
    uptx_mark("m");
    int pop = uptx_range_pop();
    say("main push=%d pop=%d", push, pop);
    say("main end");
    return 0;
}
