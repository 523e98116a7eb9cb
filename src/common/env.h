/* SPDX-License-Identifier: MIT */
/* Internal: every UPTI_* variable with a number or a choice for its value, parsed in
 * one place with one meaning, for libupti, the OpenCL layer, the tool and `upti`. */
#ifndef UPTI_COMMON_ENV_H
#define UPTI_COMMON_ENV_H

#include <stddef.h>
#include <stdint.h>

/** The variables read through upti_env_get (docs/cli.md lists them all). */
typedef enum upti_env_id {
    UPTI_ENV_TRACE_BUFFER_SIZE,  /**< bytes: digits, optional k, m or g; default 1 MiB */
    UPTI_ENV_TRACE_STATS,        /**< switch 0 or 1; default 0 */
    UPTI_ENV_TRACE_ARGS,         /**< switch 0 or 1; default 0 */
    UPTI_ENV_TRACE_LIST,         /**< switch 0 or 1; default 0 */
    UPTI_ENV_OPENCL_COMPLETION,  /**< UPTI_ENV_COMPLETION_POLL (default) or _CALLBACK */
    UPTI_ENV_CLOCK,              /**< UPTI_ENV_CLOCK_TSC (default) or _GETTIME */
    UPTI_ENV_RING_FULL_WAIT_MS,  /**< duration in ms a LOSSLESS shared ring waits for its collector; default 50 */
    UPTI_ENV_TRACE_RING_SLOTS,   /**< threads recording at once into upti run's rings (1..65536); default 256 */
    UPTI_ENV_LOG_LEVEL,          /**< upti_log_level_t: none, error, warning (default), info or debug */
    UPTI_ENV_VK_DISABLE_CALIBRATED,      /**< switch 0 or 1; default 0 (1: the Vulkan layer measures device clocks) */
    UPTI_ENV_VK_CLOCK_PROBE_INTERVAL_MS, /**< duration in ms between measurements of a Vulkan device clock; default 100 */
    UPTI_ENV_VK_QUERIES,                 /**< UPTI_ENV_VK_QUERIES_AUTO (default), _COPY, _READ or _HOST: how the Vulkan layer resets and reads its queries */
    UPTI_ENV_VK_TIMESTAMPS,              /**< UPTI_ENV_VK_TIMESTAMPS_AUTO (default) or _PAIRS: whether the Vulkan layer's operations share timestamps on a CPU device */
    UPTI_ENV_VK_CALIBRATE_INTERVAL_MS,   /**< duration in ms a Vulkan device's calibrated clock mapping is reused; default 10 */
    UPTI_ENV_VK_COMPLETION_WAIT_MS,      /**< duration in ms the Vulkan layer waits for a submission it must read; default 5000 */
    UPTI_ENV_COUNT
} upti_env_id;

/** The values of the choice variables (the index of the accepted word). */
enum { UPTI_ENV_COMPLETION_POLL = 0, UPTI_ENV_COMPLETION_CALLBACK = 1 };
enum { UPTI_ENV_CLOCK_TSC = 0, UPTI_ENV_CLOCK_GETTIME = 1 };
enum { UPTI_ENV_VK_TIMESTAMPS_AUTO = 0, UPTI_ENV_VK_TIMESTAMPS_PAIRS = 1 };
enum { UPTI_ENV_VK_QUERIES_AUTO = 0, UPTI_ENV_VK_QUERIES_COPY = 1, UPTI_ENV_VK_QUERIES_READ = 2, UPTI_ENV_VK_QUERIES_HOST = 3 };

/** The variable's name, e.g. "UPTI_RING_FULL_WAIT_MS". */
const char *upti_env_name(upti_env_id id);

/**
 * The variable's value: a duration in ms, a size in bytes, 0/1 for a switch,
 * the index of the word for a choice. Unset or empty: the default, silently.
 * Anything else (another form, out of range): one line "upti: NAME='value'
 * is not ... (the accepted forms): using DEFAULT" on stderr, and the default.
 */
uint64_t upti_env_get(upti_env_id id);

/**
 * 1 if the variable is set to a value upti_env_get refuses, with the line it
 * would print (without "upti: " and the newline) in msg; 0 otherwise. Prints nothing.
 */
int upti_env_check(upti_env_id id, char *msg, size_t len);

/** Text of a duration: digits with an optional "ms" or "s" suffix; 0 or -1. */
int upti_parse_duration_ms(const char *text, uint64_t *ms);

/** Text of a size: digits with an optional k/K, m/M or g/G suffix (powers of 1024); 0 or -1. */
int upti_parse_size(const char *text, uint64_t *bytes);

#endif
