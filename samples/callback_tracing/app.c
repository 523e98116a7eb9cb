/* SPDX-License-Identifier: MIT */
/* The application of samples/callback_tracing. */
#include <uptx/uptx.h>

#include <stdio.h>

int main(void)
{
    uptx_range_push("load");
    uptx_mark("parsed");
    uptx_name_thread("main"); /* not in the tool's operation list: not traced */
    uptx_range_pop();
    fflush(stdout);
    return 0;
}
