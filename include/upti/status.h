/* SPDX-License-Identifier: MIT */
/* UPTI — status codes returned by every public function. */
#ifndef UPTI_STATUS_H
#define UPTI_STATUS_H

#include <upti/defines.h>

UPTI_EXTERN_C_BEGIN

/** Status of a UPTI call. New codes are only ever appended. */
typedef enum upti_status_t {
    UPTI_STATUS_SUCCESS = 0,
    UPTI_STATUS_ERROR,                          /**< unspecified failure */
    UPTI_STATUS_ERROR_INVALID_ARGUMENT,         /**< NULL or out-of-range argument */
    UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND,        /**< the context id is not valid */
    UPTI_STATUS_ERROR_BUFFER_NOT_FOUND,         /**< the buffer id is not valid */
    UPTI_STATUS_ERROR_KIND_NOT_FOUND,           /**< unknown tracing kind */
    UPTI_STATUS_ERROR_OPERATION_NOT_FOUND,      /**< unknown operation of a kind */
    UPTI_STATUS_ERROR_THREAD_NOT_FOUND,         /**< unknown callback thread */
    UPTI_STATUS_ERROR_AGENT_NOT_FOUND,          /**< unknown agent */
    UPTI_STATUS_ERROR_CONFIGURATION_LOCKED,     /**< services may only be configured in a tool's initialize */
    UPTI_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED, /**< the context already has this service for this kind */
    UPTI_STATUS_ERROR_OUT_OF_RESOURCES,         /**< memory, threads or table slots exhausted */
    UPTI_STATUS_ERROR_DEADLOCK,                 /**< the call would re-enter an operation in progress */
    UPTI_STATUS_ERROR_NOT_INITIALIZED,          /**< no tool was configured yet */
    UPTI_STATUS_ERROR_FINALIZED,                /**< UPTI already finalized */
    UPTI_STATUS_ERROR_INCOMPATIBLE_ABI,         /**< a struct's size claims fields this UPTI does not know, set non-zero */
    UPTI_STATUS_ERROR_NOT_AVAILABLE,            /**< the information does not exist (yet) */
    UPTI_STATUS_ERROR_NOT_IMPLEMENTED,          /**< reserved; UPTI implements what it declares */
    UPTI_STATUS_ERROR_CALLBACK_CONTEXT,         /**< the call is not allowed inside a UPTI callback */
    UPTI_STATUS_LAST
} upti_status_t;

/**
 * Name of a status code, e.g. "UPTI_STATUS_ERROR_DEADLOCK" (the whole
 * enumerator, unlike the other upti_get_<enum>_name lookups, which leave out
 * the prefix). Returns NULL for a value that is not a status. Thread-safe;
 * allowed anywhere.
 */
UPTI_API const char *upti_get_status_name(upti_status_t status);
/* UPTI 0.1's name of it, upti_get_status_string, is in <upti/compat.h>. */

UPTI_EXTERN_C_END

#endif
