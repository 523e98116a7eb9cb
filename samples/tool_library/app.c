/* SPDX-License-Identifier: MIT */
/* The application of samples/tool_library: a few marker calls. */
#include <uptx/uptx.h>

#include <stdio.h>

int main(void)
{
    uptx_name_thread("main");
    uptx_range_push("work");
    uptx_mark("halfway");
    uint64_t id = uptx_range_start("async part");
    uptx_range_stop(id);
    uptx_range_pop();
    printf("app: done\n");
    return 0;
}
