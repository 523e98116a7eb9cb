/* SPDX-License-Identifier: MIT */
/* The output formats a run writes, as bits: what the bundled tool reads from
 * UPTI_TRACE_FORMATS and hands to its collector (run.conf), and what the
 * collector's writers (src/collector/output, UO_FORMAT_*) produce. */
#ifndef UPTI_COMMON_OUTPUT_FORMATS_H
#define UPTI_COMMON_OUTPUT_FORMATS_H

enum {
    UPTI_FORMAT_DB = 1,      /**< the SQLite database (db, rocpd) */
    UPTI_FORMAT_PFTRACE = 2, /**< Perfetto protobuf (pftrace, perfetto) */
    UPTI_FORMAT_JSON = 4,    /**< Chrome trace-event JSON (json) */
    UPTI_FORMAT_CSV = 8,     /**< CSV tables (csv) */
};

/** A name of a format and its bit. */
typedef struct upti_format_name {
    const char *name;
    unsigned bit;
} upti_format_name;

/**
 * The names of the formats: first one name per format, UPTI_FORMAT_OWN_NAMES of
 * them (db, pftrace, json, csv: the words of `upti run --format` and `upti merge
 * --format`), then the aliases that UPTI_TRACE_FORMATS accepts too (rocpd,
 * perfetto): UPTI_FORMAT_ALL_NAMES in all.
 */
extern const upti_format_name upti_format_names[];
enum { UPTI_FORMAT_OWN_NAMES = 4, UPTI_FORMAT_ALL_NAMES = 6 };

/**
 * The formats of a comma list of names (above); NULL or "" is the database
 * alone. An unknown name is said in one "upti:" warning naming the variable
 * var, and skipped.
 */
unsigned upti_parse_formats(const char *list, const char *var);

#endif
