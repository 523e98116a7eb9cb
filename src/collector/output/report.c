/* SPDX-License-Identifier: MIT */
/* See output.h: uo_set_reporter. Where src/collector/output's messages go: the
 * program that links it decides (the CLI prints them, the tool logs them). */
#include "output.h"

#include <stdarg.h>
#include <stdio.h>

static uo_report_fn g_report_fn;
static void *g_report_data;

void uo_set_reporter(uo_report_fn fn, void *data)
{
    g_report_fn = fn;
    g_report_data = data;
}

void uo_report(const char *fmt, ...)
{
    if (g_report_fn == NULL)
        return;
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    g_report_fn(g_report_data, message);
}

void uo_report_to_stderr(void *data, const char *message)
{
    (void)data;
    fprintf(stderr, "upti: %s\n", message);
}
