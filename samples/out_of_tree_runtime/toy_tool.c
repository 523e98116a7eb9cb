/* SPDX-License-Identifier: MIT */
/* toy_tool: a tool that knows toyrt only by its name. It asks for toyrt's
 * table (upti_at_named_intercept_table_registration) and chains its own
 * function into it, and traces every toyrt call with a callback service on
 * RUNTIME_API, printing the arguments of toyLaunch. */
#include "toyrt_table.h"

#include <upti/upti.h>

#include <stdio.h>
#include <string.h>

static int (*next_launch)(const char *kernel, unsigned int count);
static unsigned long wrapped_launches, enters, exits, failed_exits, args_seen;
static upti_intercept_table_info_t toy_info;
static char names[256];

static int counted_launch(const char *kernel, unsigned int count)
{
    wrapped_launches++;
    return next_launch(kernel, count);
}

/* toyrt registered: chain counted_launch in, and read its operations' names. */
static void on_toyrt(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables,
                     void *data)
{
    (void)data;
    toyrt_table_t *t = tables[0];
    if (num_tables == 1 && t->size >= offsetof(toyrt_table_t, toyLaunch) + sizeof t->toyLaunch) {
        next_launch = t->toyLaunch;
        t->toyLaunch = counted_launch;
    }
    toy_info = *info;
    for (uint32_t i = 0; i < info->num_operations; i++) {
        const char *name = "?";
        upti_get_tracing_operation_name(info->kind, info->first_operation + i, &name);
        size_t n = strlen(names);
        snprintf(names + n, sizeof names - n, "%s%s", i ? "," : "", name);
    }
}

static int count_arg(upti_tracing_kind_t kind, uint32_t operation, uint32_t index, const void *addr,
                     int32_t indirection, const char *type, const char *name, const char *value,
                     int32_t deref, void *data)
{
    (void)kind, (void)operation, (void)addr, (void)indirection, (void)deref, (void)data;
    if ((index == 0 && strcmp(type, "const char *") == 0 && strcmp(name, "kernel") == 0 &&
         strcmp(value, "vadd") == 0) ||
        (index == 1 && strcmp(type, "unsigned int") == 0 && strcmp(name, "count") == 0))
        args_seen++;
    return 0;
}

/* Every toyrt call, at ENTER and EXIT. */
static void on_call(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                    void *data)
{
    (void)user_data;
    (void)data;
    const upti_callback_tracing_runtime_api_data_t *call = record.payload;
    const char *name = "";
    upti_get_tracing_operation_name(record.kind, record.operation, &name);
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER) {
        enters++;
        if (strcmp(name, "toyLaunch") == 0)
            upti_iterate_callback_tracing_operation_args(record, count_arg, 1, NULL);
    } else {
        exits++;
        failed_exits += call->result != UPTI_API_RESULT_NONE && call->result != 0;
    }
}

static int init(upti_client_finalize_t fini, void *data)
{
    (void)fini;
    (void)data;
    upti_context_id_t ctx;
    if (upti_at_named_intercept_table_registration("toyrt", 1, on_toyrt, NULL) != UPTI_STATUS_SUCCESS ||
        upti_create_context(&ctx) != UPTI_STATUS_SUCCESS ||
        upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_RUNTIME_API, NULL, 0,
                                                on_call, NULL) != UPTI_STATUS_SUCCESS)
        return 1;
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

static void fini(void *data)
{
    (void)data;
    printf("toy_tool: toyrt operations %u..%u: %s\n", toy_info.first_operation,
           toy_info.first_operation + toy_info.num_operations - 1, names);
    printf("toy_tool: wrapped toyLaunch %lu\n", wrapped_launches);
    printf("toy_tool: enter %lu exit %lu failed %lu args %lu\n", enters, exits, failed_exits,
           args_seen);
    fflush(stdout);
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    (void)version, (void)runtime_version, (void)priority;
    if (client_id != NULL)
        client_id->name = "toy_tool";
    static upti_tool_configure_result_t result = {sizeof result, init, fini, NULL};
    return &result;
}
