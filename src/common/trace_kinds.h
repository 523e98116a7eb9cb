/* SPDX-License-Identifier: MIT */
/* The kinds a run records, by the names of UPTI_TRACE_KINDS: what `upti run`'s
 * options set and what the bundled tool reads. */
#ifndef UPTI_COMMON_TRACE_KINDS_H
#define UPTI_COMMON_TRACE_KINDS_H

#include <upti/types.h>

/** kind's name in UPTI_TRACE_KINDS (opencl_api, marker_api, ...), or NULL. */
const char *upti_trace_kind_name(upti_tracing_kind_t kind);

/**
 * A comma list of those names, or "all", as bits per upti_tracing_kind_t; NULL,
 * "" or "all" is every kind. An unknown name is said in one "upti:" warning
 * naming the variable var, and skipped.
 */
unsigned upti_parse_trace_kinds(const char *list, const char *var);

#endif
