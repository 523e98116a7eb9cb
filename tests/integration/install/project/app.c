/* SPDX-License-Identifier: MIT */
#include <uptx/uptx.h>

#include <stdio.h>

int main(void)
{
    int d = uptx_range_push("installed");
    uptx_mark("m");
    int r = uptx_range_pop();
    printf("consumer_app: push=%d pop=%d\n", d, r);
    return d == 0 && r == 0 ? 0 : 1;
}
