/* SPDX-License-Identifier: MIT */
/* UPTI — names of kinds and operations, clocks and thread ids. */
#ifndef UPTI_NAMES_H
#define UPTI_NAMES_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/** *name = e.g. "MARKER_API". Allowed inside callbacks. */
UPTI_API upti_status_t upti_get_tracing_kind_name(upti_tracing_kind_t kind, const char **name);
/** *name = e.g. "uptxRangePushA" or "clEnqueueNDRangeKernel". Allowed inside callbacks. */
UPTI_API upti_status_t upti_get_tracing_operation_name(upti_tracing_kind_t kind, uint32_t operation,
                                                       const char **name);

/** Called once per kind; return 0 to go on. */
typedef int (*upti_tracing_kind_cb_t)(upti_tracing_kind_t kind, void *data);
/** Called once per operation of a kind; return 0 to go on. */
typedef int (*upti_tracing_operation_cb_t)(upti_tracing_kind_t kind, uint32_t operation,
                                           void *data);

/** Iterates every kind, NONE and LAST excluded. */
UPTI_API upti_status_t upti_iterate_tracing_kinds(upti_tracing_kind_cb_t callback, void *data);
/** Iterates every operation of kind. */
UPTI_API upti_status_t upti_iterate_tracing_kind_operations(upti_tracing_kind_t kind,
                                                            upti_tracing_operation_cb_t callback,
                                                            void *data);

/** Name of a phase, e.g. "ENTER"; NULL for an invalid one. Takes a
 *  upti_callback_phase_t (tracing callbacks); the subscriber API's
 *  upti_callback_phase_kind_t has upti_get_callback_phase_kind_name (callback.h). */
UPTI_API const char *upti_get_callback_phase_name(upti_callback_phase_t phase);

/** *ts = now on UPTI's clock, in ns. */
UPTI_API upti_status_t upti_get_timestamp(upti_timestamp_t *ts);
/** *tid = the calling thread's OS id. */
UPTI_API upti_status_t upti_get_thread_id(upti_thread_id_t *tid);

UPTI_EXTERN_C_END

#endif
