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

#endif
