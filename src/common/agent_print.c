/* SPDX-License-Identifier: MIT */
/* See agent_print.h. */
#include "agent_print.h"

void upti_print_agent(FILE *f, unsigned long long number, const upti_agent_t *a, int details)
{
    static const char *const types[] = {"NONE", "CPU", "GPU", "ACCELERATOR"};
    fprintf(f, "  %llu %s %s: %s (", number, a->runtime ? a->runtime : "?",
            (unsigned)a->type < 4 ? types[a->type] : "?", a->name ? a->name : "?");
    if (!details) {
        fprintf(f, "%s)\n", a->vendor ? a->vendor : "");
        return;
    }
    /* An empty vendor or driver version is left out, not printed as ", ;". */
    int has_driver = a->driver_version != NULL && a->driver_version[0] != '\0';
    fprintf(f, "%s%s%s; %u compute units, %llu bytes)\n",
            a->vendor != NULL && a->vendor[0] != '\0' ? a->vendor : "vendor unknown",
            has_driver ? ", driver " : "", has_driver ? a->driver_version : "", a->compute_units,
            (unsigned long long)a->global_memory_bytes);
}
