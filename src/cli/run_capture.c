/* SPDX-License-Identifier: MIT */
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

int run_capture_check_one(const char *option, const char *value)
{
    if (strcmp(option, "capture-range") == 0) {
        if (strcmp(value, "marker") != 0 && strcmp(value, "none") != 0)
            return refuse("--capture-range", value,
                          "marker (with --capture-range-name NAME[@DOMAIN]), none");
    } else if (strcmp(option, "capture-range-name") == 0) {
        char *copy = NULL;
        const char *name = NULL, *domain = NULL;
        int bad = upti_parse_capture_name(value, &copy, &name, &domain) != 0;
        free(copy);
        if (bad)
            return refuse("--capture-range-name", value,
                          "NAME (a uptx or NVTX range of the default domain), NAME@DOMAIN (an "
                          "NVTX domain), NAME@* (any domain)");
    } else if (strcmp(option, "capture-range-end") == 0) {
        uint64_t windows = 0;
        if (upti_parse_capture_end(value, &windows) != 0)
            return refuse("--capture-range-end", value, "stop, repeat, repeat:N (N >= 1)");
    } else if (strcmp(option, "delay") == 0) {
        uint64_t delay = 0;
        if (upti_parse_seconds(value, &delay) != 0)
            return refuse("--delay", value, "seconds, e.g. 2 or 0.5");
    } else if (strcmp(option, "duration") == 0) {
        uint64_t duration = 0;
        if (upti_parse_seconds(value, &duration) != 0 || duration == 0)
            return refuse("--duration", value, "seconds > 0, e.g. 10 or 0.5");
    } else if (strcmp(option, "collection-period") == 0) {
        upti_collection_period period = {0, 0, 1};
        if (upti_parse_collection_period(value, &period) != 0)
            return refuse("--collection-period", value,
                          "START:DURATION:REPEAT in seconds, seconds (> 0), a count (0: until the "
                          "program ends), e.g. 1:0.5:3");
    } else if (strcmp(option, "kernel-iteration-range") == 0) {
        upti_iteration_range iterations;
        if (upti_parse_iteration_range(value, &iterations) != 0)
            return refuse("--kernel-iteration-range", value,
                          "executions of each kernel counted from 1: N, N-M, N- (from N on), a "
                          "comma list, each item optionally in brackets, e.g. [1-3,5] or [2-]");
    }
    return 0;
}

/* Checks c; sets the program's variables when apply. */
static int check_and_apply(const run_capture *c, char *what, size_t len, int apply)
{
    what[0] = '\0';
    const struct {
        const char *option, *value;
    } given[] = {{"capture-range", c->range},   {"capture-range-name", c->name},
                 {"capture-range-end", c->end}, {"delay", c->delay},
                 {"duration", c->duration},     {"collection-period", c->period},
                 {"kernel-iteration-range", c->iterations}};
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++) {
        int rc = given[i].value != NULL ? run_capture_check_one(given[i].option, given[i].value) : 0;
        if (rc != 0)
            return rc;
    }
    if (c->range != NULL && strcmp(c->range, "none") == 0 && c->name != NULL)
        return cli_usage_error("run", "--capture-range-name needs --capture-range=marker "
                                      "(--capture-range=none records from start to end)");
    int marker = c->name != NULL;
    if (c->range != NULL && strcmp(c->range, "marker") == 0 && c->name == NULL)
        return cli_usage_error("run", "--capture-range=marker needs --capture-range-name NAME[@DOMAIN]");
    if (c->end != NULL && !marker)
        return cli_usage_error("run", "--capture-range-end needs --capture-range=marker "
                                      "--capture-range-name NAME");
    if (c->period != NULL && (c->delay != NULL || c->duration != NULL))
        return cli_usage_error("run", "--collection-period cannot be combined with --delay or "
                                      "--duration (START:DURATION:1 is --delay START --duration "
                                      "DURATION)");
    if (!apply)
        return 0;
    uint64_t delay = 0, duration = 0;
    if (c->delay != NULL)
        upti_parse_seconds(c->delay, &delay);
    if (c->duration != NULL)
        upti_parse_seconds(c->duration, &duration);
    upti_collection_period period = {0, 0, 1};
    if (c->period != NULL)
        upti_parse_collection_period(c->period, &period);

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
    return 0;
}

int run_capture_apply(const run_capture *c, char *what, size_t len)
{
    return check_and_apply(c, what, len, 1);
}

int run_capture_check(const run_capture *c)
{
    char what[8];
    return check_and_apply(c, what, sizeof what, 0);
}
