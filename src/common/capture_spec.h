/* SPDX-License-Identifier: MIT */
/* Internal: the values of `upti run`'s capture options (docs/cli.md), parsed in
 * one place for the CLI, which refuses a malformed one, and for the tool in
 * the traced program, which reads them back from UPTI_TRACE_CAPTURE_*,
 * UPTI_TRACE_START_PAUSED and UPTI_TRACE_COLLECTION_PERIOD. Each parser returns 0, or -1 with the form
 * it accepts in its documentation (the CLI says it). */
#ifndef UPTI_COMMON_CAPTURE_SPEC_H
#define UPTI_COMMON_CAPTURE_SPEC_H

#include <stddef.h>
#include <stdint.h>

/** --delay, --duration: seconds, a non-negative decimal ("2", "0.5", "1.25"); at most 10^6 s. */
int upti_parse_seconds(const char *text, uint64_t *ns);

/** --collection-period START:DURATION:REPEAT (rocprofv3 -P): seconds, seconds, count. */
typedef struct upti_collection_period {
    uint64_t start_ns;    /**< paused this long first (may be 0) */
    uint64_t duration_ns; /**< then recorded this long (> 0; 0 only from --delay alone: to the end) */
    uint64_t repeat;      /**< pause + record cycles; 0: until the program ends */
} upti_collection_period;

/** "START:DURATION:REPEAT", DURATION > 0 (the form printed by upti_format_period too). */
int upti_parse_collection_period(const char *text, upti_collection_period *out);

/** Writes p as "START:DURATION:REPEAT" in ns ("ns:" prefixed; read by upti_parse_collection_period). */
void upti_format_period(const upti_collection_period *p, char *out, size_t len);

/** --capture-range-end: "stop" (1 window), "repeat" (0: every range), "repeat:N" (N >= 1). */
int upti_parse_capture_end(const char *text, uint64_t *windows);

/**
 * --capture-range-name NAME[@DOMAIN]: the range's text, then the domain
 * after the last '@' ("*": any domain; none: the default domain, which uptx
 * ranges are in). name and domain receive pointers into a malloc'd copy
 * (*copy, to free); *domain is NULL without '@'.
 */
int upti_parse_capture_name(const char *text, char **copy, const char **name, const char **domain);

/**
 * --kernel-iteration-range (rocprofv3): which executions of each kernel name
 * are kept, counted from 1 per name in the order they complete. A list of
 * items separated by commas, each N, N-M or N- (from N on), each optionally
 * in brackets: "[1-3,5]", "[1-2],[4-]", "3".
 */
typedef struct upti_iteration_range {
    size_t count;
    struct { uint64_t first, last; } items[32]; /**< last UINT64_MAX: open */
} upti_iteration_range;

int upti_parse_iteration_range(const char *text, upti_iteration_range *out);

/** 1 if execution n (from 1) is in r. */
int upti_iteration_in_range(const upti_iteration_range *r, uint64_t n);

#endif
