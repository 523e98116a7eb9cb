/* SPDX-License-Identifier: MIT */
/* src/common/ring_futex.h: a producer waiting for room sleeps on the low half
 * of a slot's tail; the collector's wake after moving tail ends the wait. The
 * waits here have a 60 s timeout, more than this test's ctest limit: a wake
 * that did not arrive makes the test time out instead of passing late. A wait
 * whose expected value is already stale returns at once. */
#include "ring_futex.h"

#include <pthread.h>
#include <stdio.h>

#include "check.h"
#include "unit_tests.h"

static _Atomic uint64_t tail;
static _Atomic int waiting;

static void *producer(void *arg)
{
    (void)arg;
    uint64_t seen = atomic_load(&tail);
    atomic_store(&waiting, 1);
    while (atomic_load(&tail) == seen)
        upti_ring_futex_wait(&tail, seen, 60ull * 1000000000u);
    return NULL;
}

UNIT_TEST(ring_futex)
{
    /* the word is the half that changes with small moves of the position */
    atomic_store(&tail, 0x100000000ull);
    CHECK(*upti_ring_futex_word(&tail) == 0);
    atomic_store(&tail, 0x1234ull);
    CHECK(*upti_ring_futex_word(&tail) == 0x1234u);

    /* a stale expectation: no sleep at all (else this would take 60 s) */
    upti_ring_futex_wait(&tail, 0x1233u, 60ull * 1000000000u);

    for (int round = 0; round < 100; round++) {
        atomic_store(&waiting, 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, producer, NULL) == 0);
        while (!atomic_load(&waiting))
            sched_yield();
        atomic_fetch_add(&tail, 4096); /* the collector gives space back... */
        upti_ring_futex_wake(&tail);   /* ...and wakes the producer */
        CHECK(pthread_join(t, NULL) == 0);
    }
    CHECK_EQ_U64(atomic_load(&tail), 0x1234ull + 100 * 4096);
    return test_failures != 0;
}
