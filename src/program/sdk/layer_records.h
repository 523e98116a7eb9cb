/* SPDX-License-Identifier: MIT */
/* What the runtime layers (src/program/opencl, src/program/vulkan) hand to
 * libupti alike through <upti/runtime.h> and <upti/runtime_callback.h>: the
 * envelope of a record, the fields that device-operation records share, and
 * the callback data of a GPU operation with its delivery to subscribers.
 * Inline functions and macros: the layers' per-call paths pay no call for them. */
#ifndef UPTI_SDK_LAYER_RECORDS_H
#define UPTI_SDK_LAYER_RECORDS_H

#include <upti/runtime.h>
#include <upti/runtime_callback.h>

#include <stdint.h>
#include <string.h>

/* Delivers record, a buffer_tracing.h record of (kind, op) made by a layer. corr
 * NULL: the current call's; string_offset: a const char * member copied with it,
 * or 0; started_plan: the plan when its work started (upti_runtime_record_t). */
static inline void upti_layer_emit(upti_tracing_kind_t kind, uint32_t op, upti_callback_phase_t phase,
                                   const upti_runtime_correlation_t *corr, void *record, size_t string_offset,
                                   const upti_operation_plan_t *started_plan)
{
    upti_runtime_record_t rec = {.size = sizeof rec, .kind = kind, .operation = op, .phase = phase,
                                 .correlation = corr, .record = record,
                                 .string_offset = string_offset, .started_plan = started_plan};
    upti_runtime_emit(&rec);
}

/* Zeroes r, a KERNEL_DISPATCH or MEMORY_COPY record, and sets its size and
 * where the operation ran: agent, the runtime's queue and context handles. */
#define UPTI_LAYER_DEVICE_OP(r, agent, queue, context)                                         \
    do {                                                                                       \
        memset(&(r), 0, sizeof(r));                                                            \
        (r).size = sizeof(r);                                                                  \
        (r).agent_id = (agent);                                                                \
        (r).queue_id = (uint64_t)(uintptr_t)(queue);                                           \
        (r).runtime_context = (uint64_t)(uintptr_t)(context);                                  \
    } while (0)

/* Sets the four timestamps of r, a KERNEL_DISPATCH or MEMORY_COPY record. */
#define UPTI_LAYER_DEVICE_OP_TIMES(r, queued, submit, start, end)                              \
    do {                                                                                       \
        (r).queued_timestamp = (queued);                                                       \
        (r).submit_timestamp = (submit);                                                       \
        (r).start_timestamp = (start);                                                         \
        (r).end_timestamp = (end);                                                             \
    } while (0)

/* The callback data of a call (api_group, api_id) or of a GPU operation it
 * made, correlated to corr; the handles and details are the caller's to set. */
static inline upti_callback_gpu_op_data_t upti_layer_gpu_op_data(upti_tracing_kind_t api_group,
                                                                 upti_callback_domain_t domain,
                                                                 upti_callback_phase_kind_t phase, uint64_t corr,
                                                                 uint32_t api_id)
{
    return (upti_callback_gpu_op_data_t){.size = sizeof(upti_callback_gpu_op_data_t), .domain = domain,
                                         .phase = phase, .correlation_id = corr, .api_group = api_group,
                                         .api_id = api_id};
}

/* Hands d to the subscribers of its domain; instance: the call's slots kept
 * from ENTER to EXIT (UPTI_MAX_SUBSCRIBERS of them), or NULL. */
static inline void upti_layer_notify(const upti_callback_gpu_op_data_t *d, void **instance)
{
    upti_runtime_notification_t n = {
        .domain = d->domain,
        .phase = d->phase,
        .api_group = d->api_group,
        .api_id = d->api_id,
        .backend_context = (void *)(uintptr_t)d->context_handle,
        .cb_data = d,
        .instance = instance,
    };
    upti_runtime_subscriber_notify(&n);
}

/* Registers the layer (name) as a provider of subscriber callbacks, with its
 * domains_changed; warns with failed where libupti refuses it. */
static inline void upti_layer_serve_subscribers(const char *name, void (*domains_changed)(uint32_t, void *),
                                                const char *failed)
{
    upti_runtime_subscriber_provider_t p = {
        .size = sizeof p,
        .name = name,
        .domains_changed = domains_changed,
        .data = NULL,
    };
    if (upti_runtime_register_subscriber_provider(&p) != UPTI_STATUS_SUCCESS)
        upti_runtime_warn(failed);
}

#endif
