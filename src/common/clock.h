/* SPDX-License-Identifier: MIT */
/* Internal: UPTI's clock, CLOCK_MONOTONIC_RAW in nanoseconds. */
#ifndef UPTI_COMMON_CLOCK_H
#define UPTI_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t upti_clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
