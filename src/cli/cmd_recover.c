/* SPDX-License-Identifier: MIT */
/* upti recover FOLDER: finishes a run whose upti was killed, or converts a ring
 * folder (run_collect.h). */
#include "cli.h"
#include "options.h"
#include "run_collect.h"
#include "run_outputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cmd_recover_help(FILE *out)
{
    fprintf(out,
            "usage: upti recover [--wait-pid PID] [--max-wait SECONDS] [--background] FOLDER\n"
            "\n"
            "Finishes a run whose upti was killed (by a batch scheduler, the OOM killer,\n"
            "SIGKILL): what the traced processes recorded is in their rings and in the\n"
            "run's spool, in FOLDER ($TMPDIR/upti-collect-XXXXXX, else /tmp/upti-collect-XXXXXX).\n"
            "Collects what the rings still hold (waiting for traced processes that still\n"
            "run), converts it, and writes every process's outputs as the run would have:\n"
            "the same names, formats and kernel filters. Then removes FOLDER.\n"
            "\n"
            "FOLDER may also be a bare ring folder (no run.conf: UPTI_TRACE_RING_DIR set by\n"
            "hand): each process's database is named from its UPTI_TRACE_OUTPUT, else\n"
            "upti-ARGV0-PID.db; a name outside the current folder keeps its last component,\n"
            "in the current folder (said); the folder stays.\n"
            "\n"
            "FOLDER must be yours and writable by nobody else (exit status 2 otherwise).\n"
            "\n"
            "  --wait-pid PID  also wait for process PID to end before converting\n"
            "  --max-wait SECONDS\n"
            "                  once PID has ended, wait at most this long for traced processes\n"
            "                  still running (named as they are waited for; default 60, 0: as\n"
            "                  long as they run); their rings then stay in FOLDER\n"
            "  --background    return at once; a process of its own session does the work\n"
            "                  (what libupti-trace.so starts beside a program without upti run)\n"
            "\n"
            "example: upti recover /tmp/upti-collect-Ab12Cd\n");
}

enum { OPT_WAIT_PID = CLI_OPT_OWN, OPT_BACKGROUND, OPT_MAX_WAIT };

/* The default of --max-wait: seconds. */
#define DEFAULT_MAX_WAIT_S 60

typedef struct recover_opts {
    int help, background;
    long long wait_pid, max_wait;
} recover_opts;

static int on_option(void *ctx, int id, const char *value)
{
    recover_opts *o = ctx;
    if (id == CLI_OPT_HELP)
        o->help = 1;
    if (id == OPT_BACKGROUND)
        o->background = 1;
    if (id == OPT_WAIT_PID) {
        char *end = NULL;
        errno = 0;
        o->wait_pid = strtoll(value, &end, 10);
        if (errno != 0 || end == value || *end != '\0' || o->wait_pid <= 0 || o->wait_pid > 1 << 30)
            return cli_usage_error("recover", "--wait-pid: expected a process id, got '%s'", value);
    }
    if (id == OPT_MAX_WAIT) {
        char *end = NULL;
        errno = 0;
        o->max_wait = strtoll(value, &end, 10);
        if (errno != 0 || end == value || *end != '\0' || o->max_wait < 0 || o->max_wait > 1 << 30)
            return cli_usage_error("recover", "--max-wait: expected seconds, got '%s'", value);
    }
    return 0;
}

static const cli_option k_options[] = {CLI_OPTION_HELP,
                                       {OPT_WAIT_PID, 0, "wait-pid", NULL, 1},
                                       {OPT_BACKGROUND, 0, "background", NULL, 0},
                                       {OPT_MAX_WAIT, 0, "max-wait", NULL, 1}};

int cmd_recover(int argc, char **argv)
{
    recover_opts o = {0, 0, 0, DEFAULT_MAX_WAIT_S};
    int n = 0;
    char **folders = calloc((size_t)argc + 1, sizeof *folders);
    if (folders == NULL)
        return cli_error("out of memory");
    int rc = cli_parse_options("recover", k_options, sizeof k_options / sizeof k_options[0], argc,
                               argv, CLI_ARGS_ANYWHERE, on_option, &o, folders, &n);
    if (rc == 0 && o.help)
        cmd_recover_help(stdout);
    else if (rc == 0 && n != 1)
        rc = cli_usage_error("recover", "expected one FOLDER (upti recover FOLDER)");
    else if (rc == 0) {
        run_outputs_begin();
        rc = run_collect_recover(folders[0], (pid_t)o.wait_pid, o.background,
                                 (unsigned)o.max_wait);
        run_outputs_end(rc == 0 ? 1 : -1); /* -1: the failure was said */
    }
    free(folders);
    return rc;
}
