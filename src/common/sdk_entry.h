/* SPDX-License-Identifier: MIT */
/* Internal: the entry libupti-register calls in libupti once it is loaded. */
#ifndef UPTI_COMMON_SDK_ENTRY_H
#define UPTI_COMMON_SDK_ENTRY_H

#include <upti/status.h>
#include <stdint.h>

#define UPTI_SDK_ENTRY_SYMBOL "upti_sdk_set_api_table"
/* libupti's soname: the major version only (CMake's SOVERSION). */
#define UPTI_SDK_SONAME "libupti.so." UPTI_VERSION_XSTR_(UPTI_VERSION_MAJOR)

/**
 * Exported by libupti (upti_ prefix, not in a public header): discovers and
 * initializes tools on the first call, installs UPTI's wrappers into the
 * tables and passes them to the tools that asked for them.
 */
typedef upti_status_t (*upti_sdk_set_api_table_t)(const char *name, uint64_t version,
                                                  uint64_t instance, void **tables,
                                                  uint64_t num_tables);

/**
 * Exported by libupti, looked up with the entry: upti_sdk_set_api_table of a
 * runtime that described its API (upti_register_runtime_api, checked by
 * libupti-register): gives it RUNTIME_API operations and installs its wrappers
 * into table first.
 */
#define UPTI_SDK_RUNTIME_API_SYMBOL "upti_sdk_set_runtime_api"
struct upti_runtime_api_t;
typedef upti_status_t (*upti_sdk_set_runtime_api_t)(const struct upti_runtime_api_t *api,
                                                    uint64_t instance, void *table);

/**
 * Exported by libupti, looked up with the entry: 1 if the calling thread
 * must not wait for discovery (it runs it, or was started after it began),
 * else 0 (upti_register_wait_allowed).
 */
#define UPTI_SDK_MUST_NOT_WAIT_SYMBOL "upti_sdk_thread_must_not_wait"
typedef int (*upti_sdk_thread_must_not_wait_t)(void);

#endif
