/* SPDX-License-Identifier: MIT */
/* The tool's capture windows (capture.c): when the program's records are
 * kept, under `upti run`'s options --capture-range=marker,
 * --capture-range-name, --capture-range-end, --start-paused, --delay,
 * --duration and --collection-period (docs/cli.md), and the application's
 * uptx_profiler_pause()/uptx_profiler_resume(), always honoured.
 *
 * A window is a span during which the tool's recording contexts are started;
 * outside windows they are stopped (upti_stop_context: the runtimes and their
 * dispatch tables stay as they are, only UPTI's plans change). The gate is
 * open when every condition asked for holds: inside a marker range of the
 * name (the first N entries with repeat:N), inside a timed period, and not
 * paused by the application. A marker callback service on a control context
 * of its own watches the ranges and the pause/resume calls; a thread of the
 * tool's, started only for timed windows, keeps the time. */
#ifndef UPTI_TOOL_CAPTURE_H
#define UPTI_TOOL_CAPTURE_H

#include <upti/upti.h>

/**
 * Inside the tool's initialize, instead of starting them: reads
 * UPTI_TRACE_CAPTURE_RANGE, UPTI_TRACE_CAPTURE_END, UPTI_TRACE_START_PAUSED
 * and UPTI_TRACE_COLLECTION_PERIOD, sets up the control context and starts
 * the n contexts now if the gate is open. buffer receives the metadata
 * "capture" (1 when a window gates recording) and "capture_windows" (the
 * number of windows opened so far, written as each opens). Returns the
 * status of starting the contexts (or of setting up the control context).
 */
upti_status_t ut_capture_start(const upti_context_id_t *contexts, size_t n, upti_buffer_id_t buffer);

/** At finalize: no window opens any more (the timer's thread is left to the process's end). */
void ut_capture_finalize(void);

#endif
