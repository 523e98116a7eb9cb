/* SPDX-License-Identifier: MIT */
/* libupti-register — what a runtime links to hand UPTI its dispatch tables.
 *
 * Cheap when no tool is present: one getenv("UPTI_TOOL_LIBRARIES") and one
 * dlsym("upti_configure") on the first call, then nothing; libupti.so is
 * loaded only when a tool exists.
 */
#ifndef UPTI_REGISTER_H
#define UPTI_REGISTER_H

#include <upti/status.h>
#include <stdint.h>

UPTI_EXTERN_C_BEGIN

/** Identifies one registration. */
typedef struct upti_register_library_id_t { uint64_t handle; } upti_register_library_id_t;

/**
 * Registers num_tables dispatch tables of the runtime called name ("uptx",
 * "opencl") with UPTI. If a tool is present, loads libupti.so, which
 * discovers and initializes tools (first registration only), installs its
 * tracing wrappers and passes the tables to tools. Tables must stay valid
 * for the life of the process and may be modified in place before this
 * returns. Returns SUCCESS also when no tool is present;
 * UPTI_STATUS_ERROR_DEADLOCK, registering nothing, if called again on a
 * thread that is already inside a registration (e.g. a tool's initialize
 * using a runtime), or while tools are being discovered and initialized on
 * another thread by a thread started meanwhile (e.g. by a tool's initialize,
 * which may be waiting for it): the runtime serves that call untraced and
 * registers at a later call.
 */
UPTI_API upti_status_t upti_register_library_api_table(const char *name, uint64_t version,
                                                       void **tables, uint64_t num_tables,
                                                       upti_register_library_id_t *id);

/**
 * For a runtime whose registration is in progress on another thread: sets
 * *allowed to 0 if the calling thread must not wait for it, because tools
 * are being discovered and initialized and this thread is the one doing it,
 * or was started meanwhile and discovery has gone on for 5 s (a tool's
 * initialize may be joining it; a thread the program starts meanwhile waits,
 * and is traced, as discovery takes milliseconds); the runtime then serves
 * the call untraced. Sets *allowed to 1 otherwise (also
 * when no tool is present). Thread-safe. Returns
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT if allowed is NULL.
 */
UPTI_API upti_status_t upti_register_wait_allowed(int *allowed);

UPTI_EXTERN_C_END

#endif
