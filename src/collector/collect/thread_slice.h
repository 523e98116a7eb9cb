/* SPDX-License-Identifier: MIT */
/* Internal: a thread's time slice under Linux's EEVDF scheduler (6.12 on):
 * sched_attr.sched_runtime of a SCHED_OTHER thread, set and read through
 * sched_setattr and sched_getattr (glibc 2.36 has neither wrapper). */
#ifndef UPTI_COLLECT_THREAD_SLICE_H
#define UPTI_COLLECT_THREAD_SLICE_H

#include <stdint.h>
#include <sys/types.h>

/**
 * Asks for a time slice of ns for thread tid (0: the calling thread), keeping
 * its nice value, if its policy is SCHED_OTHER. A thread woken with a slice
 * shorter than the running thread's may take the CPU from it at once (the
 * scheduler's PREEMPT_SHORT); its weight, and so its share of the CPU, stays.
 * 0, or -1 with errno (ENOSYS, EPERM from a seccomp filter; EINVAL for
 * another policy). A kernel before 6.12 accepts and ignores it.
 */
int ur_thread_slice_set(pid_t tid, uint64_t ns);

/**
 * Thread tid's (0: the calling thread's) policy, nice value and slice (0
 * where the kernel does not report it). 0, or -1 with errno.
 */
int ur_thread_slice_get(pid_t tid, int *policy, int *nice, uint64_t *ns);

#endif
