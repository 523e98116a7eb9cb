/* SPDX-License-Identifier: MIT */
/* Internal: how a LOSSLESS producer waits for room in a shared ring slot, and
 * how the collector wakes it (upti/ring.h, "Full ring").
 *
 * The producer, finding no room, sets slot->starving and sleeps in
 * FUTEX_WAIT on the low 32 bits of slot->tail, expecting the value it last
 * read. The collector, after it store-releases a new tail in a slot whose
 * starving flag is set, calls FUTEX_WAKE on the same word. The kernel
 * compares the word before sleeping, so a tail that moved in between is never
 * missed; the wait has a timeout all the same (a collector that does not
 * wake, or one that died), after which the producer reads tail again.
 * The mapping is shared between processes: no FUTEX_PRIVATE_FLAG.
 */
#ifndef UPTI_COMMON_RING_FUTEX_H
#define UPTI_COMMON_RING_FUTEX_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The 32-bit word of a 64-bit position that changes with it: its low half. */
static inline uint32_t *upti_ring_futex_word(_Atomic uint64_t *pos)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (uint32_t *)(void *)pos;
#else
    return (uint32_t *)(void *)pos + 1;
#endif
}

/* Sleeps while the low half of *pos is still (uint32_t)seen, at most timeout_ns. */
static inline void upti_ring_futex_wait(_Atomic uint64_t *pos, uint64_t seen, uint64_t timeout_ns)
{
    struct timespec t = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    (void)syscall(SYS_futex, upti_ring_futex_word(pos), FUTEX_WAIT, (uint32_t)seen, &t, NULL, 0);
}

/* Wakes every producer sleeping on *pos. */
static inline void upti_ring_futex_wake(_Atomic uint64_t *pos)
{
    (void)syscall(SYS_futex, upti_ring_futex_word(pos), FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* The producer's side of the doorbell (upti/ring.h, "Doorbell"): wakes a consumer
 * sleeping on *doorbell, unless another producer took its 1 first. The load first: a
 * doorbell at 0 (the consumer awake) costs a read of a line that rarely changes. */
static inline void upti_ring_doorbell_ring(_Atomic uint32_t *doorbell)
{
    if (atomic_load_explicit(doorbell, memory_order_relaxed) != 0 &&
        atomic_exchange_explicit(doorbell, 0, memory_order_relaxed) != 0)
        (void)syscall(SYS_futex, (uint32_t *)(void *)doorbell, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

#endif
