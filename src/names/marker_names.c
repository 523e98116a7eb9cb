/* SPDX-License-Identifier: MIT */
/* The marker API kind (MARKER_API): operation names and argument printer. */
#include "kind_info.h"
#include "marker_operations.h"

#include <inttypes.h>
#include <stdio.h>

/* The operation names (upti_get_tracing_operation_name): the uptx functions'. */
static const char *const g_marker_ops[UPTI_MARKER_API_LAST] = {
    [UPTI_MARKER_API_NONE] = "NONE",
#define OPERATION_NAME(name, OP, ...) [UPTI_MARKER_API_##OP] = "uptx_" #name,
    MARKER_OPERATIONS(OPERATION_NAME)
#undef OPERATION_NAME
    [UPTI_MARKER_API_PROFILER_PAUSE] = "uptx_profiler_pause",
    [UPTI_MARKER_API_PROFILER_RESUME] = "uptx_profiler_resume",
};

static upti_status_t marker_iterate_args(const upti_callback_tracing_record_t *record,
                                         upti_callback_tracing_operation_args_cb_t callback,
                                         int32_t max_dereference_count, void *data);

const upti_kind_info_t upti_marker_api_kind_info = {
    "MARKER_API", UPTI_MARKER_API_LAST, g_marker_ops, marker_iterate_args,
};

static int string_arg(upti_callback_tracing_operation_args_cb_t cb,
                      const upti_callback_tracing_record_t *r, uint32_t index,
                      const char *const *addr, const char *name, int32_t max_deref, void *data)
{
    char buf[UPTI_MARKER_TEXT_MAX + 1]; /* a marker text and its NUL */
    int32_t deref = 0;
    if (max_deref >= 1 && *addr != NULL) {
        snprintf(buf, sizeof buf, "%s", *addr);
        deref = 1;
    } else if (*addr == NULL) {
        snprintf(buf, sizeof buf, "NULL");
    } else {
        snprintf(buf, sizeof buf, "%p", (const void *)*addr);
    }
    return cb(r->kind, r->operation, index, addr, 1, "const char *", name, buf, deref, data);
}

static int u64_arg(upti_callback_tracing_operation_args_cb_t cb,
                   const upti_callback_tracing_record_t *r, uint32_t index, const void *addr,
                   uint64_t value, const char *type, const char *name, void *data)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, value);
    return cb(r->kind, r->operation, index, addr, 0, type, name, buf, 0, data);
}

static upti_status_t marker_iterate_args(const upti_callback_tracing_record_t *r,
                                         upti_callback_tracing_operation_args_cb_t cb,
                                         int32_t max_deref, void *data)
{
    const upti_callback_tracing_marker_api_data_t *p = r->payload;
    const upti_marker_api_args_t *a = &p->args;
    const char *const *text = NULL; /* an operation's one argument, a string */
    switch (r->operation) {
    case UPTI_MARKER_API_RANGE_PUSH: text = &a->range_push.message; break;
    case UPTI_MARKER_API_RANGE_START: text = &a->range_start.message; break;
    case UPTI_MARKER_API_MARK: text = &a->mark.message; break;
    case UPTI_MARKER_API_NAME_THREAD:
        string_arg(cb, r, 0, &a->name_thread.name, "name", max_deref, data);
        break;
    case UPTI_MARKER_API_RANGE_STOP:
        u64_arg(cb, r, 0, &a->range_stop.id, a->range_stop.id, "uint64_t", "id", data);
        break;
    case UPTI_MARKER_API_NAME_CATEGORY:
        if (u64_arg(cb, r, 0, &a->name_category.category, a->name_category.category, "uint32_t",
                    "category", data) == 0)
            string_arg(cb, r, 1, &a->name_category.name, "name", max_deref, data);
        break;
    default: /* range_pop has no arguments */
        break;
    }
    if (text != NULL)
        string_arg(cb, r, 0, text, "message", max_deref, data);
    return UPTI_STATUS_SUCCESS;
}
