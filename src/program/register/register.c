/* SPDX-License-Identifier: MIT */
/* libupti-register: what a runtime links to hand UPTI its dispatch tables.
 *
 * With no tool present this costs one getenv() and one dlsym() on the first
 * registration and a load of a cached answer afterwards; libupti.so is never
 * loaded and no thread is started.
 */
#include <upti/register.h>
#include <upti/runtime_api.h>

#include "compiler.h"
#include "log.h"
#include "sdk_entry.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tool_presence { PRESENCE_UNKNOWN = 0, PRESENCE_NONE, PRESENCE_SOME };

static _Atomic int g_presence = PRESENCE_UNKNOWN;
static _Atomic uint64_t g_next_instance = 1;
static pthread_mutex_t g_load_lock = PTHREAD_MUTEX_INITIALIZER;
static upti_sdk_set_api_table_t g_sdk_entry;
static upti_sdk_thread_must_not_wait_t g_sdk_must_not_wait; /* under g_load_lock */
static upti_sdk_set_runtime_api_t g_sdk_runtime_api;         /* under g_load_lock */
/* Set while this thread is inside a registration: a nested one would deadlock. */
static UPTI_TLS int t_registering;

static int tools_present(void)
{
    int presence = atomic_load_explicit(&g_presence, memory_order_acquire);
    if (upti_likely(presence != PRESENCE_UNKNOWN))
        return presence == PRESENCE_SOME;
    const char *libs = getenv("UPTI_TOOL_LIBRARIES");
    int some = (libs != NULL && libs[0] != '\0') || dlsym(RTLD_DEFAULT, "upti_configure") != NULL;
    /* A tool that called upti_force_configure() has loaded libupti already. */
    if (!some) {
        void *sdk = dlopen(UPTI_SDK_SONAME, RTLD_LAZY | RTLD_NOLOAD);
        if (sdk != NULL) {
            some = 1;
            dlclose(sdk);
        }
    }
    atomic_store_explicit(&g_presence, some ? PRESENCE_SOME : PRESENCE_NONE, memory_order_release);
    return some;
}

/* Loads libupti.so from the directory this library lives in, else by soname. */
static upti_sdk_set_api_table_t load_sdk(void)
{
    pthread_mutex_lock(&g_load_lock);
    if (g_sdk_entry == NULL) {
        void *handle = NULL;
        Dl_info info;
        if (dladdr((void *)&load_sdk, &info) != 0 && info.dli_fname != NULL) {
            char path[PATH_MAX];
            const char *slash = strrchr(info.dli_fname, '/');
            if (slash != NULL) {
                int n = snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname),
                                 info.dli_fname, UPTI_SDK_SONAME);
                if (n > 0 && (size_t)n < sizeof path)
                    handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
            }
        }
        if (handle == NULL)
            handle = dlopen(UPTI_SDK_SONAME, RTLD_NOW | RTLD_GLOBAL);
        if (handle == NULL) {
            upti_log_error("tools are present but %s cannot be loaded: %s", UPTI_SDK_SONAME,
                           dlerror());
        } else {
            g_sdk_entry = (upti_sdk_set_api_table_t)dlsym(handle, UPTI_SDK_ENTRY_SYMBOL);
            g_sdk_must_not_wait =
                (upti_sdk_thread_must_not_wait_t)dlsym(handle, UPTI_SDK_MUST_NOT_WAIT_SYMBOL);
            g_sdk_runtime_api =
                (upti_sdk_set_runtime_api_t)dlsym(handle, UPTI_SDK_RUNTIME_API_SYMBOL);
            if (g_sdk_entry == NULL)
                upti_log_error("%s has no %s", UPTI_SDK_SONAME, UPTI_SDK_ENTRY_SYMBOL);
        }
    }
    upti_sdk_set_api_table_t entry = g_sdk_entry;
    pthread_mutex_unlock(&g_load_lock);
    return entry;
}

/* Both registrations: api NULL, the tables only; else the described API's table,
 * tables[0]. */
static upti_status_t register_tables(const char *name, uint64_t version, void **tables,
                                     uint64_t num_tables, const upti_runtime_api_t *api,
                                     upti_register_library_id_t *id)
{
    if (t_registering)
        return UPTI_STATUS_ERROR_DEADLOCK;
    uint64_t instance = atomic_fetch_add(&g_next_instance, 1);
    if (id != NULL)
        id->handle = instance;
    if (!tools_present())
        return UPTI_STATUS_SUCCESS;

    t_registering = 1;
    upti_status_t status = UPTI_STATUS_ERROR;
    upti_sdk_set_api_table_t entry = load_sdk();
    pthread_mutex_lock(&g_load_lock);
    upti_sdk_set_runtime_api_t described = g_sdk_runtime_api;
    pthread_mutex_unlock(&g_load_lock);
    if (api != NULL && described != NULL)
        status = described(api, instance, tables[0]);
    else if (entry != NULL)
        status = entry(name, version, instance, tables, num_tables);
    t_registering = 0;
    return status;
}

UPTI_API upti_status_t upti_register_library_api_table(const char *name, uint64_t version,
                                                       void **tables, uint64_t num_tables,
                                                       upti_register_library_id_t *id)
{
    if (name == NULL || (num_tables > 0 && tables == NULL))
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    return register_tables(name, version, tables, num_tables, NULL, id);
}

/* Whether api describes functions of a table of its table_size, with its state,
 * plans and saved entries. */
static int valid_api(const upti_runtime_api_t *api)
{
    if (api->size < sizeof *api || api->name == NULL || api->state == NULL ||
        api->plans == NULL || api->next == NULL || api->table_size < sizeof(size_t) ||
        (api->num_functions > 0 && api->functions == NULL))
        return 0;
    for (uint32_t i = 0; i < api->num_functions; i++) {
        const upti_runtime_api_function_t *f = &api->functions[i];
        if (f->name == NULL || f->name[0] == '\0' || f->wrapper == NULL ||
            f->table_offset < sizeof(size_t) || f->table_offset > api->table_size - sizeof(void *) ||
            (f->num_args > 0 && f->args == NULL))
            return 0;
    }
    return 1;
}

UPTI_API upti_status_t upti_register_runtime_api(const upti_runtime_api_t *api, void *table,
                                                 upti_register_library_id_t *id)
{
    if (api == NULL || table == NULL || !valid_api(api))
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    void *tables[] = {table};
    return register_tables(api->name, api->version, tables, 1, api, id);
}

UPTI_API upti_status_t upti_register_wait_allowed(int *allowed)
{
    if (allowed == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    *allowed = 1;
    if (atomic_load_explicit(&g_presence, memory_order_acquire) != PRESENCE_SOME)
        return UPTI_STATUS_SUCCESS;
    pthread_mutex_lock(&g_load_lock);
    upti_sdk_thread_must_not_wait_t must_not_wait = g_sdk_must_not_wait;
    pthread_mutex_unlock(&g_load_lock);
    if (must_not_wait != NULL && must_not_wait())
        *allowed = 0;
    return UPTI_STATUS_SUCCESS;
}
