/* SPDX-License-Identifier: MIT */
/* upti: the command-line tracer. One file per subcommand (cmd_*.c), dispatched from a table. */
#include "cli.h"
#include "options.h"
#include "output.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <upti/defines.h>

static const cli_command k_commands[] = {
    {"run", "trace a program: upti run [options] -- program [args...]", cmd_run, cmd_run_help},
    {"stats", "print the summary reports of a trace database", cmd_stats, cmd_stats_help},
    {"export", "write a database as Perfetto, JSON, CSV or OTF2", cmd_export, cmd_export_help},
    {"merge", "join databases of several processes or ranks into one", cmd_merge, cmd_merge_help},
    {"recover", "finish a run whose upti was killed, or convert a ring folder", cmd_recover,
     cmd_recover_help},
    {"analyze", "expert findings over traces: waits, idle gaps, errors, outliers", cmd_python,
     cmd_analyze_help},
    {"diff", "compare two runs: per kernel, API call and range, largest change first", cmd_python,
     cmd_diff_help},
    {"recipe", "per-rank analyses of many databases, locally or on Dask", cmd_python,
     cmd_recipe_help},
    {"report", "one HTML page: tables, timeline, kernel bars, findings, heat map", cmd_python,
     cmd_report_help},
};
#define NCOMMANDS (sizeof k_commands / sizeof k_commands[0])

static void help(FILE *out)
{
    fprintf(out,
            "usage: upti <command> [options] [arguments]\n"
            "\n"
            "UPTI's tracer: records OpenCL calls, kernels, memory copies and allocations,\n"
            "uptx and NVTX markers of a program into a SQLite database per process, and\n"
            "writes Perfetto timelines, CSV and summary tables.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-8s %s\n", k_commands[i].name, k_commands[i].summary);
    fprintf(out,
            "  help     upti help <command>: the options of a command\n"
            "\n"
            "options:\n"
            "  -h, --help     this help\n"
            "  -V, --version  print the version\n"
            "  -L, --list     list tracing kinds, operations and agents (= upti run -L;\n"
            "                 'upti run -L -- PROGRAM' also lists the devices PROGRAM saw)\n"
            "\n"
            "examples:\n"
            "  upti run --sys-trace --stats -- ./app 1000\n"
            "  upti run --kernel-trace --format db,pftrace -d out -o %%hostname%%-%%pid%% -- ./app\n"
            "  upti stats out/host-1234.db\n"
            "  upti export out/host-1234.db --format pftrace     (open at https://ui.perfetto.dev)\n"
            "  upti merge rank0.db rank1.db -o all.db\n"
            "\n"
            "exit status: upti run exits with the program's status (128+N if signal N\n"
            "killed it); 2 for a usage error; 1 for other errors.\n"
            "See docs/cli.md and docs/database.md.\n");
}

static const cli_command *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(name, k_commands[i].name) == 0)
            return &k_commands[i];
    return NULL;
}

/* "unknown option 'X'", X made printable. */
static int unknown(const char *command, const char *what, const char *arg)
{
    char shown[80];
    cli_printable(arg, shown, sizeof shown);
    return cli_usage_error(command, "%s '%s'", what, shown);
}

int cli_status_is_programs;

static int run_command(int argc, char **argv);

/* What a command printed (a report, a list, the help) reached its destination:
 * a full disk or a closed file is one line and exit 1, never a silent 0. */
static int check_stdout(int rc, int keep_status)
{
    errno = 0;
    int failed = fflush(stdout) != 0;
    int e = errno;
    if (!failed && !ferror(stdout))
        return rc;
    if (rc != 0 && !keep_status)
        return rc; /* a command that failed said why */
    /* The reason is known when the last flush failed; an earlier write's is gone. */
    fprintf(stderr, "upti: cannot write the standard output%s%s\n", e ? ": " : "",
            e ? strerror(e) : "");
    return keep_status ? rc : 1;
}

int main(int argc, char **argv)
{
    /* upti's threads (collecting, converting) allocate from one heap. Each
     * thread's own heap grew a page or a few at a time, each growth an
     * mprotect and fresh pages: a short `upti run` made some 60 of them, CPU
     * taken beside the traced program (50 system calls and 10 page faults
     * fewer in all with one heap); the threads seldom allocate at once. */
    mallopt(M_ARENA_MAX, 1);
    int rc = run_command(argc, argv);
    return check_stdout(rc, cli_status_is_programs);
}

static int run_command(int argc, char **argv)
{
    /* The trace writers' problems (a database error, an output written under
     * another name) are said here, on stderr. */
    uo_set_reporter(uo_report_to_stderr, NULL);
    if (argc < 2)
        return cli_usage_error(NULL, "missing command");
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
        help(stdout);
        return 0;
    }
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("upti %s\n", UPTI_VERSION_STRING);
        return 0;
    }
    if (strcmp(cmd, "-L") == 0 || strcmp(cmd, "--list") == 0) {
        /* upti -L [-- PROGRAM ...] is upti run -L [-- PROGRAM ...] */
        argv[1] = "-L";
        argv[0] = "run";
        return cmd_run(argc, argv);
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) {
            help(stdout);
            return 0;
        }
        const cli_command *c = find(argv[2]);
        if (c == NULL)
            return unknown(NULL, "unknown command", argv[2]);
        c->help(stdout);
        return 0;
    }
    if (cmd[0] == '-')
        return unknown(NULL, "unknown option", cmd);
    const cli_command *c = find(cmd);
    if (c == NULL)
        return unknown(NULL, "unknown command", cmd);
    return c->run(argc - 1, argv + 1);
}

static const char *g_error_context;

void cli_set_error_context(const char *context)
{
    g_error_context = context;
}

int cli_usage_error(const char *command, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (command && g_error_context != NULL)
        fprintf(stderr, "upti: %s: %s: %s (see 'upti %s --help')\n", command, g_error_context,
                msg, command);
    else if (command)
        fprintf(stderr, "upti: %s: %s (see 'upti %s --help')\n", command, msg, command);
    else
        fprintf(stderr, "upti: %s (see 'upti --help')\n", msg);
    return 2;
}

int cli_error(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "upti: %s\n", msg);
    return 1;
}

const char *cli_self_exe(void)
{
    static char exe[PATH_MAX];
    if (exe[0] == '\0') {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
    }
    return exe[0] ? exe : NULL;
}

const char *cli_library_dir(void)
{
    static char dir[PATH_MAX];
    static int done;
    if (done)
        return dir[0] ? dir : NULL;
    done = 1;
    char exe[PATH_MAX];
    const char *self = cli_self_exe();
    if (self == NULL)
        return NULL;
    snprintf(exe, sizeof exe, "%s", self);
    char *slash = strrchr(exe, '/');
    if (slash == NULL)
        return NULL;
    *slash = '\0';
    const char *candidates[] = {"../lib", ("../" UPTI_CLI_LIBDIR), "../lib64", "."};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char probe[PATH_MAX], joined[PATH_MAX];
        int n = snprintf(joined, sizeof joined, "%s/%s", exe, candidates[i]);
        if (n < 0 || (size_t)n >= sizeof joined - 32)
            continue;
        memcpy(probe, joined, (size_t)n);
        memcpy(probe + n, "/libupti-trace.so", sizeof "/libupti-trace.so");
        if (access(probe, R_OK) == 0) {
            if (realpath(joined, dir) == NULL)
                memcpy(dir, joined, (size_t)n + 1);
            return dir;
        }
    }
    return NULL;
}

char *cli_strip_db(const char *path)
{
    char *s = strdup(path);
    size_t n = strlen(s);
    if (n > 3 && strcmp(s + n - 3, ".db") == 0)
        s[n - 3] = '\0';
    return s;
}

char *cli_format_text(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text != NULL) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return text;
}
