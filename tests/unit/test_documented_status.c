/* SPDX-License-Identifier: MIT */
/* The status codes the public headers document for bad arguments, unknown
 * ids and calls outside a tool's initialize, as the library returns them
 * (a process with no tool: nothing here configures one). Each check names
 * the header whose comment it holds to. */
#include <upti/upti.h>
#include <upti/runtime.h>
#include <upti/runtime_callback.h>

#include <string.h>

#include "check.h"
#include "unit_tests.h"

static upti_status_t failing_agents_cb(const upti_agent_t **agents, size_t num_agents, void *data)
{
    (void)agents;
    (void)num_agents;
    (*(int *)data)++;
    return UPTI_STATUS_ERROR; /* agent.h: ignored */
}

static void on_event(upti_callback_domain_t domain, uint32_t api_group, uint32_t api_id,
                     void *backend_context, const void *cb_data, void *user_data,
                     void **instance_user_data)
{
    (void)domain, (void)api_group, (void)api_id, (void)backend_context, (void)cb_data;
    (void)user_data, (void)instance_user_data;
}

static void on_tables(upti_intercept_table_t type, uint64_t lib_version, uint64_t lib_instance,
                      void **tables, uint64_t num_tables, void *data)
{
    (void)type, (void)lib_version, (void)lib_instance, (void)tables, (void)num_tables, (void)data;
}

static int on_arg(upti_tracing_kind_t kind, uint32_t operation, uint32_t arg_index,
                  const void *arg_value_addr, int32_t indirection_count, const char *arg_type,
                  const char *arg_name, const char *arg_value_string, int32_t dereference_count,
                  void *data)
{
    (void)kind, (void)operation, (void)arg_index, (void)arg_value_addr, (void)indirection_count;
    (void)arg_type, (void)arg_name, (void)arg_value_string, (void)dereference_count, (void)data;
    return 0;
}

static void on_callback(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                        void *callback_data)
{
    (void)record, (void)user_data, (void)callback_data;
}

/* registration.h */
static void test_registration(void)
{
    CHECK_STATUS(upti_is_initialized(NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_is_finalized(NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_get_version(NULL, NULL, NULL), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_force_configure(NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
}

/* context.h, external_correlation.h */
static void test_contexts(void)
{
    upti_context_id_t ctx;
    CHECK_STATUS(upti_create_context(NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_create_context(&ctx), UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);
    upti_context_id_t unknown = {77};
    CHECK_STATUS(upti_start_context(unknown), UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND);
    CHECK_STATUS(upti_stop_context(unknown), UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND);
    int status = -1;
    CHECK_STATUS(upti_context_is_active(unknown, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_context_is_active(unknown, &status), UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND);
    CHECK_STATUS(upti_context_is_valid(unknown, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_context_is_valid(unknown, &status), UPTI_STATUS_SUCCESS);
    CHECK(status == 0);
    upti_user_data_t id = {.value = 1};
    CHECK_STATUS(upti_push_external_correlation_id(unknown, id), UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND);
    CHECK_STATUS(upti_pop_external_correlation_id(unknown, NULL), UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND);
}

/* buffer.h, buffer_tracing.h, callback_tracing.h */
static void test_buffers_and_services(void)
{
    upti_buffer_id_t unknown = {99};
    upti_context_id_t no_ctx = {77};
    CHECK_STATUS(upti_flush_buffer(unknown), UPTI_STATUS_ERROR_BUFFER_NOT_FOUND);
    CHECK_STATUS(upti_destroy_buffer(unknown), UPTI_STATUS_ERROR_BUFFER_NOT_FOUND);
    CHECK_STATUS(upti_set_buffer_flush_interval(unknown, 0), UPTI_STATUS_ERROR_BUFFER_NOT_FOUND);
    CHECK_STATUS(upti_create_callback_thread(NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    upti_callback_thread_t thread = {1};
    CHECK_STATUS(upti_assign_callback_thread(unknown, thread), UPTI_STATUS_ERROR_BUFFER_NOT_FOUND);
    char path[64];
    CHECK_STATUS(upti_get_shared_buffer_path(unknown, path, sizeof path), UPTI_STATUS_ERROR_BUFFER_NOT_FOUND);
    upti_buffer_id_t b;
    CHECK_STATUS(upti_create_shared_buffer(no_ctx, 4096, UPTI_BUFFER_POLICY_DISCARD, NULL, 1, &b),
                 UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);
    CHECK_STATUS(upti_configure_buffer_tracing_service(no_ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, unknown),
                 UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);
    CHECK_STATUS(upti_configure_callback_tracing_service(no_ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                                         on_callback, NULL),
                 UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);
}

/* callback.h, callback_tracing.h, intercept_table.h */
static void test_subscribers_and_lookups(void)
{
    upti_callback_subscriber_t sub;
    CHECK_STATUS(upti_callback_subscribe(NULL, on_event, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_callback_subscribe(&sub, NULL, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    upti_callback_subscriber_t unknown = {12345};
    CHECK_STATUS(upti_callback_enable_domain(unknown, UPTI_CB_DOMAIN_DRIVER_API, 1, 1),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_callback_disable_domain(unknown, UPTI_CB_DOMAIN_DRIVER_API),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_callback_disable_all_domains(unknown), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_callback_unsubscribe(unknown), UPTI_STATUS_ERROR_INVALID_ARGUMENT);

    upti_marker_api_args_t args;
    memset(&args, 0, sizeof args);
    upti_callback_tracing_record_t record = {.size = sizeof record,
                                             .kind = UPTI_TRACING_KIND_KERNEL_DISPATCH,
                                             .operation = UPTI_KERNEL_DISPATCH_NDRANGE,
                                             .payload = &args};
    CHECK_STATUS(upti_iterate_callback_tracing_operation_args(record, on_arg, 0, NULL),
                 UPTI_STATUS_ERROR_NOT_AVAILABLE);
    record.payload = NULL;
    CHECK_STATUS(upti_iterate_callback_tracing_operation_args(record, on_arg, 0, NULL),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);

    CHECK_STATUS(upti_at_intercept_table_registration(NULL, UPTI_INTERCEPT_TABLE_MARKER, NULL),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_at_intercept_table_registration(on_tables, 0, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_at_intercept_table_registration(on_tables, 1 << 5, NULL),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_at_intercept_table_registration(on_tables, UPTI_INTERCEPT_TABLE_MARKER, NULL),
                 UPTI_STATUS_ERROR_CONFIGURATION_LOCKED);
}

/* agent.h, runtime.h, runtime_callback.h */
static void test_agents_and_runtime(void)
{
    int calls = 0;
    CHECK_STATUS(upti_query_available_agents(NULL, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_query_available_agents(failing_agents_cb, &calls), UPTI_STATUS_SUCCESS);
    CHECK(calls == 1);
    CHECK_STATUS(upti_query_runtime_metadata(NULL, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);

    const upti_operation_plan_t *const *plans = NULL;
    CHECK_STATUS(upti_runtime_get_operation_plans(UPTI_TRACING_KIND_LAST, &plans, NULL),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_runtime_get_operation_plans(UPTI_TRACING_KIND_MARKER_API, NULL, NULL),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_runtime_get_operation_plans(UPTI_TRACING_KIND_MARKER_API, &plans, NULL),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_runtime_tools_present(NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_runtime_add_agent(NULL, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_runtime_register_subscriber_provider(NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    upti_runtime_subscriber_provider_t provider = {.size = sizeof provider, .name = "test"};
    CHECK_STATUS(upti_runtime_register_subscriber_provider(&provider), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_runtime_set_metadata(".a", "v"), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    upti_runtime_warn(NULL); /* runtime.h: ignored */
}

UNIT_TEST(documented_status)
{
    test_registration();
    test_contexts();
    test_buffers_and_services();
    test_subscribers_and_lookups();
    test_agents_and_runtime();
    return test_result("documented_status");
}
