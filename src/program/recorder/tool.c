/* SPDX-License-Identifier: MIT */
/* libupti-trace.so: the bundled tracing tool, the recorder of `upti run`.
 *
 * A client of UPTI's public API only. It records, and nothing else: its
 * records go into shared rings (ring_mode.c) that a collector in another
 * process drains while the program runs and turns into the database and the
 * other outputs. Whatever starts it, there is one path:
 *   - under `upti run` (UPTI_TRACE_RING_DIR set), upti is the collector;
 *   - loaded through UPTI_TOOL_LIBRARIES alone, it starts a helper collector
 *     beside the program (collector_helper.h), which writes the outputs once
 *     the program ended; where none can start, the rings stay in a run folder
 *     that `upti recover` turns into the outputs (said once).
 * No SQLite, no exporter, no signal handler and no thread of its own (but the
 * timer of timed capture windows, capture.h) run in the traced program:
 * whatever ends it, every record it committed is in a ring file.
 *
 * Configured by environment variables (set by `upti run`, documented in docs/cli.md):
 *   UPTI_TRACE_KINDS     comma list: opencl_api, vulkan_api, marker_api, kernel_dispatch, runtime_api,
 *                        memory_copy, memory_allocation, code_object, or all (default all)
 *   UPTI_TRACE_OUTPUT    output path without extension; placeholders %pid% %ppid%
 *                        %hostname% %rank% %argv0% %env{NAME}% (default upti-%argv0%-%pid%)
 *   UPTI_TRACE_FORMATS   comma list: db, pftrace, json, csv (default db)
 *   UPTI_TRACE_STATS     1: the helper prints the summary reports when it ends
 *   UPTI_TRACE_STATS_REPORT  comma list of report names: those instead (upti stats --list)
 *   UPTI_TRACE_KERNEL_INCLUDE / UPTI_TRACE_KERNEL_EXCLUDE  POSIX extended regexes on kernel
 *                        names; UPTI_TRACE_KERNEL_ITERATIONS the executions of each kernel
 *                        name kept, e.g. [1-3,5] (the helper applies them)
 *   UPTI_TRACE_BUFFER_SIZE  bytes of each producing thread's ring (default 1 MiB)
 *   UPTI_TRACE_ARGS      1: record the arguments of OpenCL calls and described runtimes' (arg table)
 *   UPTI_TRACE_LIST      1: print the agents seen (upti_query_available_agents) at finalize
 *   UPTI_TRACE_CAPTURE_RANGE, UPTI_TRACE_CAPTURE_END, UPTI_TRACE_START_PAUSED,
 *   UPTI_TRACE_COLLECTION_PERIOD  capture windows (capture.h): when records are kept
 *   UPTI_TRACE_RING_DIR  set by `upti run`: the folder of its rings
 *   UPTI_TRACE_SESSION_START  set by `upti run`: when it started
 *   UPTI_TRACE_COLLECTOR the `upti` program of the helper (default: beside this library)
 * Numbers, switches (0/1) and choices are read through src/common/env.c, one
 * parser for every UPTI_* variable: a bad value is one "upti:" line and the default.
 */
#include <upti/upti.h>

#include "agent_print.h"
#include "capture.h"
#include "collector_helper.h"
#include "env.h"
#include "log.h"
#include "output_formats.h"
#include "ring_mode.h"
#include "trace_kinds.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    int started; /* recording into rings (ring_mode.c) */
    int list;    /* UPTI_TRACE_LIST */
} g_tool;

/* The reports the helper prints at the end: UPTI_TRACE_STATS_REPORT's, or "1"
 * (the collector's default ones) with UPTI_TRACE_STATS=1 alone; NULL: none.
 * The collector checks the names. */
static const char *stats_reports(void)
{
    const char *list = getenv("UPTI_TRACE_STATS_REPORT");
    if (list != NULL && list[0] != '\0')
        return list;
    return upti_env_get(UPTI_ENV_TRACE_STATS) != 0 ? "1" : NULL;
}

/* The output pattern: UPTI_TRACE_OUTPUT or the default. The collector expands it
 * (and says once, using the default, when it has an unknown placeholder). */
static const char *output_pattern(void)
{
    const char *pattern = getenv("UPTI_TRACE_OUTPUT");
    return pattern != NULL && pattern[0] != '\0' ? pattern : "upti-%argv0%-%pid%";
}

/*
 * Without `upti run`: a helper collector beside the program (collector_helper.h),
 * then ring_mode.c. Where no helper could start, the rings go to the run folder
 * made for it, which `upti recover` converts later (said by ut_helper_start).
 * 0 or 1 as ut_ring_start; 1 when not even a run folder could be made (said).
 */
static int start_with_helper(unsigned kinds, int args)
{
    char *pattern = ut_absolute_pattern(output_pattern());
    if (pattern == NULL)
        return 1;
    ut_helper_conf c = {pattern, upti_parse_formats(getenv("UPTI_TRACE_FORMATS"), "UPTI_TRACE_FORMATS"),
                        stats_reports(),
                        getenv("UPTI_TRACE_KERNEL_INCLUDE"), getenv("UPTI_TRACE_KERNEL_EXCLUDE"),
                        getenv("UPTI_TRACE_KERNEL_ITERATIONS")};
    char rings[PATH_MAX];
    int rc = 1;
    int helper = ut_helper_start(&c, rings, sizeof rings);
    if (helper >= 0) {
        /* With a helper draining the rings, a full ring waits for it up to 1 s without
         * progress, as under `upti run` (the user's setting stays); without one, the
         * default: a thread whose ring is full soon stops waiting. */
        if (helper == 0)
            setenv(upti_env_name(UPTI_ENV_RING_FULL_WAIT_MS), "1000", 0);
        rc = ut_ring_start(rings, kinds, args, pattern);
    }
    free(pattern);
    return rc;
}

static int tool_initialize(upti_client_finalize_t finalize, void *data)
{
    (void)finalize;
    (void)data;
    unsigned kinds = upti_parse_trace_kinds(getenv("UPTI_TRACE_KINDS"), "UPTI_TRACE_KINDS");
    int args = upti_env_get(UPTI_ENV_TRACE_ARGS) != 0 &&
               ((kinds >> UPTI_TRACING_KIND_OPENCL_API) & 1 ||
                (kinds >> UPTI_TRACING_KIND_RUNTIME_API) & 1);
    g_tool.list = upti_env_get(UPTI_ENV_TRACE_LIST) != 0;
    int rc;
    if (ut_ring_dir() != NULL) {
        /* Under `upti run`. A ring folder set by hand (no UPTI_TRACE_SESSION_START, which
         * `upti run` always sets) also records the output pattern, for `upti recover`
         * of that folder. */
        char *pattern = getenv("UPTI_TRACE_SESSION_START") == NULL
                            ? ut_absolute_pattern(output_pattern())
                            : NULL;
        rc = ut_ring_start(ut_ring_dir(), kinds, args, pattern);
        free(pattern);
    } else {
        rc = start_with_helper(kinds, args);
    }
    g_tool.started = rc == 0;
    return rc;
}

/* UPTI_TRACE_LIST: the agents this process saw, on stderr. */
static upti_status_t print_agents(const upti_agent_t **agents, size_t n, void *data)
{
    (void)data;
    fprintf(stderr, "upti: agents of pid %d:\n", (int)getpid());
    for (size_t i = 0; i < n; i++)
        upti_print_agent(stderr, agents[i]->id.handle, agents[i], 1);
    return UPTI_STATUS_SUCCESS;
}

static void tool_finalize(void *data)
{
    (void)data;
    if (!g_tool.started)
        return;
    if (g_tool.list)
        upti_query_available_agents(print_agents, NULL);
    ut_ring_finalize();
}

UPTI_API upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                                      uint32_t priority,
                                                      upti_client_id_t *client_id)
{
    (void)version;
    (void)runtime_version;
    (void)priority;
    static upti_tool_configure_result_t result = {sizeof(upti_tool_configure_result_t),
                                                  tool_initialize, tool_finalize, NULL};
    if (client_id != NULL)
        client_id->name = "upti-trace";
    return &result;
}
