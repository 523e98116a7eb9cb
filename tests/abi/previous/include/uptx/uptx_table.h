/* SPDX-License-Identifier: MIT */
/* uptx — the marker runtime's dispatch table (seed 000's pattern).
 *
 * Each public uptx_* function calls through the table uptx_active points to
 * (uptx/uptx.h): libuptx's init stubs until the first call, then this table
 * if anything wrapped it. UPTI receives it at registration (library name
 * "uptx", one table), installs its tracing wrappers, then hands it to tools
 * that asked for UPTI_INTERCEPT_TABLE_MARKER. Entries may be replaced only
 * during that registration; if none was (no tool), uptx_active becomes NULL
 * and the uptx_* functions no longer call through any table.
 */
#ifndef UPTX_TABLE_H
#define UPTX_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the table layout; bumped when entries are appended. */
#define UPTX_TABLE_VERSION 1

typedef struct uptx_dispatch_table_t {
    size_t size; /**< sizeof(uptx_dispatch_table_t) of the runtime that built it */
    int (*range_push_fn)(const char *message);
    int (*range_pop_fn)(void);
    uint64_t (*range_start_fn)(const char *message);
    void (*range_stop_fn)(uint64_t id);
    void (*mark_fn)(const char *message);
    void (*name_thread_fn)(const char *name);
    void (*name_category_fn)(uint32_t category, const char *name);
} uptx_dispatch_table_t;

#ifdef __cplusplus
}
#endif

#endif
