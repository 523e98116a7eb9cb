/* SPDX-License-Identifier: MIT */
/* Runtimes that describe their API (upti/runtime_api.h): their RUNTIME_API
 * operations, the plans kept in their own memory, and their wrappers installed
 * beneath the tools'. */
#include "internal.h"
#include "sdk_entry.h"

#include <upti/runtime_api.h>

#include <string.h>

/* Installs api's wrappers into table (its first `size` bytes are the table's own);
 * info gets the operations. The reason of a failure is said on stderr. */
static upti_status_t install(const upti_runtime_api_t *api, void *table,
                             upti_intercept_table_info_t *info)
{
    upti_runtime_api_state_t *state = api->state;
    if (state->size >= sizeof *state && state->kind == UPTI_TRACING_KIND_RUNTIME_API) {
        /* Registered again (a runtime that lost its first try registers on): its entries
         * are UPTI's wrappers already, which must not become their own saved entries. */
        info->kind = UPTI_TRACING_KIND_RUNTIME_API;
        info->first_operation = state->first_operation;
        info->num_operations = api->num_functions;
        return UPTI_STATUS_SUCCESS;
    }
    if (state->size < sizeof *state || state->call_size != sizeof(upti_runtime_call_t)) {
        upti_log_error("runtime '%s': its wrappers were built for another UPTI "
                       "(upti_runtime_call_t of %zu bytes, this one's %zu): not traced",
                       api->name, state->call_size, sizeof(upti_runtime_call_t));
        return UPTI_STATUS_ERROR_INCOMPATIBLE_ABI;
    }
    uint32_t first = 0;
    if (upti_runtime_api_operations_add(api->functions, api->num_functions, &first) !=
            UPTI_STATUS_SUCCESS ||
        !upti_plans_mirror(UPTI_TRACING_KIND_RUNTIME_API, first, api->num_functions, api->plans)) {
        upti_log_error("runtime '%s': no room for its %u operations (at most %u in all): not traced",
                       api->name, api->num_functions, UPTI_RUNTIME_API_MAX_OPERATIONS - 1);
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    state->kind = UPTI_TRACING_KIND_RUNTIME_API;
    state->first_operation = first;
    state->call_enter = upti_runtime_call_enter;
    state->call_exit_result = upti_runtime_call_exit_result;
    /* A table of an older build of the runtime may be shorter than the wrappers know. */
    size_t size;
    memcpy(&size, table, sizeof size);
    if (size > api->table_size)
        size = api->table_size;
    memcpy(api->next, table, size);
    for (uint32_t i = 0; i < api->num_functions; i++) {
        const upti_runtime_api_function_t *f = &api->functions[i];
        if (f->table_offset + sizeof f->wrapper <= size)
            memcpy((char *)table + f->table_offset, &f->wrapper, sizeof f->wrapper);
    }
    info->kind = UPTI_TRACING_KIND_RUNTIME_API;
    info->first_operation = first;
    info->num_operations = api->num_functions;
    upti_log_debug("runtime '%s' described %u functions: RUNTIME_API operations %u to %u",
                   api->name, api->num_functions, first, first + api->num_functions - 1);
    return UPTI_STATUS_SUCCESS;
}

/* Exported for libupti-register (sdk_entry.h, upti_register_runtime_api), which checked api. */
UPTI_API upti_status_t upti_sdk_set_runtime_api(const upti_runtime_api_t *api, uint64_t instance,
                                                void *table)
{
    if (!upti_ensure_tools())
        return UPTI_STATUS_ERROR_DEADLOCK; /* started during discovery: registers later */
    upti_intercept_table_info_t info = {sizeof info, api->name, api->version, instance,
                                        UPTI_TRACING_KIND_NONE, 0, 0, 0};
    upti_status_t st = UPTI_STATUS_SUCCESS;
    int present = 0;
    upti_runtime_tools_present(&present);
    if (present && api->num_functions > 0)
        st = install(api, table, &info);
    void *tables[] = {table};
    upti_pass_tables(&info, tables, 1);
    return st;
}
