/* SPDX-License-Identifier: MIT */
/* The host's CPU agents, read from /proc/cpuinfo and /sys: libupti's first
 * agents (src/program/sdk/agent.c) and what `upti -L` lists without a program. */
#ifndef UPTI_COMMON_HOST_CPUS_H
#define UPTI_COMMON_HOST_CPUS_H

#include <upti/agent.h>

#include <stddef.h>

/**
 * Fills out with one CPU agent per NUMA node (the whole machine as one where
 * /sys has no node), at most max; returns how many. Their id is left 0. Their
 * name and vendor are two strings malloc'd once for all of them, which the
 * caller keeps for as long as it uses them (libupti: the process's life).
 */
size_t upti_host_cpu_agents(upti_agent_t *out, size_t max);

/** Frees the strings of the n agents upti_host_cpu_agents() gave (n may be 0). */
void upti_host_cpu_agents_release(upti_agent_t *agents, size_t n);

#endif
