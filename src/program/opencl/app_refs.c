/* SPDX-License-Identifier: MIT */
/* The application's own references to OpenCL objects (memory objects,
 * programs, kernels).
 *
 * The runtime's reference count (CL_MEM_REFERENCE_COUNT,
 * CL_PROGRAM_REFERENCE_COUNT, ...) cannot tell when the application lets go
 * of an object: PoCL holds references of its own while commands using it
 * are pending (a kernel command holds its kernel, a kernel its program),
 * and drops them later on its own threads. So the layer counts what the
 * application does — 1 at creation, +1 per clRetain*, -1 per clRelease* —
 * and reports FREE or UNLOAD when that count reaches 0. Objects created
 * before tracing are unknown: they get no FREE or UNLOAD. Live objects (and
 * SVM pointers) have distinct addresses, so one table serves every type.
 *
 * Each entry also keeps what the release reports (context, agent, size...),
 * captured at creation: an object may outlive the objects it was made from
 * (a buffer its context, a kernel its program), so a release must not ask
 * the runtime about them.
 */
#include "app_refs.h"
#include "fork.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

struct slot {
    const void *obj; /* NULL: empty */
    uint32_t refs;
    uocl_appref_info_t info;
};

/* Guards the application reference table. A leaf: no other lock is taken under it. */
static pthread_mutex_t g_app_refs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *g_slots;
static size_t g_capacity, g_count; /* capacity: a power of two */

static size_t hash(const void *obj)
{
    uint64_t h = (uint64_t)(uintptr_t)obj * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17);
}

static struct slot *find(const void *obj)
{
    if (g_capacity == 0)
        return NULL;
    for (size_t i = hash(obj) & (g_capacity - 1);; i = (i + 1) & (g_capacity - 1)) {
        if (g_slots[i].obj == obj)
            return &g_slots[i];
        if (g_slots[i].obj == NULL)
            return NULL;
    }
}

static void insert(const void *obj, uint32_t refs, const uocl_appref_info_t *info)
{
    size_t i = hash(obj) & (g_capacity - 1);
    while (g_slots[i].obj != NULL)
        i = (i + 1) & (g_capacity - 1);
    g_slots[i] = (struct slot){obj, refs, *info};
    g_count++;
}

static int grow(void)
{
    size_t old_capacity = g_capacity;
    struct slot *old = g_slots;
    size_t capacity = old_capacity ? old_capacity * 2 : 256;
    struct slot *slots = calloc(capacity, sizeof *slots);
    if (slots == NULL)
        return -1;
    g_slots = slots;
    g_capacity = capacity;
    g_count = 0;
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].obj != NULL)
            insert(old[i].obj, old[i].refs, &old[i].info);
    free(old);
    return 0;
}

/* Removes a slot, moving later members of its probe run back (no tombstones). */
static void erase(struct slot *s)
{
    size_t mask = g_capacity - 1;
    size_t hole = (size_t)(s - g_slots);
    g_slots[hole].obj = NULL;
    g_count--;
    for (size_t i = (hole + 1) & mask; g_slots[i].obj != NULL; i = (i + 1) & mask) {
        size_t home = hash(g_slots[i].obj) & mask;
        /* Move it if its home is not within (hole, i]. */
        if ((i > hole && (home <= hole || home > i)) || (i < hole && home <= hole && home > i)) {
            g_slots[hole] = g_slots[i];
            g_slots[i].obj = NULL;
            hole = i;
        }
    }
}

void uocl_appref_created(const void *obj, const uocl_appref_info_t *info)
{
    if (obj == NULL)
        return;
    pthread_mutex_lock(&g_app_refs_lock);
    struct slot *s = find(obj);
    if (s != NULL) { /* an address reused after a release we missed */
        s->refs = 1;
        s->info = *info;
    } else if ((g_count + 1) * 2 <= g_capacity || grow() == 0) {
        insert(obj, 1, info);
    }
    pthread_mutex_unlock(&g_app_refs_lock);
}

cl_int uocl_appref_retained(cl_int status, const void *obj)
{
    if (status != CL_SUCCESS)
        return status;
    pthread_mutex_lock(&g_app_refs_lock);
    struct slot *s = find(obj);
    if (s != NULL)
        s->refs++;
    pthread_mutex_unlock(&g_app_refs_lock);
    return status;
}

int uocl_appref_released(const void *obj, uocl_appref_info_t *info)
{
    if (obj == NULL)
        return -1;
    pthread_mutex_lock(&g_app_refs_lock);
    int last = -1;
    struct slot *s = find(obj);
    if (s != NULL) {
        last = --s->refs == 0;
        if (last) {
            if (info != NULL)
                *info = s->info;
            erase(s);
        }
    }
    pthread_mutex_unlock(&g_app_refs_lock);
    return last;
}

/* ---- fork() without exec (fork.c) ---- */

void uocl_appref_fork_prepare(void)
{
    pthread_mutex_lock(&g_app_refs_lock);
}

void uocl_appref_fork_parent(void)
{
    pthread_mutex_unlock(&g_app_refs_lock);
}

void uocl_appref_fork_child(void)
{
    pthread_mutex_unlock(&g_app_refs_lock);
}
