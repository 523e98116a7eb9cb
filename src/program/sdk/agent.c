/* SPDX-License-Identifier: MIT */
/* Agents: one CPU agent per NUMA node, plus the devices runtimes add. */
#include "internal.h"
#include "fork.h"
#include "host_cpus.h"

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
        upti_agent_t host[64]; /* NUMA nodes */
        size_t room = MAX_AGENTS - g_num_agents;
        size_t n = upti_host_cpu_agents(host, room < 64 ? room : 64);
        for (size_t i = 0; i < n; i++)
            add_locked(&host[i]);
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
