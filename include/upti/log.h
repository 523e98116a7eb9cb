/* SPDX-License-Identifier: MIT */
/* UPTI — where UPTI's messages go: one channel, with a level.
 *
 * UPTI reports what it cannot do (a tool that fails to load, a bad
 * environment variable, a device without timestamps) as one line each. By
 * default a line goes to stderr as "upti: <message>", and only errors and
 * warnings are written; UPTI_LOG_LEVEL=none|error|warning|info|debug
 * chooses another level (`upti run --log-level` sets it). A tool can take
 * the messages instead, to put them in its own log or its trace, with
 * upti_set_log_callback().
 */
#ifndef UPTI_LOG_H
#define UPTI_LOG_H

#include <upti/status.h>

UPTI_EXTERN_C_BEGIN

/** How much a message matters; a level lets through itself and everything above it. */
typedef enum upti_log_level_t {
    UPTI_LOG_LEVEL_NONE = 0, /**< as a threshold: no message at all */
    UPTI_LOG_LEVEL_ERROR,    /**< something asked for is not done (a tool skipped, a file not written) */
    UPTI_LOG_LEVEL_WARNING,  /**< done differently or partly (a default used, records dropped) */
    UPTI_LOG_LEVEL_INFO,     /**< what UPTI set up (tools configured) */
    UPTI_LOG_LEVEL_DEBUG,    /**< each step of discovery and registration */
    UPTI_LOG_LEVEL_LAST
} upti_log_level_t;

/**
 * Receives one message: message is one line, without the "upti: " prefix and
 * without a newline, valid only during the call. Called from whichever
 * thread has something to say (UPTI's own threads included), possibly from
 * several at once, and from inside UPTI calls: it must not call UPTI
 * functions other than the name helpers (names.h, upti_get_status_name).
 * A message the callback itself causes goes to stderr.
 */
typedef void (*upti_log_callback_t)(upti_log_level_t level, const char *message, void *data);

/**
 * Routes libupti's messages of level and above (ERROR is above WARNING,
 * and so on) to callback, with data, instead of stderr; messages below level
 * are dropped. callback NULL: back to stderr, with level as the threshold.
 * level UPTI_LOG_LEVEL_NONE: no message at all. It replaces UPTI_LOG_LEVEL's
 * threshold. Runtime libraries' messages (libupti-opencl, libupti-vulkan,
 * reported through libupti) follow it too; those of libupti-register and
 * libuptx, which load before any tool, follow UPTI_LOG_LEVEL only.
 * Callable at any time, from any thread; returns
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT for a level out of range.
 */
UPTI_API upti_status_t upti_set_log_callback(upti_log_level_t level, upti_log_callback_t callback,
                                             void *data);

UPTI_EXTERN_C_END

#endif
