/* SPDX-License-Identifier: MIT */
/* Facts runtime integrations report about the trace as a whole
 * (upti_runtime_set_metadata), for tools to read
 * (upti_query_runtime_metadata): a small table of key/value copies. */
#include "internal.h"

#include <upti/runtime.h>

#include <string.h>

#define MAX_ENTRIES 32
#define KEY_MAX 64
#define VALUE_MAX 256

static struct {
    char key[KEY_MAX];
    char value[VALUE_MAX];
} g_entries[MAX_ENTRIES];
static size_t g_count;
/* Guards g_entries and g_count. A leaf (lock order: internal.h). */
static pthread_mutex_t g_metadata_lock = PTHREAD_MUTEX_INITIALIZER;

UPTI_API upti_status_t upti_runtime_set_metadata(const char *key, const char *value)
{
    /* "RUNTIME.NAME": never one of the keys tools write themselves. */
    if (key == NULL || value == NULL || key[0] == '.' || strchr(key, '.') == NULL || strlen(key) >= KEY_MAX ||
        strlen(value) >= VALUE_MAX)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&g_metadata_lock);
    size_t i = 0;
    while (i < g_count && strcmp(g_entries[i].key, key) != 0)
        i++;
    upti_status_t st = UPTI_STATUS_SUCCESS;
    if (i == MAX_ENTRIES) {
        st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    } else {
        if (i == g_count) {
            strcpy(g_entries[i].key, key);
            g_count++;
        }
        strcpy(g_entries[i].value, value);
    }
    pthread_mutex_unlock(&g_metadata_lock);
    return st;
}

UPTI_API upti_status_t upti_query_runtime_metadata(upti_query_runtime_metadata_cb_t callback, void *data)
{
    if (callback == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    /* Copied out, so that the callback runs without the lock. */
    char keys[MAX_ENTRIES][KEY_MAX], values[MAX_ENTRIES][VALUE_MAX];
    pthread_mutex_lock(&g_metadata_lock);
    size_t n = g_count;
    for (size_t i = 0; i < n; i++) {
        memcpy(keys[i], g_entries[i].key, KEY_MAX);
        memcpy(values[i], g_entries[i].value, VALUE_MAX);
    }
    pthread_mutex_unlock(&g_metadata_lock);
    for (size_t i = 0; i < n; i++)
        callback(keys[i], values[i], data);
    return UPTI_STATUS_SUCCESS;
}
