/* SPDX-License-Identifier: MIT */
/* Internal: UPTI's messages, one line each, through one channel
 * (include/upti/log.h): stderr as "upti: <message>", or the callback a tool
 * set, above the level UPTI_LOG_LEVEL or the tool chose (default: warning).
 *
 * Each library that links upti-common has its own copy of this state: the
 * callback set through libupti (upti_set_log_callback) routes libupti's
 * messages; the others follow UPTI_LOG_LEVEL. */
#ifndef UPTI_COMMON_LOG_H
#define UPTI_COMMON_LOG_H

#include <upti/log.h>

/** Formats one message of level and sends it where messages go (or drops it below the level). */
void upti_log(upti_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define upti_log_error(...) upti_log(UPTI_LOG_LEVEL_ERROR, __VA_ARGS__)
#define upti_log_warning(...) upti_log(UPTI_LOG_LEVEL_WARNING, __VA_ARGS__)
#define upti_log_info(...) upti_log(UPTI_LOG_LEVEL_INFO, __VA_ARGS__)
#define upti_log_debug(...) upti_log(UPTI_LOG_LEVEL_DEBUG, __VA_ARGS__)

/** 1 if a message of level would be delivered (to skip building an expensive one). */
int upti_log_enabled(upti_log_level_t level);

/** The threshold and the callback (NULL: stderr); see upti_set_log_callback. */
void upti_log_configure(upti_log_level_t level, upti_log_callback_t callback, void *data);

/** The level named by word ("none", "error", "warning", "info", "debug"); -1 if none is. */
int upti_log_level_of(const char *word);

#endif
