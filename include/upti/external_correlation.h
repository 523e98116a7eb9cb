/* SPDX-License-Identifier: MIT */
/* UPTI — external correlation ids: a tool's own id copied into records. */
#ifndef UPTI_EXTERNAL_CORRELATION_H
#define UPTI_EXTERNAL_CORRELATION_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/**
 * Pushes external_id for the calling thread and the given context: every
 * record the thread makes for that context while it is pushed carries it
 * (device records: the value pushed when the operation was enqueued).
 * Stack depth 64 per thread and context (deeper: OUT_OF_RESOURCES).
 * CONTEXT_NOT_FOUND for an unknown context, CALLBACK_CONTEXT inside a
 * subscriber callback. Callable from a tracing callback.
 */
UPTI_API upti_status_t upti_push_external_correlation_id(upti_context_id_t context_id,
                                                         upti_user_data_t external_id);
/** Pops the top id (returned in *external_id if not NULL); NOT_AVAILABLE if
 *  empty; CONTEXT_NOT_FOUND, CALLBACK_CONTEXT as for the push. */
UPTI_API upti_status_t upti_pop_external_correlation_id(upti_context_id_t context_id,
                                                        upti_user_data_t *external_id);

UPTI_EXTERN_C_END

#endif
