/* SPDX-License-Identifier: MIT */
/* UPTI — how a tool library is found, configured, initialized and finalized.
 *
 * A tool exports upti_configure(). UPTI calls it when the first runtime
 * registers (or when the tool calls upti_force_configure()), for every tool it
 * finds: in each loaded object (executable, linked and preloaded libraries),
 * then in each library listed in UPTI_TOOL_LIBRARIES (':'-separated). All
 * configure calls happen before any initialize; initialize runs in priority
 * order; finalize in reverse order, once, at exit or through the finalizer
 * passed to initialize.
 */
#ifndef UPTI_REGISTRATION_H
#define UPTI_REGISTRATION_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

/** Identity of a configured tool. The tool may set name inside upti_configure(). */
typedef struct upti_client_id_t {
    size_t size;      /**< sizeof(upti_client_id_t) */
    const char *name; /**< the tool's name (optional; the tool's string must outlive UPTI) */
    uint32_t handle;  /**< unique per tool; equals its priority */
} upti_client_id_t;

/** Finalizes the tool identified by client_id now (at most once). */
typedef void (*upti_client_finalize_t)(upti_client_id_t client_id);

/**
 * Tool initialize: the only place where contexts and services may be
 * configured. Return 0 on success; any other value makes UPTI finalize the
 * tool at once and stop its contexts, while the other tools go on.
 */
typedef int (*upti_tool_initialize_t)(upti_client_finalize_t finalize_func, void *tool_data);
/** Tool finalize: buffers have been flushed before it is called. */
typedef void (*upti_tool_finalize_t)(void *tool_data);

/** What upti_configure() returns. The struct must outlive UPTI (static storage). */
typedef struct upti_tool_configure_result_t {
    size_t size;                       /**< sizeof(upti_tool_configure_result_t) */
    upti_tool_initialize_t initialize; /**< may be NULL */
    upti_tool_finalize_t finalize;     /**< may be NULL */
    void *tool_data;                   /**< passed back to initialize and finalize */
} upti_tool_configure_result_t;

/**
 * Exported by a tool. version: UPTI_VERSION of the library calling it.
 * runtime_version: the version string of UPTI. priority: 0, 1, 2… in
 * discovery order. Return NULL to decline (the tool is then skipped).
 */
typedef upti_tool_configure_result_t *(*upti_configure_func_t)(uint32_t version,
                                                               const char *runtime_version,
                                                               uint32_t priority,
                                                               upti_client_id_t *client_id);

/** The symbol UPTI looks for; declared here with default visibility. */
UPTI_API upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                                      uint32_t priority,
                                                      upti_client_id_t *client_id);

/**
 * Configures a tool that starts before any runtime registers: runs discovery
 * now, with configure_func taking the place of a discovered upti_configure
 * (priority 0, before the tools discovery finds). Returns
 * UPTI_STATUS_ERROR_CONFIGURATION_LOCKED if discovery already ran.
 */
UPTI_API upti_status_t upti_force_configure(upti_configure_func_t configure_func);

/** *status = 1 once every tool's initialize has returned, else 0. Always succeeds. */
UPTI_API upti_status_t upti_is_initialized(int *status);
/** *status = 1 once finalization has run, else 0. Always succeeds. */
UPTI_API upti_status_t upti_is_finalized(int *status);

/** UPTI's version: major, minor, patch (any pointer may be NULL). */
UPTI_API upti_status_t upti_get_version(uint32_t *major, uint32_t *minor, uint32_t *patch);

UPTI_EXTERN_C_END

#endif
