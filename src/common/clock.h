/* SPDX-License-Identifier: MIT */
/* Internal: UPTI's clock, CLOCK_MONOTONIC_RAW in nanoseconds; and
 * CLOCK_MONOTONIC in nanoseconds, which a shared ring's producer and its
 * collector both read for the times they compare (<upti/ring.h>). */
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

/** CLOCK_MONOTONIC in nanoseconds (a ring's deadlines and its room_at stamps). */
static inline uint64_t upti_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
