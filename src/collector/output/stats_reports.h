/* SPDX-License-Identifier: MIT */
/* Internal: the named reports of `upti stats` and `upti run --stats` (after
 * `nsys stats`): one table of definitions (stats_reports.c), one renderer
 * (stats_render.c). */
#ifndef UPTI_CLI_STATS_REPORTS_H
#define UPTI_CLI_STATS_REPORTS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** How a report's column is printed. */
typedef enum report_col_type {
    RC_HIDDEN, /**< selected by the query, never printed */
    RC_PCT,    /**< a percentage, one decimal */
    RC_TIME,   /**< ns, printed in the chosen --unit */
    RC_COUNT,  /**< an integer */
    RC_MB,     /**< bytes, printed in MB (10^6 bytes), three decimals */
    RC_TEXT,   /**< short text, never cut */
    RC_NAME,   /**< a name: cut in tables unless --full-names */
    RC_KERNEL  /**< a kernel name: as RC_NAME, and demangled under --demangle */
} report_col_type;

/** One column: its JSON key, its title ("%s" stands for the time unit) and its type. */
typedef struct report_col {
    const char *key;
    const char *title;
    report_col_type type;
} report_col;

/** One report: its name, a one-line description, its SQL and its columns (in SELECT order). */
typedef struct report_def {
    const char *name;
    const char *title;
    const char *summary;
    const char *sql;
    const report_col *cols;
    size_t ncols;
    const char *prep; /**< SQL run first (temporary tables and indexes), or NULL */
    /** A column the query needs that older databases lack, as "table.column"
     *  (NULL: none): without it the report has no rows. */
    const char *needs;
} report_def;

/** The reports, in the order `upti stats --list` prints them. */
extern const report_def report_defs[];
extern const size_t report_count;

/** The report named name, or NULL. */
const report_def *report_find(const char *name);

/**
 * The reports printed when none are named (`upti stats DATABASE`, `upti run
 * --stats`, the NAME_stats.csv of CSV outputs): the per-function, per-kernel,
 * per-copy-direction, synchronization and marker summaries, and API errors.
 */
extern const char report_default_list[];

/**
 * The reports of a comma-separated list of names (malloc'd array in *out, *n
 * of them). 0; or -1, *out NULL, with a message in err naming the first word
 * that names no report ("unknown report 'kern' (reports: api_sum, ...)"; an
 * empty word: "a,,b", ",") or "out of memory".
 */
int report_parse_list(const char *list, const report_def ***out, size_t *n, char *err,
                      size_t errlen);

/**
 * The name of an API call's result value in domain ("OPENCL_API": CL_SUCCESS,
 * CL_INVALID_VALUE...; "VULKAN_API": VK_NOT_READY...), NULL when unknown.
 * The queries call it as upti_result_name(domain, value).
 */
const char *report_result_name(const char *domain, int64_t value);

/** The time units of --unit. */
typedef enum report_unit { UNIT_NS, UNIT_US, UNIT_MS, UNIT_S } report_unit;

/** The output formats of --report. */
typedef enum report_format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON } report_format;

/** How reports are printed. */
typedef struct report_options {
    report_format format;
    report_unit unit;
    long long top;  /**< at most this many rows per report; 0: all */
    int full_names; /**< tables: names whole instead of cut */
    int demangle;   /**< kernel names demangled (C++ Itanium ABI) */
} report_options;

/** Width of a name column in a table: longer names are cut to this many characters. */
#define REPORT_NAME_WIDTH 60

/**
 * Prints the n reports to out in o's format (JSON: one document holding them
 * all). 0, or -1 with a message in err (a failed query: nothing is printed).
 */
int report_print(sqlite3 *db, const report_def *const *reports, size_t n,
                 const report_options *o, FILE *out, char *err, size_t errlen);

/**
 * report_print() of the reports a list names (report_parse_list), one message
 * in err for a word that names none.
 */
int report_print_list(sqlite3 *db, const char *list, const report_options *o, FILE *out,
                      char *err, size_t errlen);

/**
 * Writes the reports of list as CSV to path, through path.part (the
 * NAME_stats.csv of CSV outputs). 0, or -1 with a message in err.
 */
int report_csv_file(sqlite3 *db, const char *path, const char *list, char *err, size_t errlen);

/**
 * name demangled as a C++ (Itanium ABI) symbol, malloc'd; NULL when it is not
 * one or when upti was built without libiberty. A SYCL kernel's name (the
 * typeinfo name of its kernel type, _ZTS...) becomes that type's name.
 */
char *report_demangle(const char *name);

/**
 * 1 when head (the first bytes of a file, NUL-terminated) begins as one of
 * report_print()'s outputs: a JSON document of reports, a report's table
 * title, or a report's CSV header: a file `upti stats -o` may replace.
 */
int report_output_is_ours(const char *head);

/** 1 when report_demangle() can demangle (upti was built with libiberty). */
int report_can_demangle(void);

#endif
