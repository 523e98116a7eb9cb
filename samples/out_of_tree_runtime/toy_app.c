/* SPDX-License-Identifier: MIT */
/* Calls toyrt a known number of times: toyInit 1, toyAlloc 3, toyFree 3,
 * toyLaunch 5 (2 of them fail with TOYRT_ERROR_INVALID_COUNT); one uptx range. */
#include "toyrt.h"

#include <uptx/uptx.h>

#include <stdio.h>

int main(void)
{
    int failed = 0;
    uptx_range_push("toy");
    failed += toyInit(0) != 0;
    void *p[3];
    for (int i = 0; i < 3; i++)
        failed += toyAlloc(64, &p[i]) != 0;
    const unsigned counts[5] = {1, 0, 2, 0, 3};
    for (int i = 0; i < 5; i++)
        failed += toyLaunch("vadd", counts[i]) != (counts[i] ? 0 : TOYRT_ERROR_INVALID_COUNT);
    for (int i = 0; i < 3; i++)
        toyFree(p[i]);
    uptx_range_pop();
    printf("toy_app: %d unexpected results\n", failed);
    return failed != 0;
}
