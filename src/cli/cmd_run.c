/* upti run: set up the environment for libupti-trace.so, the OpenCL layer and the
 * NVTX injection, run the program, and exit with its status. */
#include "cli.h"
#include "output.h"
#include "run_outputs.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <upti/upti.h>

void cmd_run_help(FILE *out)
{
    fprintf(out,
            "usage: upti run [options] [--] PROGRAM [ARGS...]\n"
            "\n"
            "Runs PROGRAM with UPTI's tracing tool and writes, per process, a SQLite\n"
            "database (and the other formats asked for). Programs it starts (fork/exec)\n"
            "are traced too, each into its own files. Exits with PROGRAM's status\n"
            "(128+N if signal N killed it).\n"
            "\n"
            "what to trace (default: --sys-trace):\n"
            "  --opencl-trace            OpenCL API calls\n"
            "  --kernel-trace            kernel dispatches (and kernel symbols)\n"
            "  --memory-copy-trace       copies, fills, maps, migrations, markers, barriers\n"
            "  --memory-alloc-trace      buffer/image/SVM allocations and releases\n"
            "  --marker-trace            uptx and NVTX markers: ranges, marks, thread names\n"
            "  --sys-trace               all of the above\n"
            "  --kernel-include-regex RE keep only kernels whose name matches RE (POSIX ERE)\n"
            "  --kernel-exclude-regex RE drop kernels whose name matches RE\n"
            "  --args                    also record the arguments of OpenCL calls (names,\n"
            "                            types, printed values: the arg table and the args\n"
            "                            view); implies --opencl-trace; off by default (cost)\n"
            "\n"
            "output:\n"
            "  -d, --output-dir DIR      directory of the outputs (default: .)\n"
            "  -o, --output-file NAME    file name without extension (default:\n"
            "                            upti-%%argv0%%-%%pid%%); placeholders: %%pid%% %%ppid%%\n"
            "                            %%hostname%% %%rank%% (OMPI_COMM_WORLD_RANK, PMI_RANK,\n"
            "                            SLURM_PROCID, MPI_LOCALRANKID) %%argv0%% %%env{NAME}%% %%%%\n"
            "  --format LIST             comma-separated: db (SQLite, see docs/database.md),\n"
            "                            pftrace (Perfetto protobuf), json (Chrome trace\n"
            "                            JSON), csv (one file per record kind). Default: db\n"
            "  --force-overwrite         replace existing files of the output names that\n"
            "                            upti did not write (default: refused, written under\n"
            "                            NAME-PID instead); also UPTI_TRACE_FORCE_OVERWRITE=1\n"
            "  --stats                   print the summary tables at exit (on stderr, per\n"
            "                            process; also NAME_stats.csv with --format csv)\n"
            "  -L, --list                list tracing kinds, operations and agents; with a\n"
            "                            PROGRAM, also run it (traced as usual) and print,\n"
            "                            per process at its end, the agents (devices) it saw\n"
            "  -h, --help                this help\n"
            "\n"
            "environment set for PROGRAM: UPTI_TOOL_LIBRARIES, OPENCL_LAYERS,\n"
            "NVTX_INJECTION64_PATH and UPTI_TRACE_* (see docs/cli.md).\n"
            "\n"
            "example: upti run --sys-trace --stats --format db,pftrace -d out -- ./app 100\n");
}

enum {
    O_OPENCL = 256, O_KERNEL, O_COPY, O_ALLOC, O_MARKER, O_SYS, O_STATS, O_FORMAT, O_INCLUDE,
    O_EXCLUDE, O_ARGS, O_FORCE_OVERWRITE
};

/* Prepends value to a ':'-separated variable (kept once). */
static void env_prepend(const char *name, const char *value)
{
    const char *old = getenv(name);
    if (old == NULL || old[0] == '\0') {
        setenv(name, value, 1);
        return;
    }
    size_t n = strlen(value);
    for (const char *p = old; p != NULL && *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len == n && strncmp(p, value, n) == 0)
            return;
        p = colon ? colon + 1 : NULL;
    }
    size_t len = strlen(old) + n + 2;
    char *joined = malloc(len);
    snprintf(joined, len, "%s:%s", value, old);
    setenv(name, joined, 1);
    free(joined);
}

static int list_cb_op(upti_tracing_kind_t kind, uint32_t op, void *data)
{
    (void)data;
    const char *name = NULL;
    if (op != 0 && upti_get_tracing_operation_name(kind, op, &name) == UPTI_STATUS_SUCCESS && name)
        printf("    %u %s\n", op, name);
    return 0;
}

static int list_cb_kind(upti_tracing_kind_t kind, void *data)
{
    (void)data;
    const char *name = NULL;
    upti_get_tracing_kind_name(kind, &name);
    printf("  %s\n", name ? name : "?");
    upti_iterate_tracing_kind_operations(kind, list_cb_op, NULL);
    return 0;
}

static upti_status_t list_agents(const upti_agent_t **agents, size_t n, void *data)
{
    (void)data;
    printf("agents:\n");
    if (n <= 1)
        printf("  (devices appear once a runtime registers: 'upti run -L -- PROGRAM' prints,\n"
               "   at the end of each traced process, the agents it saw)\n");
    for (size_t i = 0; i < n; i++)
        printf("  %llu %s %s: %s (%s)\n", (unsigned long long)agents[i]->id.handle,
               agents[i]->runtime ? agents[i]->runtime : "?",
               agents[i]->type == UPTI_AGENT_TYPE_CPU ? "CPU"
               : agents[i]->type == UPTI_AGENT_TYPE_GPU ? "GPU"
                                                        : "ACCELERATOR",
               agents[i]->name ? agents[i]->name : "?", agents[i]->vendor ? agents[i]->vendor : "");
    return UPTI_STATUS_SUCCESS;
}

/* -L: what libupti knows, through its public API (libupti is linked by `upti`).
 * With a PROGRAM (agents = 0), the tool in each traced process prints the
 * agents that process saw when it ends (UPTI_TRACE_LIST). */
static int list_kinds(int agents)
{
    printf("tracing kinds and operations:\n");
    if (upti_iterate_tracing_kinds(list_cb_kind, NULL) != UPTI_STATUS_SUCCESS)
        return cli_error("cannot list tracing kinds");
    if (!agents) {
        printf("agents: listed on stderr by each traced process when it ends\n");
        return 0;
    }
    if (upti_query_available_agents(list_agents, NULL) != UPTI_STATUS_SUCCESS)
        printf("agents: run a program (upti run -L -- PROGRAM) to list its devices\n");
    return 0;
}

static pid_t g_child;
static void forward(int sig)
{
    if (g_child > 0)
        kill(g_child, sig);
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"opencl-trace", no_argument, NULL, O_OPENCL},
        {"kernel-trace", no_argument, NULL, O_KERNEL},
        {"memory-copy-trace", no_argument, NULL, O_COPY},
        {"memory-alloc-trace", no_argument, NULL, O_ALLOC},
        {"marker-trace", no_argument, NULL, O_MARKER},
        {"sys-trace", no_argument, NULL, O_SYS},
        {"stats", no_argument, NULL, O_STATS},
        {"output-dir", required_argument, NULL, 'd'},
        {"output-file", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, O_FORMAT},
        {"kernel-include-regex", required_argument, NULL, O_INCLUDE},
        {"kernel-exclude-regex", required_argument, NULL, O_EXCLUDE},
        {"args", no_argument, NULL, O_ARGS},
        {"force-overwrite", no_argument, NULL, O_FORCE_OVERWRITE},
        {"list", no_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char kinds[256] = "";
    const char *dir = NULL, *file = NULL, *formats = "db", *include = NULL, *exclude = NULL;
    int stats = 0, list = 0, args = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:d:o:Lh", opts, NULL)) != -1) {
        const char *k = NULL;
        switch (c) {
        case O_OPENCL: k = "opencl_api"; break;
        case O_KERNEL: k = "kernel_dispatch,code_object"; break;
        case O_COPY: k = "memory_copy"; break;
        case O_ALLOC: k = "memory_allocation"; break;
        case O_MARKER: k = "marker_api"; break;
        case O_SYS: k = "all"; break;
        case O_STATS: stats = 1; break;
        case 'd': dir = optarg; break;
        case 'o': file = optarg; break;
        case O_FORMAT: formats = optarg; break;
        case O_INCLUDE: include = optarg; break;
        case O_EXCLUDE: exclude = optarg; break;
        case 'L': list = 1; break;
        case O_ARGS: args = 1; k = "opencl_api"; break;
        case O_FORCE_OVERWRITE: setenv("UPTI_TRACE_FORCE_OVERWRITE", "1", 1); break;
        case 'h': cmd_run_help(stdout); return 0;
        default: return cli_bad_option("run", c, argv, optind, optopt);
        }
        if (k != NULL) {
            size_t used = strlen(kinds);
            snprintf(kinds + used, sizeof kinds - used, "%s%s", used ? "," : "", k);
        }
    }
    /* Validate before running anything. */
    static const struct {
        const char *name;
        unsigned bit;
    } k_formats[] = {{"db", UO_FORMAT_DB}, {"pftrace", UO_FORMAT_PFTRACE}, {"json", UO_FORMAT_JSON},
                     {"csv", UO_FORMAT_CSV}};
    unsigned format_bits = 0;
    char *copy = strdup(formats);
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < 4 && strcmp(t, k_formats[i].name) != 0)
            i++;
        if (i == 4) {
            int rc = cli_usage_error("run", "unknown format '%s' (db, pftrace, json, csv)", t);
            free(copy);
            return rc;
        }
        format_bits |= k_formats[i].bit;
    }
    free(copy);
    (void)format_bits; /* each process reads its formats from UPTI_TRACE_FORMATS */
    const char *res[2] = {include, exclude};
    for (int i = 0; i < 2; i++) {
        regex_t re;
        if (res[i] == NULL)
            continue;
        if (regcomp(&re, res[i], REG_EXTENDED | REG_NOSUB) != 0)
            return cli_usage_error("run", "invalid regular expression '%s'", res[i]);
        regfree(&re);
    }
    if (list && optind >= argc)
        return list_kinds(1);
    if (optind >= argc)
        return cli_usage_error("run", "missing PROGRAM (upti run [options] -- PROGRAM [ARGS...])");

    const char *libdir = cli_library_dir();
    if (libdir == NULL)
        return cli_error("cannot find libupti-trace.so next to the upti executable (../lib)");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/libupti-trace.so", libdir);
    env_prepend("UPTI_TOOL_LIBRARIES", path);
    snprintf(path, sizeof path, "%s/libupti-opencl.so", libdir);
    if (access(path, R_OK) == 0)
        env_prepend("OPENCL_LAYERS", path);
    snprintf(path, sizeof path, "%s/libupti-nvtx.so", libdir);
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (access(path, R_OK) == 0 && (nvtx == NULL || nvtx[0] == '\0'))
        setenv("NVTX_INJECTION64_PATH", path, 1);

    setenv("UPTI_TRACE_KINDS", kinds[0] ? kinds : "all", 1);
    setenv("UPTI_TRACE_FORMATS", formats, 1);
    if (stats)
        setenv("UPTI_TRACE_STATS", "1", 1);
    else
        unsetenv("UPTI_TRACE_STATS");
    if (list)
        setenv("UPTI_TRACE_LIST", "1", 1);
    else
        unsetenv("UPTI_TRACE_LIST");
    if (args)
        setenv("UPTI_TRACE_ARGS", "1", 1);
    else
        unsetenv("UPTI_TRACE_ARGS");
    if (include)
        setenv("UPTI_TRACE_KERNEL_INCLUDE", include, 1);
    if (exclude)
        setenv("UPTI_TRACE_KERNEL_EXCLUDE", exclude, 1);

    /* Output pattern: DIR/NAME, without extension. */
    char name[PATH_MAX];
    snprintf(name, sizeof name, "%s", file ? file : "upti-%argv0%-%pid%");
    static const char *const exts[] = {".db", ".pftrace", ".json", ".csv"};
    for (size_t i = 0; i < 4; i++) {
        size_t n = strlen(name), e = strlen(exts[i]);
        if (n > e && strcmp(name + n - e, exts[i]) == 0)
            name[n - e] = '\0';
    }
    char pattern[PATH_MAX * 2];
    if (name[0] == '/' || dir == NULL)
        snprintf(pattern, sizeof pattern, "%s", name);
    else
        snprintf(pattern, sizeof pattern, "%s/%s", dir, name);
    if (dir != NULL && mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cli_error("cannot create the output directory %s: %s", dir, strerror(errno));
    setenv("UPTI_TRACE_OUTPUT", pattern, 1);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    char session[32];
    snprintf(session, sizeof session, "%llu",
             (unsigned long long)wall.tv_sec * 1000000000ull + (unsigned long long)wall.tv_nsec);
    setenv("UPTI_TRACE_SESSION_START", session, 1);

    if (list && list_kinds(0) != 0)
        return 1;
    run_outputs_begin();
    fflush(NULL);
    g_child = fork();
    if (g_child < 0) {
        run_outputs_discard();
        return cli_error("fork: %s", strerror(errno));
    }
    if (g_child == 0) {
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "upti: cannot run '%s': %s\n", argv[optind], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    /* SIGINT, SIGTERM, SIGHUP sent to upti go to the program (whose tool then
     * writes its outputs before it ends); upti waits for it and exits with its
     * status. The terminal's Ctrl+C reaches both: the program's tool takes a
     * repeated SIGINT as one. SIGQUIT from the terminal reaches the program. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGQUIT, SIG_IGN);
    /* A file size limit (RLIMIT_FSIZE) fails upti's own writes with EFBIG,
     * said in a message, instead of killing it (the program keeps its own
     * disposition: this is set after the fork). */
    signal(SIGXFSZ, SIG_IGN);
    int status = 0;
    while (waitpid(g_child, &status, 0) < 0) {
        if (errno != EINTR) {
            run_outputs_discard();
            return cli_error("waitpid: %s", strerror(errno));
        }
    }
    run_outputs_end(g_child, status, stats);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}
