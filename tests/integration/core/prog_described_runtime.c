/* SPDX-License-Identifier: MIT */
/* upti_register_runtime_api from inside UPTI's build: a program that is its
 * own runtime (described.api, made into wrappers by upti_wrap) and its own
 * tool (upti_force_configure). Checks every status of the registration and
 * that a description registered twice is installed once: each call is traced
 * once (ENTER and EXIT), never through UPTI's wrapper saved as its own entry. */
#include "described_table.h"
#include "described_upti.h"

#include <upti/register.h>
#include <upti/upti.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int impl_add(int a, int b)
{
    return a + b;
}

static unsigned long ticks;

static void impl_tick(void)
{
    ticks++;
}

static described_table_t g_table = {sizeof(described_table_t), impl_add, impl_tick};
static unsigned long enters[3], exits[3], results[3];
static uint32_t first_op;

static void on_call(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                    void *data)
{
    (void)user_data, (void)data;
    uint32_t i = record.operation - first_op;
    if (i >= 2)
        return;
    const upti_callback_tracing_runtime_api_data_t *p = record.payload;
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER) {
        enters[i]++;
    } else {
        exits[i]++;
        if (i == 0 && p->result == 5 && *(const int *)p->retval == 5)
            results[i]++;
        if (i == 1 && p->result == UPTI_API_RESULT_NONE && p->retval == NULL)
            results[i]++;
    }
}

static void on_table(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables,
                     void *data)
{
    (void)tables, (void)num_tables, (void)data;
    if (info->kind == UPTI_TRACING_KIND_RUNTIME_API && strcmp(info->name, "described") == 0)
        first_op = info->first_operation;
}

static int init(upti_client_finalize_t fini, void *data)
{
    (void)fini, (void)data;
    upti_context_id_t ctx;
    CHECK_STATUS(upti_at_named_intercept_table_registration("described", 3, on_table, NULL),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_context(&ctx), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_RUNTIME_API, NULL,
                                                         0, on_call, NULL),
                 UPTI_STATUS_SUCCESS);
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

static upti_tool_configure_result_t *configure(uint32_t version, const char *runtime_version,
                                               uint32_t priority, upti_client_id_t *client_id)
{
    (void)version, (void)runtime_version, (void)priority, (void)client_id;
    static upti_tool_configure_result_t r = {sizeof r, init, NULL, NULL};
    return &r;
}

/* Descriptions that do not hold together: INVALID_ARGUMENT, the table untouched. */
static void check_invalid(void)
{
    upti_register_library_id_t id;
    CHECK_STATUS(upti_register_runtime_api(NULL, &g_table, &id), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_register_runtime_api(&described_upti_api, NULL, &id),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    upti_runtime_api_t api = described_upti_api;
    api.size = sizeof(size_t);
    CHECK_STATUS(upti_register_runtime_api(&api, &g_table, &id), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    upti_runtime_api_function_t outside = described_upti_api.functions[0];
    outside.table_offset = sizeof(described_table_t); /* past the table's end */
    api = described_upti_api;
    api.functions = &outside;
    api.num_functions = 1;
    CHECK_STATUS(upti_register_runtime_api(&api, &g_table, &id), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    upti_runtime_api_function_t unnamed = described_upti_api.functions[0];
    unnamed.name = "";
    api.functions = &unnamed;
    CHECK_STATUS(upti_register_runtime_api(&api, &g_table, &id), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(g_table.descAdd == impl_add && g_table.descTick == impl_tick);
}

/* Wrappers built with another upti_runtime_call_t, and more operations than are left:
 * tools get the table, UPTI installs nothing. */
static void check_not_traced(void)
{
    described_table_t table = g_table; /* UPTI's wrappers there already: they stay as they are */
    int (*before)(int, int) = table.descAdd;
    upti_runtime_api_state_t state = {.size = sizeof state, .call_size = sizeof(upti_runtime_call_t) + 8};
    const upti_operation_plan_t *plans[UPTI_RUNTIME_API_MAX_OPERATIONS];
    described_table_t next;
    upti_runtime_api_t api = described_upti_api;
    api.state = &state;
    api.plans = plans;
    api.next = &next;
    upti_register_library_id_t id;
    CHECK_STATUS(upti_register_runtime_api(&api, &table, &id), UPTI_STATUS_ERROR_INCOMPATIBLE_ABI);
    CHECK(table.descAdd == before && state.kind == UPTI_TRACING_KIND_NONE);
    /* 1023 ids in all, 2 given to described: 1022 more do not fit. */
    static upti_runtime_api_function_t many[UPTI_RUNTIME_API_MAX_OPERATIONS - 2];
    for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
        many[i] = described_upti_api.functions[0];
    state.call_size = sizeof(upti_runtime_call_t);
    api.functions = many;
    api.num_functions = sizeof many / sizeof many[0];
    CHECK_STATUS(upti_register_runtime_api(&api, &table, &id), UPTI_STATUS_ERROR_OUT_OF_RESOURCES);
    CHECK(table.descAdd == before && state.kind == UPTI_TRACING_KIND_NONE);
}

int main(void)
{
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    check_invalid();
    upti_register_library_id_t id = {0}, again = {0};
    CHECK_STATUS(upti_register_runtime_api(&described_upti_api, &g_table, &id), UPTI_STATUS_SUCCESS);
    void *wrapper = (void *)g_table.descAdd;
    CHECK(wrapper != (void *)impl_add && described_upti_api.state->first_operation == first_op);
    CHECK_STATUS(upti_register_runtime_api(&described_upti_api, &g_table, &again), UPTI_STATUS_SUCCESS);
    CHECK(id.handle != 0 && again.handle != id.handle && (void *)g_table.descAdd == wrapper);
    check_not_traced();
    for (int i = 0; i < 3; i++)
        CHECK_EQ_U64(g_table.descAdd(2, 3), 5);
    g_table.descTick();
    g_table.descTick();
    CHECK_EQ_U64(ticks, 2);
    CHECK_EQ_U64(first_op, 1);
    CHECK_EQ_U64(enters[0], 3);
    CHECK_EQ_U64(exits[0], 3);
    CHECK_EQ_U64(results[0], 3);
    CHECK_EQ_U64(enters[1], 2);
    CHECK_EQ_U64(exits[1], 2);
    CHECK_EQ_U64(results[1], 2);
    return test_result("described_runtime");
}
