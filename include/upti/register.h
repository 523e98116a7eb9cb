/* SPDX-License-Identifier: MIT */
/* libupti-register — what a runtime links to hand UPTI its dispatch tables.
 *
 * Cheap when no tool is present: one getenv("UPTI_TOOL_LIBRARIES"), one
 * dlsym("upti_configure") and one dlopen(RTLD_NOLOAD) of libupti.so (found
 * when a tool called upti_force_configure()) on the first call, then
 * nothing; libupti.so is loaded only when a tool exists.
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
 * registers at a later call. UPTI_STATUS_ERROR_INVALID_ARGUMENT if name is
 * NULL, or tables is NULL with num_tables > 0; UPTI_STATUS_ERROR if a tool is
 * present but libupti.so cannot be loaded (the reason is logged). id, if not
 * NULL, receives a new handle, also when no tool is present.
 */
UPTI_API upti_status_t upti_register_library_api_table(const char *name, uint64_t version,
                                                       void **tables, uint64_t num_tables,
                                                       upti_register_library_id_t *id);

struct upti_runtime_api_t;

/**
 * Registers the dispatch table of a runtime that describes its API
 * (upti/runtime_api.h, made by upti-wrap): as
 * upti_register_library_api_table(api->name, api->version, &table, 1, id),
 * and, when a tool is present, UPTI also gives the API a range of
 * UPTI_TRACING_KIND_RUNTIME_API operations named after its functions and
 * installs api's tracing wrappers into table before tools see it (once: the
 * same api registered again installs nothing more). Returns
 * what upti_register_library_api_table returns, and
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT if api or table is NULL, api->size is
 * below sizeof(upti_runtime_api_t), a function has no name or an entry
 * outside table_size, or state, plans or next is NULL;
 * UPTI_STATUS_ERROR_INCOMPATIBLE_ABI, tracing nothing (tools still get the
 * table), if the wrappers were built with another upti_runtime_call_t;
 * UPTI_STATUS_ERROR_OUT_OF_RESOURCES, tracing nothing, once
 * UPTI_RUNTIME_API_MAX_OPERATIONS operations are given out. Since
 * UPTI_REGISTER_1.0.
 */
UPTI_API upti_status_t upti_register_runtime_api(const struct upti_runtime_api_t *api, void *table,
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
