/* Internal: error reporting on stderr, one line, prefixed "upti:". */
#ifndef UPTI_COMMON_LOG_H
#define UPTI_COMMON_LOG_H

/** Prints "upti: <formatted message>\n" to stderr in one write(). */
void upti_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
