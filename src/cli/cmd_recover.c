/* upti recover RUN_FOLDER: finishes a run whose upti was killed (run_collect.h). */
#include "cli.h"
#include "options.h"
#include "run_collect.h"
#include "run_outputs.h"

#include <stdio.h>
#include <string.h>

void cmd_recover_help(FILE *out)
{
    fprintf(out,
            "usage: upti recover RUN_FOLDER\n"
            "\n"
            "Finishes a run whose upti was killed (by a batch scheduler, the OOM killer,\n"
            "SIGKILL): what the traced processes recorded is in their rings and in the\n"
            "run's spool, in RUN_FOLDER ($TMPDIR/upti-collect-XXXXXX, else /tmp/upti-collect-XXXXXX).\n"
            "Collects what the rings still hold (waiting for traced processes that still\n"
            "run), converts it, and writes every process's outputs as the run would have:\n"
            "the same names, formats and kernel filters. Then removes RUN_FOLDER.\n"
            "\n"
            "example: upti recover /tmp/upti-collect-Ab12Cd\n");
}

static int on_option(void *ctx, int id, const char *value)
{
    (void)value;
    if (id == CLI_OPT_HELP)
        *(int *)ctx = 1;
    return 0;
}

static const cli_option k_options[] = {CLI_OPTION_HELP};

int cmd_recover(int argc, char **argv)
{
    int help = 0, n = 0;
    char *folders[4] = {NULL, NULL, NULL, NULL};
    if (argc > 3)
        return cli_usage_error("recover", "expected one RUN_FOLDER (upti recover RUN_FOLDER)");
    int rc = cli_parse_options("recover", k_options, 1, argc, argv, CLI_ARGS_ANYWHERE, on_option,
                               &help, folders, &n);
    if (rc != 0)
        return rc;
    if (help) {
        cmd_recover_help(stdout);
        return 0;
    }
    if (n != 1)
        return cli_usage_error("recover", "expected one RUN_FOLDER (upti recover RUN_FOLDER)");
    run_outputs_begin();
    rc = run_collect_recover(folders[0]);
    run_outputs_end(0, 0, 0, rc == 0);
    return rc;
}
