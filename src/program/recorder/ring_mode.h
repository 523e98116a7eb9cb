/* SPDX-License-Identifier: MIT */
/* How the tool records (ring_mode.c): into a shared buffer in the folder of
 * `upti run` (UPTI_TRACE_RING_DIR) or of a helper collector (collector_helper.h).
 * The collector drains it while the program runs and builds the database and
 * the other outputs after the program ended. The program then runs no SQLite, no thread of the
 * tool's (but the timer of --delay/--duration/--collection-period, capture.h),
 * no signal handler: whatever ends it, every record it committed is in the
 * ring file. */
#ifndef UPTI_TOOL_RING_MODE_H
#define UPTI_TOOL_RING_MODE_H

#include <upti/upti.h>

/** The folder of `upti run`'s ring files (UPTI_TRACE_RING_DIR), or NULL without `upti run`. */
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
