/* SPDX-License-Identifier: MIT */
/* The application of samples/intercept_table: three nested ranges. */
#include <uptx/uptx.h>

#include <stdio.h>

int main(void)
{
    int d0 = uptx_range_push("outer");
    int d1 = uptx_range_push("middle");
    int d2 = uptx_range_push("inner");
    uptx_range_pop();
    uptx_range_pop();
    uptx_range_pop();
    printf("app: depths %d %d %d\n", d0, d1, d2);
    return d0 == 0 && d1 == 1 && d2 == 2 ? 0 : 1;
}
