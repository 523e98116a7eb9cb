/* SPDX-License-Identifier: MIT */
/* samples/callback_tracing — print every marker call at ENTER and EXIT with
 * its arguments, correlation id and thread.
 *
 * Callbacks run synchronously in the calling thread. The user_data slot is
 * one per call and per context: what ENTER stores, EXIT finds. Inside a
 * callback only UPTI's name helpers and
 * upti_iterate_callback_tracing_operation_args() may be called.
 */
#include <upti/upti.h>

#include <stdio.h>
#include <string.h>

typedef struct args_text_t {
    char text[256];
} args_text_t;

/* Called once per argument: appends "name=value". */
static int print_arg(upti_tracing_kind_t kind, uint32_t operation, uint32_t arg_index,
                     const void *arg_value_addr, int32_t indirection_count, const char *arg_type,
                     const char *arg_name, const char *arg_value_string,
                     int32_t dereference_count, void *data)
{
    (void)kind;
    (void)operation;
    (void)arg_value_addr;
    (void)indirection_count;
    (void)arg_type;
    (void)dereference_count;
    args_text_t *out = data;
    size_t used = strlen(out->text);
    snprintf(out->text + used, sizeof out->text - used, "%s%s=%s", arg_index == 0 ? "" : ", ",
             arg_name, arg_value_string);
    return 0; /* go on */
}

static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *callback_data)
{
    (void)callback_data;
    const char *name = "?";
    upti_get_tracing_operation_name(record.kind, record.operation, &name);
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER) {
        args_text_t args = {{0}};
        /* Depth 1: print what pointers point to (here: the message text). */
        upti_iterate_callback_tracing_operation_args(record, print_arg, 1, &args);
        upti_get_timestamp(&user_data->value);
        printf("callback_tracing: ENTER %s(%s) correlation=%llu thread=%llu\n", name, args.text,
               (unsigned long long)record.correlation_id.internal,
               (unsigned long long)record.thread_id);
    } else {
        upti_timestamp_t now;
        upti_get_timestamp(&now);
        const upti_callback_tracing_marker_api_data_t *payload = record.payload;
        long long retval = record.operation == UPTI_MARKER_API_RANGE_START
                               ? (long long)payload->retval.uint64_retval
                               : (long long)payload->retval.int_retval;
        printf("callback_tracing: EXIT  %s -> %lld correlation=%llu (%llu ns)\n", name,
               record.operation == UPTI_MARKER_API_RANGE_PUSH ||
                       record.operation == UPTI_MARKER_API_RANGE_POP ||
                       record.operation == UPTI_MARKER_API_RANGE_START
                   ? retval
                   : 0,
               (unsigned long long)record.correlation_id.internal,
               (unsigned long long)(now - user_data->value));
    }
}

static int tool_init(upti_client_finalize_t finalize, void *tool_data)
{
    (void)finalize;
    (void)tool_data;
    upti_context_id_t ctx;
    if (upti_create_context(&ctx) != UPTI_STATUS_SUCCESS)
        return 1;
    /* Only pushes, pops and marks: other marker operations are not traced. */
    static const uint32_t ops[] = {UPTI_MARKER_API_RANGE_PUSH, UPTI_MARKER_API_RANGE_POP,
                                   UPTI_MARKER_API_MARK};
    if (upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, ops, 3,
                                                on_marker, NULL) != UPTI_STATUS_SUCCESS)
        return 1;
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    (void)version;
    (void)runtime_version;
    (void)priority;
    client_id->name = "callback_tracing";
    static upti_tool_configure_result_t result = {sizeof(upti_tool_configure_result_t), tool_init,
                                                  NULL, NULL};
    return &result;
}
