/* SPDX-License-Identifier: MIT */
/* upti analyze, diff, recipe and report: the analyses written in Python on the `upti`
 * package (src/analysis), run as `PYTHON -m upti COMMAND ARGS...` with the
 * package's folder, LIBDIR/upti/python beside libupti-trace.so, first on
 * PYTHONPATH. upti's process becomes Python's: its exit status is upti's.
 * UPTI_COMMAND tells Python this upti (upti report runs upti stats).
 * PYTHON: $UPTI_PYTHON, else the python3 with pandas the build found
 * (UPTI_ANALYSIS_PYTHON), else python3 on PATH. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef UPTI_ANALYSIS_PYTHON
#define UPTI_ANALYSIS_PYTHON "python3"
#endif

int cmd_python(int argc, char **argv)
{
    const char *command = argv[0];
    const char *lib = cli_library_dir();
    char package[PATH_MAX];
    if (lib == NULL ||
        snprintf(package, sizeof package, "%s/upti/python", lib) >= (int)sizeof package ||
        access(package, R_OK | X_OK) != 0)
        return cli_error("%s: the upti Python package is not installed beside libupti-trace.so "
                         "(LIBDIR/upti/python)",
                         command);
    const char *old = getenv("PYTHONPATH");
    size_t len = strlen(package) + (old && *old ? strlen(old) + 1 : 0) + 1;
    char *path = malloc(len);
    char **args = calloc((size_t)argc + 4, sizeof *args);
    if (path == NULL || args == NULL) {
        free(path);
        free(args);
        return cli_error("%s: out of memory", command);
    }
    snprintf(path, len, "%s%s%s", package, old && *old ? ":" : "", old && *old ? old : "");
    setenv("PYTHONPATH", path, 1);
    if (cli_self_exe() != NULL)
        setenv("UPTI_COMMAND", cli_self_exe(), 1);
    const char *python = getenv("UPTI_PYTHON");
    args[0] = (char *)(python && *python ? python : UPTI_ANALYSIS_PYTHON);
    args[1] = "-m";
    args[2] = "upti";
    for (int i = 0; i < argc; i++) /* argv[0] is the command's name */
        args[3 + i] = argv[i];
    execvp(args[0], args);
    int e = errno;
    cli_error("%s: cannot run %s: %s (the analyses need python3 and python3-pandas: "
              "sh scripts/install-deps.sh)",
              command, args[0], strerror(e));
    free(args);
    free(path);
    return 1;
}


void cmd_analyze_help(FILE *out)
{
    fprintf(out, "usage: upti analyze [options] DB...\n"
                 "\n"
                 "Expert rules over traces: synchronization, device idle gaps, low device\n"
                 "utilisation, small transfers, API errors, launch overhead, outlier ranks.\n"
                 "Each finding: its rule, a line of explanation, the evidence and the time\n"
                 "ranges. -f json for programs; every threshold is an option.\n"
                 "'upti analyze --help' lists them. See docs/analysis.md.\n");
}

void cmd_diff_help(FILE *out)
{
    fprintf(out, "usage: upti diff [-f text|csv|json] [-o FILE] A.db B.db\n"
                 "\n"
                 "Per kernel, API function and marker range: count and time in each run,\n"
                 "the difference (B - A) and the ratio (B / A), largest change first.\n"
                 "See docs/analysis.md.\n");
}

void cmd_recipe_help(FILE *out)
{
    fprintf(out, "usage: upti recipe NAME [--mode local|dask|dask=ADDRESS] [--workers N]\n"
                 "                   [-f text|csv|json] [-o FILE] DB...\n"
                 "\n"
                 "Per-rank analyses of many databases: kernels (per kernel over all ranks,\n"
                 "and the outlier rank), api (API and synchronization time per rank),\n"
                 "ranges (marker ranges per rank), gaps (device idle gaps per rank),\n"
                 "imbalance (each rank against the median rank). On a Dask cluster with\n"
                 "--mode dask (a local one) or dask=ADDRESS. See docs/analysis.md.\n");
}

void cmd_report_help(FILE *out)
{
    fprintf(out, "usage: upti report -o FILE.html DB...\n"
                 "\n"
                 "One self-contained HTML page (no network needed): the summary tables of\n"
                 "upti stats, kernel-time bars, a timeline overview per process and device,\n"
                 "the findings of upti analyze, and with several processes a process x\n"
                 "kernel heat map. See docs/analysis.md.\n");
}
