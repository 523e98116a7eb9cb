/* SPDX-License-Identifier: MIT */
/* RUNTIME_API: the operations of runtimes that described their API at run
 * time (upti/runtime_api.h), named in the order they registered, and their
 * argument printer. Inside libupti the table fills as runtimes register; in
 * the collector and the CLI it stays empty (names reach them through the
 * records the tracing tool writes). */
#include "kind_info.h"

#include <upti/runtime_api.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Written under g_lock, each entry once, before its operation is given out (release). */
static const char *g_names[UPTI_RUNTIME_API_MAX_OPERATIONS] = {"NONE"};
static const upti_runtime_api_function_t *g_functions[UPTI_RUNTIME_API_MAX_OPERATIONS];
static uint32_t g_used = 1;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static upti_status_t runtime_api_iterate_args(const upti_callback_tracing_record_t *record,
                                              upti_callback_tracing_operation_args_cb_t callback,
                                              int32_t max_dereference_count, void *data);

/* operation_count is the capacity: a service for every operation covers those given out later. */
const upti_kind_info_t upti_runtime_api_kind_info = {
    "RUNTIME_API", UPTI_RUNTIME_API_MAX_OPERATIONS, g_names, runtime_api_iterate_args,
};

upti_status_t upti_runtime_api_operations_add(const upti_runtime_api_function_t *functions,
                                              uint32_t count, uint32_t *first)
{
    pthread_mutex_lock(&g_lock);
    upti_status_t st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    if (count <= UPTI_RUNTIME_API_MAX_OPERATIONS - g_used) {
        *first = g_used;
        for (uint32_t i = 0; i < count; i++) {
            g_functions[g_used + i] = &functions[i];
            __atomic_store_n(&g_names[g_used + i], functions[i].name, __ATOMIC_RELEASE);
        }
        g_used += count;
        st = UPTI_STATUS_SUCCESS;
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

/* The printed value of argument a at addr: "" if not printable at this depth. */
static int32_t print_arg(const upti_runtime_api_arg_t *a, const void *addr, int32_t max_deref,
                         char *buf, size_t len)
{
    union {
        int8_t i8; int16_t i16; int32_t i32; int64_t i64;
        uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
        float f; double d; const void *p; const char *s;
    } v;
    memset(&v, 0, sizeof v);
    memcpy(&v, addr, a->size < sizeof v ? a->size : sizeof v);
    switch (a->format) {
    case UPTI_RUNTIME_ARG_SIGNED: {
        int64_t x = a->size == 1 ? v.i8 : a->size == 2 ? v.i16 : a->size == 4 ? v.i32 : v.i64;
        snprintf(buf, len, "%" PRId64, x);
        return 0;
    }
    case UPTI_RUNTIME_ARG_UNSIGNED: {
        uint64_t x = a->size == 1 ? v.u8 : a->size == 2 ? v.u16 : a->size == 4 ? v.u32 : v.u64;
        snprintf(buf, len, "%" PRIu64, x);
        return 0;
    }
    case UPTI_RUNTIME_ARG_FLOAT:
        snprintf(buf, len, "%g", a->size == 4 ? (double)v.f : v.d);
        return 0;
    case UPTI_RUNTIME_ARG_STRING:
        if (v.s != NULL && max_deref >= 1) {
            snprintf(buf, len, "%s", v.s);
            return 1;
        }
        break;
    default:
        break;
    }
    if (v.p == NULL)
        snprintf(buf, len, "NULL");
    else
        snprintf(buf, len, "%p", v.p);
    return 0;
}

static upti_status_t runtime_api_iterate_args(const upti_callback_tracing_record_t *record,
                                              upti_callback_tracing_operation_args_cb_t callback,
                                              int32_t max_dereference_count, void *data)
{
    const upti_runtime_api_function_t *f =
        record->operation < UPTI_RUNTIME_API_MAX_OPERATIONS
            ? __atomic_load_n(&g_functions[record->operation], __ATOMIC_ACQUIRE)
            : NULL;
    const upti_callback_tracing_runtime_api_data_t *payload = record->payload;
    if (f == NULL || payload->size < sizeof *payload || (payload->args == NULL && f->num_args > 0))
        return UPTI_STATUS_ERROR_NOT_AVAILABLE;
    for (uint32_t i = 0; i < f->num_args; i++) {
        const upti_runtime_api_arg_t *a = &f->args[i];
        const void *addr = (const char *)payload->args + a->offset;
        char value[256];
        int32_t deref = print_arg(a, addr, max_dereference_count, value, sizeof value);
        int32_t indirection = (int32_t)(strchr(a->type, '*') != NULL);
        if (callback(record->kind, record->operation, i, addr, indirection, a->type, a->name,
                     value, deref, data) != 0)
            break;
    }
    return UPTI_STATUS_SUCCESS;
}
