/* SPDX-License-Identifier: MIT */
/* How many CPUs this process can use at once: its affinity mask, and its
 * cgroup's CPU quota (a container run with --cpus=1 on a bigger machine sees
 * every CPU in its mask, but gets one CPU's time). */
#ifndef UPTI_COMMON_CPU_QUOTA_H
#define UPTI_COMMON_CPU_QUOTA_H

/**
 * The CPUs that the quotas of the cgroups in proc_cgroup (the text of
 * /proc/self/cgroup) allow, rounded up: the least of those set on the
 * process's cgroup and its ancestors, read under root (where cgroup file
 * systems are mounted: "/sys/fs/cgroup"); cgroup v2's cpu.max ("max PERIOD"
 * or "QUOTA PERIOD") and v1's cpu.cfs_quota_us and cpu.cfs_period_us (-1:
 * none). 0 where none is set or none can be read.
 */
int upti_cpu_quota_cpus(const char *root, const char *proc_cgroup);

/** The CPUs of this process's affinity mask, no more than its quota allows; at least 1. */
int upti_usable_cpus(void);

/**
 * For one of two threads that hand work to each other (the converting thread
 * and its page writer): where the calling thread runs on cpu, the CPU its
 * partner last waited on, moves it to the next CPU of its affinity mask.
 *
 * Such pairs hand work over many times a millisecond. After a busy spell (the
 * traced program's end), both stayed on one CPU for 20 to 30 ms while the
 * other was idle (perf sched timehist): the scheduler's utilization of the
 * cache domain, a 32 ms average, still said busy, so a wake-up did not look
 * for an idle CPU, and the balancer does not move a thread that ran less than
 * 0.5 ms ago. Apart, each is woken on its own CPU while that one is idle. The
 * mask is set to that one CPU, which moves the thread at once, then given
 * back whole: nothing is pinned (unless giving it back fails, which leaves
 * the thread on the one CPU). Nothing where the mask has one CPU or cannot be
 * read (more CPUs than CPU_SETSIZE), or where cpu is not the caller's.
 */
void upti_move_off_cpu(int cpu);

#endif
