/* SPDX-License-Identifier: MIT */
/* UPTI — contexts: groups of services that a tool starts and stops together. */
#ifndef UPTI_CONTEXT_H
#define UPTI_CONTEXT_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/** Maximum number of contexts in a process (the subscriber API's internal
 *  one, when it exists, included). */
#define UPTI_MAX_CONTEXTS 32

/**
 * Creates a stopped context. Only inside a tool's initialize
 * (else UPTI_STATUS_ERROR_CONFIGURATION_LOCKED).
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT if context_id is NULL,
 * UPTI_STATUS_ERROR_OUT_OF_RESOURCES past UPTI_MAX_CONTEXTS.
 */
UPTI_API upti_status_t upti_create_context(upti_context_id_t *context_id);
/** Starts delivering the context's services. Thread-safe; allowed at any time
 *  (in a tracing callback too). UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND for an
 *  unknown context, UPTI_STATUS_ERROR_FINALIZED once UPTI stopped every
 *  context at finalization. */
UPTI_API upti_status_t upti_start_context(upti_context_id_t context_id);
/**
 * Stops the context: its services produce nothing until started again, except
 * the device records (a kernel, a copy) of work enqueued while it was active,
 * which still reach its buffers when that work completes. Thread-safe;
 * allowed at any time, from a callback too (capture windows: a marker call
 * whose callback starts a context is recorded in it).
 */
UPTI_API upti_status_t upti_stop_context(upti_context_id_t context_id);
/** *status = 1 if the context is started, else 0. INVALID_ARGUMENT if status
 *  is NULL, CONTEXT_NOT_FOUND for an unknown context. */
UPTI_API upti_status_t upti_context_is_active(upti_context_id_t context_id, int *status);
/** *status = 1 if the context id names a created context, else 0.
 *  INVALID_ARGUMENT if status is NULL. */
UPTI_API upti_status_t upti_context_is_valid(upti_context_id_t context_id, int *status);

UPTI_EXTERN_C_END

#endif
