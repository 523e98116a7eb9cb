/* SPDX-License-Identifier: MIT */
/* Dispatchable objects of libupti-vulkan, keyed on the loader's dispatch
 * pointer.
 *
 * A fixed array: writers (instance and device creation and destruction) take
 * a mutex, readers (every wrapped call) scan without one. A slot's state is
 * written before its key is published (release) and read after the key
 * (acquire). A removed object's slot is not reused while the process lives,
 * so a reader racing a removal still reads a complete table; programs make
 * few instances and devices (UVK_MAX_OBJECTS in all).
 */
#include "layer.h"

#include <pthread.h>
#include <string.h>

uvk_object_t uvk_objects[UVK_MAX_OBJECTS];
_Atomic unsigned uvk_objects_used; /* slots handed out */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const upti_vulkan_dispatch_t g_empty;

uvk_object_t *uvk_object_find(void *key)
{
    unsigned n = atomic_load_explicit(&uvk_objects_used, memory_order_acquire);
    /* Newest first: the object a program uses now is usually the last made. */
    for (unsigned i = n; i-- > 0;)
        if (atomic_load_explicit(&uvk_objects[i].key, memory_order_acquire) == key)
            return &uvk_objects[i];
    return NULL;
}

uvk_object_t *uvk_object_add(void)
{
    pthread_mutex_lock(&g_lock);
    unsigned n = atomic_load_explicit(&uvk_objects_used, memory_order_relaxed);
    uvk_object_t *o = NULL;
    if (n < UVK_MAX_OBJECTS) {
        o = &uvk_objects[n];
        atomic_store_explicit(&uvk_objects_used, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&g_lock);
    return o;
}

void uvk_object_publish(uvk_object_t *o, void *key)
{
    atomic_store_explicit(&o->key, key, memory_order_release);
}

void uvk_object_remove(void *key)
{
    uvk_object_t *o = uvk_object_find(key);
    if (o != NULL)
        atomic_store_explicit(&o->key, NULL, memory_order_release);
}

const upti_vulkan_dispatch_t *uvk_object_table_slow(const void *handle)
{
    uvk_object_t *o = handle != NULL ? uvk_object_find(uvk_key(handle)) : NULL;
    return o != NULL ? &o->next : &g_empty;
}
