/* SPDX-License-Identifier: MIT */
/* See host_cpus.h. */
#include "host_cpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *cpu_model(void)
{
    char line[512];
    char *model = NULL;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f != NULL && model == NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon != NULL) {
                colon += 1 + (colon[1] == ' ');
                colon[strcspn(colon, "\n")] = '\0';
                model = strdup(colon);
            }
        }
    }
    if (f != NULL)
        fclose(f);
    return model != NULL ? model : strdup("CPU");
}

static char *cpu_vendor(void)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "vendor_id", 9) == 0) {
            char *colon = strchr(line, ':');
            if (colon != NULL) {
                colon += 1 + (colon[1] == ' ');
                colon[strcspn(colon, "\n")] = '\0';
                fclose(f);
                return strdup(colon);
            }
        }
    }
    if (f != NULL)
        fclose(f);
    return strdup("unknown");
}

/* Logical CPUs of a node from its cpulist ("0-3,8-11"). */
static uint32_t count_cpulist(const char *list)
{
    uint32_t n = 0;
    const char *p = list;
    while (*p != '\0' && *p != '\n') {
        char *end;
        long a = strtol(p, &end, 10);
        long b = a;
        if (end == p)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        n += (uint32_t)(b - a + 1);
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static uint64_t node_memory(int node)
{
    char path[128], line[256];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", node);
    FILE *f = fopen(path, "r");
    uint64_t kb = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *p = strstr(line, "MemTotal:");
        if (p != NULL) {
            kb = strtoull(p + 9, NULL, 10);
            break;
        }
    }
    if (f != NULL)
        fclose(f);
    return kb * 1024;
}

size_t upti_host_cpu_agents(upti_agent_t *out, size_t max)
{
    if (max == 0)
        return 0;
    char *model = cpu_model(), *vendor = cpu_vendor();
    size_t n = 0;
    for (int node = 0; node < 1024 && n < max; node++) {
        char path[128], list[4096];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            break;
        uint32_t cpus = fgets(list, sizeof list, f) ? count_cpulist(list) : 0;
        fclose(f);
        out[n++] = (upti_agent_t){.size = sizeof(upti_agent_t), .type = UPTI_AGENT_TYPE_CPU,
                                  .runtime = "host", .name = model, .vendor = vendor,
                                  .driver_version = "", .compute_units = cpus,
                                  .global_memory_bytes = node_memory(node),
                                  .node_id = (uint32_t)node};
    }
    if (n == 0) /* no NUMA information: the whole machine is one node */
        out[n++] = (upti_agent_t){
            .size = sizeof(upti_agent_t), .type = UPTI_AGENT_TYPE_CPU, .runtime = "host",
            .name = model, .vendor = vendor, .driver_version = "",
            .compute_units = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN),
            .global_memory_bytes = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE)};
    return n;
}

void upti_host_cpu_agents_release(upti_agent_t *agents, size_t n)
{
    if (n == 0)
        return;
    /* One model string and one vendor string, shared by all n. */
    free((char *)agents[0].name);
    free((char *)agents[0].vendor);
}
