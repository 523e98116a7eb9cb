/* See run_capture.h. */
#include "run_capture.h"

#include "capture_spec.h"
#include "cli.h"
#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "upti: run: OPTION 'VALUE' is not FORM ..." */
static int refuse(const char *option, const char *value, const char *accepted)
{
    char shown[160];
    cli_printable(value, shown, sizeof shown);
    return cli_usage_error("run", "%s '%s': accepted: %s", option, shown, accepted);
}

int run_capture_apply(const run_capture *c, char *what, size_t len)
{
    what[0] = '\0';
    if (c->range != NULL && strcmp(c->range, "marker") != 0 && strcmp(c->range, "none") != 0)
        return refuse("--capture-range", c->range, "marker (with --capture-range-name NAME[@DOMAIN]), none");
    if (c->range != NULL && strcmp(c->range, "none") == 0 && c->name != NULL)
        return cli_usage_error("run", "--capture-range-name needs --capture-range=marker "
                                      "(--capture-range=none records from start to end)");
    int marker = c->name != NULL;
    if (c->range != NULL && strcmp(c->range, "marker") == 0 && c->name == NULL)
        return cli_usage_error("run", "--capture-range=marker needs --capture-range-name NAME[@DOMAIN]");
    char *copy = NULL;
    const char *name = NULL, *domain = NULL;
    if (c->name != NULL && upti_parse_capture_name(c->name, &copy, &name, &domain) != 0)
        return refuse("--capture-range-name", c->name,
                      "NAME (a uptx or NVTX range of the default domain), NAME@DOMAIN (an NVTX "
                      "domain), NAME@* (any domain)");
    uint64_t windows = 0;
    if (c->end != NULL && upti_parse_capture_end(c->end, &windows) != 0) {
        free(copy);
        return refuse("--capture-range-end", c->end, "stop, repeat, repeat:N (N >= 1)");
    }
    if (c->end != NULL && !marker) {
        free(copy);
        return cli_usage_error("run", "--capture-range-end needs --capture-range=marker "
                                      "--capture-range-name NAME");
    }
    uint64_t delay = 0, duration = 0;
    if (c->delay != NULL && upti_parse_seconds(c->delay, &delay) != 0) {
        free(copy);
        return refuse("--delay", c->delay, "seconds, e.g. 2 or 0.5");
    }
    if (c->duration != NULL && (upti_parse_seconds(c->duration, &duration) != 0 || duration == 0)) {
        free(copy);
        return refuse("--duration", c->duration, "seconds > 0, e.g. 10 or 0.5");
    }
    upti_collection_period period = {0, 0, 1};
    if (c->period != NULL && upti_parse_collection_period(c->period, &period) != 0) {
        free(copy);
        return refuse("--collection-period", c->period,
                      "START:DURATION:REPEAT in seconds, seconds (> 0), a count (0: until the "
                      "program ends), e.g. 1:0.5:3");
    }
    if (c->period != NULL && (c->delay != NULL || c->duration != NULL)) {
        free(copy);
        return cli_usage_error("run", "--collection-period cannot be combined with --delay or "
                                      "--duration (START:DURATION:1 is --delay START --duration "
                                      "DURATION)");
    }
    upti_iteration_range iterations;
    if (c->iterations != NULL && upti_parse_iteration_range(c->iterations, &iterations) != 0) {
        free(copy);
        return refuse("--kernel-iteration-range", c->iterations,
                      "executions of each kernel counted from 1: N, N-M, N- (from N on), a "
                      "comma list, each item optionally in brackets, e.g. [1-3,5] or [2-]");
    }

    /* Why nothing may have been recorded, for the line said instead of an empty trace. */
    size_t used = 0;
#define SAY(...) (used += (size_t)snprintf(what + used, used < len ? len - used : 0, __VA_ARGS__))
    if (marker) {
        char shown[160];
        cli_printable(c->name, shown, sizeof shown);
        SAY("marker \"%s\" was never entered", shown);
        setenv("UPTI_TRACE_CAPTURE_RANGE", c->name, 1);
        if (c->end != NULL)
            setenv("UPTI_TRACE_CAPTURE_END", c->end, 1);
    }
    if (c->start_paused) {
        SAY("%sthe program never called uptx_profiler_resume (--start-paused)", used ? "; or " : "");
        setenv("UPTI_TRACE_START_PAUSED", "1", 1);
    }
    if (c->period != NULL || c->delay != NULL || c->duration != NULL) {
        if (c->period == NULL) {
            period.start_ns = delay;
            period.duration_ns = duration; /* 0: to the end */
            period.repeat = 1;
        }
        char text[96];
        upti_format_period(&period, text, sizeof text);
        setenv("UPTI_TRACE_COLLECTION_PERIOD", text, 1);
        SAY("%sthe program ended before the first period began (%.3f s)", used ? "; or " : "",
            (double)period.start_ns / 1e9);
    }
#undef SAY
    free(copy);
    return 0;
}
