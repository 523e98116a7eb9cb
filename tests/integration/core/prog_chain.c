/* SPDX-License-Identifier: MIT */
/* Intercept-table chaining with two tools: chain0 (built in, forced,
 * priority 0) and chain1 (UPTI_TOOL_LIBRARIES, priority 1) both wrap
 * uptx_range_push. The later tool's wrapper runs first, UPTI's own tracing
 * sits beneath both, and the application still gets the right depth. */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include "check.h"
#include "test_tool.h"

upti_tool_configure_result_t *chain_configure(uint32_t version, const char *runtime_version,
                                              uint32_t priority, upti_client_id_t *client_id);

int main(void)
{
    say("main start");
    test_force_configure(chain_configure);
    int push = uptx_range_push("p");
    int pop = uptx_range_pop();
    say("main push=%d pop=%d", push, pop);
    say("main end");
    return 0;
}
