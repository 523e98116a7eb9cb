/* SPDX-License-Identifier: MIT */
/* Every status of upti_at_named_intercept_table_registration, and which
 * registrations its requests get: toyrt (version 1) for a request of version
 * >= 1, never for >= 2; uptx, a built-in runtime, by its name; and
 * OPERATION_NOT_FOUND for a RUNTIME_API operation not given out yet. Built
 * by oot_runtime_test.sh against the installed SDK; run on toy_app. */
#include <upti/upti.h>

#include <stdio.h>
#include <string.h>

static unsigned long statuses_ok, toy_tables, uptx_tables, v2_tables;
static upti_intercept_table_info_t toy_info;

static void on_toy(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables,
                   void *data)
{
    (void)tables, (void)data;
    toy_tables += num_tables == 1;
    toy_info = *info;
    /* Past initialize: requests are locked. */
    statuses_ok += upti_at_named_intercept_table_registration("toyrt", 0, on_toy, NULL) ==
                   UPTI_STATUS_ERROR_CONFIGURATION_LOCKED;
}

static void on_uptx(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables,
                    void *data)
{
    (void)tables, (void)data;
    uptx_tables += num_tables == 1 && info->kind == UPTI_TRACING_KIND_NONE &&
                   strcmp(info->name, "uptx") == 0;
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

static void on_call(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                    void *data)
{
    (void)record, (void)user_data, (void)data;
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
    /* 128 requests in all (this tool is the only one): 3 above, 125 more, then none. */
    for (int i = 0; i < 125; i++)
        ok &= upti_at_named_intercept_table_registration("never", 0, on_never, NULL) ==
              UPTI_STATUS_SUCCESS;
    ok &= upti_at_named_intercept_table_registration(NULL, 0, on_never, NULL) ==
          UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    /* toy_app's first call is uptx's: no runtime has described its API yet. */
    upti_context_id_t ctx;
    const uint32_t first = 1;
    ok &= upti_create_context(&ctx) == UPTI_STATUS_SUCCESS &&
          upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_RUNTIME_API, &first, 1,
                                                  on_call, NULL) ==
              UPTI_STATUS_ERROR_OPERATION_NOT_FOUND;
    statuses_ok += ok;
    return 0;
}

static void fini(void *data)
{
    (void)data;
    printf("named_request_tool: statuses %lu of 2\n", statuses_ok);
    printf("named_request_tool: toyrt tables %lu (kind %d, operations %u+%u), uptx tables %lu, "
           "toyrt>=2 tables %lu\n", toy_tables, (int)toy_info.kind, toy_info.first_operation,
           toy_info.num_operations, uptx_tables, v2_tables);
    fflush(stdout);
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    (void)version, (void)runtime_version, (void)priority, (void)client_id;
    static upti_tool_configure_result_t r = {sizeof r, init, fini, NULL};
    return &r;
}
