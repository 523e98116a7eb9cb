/* SPDX-License-Identifier: MIT */
/* Agents in shared buffers: every ring file holds one UPTI_RING_KIND_AGENT
 * record per agent (upti/ring.h), so that a collector builds the agent
 * table of a process it only knows through its rings.
 *
 * Who writes them: the first thread that writes to a buffer in a process
 * (after its THREAD record, in its slot) writes the agents known then; a
 * thread that registers an agent later writes that one (in its own slot).
 * Each agent exactly once per ring file: a count of the agents a file has,
 * under one lock, says which are missing; a forked child's file starts with
 * none. An agent record dropped (a full ring: counted like any record) is
 * written again at the next occasion (a new thread, a new agent).
 */
#include "internal.h"
#include "ring.h"
#include <upti/ring.h>

#include <string.h>

/* Per buffer (index): whether a thread wrote to its ring file in this process, and how
 * many of the process's agents the file has. Under g_shared_agents_lock, which orders the writers. */
static struct {
    bool has_writer;
    size_t written;
} g_state[UPTI_MAX_BUFFERS];
/* Guards g_state (which agents each shared buffer's file has). A leaf (lock order: internal.h). */
static pthread_mutex_t g_shared_agents_lock = PTHREAD_MUTEX_INITIALIZER;

/* The bytes of s in the record, its NUL included, cut to UPTI_MAX_RECORD_STRING. */
static uint16_t string_bytes(const char *s)
{
    return (uint16_t)(strnlen(s != NULL ? s : "", UPTI_MAX_RECORD_STRING - 1) + 1);
}

static char *put_string(char *dst, const char *s, uint16_t len)
{
    memcpy(dst, s != NULL ? s : "", len - 1u);
    dst[len - 1u] = '\0';
    return dst + len;
}

/* One agent into s's slot of b. False if it was dropped (counted). */
static bool write_agent(struct upti_buffer *b, upti_thread_state_t *s, const upti_agent_t *a)
{
    upti_ring_agent_t r = {
        .id = a->id.handle,
        .type = (uint32_t)a->type,
        .compute_units = a->compute_units,
        .global_memory_bytes = a->global_memory_bytes,
        .runtime_handle = a->runtime_handle,
        .node_id = a->node_id,
        .runtime_len = string_bytes(a->runtime),
        .name_len = string_bytes(a->name),
        .vendor_len = string_bytes(a->vendor),
        .driver_version_len = string_bytes(a->driver_version),
    };
    size_t strings = (size_t)r.runtime_len + r.name_len + r.vendor_len + r.driver_version_len;
    size_t body = sizeof r + strings;
    uint8_t *dst = upti_buffer_reserve(b, s, UPTI_RING_AGENT_RECORD, body);
    if (dst == NULL)
        return false;
    memcpy(dst, &r, sizeof r);
    char *p = (char *)dst + sizeof r;
    p = put_string(p, a->runtime, r.runtime_len);
    p = put_string(p, a->name, r.name_len);
    p = put_string(p, a->vendor, r.vendor_len);
    p = put_string(p, a->driver_version, r.driver_version_len);
    memset(p, 0, ((body + 7) & ~(size_t)7) - body); /* the padding: no stale bytes in the file */
    upti_buffer_commit(b, s);
    return true;
}

/* Writes the agents b's file lacks into s's slot (its producer exists). g_shared_agents_lock held. */
static void write_missing_locked(struct upti_buffer *b, upti_thread_state_t *s)
{
    size_t n = upti_agent_count();
    size_t *written = &g_state[b->index].written;
    while (*written < n) {
        upti_agent_t a;
        if (!upti_agent_at(*written, &a) || !write_agent(b, s, &a))
            break; /* dropped: written again at the next occasion */
        (*written)++;
    }
}

void upti_shared_agents_first_write(struct upti_buffer *b, upti_thread_state_t *s)
{
    upti_agents_init_host();
    pthread_mutex_lock(&g_shared_agents_lock);
    g_state[b->index].has_writer = true;
    if (s->producers[b->index] != NULL)
        write_missing_locked(b, s);
    pthread_mutex_unlock(&g_shared_agents_lock);
}

void upti_shared_agents_added(struct upti_buffer *b, upti_thread_state_t *s)
{
    pthread_mutex_lock(&g_shared_agents_lock);
    bool missing = g_state[b->index].has_writer && g_state[b->index].written < upti_agent_count();
    if (missing && s->producers[b->index] != NULL)
        write_missing_locked(b, s);
    pthread_mutex_unlock(&g_shared_agents_lock);
    /* No slot yet: claiming one writes THREAD, then the missing agents (first_write). */
    if (missing && s->producers[b->index] == NULL && !atomic_load(&b->destroyed))
        upti_shared_producer_create(b, s);
}

void upti_shared_agents_fork_child(struct upti_buffer *b)
{
    pthread_mutex_init(&g_shared_agents_lock, NULL); /* a thread that vanished may have held it */
    g_state[b->index].has_writer = false;
    g_state[b->index].written = 0;
}
