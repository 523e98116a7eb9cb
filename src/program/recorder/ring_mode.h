/* SPDX-License-Identifier: MIT */
/* The tool's record-only mode (ring_mode.c): under `upti run`, which sets
 * UPTI_TRACE_RING_DIR (or with UPTI_TRACE_RECORD_ONLY=1 and a helper
 * collector, collector_helper.h), the program only records. Its records go to a shared
 * buffer in that folder; `upti run` (the collector, src/collector/collect) drains it
 * while the program runs and builds the database and the other outputs after
 * the program ended. The program then runs no SQLite, no thread of the
 * tool's (but the timer of --delay/--duration/--collection-period, capture.h),
 * no signal handler: whatever ends it, every record it committed is in the
 * ring file. */
#ifndef UPTI_TOOL_RING_MODE_H
#define UPTI_TOOL_RING_MODE_H

#include <upti/upti.h>

/** The folder of `upti run`'s ring files, or NULL when the tool writes the database itself. */
const char *ut_ring_dir(void);

/**
 * Starts record-only tracing of the kinds (bit per upti_tracing_kind_t) into
 * a shared buffer in dir, with the OpenCL calls' arguments if args. output:
 * the output pattern, recorded as metadata "output" for a collector that does
 * not know it (`upti recover` of a bare ring folder), or NULL (under `upti
 * run`, which knows it). Returns 0, or 1 (said on stderr: nothing is traced).
 * Under `upti run` (output NULL, UPTI_TRACE_SESSION_START set) a dir that no
 * longer exists means the run has ended: one line says this process is not
 * traced, nothing is started (no ring that nobody would drain), and 0.
 */
int ut_ring_start(const char *dir, unsigned kinds, int args, const char *output);

/** One metadata record (key, value) into buffer: a row of the database's metadata table. */
void ut_ring_set_metadata(upti_buffer_id_t buffer, const char *key, const char *value);

/** At finalize: the last metadata (marker texts truncated), then the buffer is closed. */
void ut_ring_finalize(void);

#endif
