/* SPDX-License-Identifier: MIT */
/* The agents as `upti -L` and the bundled tool's UPTI_TRACE_LIST print them. */
#ifndef UPTI_COMMON_AGENT_PRINT_H
#define UPTI_COMMON_AGENT_PRINT_H

#include <upti/agent.h>

#include <stdio.h>

/**
 * One line about agent a, numbered number: "  NUMBER RUNTIME TYPE: NAME (VENDOR)",
 * and with details its driver, compute units and memory: "(VENDOR, driver
 * VERSION; N compute units, M bytes)" (an unknown vendor said, an unknown
 * driver left out).
 */
void upti_print_agent(FILE *f, unsigned long long number, const upti_agent_t *a, int details);

#endif
