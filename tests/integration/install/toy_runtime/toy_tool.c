/* SPDX-License-Identifier: MIT */
/* A tool that knows toyrt only by its name: it asks for its table with
 * upti_at_named_intercept_table_registration and wraps toyLaunch itself
 * (the seeds' intercept-table pattern), traces its calls with a callback
 * service on RUNTIME_API, and checks every status the request returns. */
#include "toyrt_table.h"

#include <upti/upti.h>

#include <stdio.h>
#include <string.h>

static int (*next_launch)(const char *kernel, unsigned int count);
static unsigned long wrapped_launches, uptx_tables, v2_tables, toy_tables, statuses_ok;
static unsigned long enters, exits, failed_exits, args_seen;
static upti_intercept_table_info_t toy_info;
static char names[256];

static int counted_launch(const char *kernel, unsigned int count)
{
    wrapped_launches++;
    return next_launch(kernel, count);
}

static void on_toy(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables,
                   void *data)
{
    (void)data;
    toy_tables++;
    toy_info = *info;
    toy_info.name = NULL;
    toyrt_table_t *t = tables[0];
    if (num_tables == 1 && strcmp(info->name, "toyrt") == 0 &&
        t->size >= offsetof(toyrt_table_t, toyLaunch) + sizeof t->toyLaunch) {
        next_launch = t->toyLaunch;
        t->toyLaunch = counted_launch;
    }
    /* Past initialize: requests are locked. */
    statuses_ok += upti_at_named_intercept_table_registration("toyrt", 0, on_toy, NULL) ==
                   UPTI_STATUS_ERROR_CONFIGURATION_LOCKED;
    for (uint32_t i = 0; i < info->num_operations; i++) {
        const char *name = "?";
        upti_get_tracing_operation_name(info->kind, info->first_operation + i, &name);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "," : "", name);
    }
}

static void on_uptx(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables,
                    void *data)
{
    (void)tables;
    (void)data;
    uptx_tables += num_tables == 1 && info->kind == UPTI_TRACING_KIND_NONE;
}

static void on_v2(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables,
                  void *data)
{
    (void)info, (void)tables, (void)num_tables, (void)data;
    v2_tables++;
}

static void on_never(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables,
                     void *data)
{
    (void)info, (void)tables, (void)num_tables, (void)data;
}

static int on_arg(upti_tracing_kind_t kind, uint32_t operation, uint32_t index, const void *addr,
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

static void on_call(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                    void *data)
{
    (void)user_data;
    (void)data;
    const upti_callback_tracing_runtime_api_data_t *p = record.payload;
    const char *name = "";
    upti_get_tracing_operation_name(record.kind, record.operation, &name);
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER) {
        enters++;
        if (strcmp(name, "toyLaunch") == 0)
            upti_iterate_callback_tracing_operation_args(record, on_arg, 1, NULL);
    } else {
        exits++;
        failed_exits += p->result != UPTI_API_RESULT_NONE && p->result != 0;
    }
}

static int init(upti_client_finalize_t fini, void *data)
{
    (void)fini;
    (void)data;
    char long_name[80];
    memset(long_name, 'x', 64);
    long_name[64] = '\0';
    int ok = upti_at_named_intercept_table_registration("toyrt", 1, NULL, NULL) ==
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT &&
             upti_at_named_intercept_table_registration("", 0, on_toy, NULL) ==
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT &&
             upti_at_named_intercept_table_registration(long_name, 0, on_toy, NULL) ==
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT &&
             upti_at_named_intercept_table_registration("toyrt", 1, on_toy, NULL) ==
                 UPTI_STATUS_SUCCESS &&
             upti_at_named_intercept_table_registration("toyrt", 2, on_v2, NULL) ==
                 UPTI_STATUS_SUCCESS &&
             upti_at_named_intercept_table_registration("uptx", 0, on_uptx, NULL) ==
                 UPTI_STATUS_SUCCESS;
    /* 128 requests in all: 3 above, 125 more, then none. */
    for (int i = 0; i < 125; i++)
        ok &= upti_at_named_intercept_table_registration("never", 0, on_never, NULL) ==
              UPTI_STATUS_SUCCESS;
    ok &= upti_at_named_intercept_table_registration(NULL, 0, on_never, NULL) ==
          UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    upti_context_id_t ctx;
    upti_create_context(&ctx);
    /* No runtime has described its API yet: operation 1 is not given out. */
    const uint32_t first = 1;
    ok &= upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_RUNTIME_API, &first, 1,
                                                  on_call, NULL) ==
          UPTI_STATUS_ERROR_OPERATION_NOT_FOUND;
    statuses_ok += ok;
    if (upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_RUNTIME_API, NULL, 0,
                                                on_call, NULL) != UPTI_STATUS_SUCCESS)
        return 1;
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

static void fini(void *data)
{
    (void)data;
    printf("toy_tool: statuses %lu of 2\n", statuses_ok);
    printf("toy_tool: toyrt tables %lu, kind %d, operations %u..%u: %s\n", toy_tables,
           (int)toy_info.kind, toy_info.first_operation,
           toy_info.first_operation + toy_info.num_operations - 1, names);
    printf("toy_tool: uptx tables %lu, toyrt>=2 tables %lu\n", uptx_tables, v2_tables);
    printf("toy_tool: wrapped toyLaunch %lu\n", wrapped_launches);
    printf("toy_tool: enter %lu exit %lu failed %lu args %lu\n", enters, exits, failed_exits,
           args_seen);
    fflush(stdout);
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    (void)version;
    (void)runtime_version;
    (void)priority;
    (void)client_id;
    static upti_tool_configure_result_t r = {sizeof r, init, fini, NULL};
    return &r;
}
