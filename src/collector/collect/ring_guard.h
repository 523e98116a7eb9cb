/* SPDX-License-Identifier: MIT */
/* Reading a ring file that may be cut short under the collector.
 *
 * A ring is a file of the traced program's, mapped by the collector. If the
 * program (or any other process of the user) truncates it, a load from the
 * mapping past the new end raises SIGBUS, which would kill the collector and
 * with it every other process's trace. A guard names the mapping a stretch of
 * code reads; a SIGBUS at an address inside it jumps back to where the guard
 * was entered, which gives the ring up. A SIGBUS anywhere else is what it
 * would have been without the guard (the previous disposition).
 *
 *   ur_guard g;
 *   ur_guard_push(&g, map, size);
 *   if (sigsetjmp(g.env, 0) != 0) { ... the file was cut short ...; return; }
 *   ... reads of map ...
 *   ur_guard_leave(&g);
 *
 * (sigsetjmp in the whole controlling expression of the if, as C allows it.) Guards
 * nest, per thread. Enter a guard in a function of its own, whose locals are not
 * changed between the sigsetjmp and a fault (setjmp's rule).
 */
#ifndef UPTI_COLLECTOR_RING_GUARD_H
#define UPTI_COLLECTOR_RING_GUARD_H

#include <setjmp.h>
#include <stddef.h>

typedef struct ur_guard {
    sigjmp_buf env;
    const char *lo; /* the mapping read: [lo, lo + len) */
    size_t len;
    struct ur_guard *prev; /* the guard this one is inside, or NULL */
} ur_guard;

/** Makes g the thread's innermost guard, over [map, map + len); installs the SIGBUS
 *  handler at the first call. Then sigsetjmp(g.env, 0): nonzero when a read of the
 *  mapping faulted (the guard was left). */
void ur_guard_push(ur_guard *g, const void *map, size_t len);

/** Leaves the thread's innermost guard, g. */
void ur_guard_leave(ur_guard *g);

/** Jumps back to the innermost guard as a fault would: for a fault the kernel reported
 *  as EFAULT instead (a write(2) from the mapping). */
_Noreturn void ur_guard_fault(void);

#endif
