/* SPDX-License-Identifier: MIT */
/* Agents: one CPU agent per NUMA node, plus the devices runtimes add. */
#include "internal.h"
#include "fork.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_AGENTS 256

static upti_agent_t g_agents[MAX_AGENTS];
static size_t g_num_agents;
static bool g_host_done;
/* Guards g_agents, g_num_agents, g_host_done. A leaf (lock order: internal.h). */
static pthread_mutex_t g_agents_lock = PTHREAD_MUTEX_INITIALIZER;

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

static void add_locked(upti_agent_t *a)
{
    a->size = sizeof(upti_agent_t);
    a->id.handle = g_num_agents + 1;
    g_agents[g_num_agents++] = *a;
}

void upti_agents_init_host(void)
{
    pthread_mutex_lock(&g_agents_lock);
    if (!g_host_done) {
        g_host_done = true;
        char *model = cpu_model(), *vendor = cpu_vendor();
        uint32_t nodes = 0;
        for (int node = 0; node < 1024 && g_num_agents < MAX_AGENTS; node++) {
            char path[128], list[4096];
            snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
            FILE *f = fopen(path, "r");
            if (f == NULL)
                break;
            uint32_t cpus = fgets(list, sizeof list, f) ? count_cpulist(list) : 0;
            fclose(f);
            add_locked(&(upti_agent_t){.type = UPTI_AGENT_TYPE_CPU, .runtime = "host",
                                       .name = model, .vendor = vendor, .driver_version = "",
                                       .compute_units = cpus,
                                       .global_memory_bytes = node_memory(node),
                                       .node_id = (uint32_t)node});
            nodes++;
        }
        if (nodes == 0) /* no NUMA information: the whole machine is one node */
            add_locked(&(upti_agent_t){
                .type = UPTI_AGENT_TYPE_CPU, .runtime = "host", .name = model, .vendor = vendor,
                .driver_version = "", .compute_units = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN),
                .global_memory_bytes =
                    (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE)});
    }
    pthread_mutex_unlock(&g_agents_lock);
}

static const char *copy_string(const char *s)
{
    char *c = strdup(s != NULL ? s : "");
    return c != NULL ? c : "";
}

UPTI_API upti_status_t upti_runtime_add_agent(const upti_agent_t *agent, upti_agent_id_t *id)
{
    upti_agent_t a;
    upti_status_t valid = upti_struct_copy(&a, sizeof a, agent);
    if (valid != UPTI_STATUS_SUCCESS)
        return valid;
    a.size = sizeof a;
    /* What was tail padding before it was named: a caller's build may hold anything there. */
    a.reserved0 = 0;
    upti_agents_init_host();
    a.runtime = copy_string(a.runtime);
    a.name = copy_string(a.name);
    a.vendor = copy_string(a.vendor);
    a.driver_version = copy_string(a.driver_version);
    pthread_mutex_lock(&g_agents_lock);
    upti_status_t st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    if (g_num_agents < MAX_AGENTS) {
        add_locked(&a);
        if (id != NULL)
            *id = a.id;
        st = UPTI_STATUS_SUCCESS;
    }
    pthread_mutex_unlock(&g_agents_lock);
    if (st == UPTI_STATUS_SUCCESS)
        upti_buffer_agent_added(); /* shared buffers' ring files get it too */
    return st;
}

size_t upti_agent_count(void)
{
    pthread_mutex_lock(&g_agents_lock);
    size_t n = g_num_agents;
    pthread_mutex_unlock(&g_agents_lock);
    return n;
}

bool upti_agent_at(size_t i, upti_agent_t *out)
{
    pthread_mutex_lock(&g_agents_lock);
    bool ok = i < g_num_agents;
    if (ok)
        *out = g_agents[i];
    pthread_mutex_unlock(&g_agents_lock);
    return ok;
}

UPTI_API upti_status_t upti_query_available_agents(upti_query_available_agents_cb_t callback,
                                                   void *data)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (callback == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    upti_agents_init_host();
    pthread_mutex_lock(&g_agents_lock);
    size_t n = g_num_agents;
    const upti_agent_t **list = malloc((n ? n : 1) * sizeof *list);
    for (size_t i = 0; list != NULL && i < n; i++)
        list[i] = &g_agents[i];
    pthread_mutex_unlock(&g_agents_lock);
    if (list == NULL)
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    upti_status_t st = callback(list, n, data);
    free(list);
    (void)st;
    return UPTI_STATUS_SUCCESS;
}

/* ---- fork() without exec (fork.h) ---- */

void upti_agent_fork_prepare(void)
{
    pthread_mutex_lock(&g_agents_lock);
}

void upti_agent_fork_parent(void)
{
    pthread_mutex_unlock(&g_agents_lock);
}

void upti_agent_fork_child(void)
{
    pthread_mutex_unlock(&g_agents_lock);
}
