/* SPDX-License-Identifier: MIT */
/* UPTI — contexts: groups of services that a tool starts and stops together. */
#ifndef UPTI_CONTEXT_H
#define UPTI_CONTEXT_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/** Maximum number of contexts in a process. */
#define UPTI_MAX_CONTEXTS 32

/**
 * Creates a stopped context. Only inside a tool's initialize
 * (else UPTI_STATUS_ERROR_CONFIGURATION_LOCKED).
 */
UPTI_API upti_status_t upti_create_context(upti_context_id_t *context_id);
/** Starts delivering the context's services. Thread-safe; allowed at any time. */
UPTI_API upti_status_t upti_start_context(upti_context_id_t context_id);
/** Stops the context: its services produce nothing until started again. Thread-safe. */
UPTI_API upti_status_t upti_stop_context(upti_context_id_t context_id);
/** *status = 1 if the context is started, else 0. */
UPTI_API upti_status_t upti_context_is_active(upti_context_id_t context_id, int *status);
/** *status = 1 if the context id names a created context, else 0. */
UPTI_API upti_status_t upti_context_is_valid(upti_context_id_t context_id, int *status);

UPTI_EXTERN_C_END

#endif
