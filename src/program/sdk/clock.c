/* SPDX-License-Identifier: MIT */
/* UPTI's clock: CLOCK_MONOTONIC_RAW in ns, read through the TSC where it is invariant.
 *
 * On this kind of machine clock_gettime() costs 25-30 ns and rdtsc 12-14 ns;
 * every traced call reads the clock once or twice, so the TSC path halves
 * that part of the overhead. ns = base_ns + (tsc - base_tsc) * mult / 2^32.
 * The conversion is re-anchored on CLOCK_MONOTONIC_RAW at growing intervals
 * (1 ms doubling to 1 s) and its slope re-measured over the whole run, so
 * the error stays well under a microsecond; a re-anchor never moves time
 * backwards. Parameters are published under a sequence lock; a thread that
 * traces calls keeps a copy of the set in force (internal.h: upti_thread_clock,
 * copied by upti_now_thread_slow()) and converts with it, without the lock,
 * until the set's interval ends: one set per interval, so the same values.
 */
#include "internal.h" /* and clock.h */
#include "env.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

struct upti_tsc_params upti_tsc;
static uint64_t g_first_tsc, g_first_ns;
static uint64_t g_interval_tsc; /* current re-anchor interval in ticks */
static _Atomic bool g_refreshing;

/* The clock itself, read the one way every part of UPTI reads it (src/common/clock.h). */
static uint64_t raw_ns(void)
{
    return upti_clock_now();
}

#if defined(__x86_64__)
static inline uint64_t read_tsc(void)
{
    return __rdtsc();
}

/* A (tsc, ns) pair read as close together as this machine allows. */
static void sample(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    *tsc = *ns = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t a = read_tsc();
        uint64_t n = raw_ns();
        uint64_t b = read_tsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
}

static uint64_t convert(uint64_t tsc, uint64_t base_tsc, uint64_t base_ns, uint64_t mult)
{
    int64_t delta = (int64_t)(tsc - base_tsc);
    if (delta >= 0)
        return base_ns + (uint64_t)(((unsigned __int128)(uint64_t)delta * mult) >> 32);
    return base_ns - (uint64_t)(((unsigned __int128)(uint64_t)-delta * mult) >> 32);
}

static void publish(uint64_t base_tsc, uint64_t base_ns, uint64_t mult, uint64_t next)
{
    uint32_t seq = atomic_load_explicit(&upti_tsc.seq, memory_order_relaxed);
    atomic_store_explicit(&upti_tsc.seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&upti_tsc.base_tsc, base_tsc, memory_order_relaxed);
    atomic_store_explicit(&upti_tsc.base_ns, base_ns, memory_order_relaxed);
    atomic_store_explicit(&upti_tsc.mult, mult, memory_order_relaxed);
    atomic_store_explicit(&upti_tsc.next_refresh_tsc, next, memory_order_relaxed);
    atomic_store_explicit(&upti_tsc.seq, seq + 2, memory_order_release);
}

/* Re-anchors the conversion on CLOCK_MONOTONIC_RAW and re-measures its slope; false if
 * another thread is at it. */
static bool refresh(uint64_t old_base_tsc, uint64_t old_base_ns, uint64_t old_mult)
{
    if (atomic_exchange(&g_refreshing, true))
        return false;
    /* Another thread re-anchored since the caller read the parameters: read them again
     * (true) rather than anchor a second time. A second anchor would continue the old set,
     * not the new one, and publish a second set for ticks the new one already covers,
     * which threads' copies (upti_thread_clock) may hold. */
    if (atomic_load_explicit(&upti_tsc.base_tsc, memory_order_relaxed) != old_base_tsc) {
        atomic_store(&g_refreshing, false);
        return true;
    }
    uint64_t tsc, ns;
    sample(&tsc, &ns);
    uint64_t mult = (uint64_t)(((unsigned __int128)(ns - g_first_ns) << 32) / (tsc - g_first_tsc));
    if (g_interval_tsc < (tsc - g_first_tsc) && g_interval_tsc * 2 <= (uint64_t)1 << 40)
        g_interval_tsc *= 2;
    uint64_t one_second = (uint64_t)(((unsigned __int128)1000000000ull << 32) / mult);
    if (g_interval_tsc > one_second)
        g_interval_tsc = one_second;
    /* Ahead of the true clock: never step back, but run slower until the next
     * anchor so the error is gone by then. Behind: step forward at once. */
    uint64_t continued = convert(tsc, old_base_tsc, old_base_ns, old_mult);
    uint64_t slope = mult;
    if (continued > ns) {
        uint64_t ahead = continued - ns;
        uint64_t slow = (uint64_t)(((unsigned __int128)ahead << 32) / g_interval_tsc);
        slope = slow < mult / 2 ? mult - slow : mult / 2;
        ns = continued;
    }
    publish(tsc, ns, slope, tsc + g_interval_tsc);
    atomic_store(&g_refreshing, false);
    return true;
}

/* CPUID 0x80000007 EDX bit 8: the TSC ticks at one rate in every P-, C- and
 * T-state (Linux's constant_tsc and nonstop_tsc, which it sets from that bit).
 * It was read from /proc/cpuinfo, which every process that loads libupti read
 * whole at its start. */
static bool invariant_tsc(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)) != 0;
}

/* In a child of fork(), the only thread: a thread of the parent that was inside publish()
 * (seq odd) or refresh() (g_refreshing set) at the fork does not exist here, and never ends
 * its update. Every upti_now() of the child then spun for ever on the odd seq, or on a refresh
 * that "another thread is at" (faults.fork_child_traces hung under TSan: the child's
 * child_after_fork and its callback thread in upti_tsc_read). The child re-anchors. */
static void clock_after_fork_child(void)
{
    uint32_t seq = atomic_load_explicit(&upti_tsc.seq, memory_order_relaxed);
    bool refreshing = atomic_load_explicit(&g_refreshing, memory_order_relaxed);
    if ((seq & 1) == 0 && !refreshing)
        return;
    if (seq & 1)
        atomic_store_explicit(&upti_tsc.seq, seq + 1, memory_order_relaxed);
    uint64_t tsc, ns;
    sample(&tsc, &ns);
    uint64_t mult = (uint64_t)(((unsigned __int128)(ns - g_first_ns) << 32) / (tsc - g_first_tsc));
    publish(tsc, ns, mult, tsc + g_interval_tsc);
    atomic_store(&g_refreshing, false);
    /* This set covers ticks the forking thread's copy may cover too: it copies this one. */
    if (upti_tls_state != NULL)
        upti_tls_state->clock.span = 0;
}

/* The first slope is measured over at least this long from the first sample. */
#define FIRST_SLOPE_NS 200000u
static _Atomic bool g_calibrating; /* the first sample is taken, the slope not yet */

__attribute__((constructor)) static void clock_init(void)
{
    /* UPTI_CLOCK=gettime: clock_gettime() only; tsc (or unset, empty): the TSC when invariant. */
    if (upti_env_get(UPTI_ENV_CLOCK) == UPTI_ENV_CLOCK_GETTIME || !invariant_tsc())
        return;
    sample(&g_first_tsc, &g_first_ns);
    pthread_atfork(NULL, NULL, clock_after_fork_child);
    atomic_store_explicit(&g_calibrating, true, memory_order_release);
}

/* The first slope, over the FIRST_SLOPE_NS at least since clock_init's sample, by
 * the first reading of the clock after them (the TSC is used from then on; until
 * then every reading is clock_gettime()'s). It was measured in clock_init, which
 * spun 200 us in every process that loads libupti. */
static void calibrate(uint64_t now)
{
    if (now - g_first_ns < FIRST_SLOPE_NS || atomic_exchange(&g_refreshing, true))
        return;
    if (!atomic_load_explicit(&upti_tsc.enabled, memory_order_acquire)) {
        uint64_t tsc, ns;
        sample(&tsc, &ns);
        uint64_t mult =
            (uint64_t)(((unsigned __int128)(ns - g_first_ns) << 32) / (tsc - g_first_tsc));
        /* Short first intervals: the first slope is only good to ~100 ppm, and each
         * re-anchor both removes the offset and measures the slope over a longer span. */
        g_interval_tsc = (uint64_t)(((unsigned __int128)1000000ull << 32) / mult); /* 1 ms */
        publish(tsc, ns, mult, tsc + g_interval_tsc);
        atomic_store_explicit(&upti_tsc.enabled, true, memory_order_release);
        atomic_store_explicit(&g_calibrating, false, memory_order_relaxed);
    }
    atomic_store(&g_refreshing, false);
}

/* Called by upti_now() when the TSC is not used or the parameters are due for a refresh. */
uint64_t upti_now_slow(void)
{
    if (!atomic_load_explicit(&upti_tsc.enabled, memory_order_acquire)) {
        uint64_t ns = raw_ns();
        if (atomic_load_explicit(&g_calibrating, memory_order_acquire))
            calibrate(ns);
        return ns;
    }
    for (;;) {
        struct upti_tsc_snapshot p;
        if (!upti_tsc_read(&p)) {
            /* Being published, or (below) re-anchored by another thread: that thread may
             * have been preempted. With many more threads than cores, waiting threads that
             * spun instead of yielding kept it off the CPU: under ThreadSanitizer, 80
             * marking threads on 2 cores made 30,000 marks each in 14 s, or not in 300. */
            sched_yield();
            continue;
        }
        uint64_t tsc = read_tsc();
        if (tsc >= p.next_refresh_tsc) {
            if (!refresh(p.base_tsc, p.base_ns, p.mult))
                sched_yield();
            continue;
        }
        return convert(tsc, p.base_tsc, p.base_ns, p.mult);
    }
}

uint64_t upti_now_thread_slow(upti_thread_state_t *s)
{
    uint64_t ns = upti_now_slow();
    /* Copied after the read: the set upti_now_slow() used, or a newer one. A set being
     * published is copied at the next read. */
    struct upti_tsc_snapshot p;
    if (atomic_load_explicit(&upti_tsc.enabled, memory_order_acquire) && upti_tsc_read(&p) &&
        p.mult < (uint64_t)1 << 32) {
        /* span last, 0 meanwhile: a signal handler on this thread that reads the clock
           between these stores takes the slow path instead of half a set. */
        s->clock.span = 0;
        atomic_signal_fence(memory_order_seq_cst);
        s->clock.base_tsc = p.base_tsc;
        s->clock.base_ns = p.base_ns;
        s->clock.mult64 = p.mult << 32;
        atomic_signal_fence(memory_order_seq_cst);
        s->clock.span = p.next_refresh_tsc - p.base_tsc;
    }
    return ns;
}
#else
uint64_t upti_now_slow(void)
{
    return raw_ns();
}

uint64_t upti_now_thread_slow(upti_thread_state_t *s)
{
    (void)s;
    return raw_ns();
}
#endif
