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
#include "hash_map.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

/* What the table holds for one object. */
struct entry {
    uint32_t refs;
    uocl_appref_info_t info;
};

/* Guards the application reference table. A leaf: no other lock is taken under it. */
static pthread_mutex_t g_app_refs_lock = PTHREAD_MUTEX_INITIALIZER;
static upti_map g_entries; /* object address -> its struct entry */

static struct entry *find(const void *obj)
{
    uint64_t *v = upti_map_find(&g_entries, (uintptr_t)obj);
    return v != NULL ? (struct entry *)(uintptr_t)*v : NULL;
}

void uocl_appref_created(const void *obj, const uocl_appref_info_t *info)
{
    if (obj == NULL)
        return;
    pthread_mutex_lock(&g_app_refs_lock);
    struct entry *e = find(obj); /* found: an address reused after a release we missed */
    if (e == NULL && (e = malloc(sizeof *e)) != NULL) {
        uint64_t *v = upti_map_insert(&g_entries, (uintptr_t)obj, NULL);
        if (v != NULL) {
            *v = (uintptr_t)e;
        } else {
            free(e);
            e = NULL;
        }
    }
    if (e != NULL) {
        e->refs = 1;
        e->info = *info;
    }
    pthread_mutex_unlock(&g_app_refs_lock);
}

cl_int uocl_appref_retained(cl_int status, const void *obj)
{
    if (status != CL_SUCCESS)
        return status;
    pthread_mutex_lock(&g_app_refs_lock);
    struct entry *e = find(obj);
    if (e != NULL)
        e->refs++;
    pthread_mutex_unlock(&g_app_refs_lock);
    return status;
}

int uocl_appref_released(const void *obj, uocl_appref_info_t *info)
{
    if (obj == NULL)
        return -1;
    pthread_mutex_lock(&g_app_refs_lock);
    int last = -1;
    struct entry *e = find(obj);
    if (e != NULL) {
        last = --e->refs == 0;
        if (last) {
            if (info != NULL)
                *info = e->info;
            upti_map_remove(&g_entries, (uintptr_t)obj);
            free(e);
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
