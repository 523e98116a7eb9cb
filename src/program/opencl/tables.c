/* SPDX-License-Identifier: MIT */
/* Tables keyed by OpenCL handles: queues and kernels.
 *
 * Open addressing with linear probing; writers take a mutex, readers do not:
 * a slot's key is published last (release) and read first (acquire), and a
 * slot's key never changes once set. A handle that the runtime reuses after
 * a release simply gets its entry overwritten at creation. The data of an
 * entry is guarded by a per-slot sequence number so that a reader never
 * sees a half-written overwrite.
 */
#include "layer.h"
#include "fnv1a.h"
#include "fork.h"
#include "hash_map.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE_SLOTS 4096
#define KERNEL_SLOTS 8192

typedef struct queue_slot_t {
    _Atomic(void *) key;
    _Atomic unsigned seq; /* odd while being written */
    uocl_queue_info_t info;
} queue_slot_t;

typedef struct kernel_slot_t {
    _Atomic(void *) key;
    _Atomic(const char *) name;
    _Atomic(cl_program) program;
} kernel_slot_t;

static queue_slot_t g_queues[QUEUE_SLOTS];
static kernel_slot_t g_kernels[KERNEL_SLOTS];
static pthread_mutex_t g_write_lock = PTHREAD_MUTEX_INITIALIZER;

static inline size_t hash_ptr(const void *p, size_t slots)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)(x & (slots - 1));
}

/* Index of key's slot, or of the empty slot where it would go; -1 if full. */
#define FIND_SLOT(table, slots, key_)                                                      \
    ({                                                                                     \
        long found_ = -1;                                                                  \
        size_t h_ = hash_ptr((key_), (slots));                                             \
        for (size_t i_ = 0; i_ < (slots); i_++) {                                          \
            size_t s_ = (h_ + i_) & ((slots)-1);                                           \
            void *k_ = atomic_load_explicit(&(table)[s_].key, memory_order_acquire);       \
            if (k_ == (void *)(key_) || k_ == NULL) {                                      \
                found_ = (long)s_;                                                         \
                break;                                                                     \
            }                                                                              \
        }                                                                                  \
        found_;                                                                            \
    })

void uocl_queue_put(cl_command_queue q, const uocl_queue_info_t *info)
{
    pthread_mutex_lock(&g_write_lock);
    long s = FIND_SLOT(g_queues, QUEUE_SLOTS, q);
    if (s >= 0) {
        queue_slot_t *slot = &g_queues[s];
        atomic_fetch_add_explicit(&slot->seq, 1, memory_order_acq_rel);
        slot->info = *info;
        atomic_fetch_add_explicit(&slot->seq, 1, memory_order_release);
        atomic_store_explicit(&slot->key, (void *)q, memory_order_release);
    }
    pthread_mutex_unlock(&g_write_lock);
}

int uocl_queue_get(cl_command_queue q, uocl_queue_info_t *out)
{
    if (q == NULL)
        return 0;
    long s = FIND_SLOT(g_queues, QUEUE_SLOTS, q);
    if (s < 0 || atomic_load_explicit(&g_queues[s].key, memory_order_acquire) != (void *)q)
        return 0;
    queue_slot_t *slot = &g_queues[s];
    for (;;) {
        unsigned before = atomic_load_explicit(&slot->seq, memory_order_acquire);
        if (before & 1)
            continue;
        memcpy(out, (const void *)&slot->info, sizeof *out);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&slot->seq, memory_order_relaxed) == before)
            return 1;
    }
}

int uocl_queue_lookup(cl_command_queue q, uocl_queue_info_t *out)
{
    if (uocl_queue_get(q, out))
        return 1;
    /* A queue created before UPTI was there: ask the runtime once. */
    uocl_queue_info_t info;
    memset(&info, 0, sizeof info);
    if (uocl_next.clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof info.context, &info.context,
                                        NULL) != CL_SUCCESS ||
        uocl_next.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof info.device, &info.device,
                                        NULL) != CL_SUCCESS ||
        uocl_next.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof info.app_properties,
                                        &info.app_properties, NULL) != CL_SUCCESS)
        return 0;
    info.dev = uocl_device_find(info.device);
    uocl_queue_put(q, &info);
    *out = info;
    return 1;
}

void uocl_kernel_put(cl_kernel k, cl_program program, const char *name)
{
    const char *interned = uocl_intern(name);
    pthread_mutex_lock(&g_write_lock);
    long s = FIND_SLOT(g_kernels, KERNEL_SLOTS, k);
    if (s >= 0) {
        atomic_store_explicit(&g_kernels[s].name, interned, memory_order_relaxed);
        atomic_store_explicit(&g_kernels[s].program, program, memory_order_relaxed);
        atomic_store_explicit(&g_kernels[s].key, (void *)k, memory_order_release);
    }
    pthread_mutex_unlock(&g_write_lock);
}

const char *uocl_kernel_name(cl_kernel k, cl_program *program)
{
    if (k == NULL) {
        *program = NULL;
        return "native";
    }
    long s = FIND_SLOT(g_kernels, KERNEL_SLOTS, k);
    if (s >= 0 && atomic_load_explicit(&g_kernels[s].key, memory_order_acquire) == (void *)k) {
        *program = atomic_load_explicit(&g_kernels[s].program, memory_order_relaxed);
        return atomic_load_explicit(&g_kernels[s].name, memory_order_relaxed);
    }
    char name[256] = "";
    cl_program prog = NULL;
    uocl_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL);
    uocl_next.clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL);
    uocl_kernel_put(k, prog, name);
    *program = prog;
    return uocl_intern(name);
}

/* Interned strings, never freed: their addresses keyed by their hash. */
static upti_map g_intern;
static pthread_mutex_t g_intern_lock = PTHREAD_MUTEX_INITIALIZER;

/* The interned copy of s, or NULL when out of memory (called under g_intern_lock). */
static const char *intern_locked(const char *s)
{
    uint64_t h = upti_fnv1a64(UPTI_FNV1A64_BASIS, s), *v;
    for (size_t pos = 0; (v = upti_map_next(&g_intern, h, &pos)) != NULL;)
        if (strcmp((const char *)(uintptr_t)*v, s) == 0)
            return (const char *)(uintptr_t)*v;
    char *copy = strdup(s);
    if (copy == NULL || (v = upti_map_add(&g_intern, h)) == NULL) {
        free(copy);
        return NULL;
    }
    *v = (uintptr_t)copy;
    return copy;
}

const char *uocl_intern(const char *s)
{
    pthread_mutex_lock(&g_intern_lock);
    const char *text = intern_locked(s != NULL ? s : "");
    pthread_mutex_unlock(&g_intern_lock);
    return text != NULL ? text : "";
}

/* ---- fork() without exec (fork.c) ---- */

void uocl_tables_fork_prepare(void)
{
    pthread_mutex_lock(&g_write_lock);
    pthread_mutex_lock(&g_intern_lock);
}

void uocl_tables_fork_parent(void)
{
    pthread_mutex_unlock(&g_intern_lock);
    pthread_mutex_unlock(&g_write_lock);
}

void uocl_tables_fork_child(void)
{
    pthread_mutex_unlock(&g_intern_lock);
    pthread_mutex_unlock(&g_write_lock);
}
