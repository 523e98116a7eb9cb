/* SPDX-License-Identifier: MIT */
/* bench_runtime_api N: N calls of toyLaunch, the sample runtime that describes its
 * API to UPTI (samples/out_of_tree_runtime). callgrind.sh counts the instructions
 * per call, untraced and traced. */
#include "toyrt.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int failed = 0;
    for (long i = 0; i < n; i++)
        failed += toyLaunch("k", 1) != 0;
    printf("bench_runtime_api: %ld calls, %d failed\n", n, failed);
    return failed != 0;
}
