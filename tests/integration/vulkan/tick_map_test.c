/* SPDX-License-Identifier: MIT */
/* The arithmetic that maps a Vulkan device's timestamp ticks onto UPTI's
 * clock (src/program/vulkan/tick_map.h): scaling by timestampPeriod, counters of
 * fewer than 64 valid bits that wrap, a measured (bracketed) reference and
 * its error bound. Exit 0 if every check holds; one line per failure. */
#include "tick_map.h"

#include <inttypes.h>
#include <stdio.h>

static int failures;

static void expect_u64(const char *what, uint64_t got, uint64_t want)
{
    if (got != want) {
        printf("FAIL %s: %" PRIu64 ", expected %" PRIu64 "\n", what, got, want);
        failures++;
    }
}

static void expect_i64(const char *what, int64_t got, int64_t want)
{
    if (got != want) {
        printf("FAIL %s: %" PRId64 ", expected %" PRId64 "\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    /* Masks. */
    expect_u64("mask 64", uvk_tick_mask(64), UINT64_MAX);
    expect_u64("mask 0 (taken as 64)", uvk_tick_mask(0), UINT64_MAX);
    expect_u64("mask 36", uvk_tick_mask(36), (1ull << 36) - 1);
    expect_u64("mask 32", uvk_tick_mask(32), 0xffffffffull);
    expect_u64("mask 1", uvk_tick_mask(1), 1);

    /* 64 bits, 1 ns per tick: an offset. */
    uvk_tick_map_t m = uvk_tick_map_make(UINT64_MAX, 1.0, 1000, 5000);
    expect_u64("64-bit forward", uvk_tick_map_apply(&m, 1500), 5500);
    expect_u64("64-bit backward", uvk_tick_map_apply(&m, 400), 4400);
    expect_u64("64-bit before UPTI's origin", uvk_tick_map_apply(&m, 0), 4000);
    m = uvk_tick_map_make(UINT64_MAX, 1.0, 10000, 5000);
    expect_u64("64-bit clamped at 0", uvk_tick_map_apply(&m, 1000), 0);
    /* The 64-bit counter wrapping: 3 ticks past UINT64_MAX - 1. */
    m = uvk_tick_map_make(UINT64_MAX, 1.0, UINT64_MAX - 1, 1000000);
    expect_i64("64-bit wrap delta", uvk_tick_map_delta(&m, 1), 3);
    expect_u64("64-bit wrap", uvk_tick_map_apply(&m, 1), 1000003);

    /* timestampPeriod: 52.08 ns per tick (a 19.2 MHz counter), rounded to the nearest ns. */
    m = uvk_tick_map_make(UINT64_MAX, 52.08, 1000000, 7000000000);
    expect_u64("period forward", uvk_tick_map_apply(&m, 1000100), 7000005208);
    expect_u64("period backward", uvk_tick_map_apply(&m, 999900), 6999994792);
    expect_u64("period 1 tick", uvk_tick_map_apply(&m, 1000001), 7000000052);
    /* Large tick counts keep ns precision relative to the reference. */
    m = uvk_tick_map_make(UINT64_MAX, 1.0, 0x7000000000000000ull, 123);
    expect_u64("large ticks", uvk_tick_map_apply(&m, 0x7000000000000001ull), 124);

    /* 32 valid bits: a counter that wrapped after the reference ... */
    uint64_t m32 = uvk_tick_mask(32);
    m = uvk_tick_map_make(m32, 1.0, 0xfffffff0ull, 1000000);
    expect_i64("32-bit wrap delta", uvk_tick_map_delta(&m, 5), 21);
    expect_u64("32-bit wrap after", uvk_tick_map_apply(&m, 5), 1000021);
    expect_u64("32-bit no wrap", uvk_tick_map_apply(&m, 0xfffffff8ull), 1000008);
    /* ... ticks read before a reference taken after the wrap ... */
    m = uvk_tick_map_make(m32, 1.0, 5, 1000000);
    expect_i64("32-bit wrap before delta", uvk_tick_map_delta(&m, 0xfffffffdull), -8);
    expect_u64("32-bit wrap before", uvk_tick_map_apply(&m, 0xfffffffdull), 999992);
    /* ... bits above the valid ones are ignored (in the reference too) ... */
    m = uvk_tick_map_make(m32, 1.0, 0xabc00000005ull, 1000000);
    expect_u64("32-bit reference masked", m.ref_ticks, 5);
    expect_u64("32-bit high bits ignored", uvk_tick_map_apply(&m, 0x12300000009ull), 1000004);
    /* ... and half the range each way is where the reading turns. */
    m = uvk_tick_map_make(m32, 1.0, 0, 1ll << 40);
    expect_i64("32-bit half range forward", uvk_tick_map_delta(&m, 0x7fffffffull), 0x7fffffffll);
    expect_i64("32-bit half range backward", uvk_tick_map_delta(&m, 0x80000000ull), -0x80000000ll);

    /* 36 bits and 52.08 ns per tick across the wrap (as on some GPUs). */
    uint64_t m36 = uvk_tick_mask(36);
    m = uvk_tick_map_make(m36, 52.08, m36 - 99, 9000000000);
    expect_u64("36-bit period wrap", uvk_tick_map_apply(&m, 100), 9000000000 + 10416);

    /* How long a calibration is reused: UPTI_VK_CALIBRATE_INTERVAL_MS, but less than a quarter of
       the counter's range. A 36-bit counter of 1 ns ticks read 2^35 + 1 ticks past a reference
       maps before it: with the 1-day interval the test submit_100 uses (64 bits there), it would. */
    m = uvk_tick_map_make(m36, 1.0, 0, 1ll << 40);
    expect_i64("36-bit past half the range reads backward", uvk_tick_map_delta(&m, (1ull << 35) + 1),
               -(int64_t)(1ull << 35) + 1);
    const uint64_t day = 86400ull * 1000000000ull;
    expect_u64("reuse 64 bits, 1 day", uvk_tick_map_reuse_ns(UINT64_MAX, 1.0, day), day);
    expect_u64("reuse 64 bits, 10 ms", uvk_tick_map_reuse_ns(UINT64_MAX, 52.08, 10000000), 10000000);
    expect_u64("reuse 36 bits at 1 ns, 1 day: a quarter of 2^36 ns", uvk_tick_map_reuse_ns(m36, 1.0, day),
               1ull << 34);
    expect_u64("reuse 36 bits at 52.08 ns, 1 day", uvk_tick_map_reuse_ns(m36, 52.08, day), 894727587102ull);
    expect_u64("reuse 36 bits, 10 ms", uvk_tick_map_reuse_ns(m36, 1.0, 10000000), 10000000);
    expect_u64("reuse 32 bits at 1 ns, 2 s: 1.07 s", uvk_tick_map_reuse_ns(m32, 1.0, 2000000000), 1ull << 30);
    expect_u64("reuse, no period", uvk_tick_map_reuse_ns(m36, 0.0, 10000000), 0);

    /* A measured reference: the midpoint of the host window, half of it plus a tick as the bound. */
    uint64_t bound = 0;
    m = uvk_tick_map_bracket(m32, 1.0, 0xffffff00ull, 2000, 2100, &bound);
    expect_i64("bracket midpoint", m.ref_ns, 2050);
    expect_u64("bracket reference", m.ref_ticks, 0xffffff00ull);
    expect_u64("bracket bound", bound, 51);
    expect_u64("bracket wrap", uvk_tick_map_apply(&m, 0x10ull), 2050 + 0x110);
    m = uvk_tick_map_bracket(UINT64_MAX, 52.08, 77, 3000, 3101, &bound);
    expect_i64("odd window midpoint", m.ref_ns, 3050);
    expect_u64("odd window bound (rounded up, tick 53 ns)", bound, 51 + 53);
    m = uvk_tick_map_bracket(UINT64_MAX, 1.0, 77, 3000, 3000, &bound);
    expect_u64("empty window bound: one tick", bound, 1);

    if (failures == 0)
        printf("PASS tick_map\n");
    return failures == 0 ? 0 : 1;
}
