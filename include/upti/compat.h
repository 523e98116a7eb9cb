/* SPDX-License-Identifier: MIT */
/* UPTI — the names of UPTI 0.1 that 1.0 replaced, for sources written
 * against 0.1 or 0.2.
 *
 * <upti/upti.h> does not include this header: it declares one name for each
 * thing. A source that still uses an old name includes <upti/compat.h>
 * (after or instead of <upti/upti.h>) and builds unchanged. Binaries built
 * against 0.1 or 0.2 need nothing: every function below is still exported
 * by libupti.so under the version node it had (UPTI_0.1), and the enumerator
 * macros have the values the enumerators had.
 *
 * Nothing is added here after 1.0: a name that a later release replaces
 * stays where it is and is documented as replaced.
 */
#ifndef UPTI_COMPAT_H
#define UPTI_COMPAT_H

#include <upti/buffer.h>
#include <upti/callback.h>
#include <upti/status.h>

UPTI_EXTERN_C_BEGIN

/*
 * The _MAX sentinels of UPTI 0.1: every UPTI enum now ends with _LAST, one
 * past its last value (the same value; the enumerators were aliases of
 * _LAST in 0.1 and 0.2).
 */
/** UPTI_CB_DOMAIN_LAST (11 in 1.0). */
#define UPTI_CB_DOMAIN_MAX UPTI_CB_DOMAIN_LAST
/** UPTI_CB_PHASE_LAST (6 in 1.0). */
#define UPTI_CB_PHASE_MAX UPTI_CB_PHASE_LAST
/** UPTI_INTERNAL_EVENT_TYPE_LAST (3 in 1.0). */
#define UPTI_INTERNAL_EVENT_TYPE_MAX UPTI_INTERNAL_EVENT_TYPE_LAST
/** UPTI_GPU_OPERATION_KIND_LAST (11 in 1.0). */
#define UPTI_GPU_OPERATION_KIND_MAX UPTI_GPU_OPERATION_KIND_LAST

/**
 * upti_get_status_name() under its UPTI 0.1 name: the same result for every
 * value ("UPTI_STATUS_ERROR_DEADLOCK"…, NULL out of range). Thread-safe;
 * allowed anywhere.
 */
UPTI_API const char *upti_get_status_string(upti_status_t status);

/**
 * upti_get_callback_domain_name() under its UPTI 0.1 name: the same result
 * for every value. Allowed anywhere, inside callbacks too.
 */
UPTI_API const char *upti_callback_domain_name(upti_callback_domain_t domain);

/**
 * upti_get_callback_phase_kind_name() under its UPTI 0.1 name: takes the
 * subscriber API's upti_callback_phase_kind_t, not the tracing callbacks'
 * upti_callback_phase_t (whose name upti_get_callback_phase_name() gives).
 * Allowed anywhere, inside callbacks too.
 */
UPTI_API const char *upti_callback_phase_name(upti_callback_phase_kind_t phase);

/**
 * upti_get_gpu_operation_kind_name() under its UPTI 0.1 name: the same
 * result for every value. Allowed anywhere, inside callbacks too.
 */
UPTI_API const char *upti_gpu_operation_kind_name(upti_gpu_operation_kind_t kind);

/**
 * The positional form of upti_create_buffer_with_options() that UPTI 0.1
 * had: size is the region size (rounded up to a power of two, at least
 * 4096; 0 gives 4096, not UPTI_BUFFER_DEFAULT_REGION_SIZE), watermark as
 * the options' watermark, and policy must be UPTI_BUFFER_POLICY_DISCARD or
 * UPTI_BUFFER_POLICY_LOSSLESS (there is no default). Only inside a tool's
 * initialize; the status codes of upti_create_buffer_with_options().
 */
UPTI_API upti_status_t upti_create_buffer(upti_context_id_t context_id, size_t size,
                                          size_t watermark, upti_buffer_policy_t policy,
                                          upti_buffer_tracing_cb_t callback, void *callback_data,
                                          upti_buffer_id_t *buffer_id);

UPTI_EXTERN_C_END

#endif
