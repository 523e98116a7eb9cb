/* SPDX-License-Identifier: MIT */
/* The mapping of a Vulkan device's timestamp ticks onto UPTI's clock: pure
 * arithmetic, without Vulkan calls (unit-tested on its own).
 *
 * A device counts timestampValidBits bits of ticks of timestampPeriod ns:
 * with fewer than 64 bits the counter wraps. A mapping keeps one reference,
 * a tick count and its time on UPTI's clock; another tick count maps by its
 * distance from the reference, taken modulo 2^bits and read as signed (the
 * nearer way round), so a counter that wrapped since the reference (or
 * before it) still maps next to it. That holds while ticks lie less than
 * 2^(bits-1) ticks from the reference: the layer makes a reference at a
 * read of a submission's timestamps once the last one is
 * UPTI_VK_CALIBRATE_INTERVAL_MS old, or a quarter of the counter's range if
 * that is less (calibrated; uvk_tick_map_reuse_ns), or at each measurement. */
#ifndef UPTI_VULKAN_TICK_MAP_H
#define UPTI_VULKAN_TICK_MAP_H

#include <stdint.h>

typedef struct uvk_tick_map_t {
    uint64_t mask;      /* 2^valid_bits - 1 */
    double period;      /* ns per tick */
    uint64_t ref_ticks; /* a tick count, masked */
    int64_t ref_ns;     /* its time on UPTI's clock */
} uvk_tick_map_t;

/* The mask of a counter of bits valid bits (1..64; 0 or more than 64 is taken as 64). */
static inline uint64_t uvk_tick_mask(uint32_t bits)
{
    return bits == 0 || bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
}

/* A mapping of device ticks (mask, period) that puts ticks at ns. */
static inline uvk_tick_map_t uvk_tick_map_make(uint64_t mask, double period, uint64_t ticks, int64_t ns)
{
    uvk_tick_map_t m = {mask, period, ticks & mask, ns};
    return m;
}

/* Signed distance in ticks from the reference to ticks, modulo the counter's range. */
static inline int64_t uvk_tick_map_delta(const uvk_tick_map_t *m, uint64_t ticks)
{
    uint64_t d = (ticks - m->ref_ticks) & m->mask;
    if (d > (m->mask >> 1))
        return -(int64_t)(m->mask - d) - 1; /* behind the reference: d - 2^bits */
    return (int64_t)d;
}

/* How long, in ns, a mapping of a counter (mask, period) may be used after
   it was made, for interval ns wanted: less than a quarter of the counter's
   range (ticks read a quarter of it past the reference still map next to
   it, and so do those written up to a quarter before it; a 36-bit counter of
   1 ns ticks wraps in 69 s). 0 for a period of 0. */
static inline uint64_t uvk_tick_map_reuse_ns(uint64_t mask, double period, uint64_t interval)
{
    double quarter = ((double)mask + 1.0) * period / 4.0;
    return (double)interval < quarter ? interval : (uint64_t)quarter;
}

/* The time of ticks on UPTI's clock (0 if that would be before its origin). */
static inline uint64_t uvk_tick_map_apply(const uvk_tick_map_t *m, uint64_t ticks)
{
    double d = (double)uvk_tick_map_delta(m, ticks) * m->period;
    int64_t ns = m->ref_ns + (int64_t)(d >= 0 ? d + 0.5 : d - 0.5); /* to the nearest ns */
    return ns > 0 ? (uint64_t)ns : 0;
}

/* A measured mapping: ticks were written by the device between host times
   before and after (UPTI's clock). Their midpoint is taken as the time of
   ticks; *bound, the most it can be off: half the window, plus one tick
   (the counter's resolution), rounded up. */
static inline uvk_tick_map_t uvk_tick_map_bracket(uint64_t mask, double period, uint64_t ticks, uint64_t before,
                                                  uint64_t after, uint64_t *bound)
{
    uint64_t window = after - before;
    uint64_t tick = (uint64_t)period;
    if ((double)tick < period)
        tick++;
    *bound = (window + 1) / 2 + tick;
    return uvk_tick_map_make(mask, period, ticks, (int64_t)(before + window / 2));
}

#endif
