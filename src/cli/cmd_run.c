/* SPDX-License-Identifier: MIT */
/* upti run: set up the environment for libupti-trace.so, the OpenCL layer and the
 * NVTX injection, run the program, and exit with its status. */
#include "agent_print.h"
#include "cli.h"
#include "env.h"
#include "host_cpus.h"
#include "log.h"
#include "options.h"
#include "out_files.h"
#include "output.h"
#include "run_outputs.h"
#include "run_collect.h"
#include "run_capture.h"
#include "run_config.h"
#include "run_options.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <upti/upti.h>

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

static void list_agents(const upti_agent_t *agents, size_t n)
{
    printf("agents:\n");
    if (n <= 1)
        printf("  (devices appear once a runtime registers: 'upti run -L -- PROGRAM' prints,\n"
               "   at the end of each traced process, the agents it saw)\n");
    for (size_t i = 0; i < n; i++)
        upti_print_agent(stdout, i + 1, &agents[i], 0);
}

/* -L: the kinds and operations UPTI knows (the names library, src/names) and,
 * without a PROGRAM, the host's CPU agents, those libupti starts with. With a
 * PROGRAM (agents = 0), the tool in each traced process prints the agents that
 * process saw when it ends (UPTI_TRACE_LIST). */
static int list_kinds(int agents)
{
    printf("tracing kinds and operations:\n");
    if (upti_iterate_tracing_kinds(list_cb_kind, NULL) != UPTI_STATUS_SUCCESS)
        return cli_error("cannot list tracing kinds");
    if (!agents) {
        printf("agents: listed on stderr by each traced process when it ends\n");
        return 0;
    }
    upti_agent_t host[64];
    size_t n = upti_host_cpu_agents(host, 64);
    list_agents(host, n);
    upti_host_cpu_agents_release(host, n);
    return 0;
}

/* The defaults that differ under upti run (a ring that upti drains while the
 * program runs: docs/cli.md), as a refusal names them; NULL: env.c's. */
static const char *run_default(int id)
{
    switch (id) {
    case UPTI_ENV_RING_FULL_WAIT_MS: return "1 s";       /* run_collect_begin() */
    default: return NULL;
    }
}

/* The UPTI_* variables the program's processes read (env.h): a bad value is
 * said once, here, and removed so that every process uses the default. */
static void check_environment(void)
{
    for (int id = 0; id < UPTI_ENV_COUNT; id++) {
        char msg[512];
        /* upti run sets these from its own options (--stats, --args, -L). */
        if (id == UPTI_ENV_TRACE_STATS || id == UPTI_ENV_TRACE_ARGS || id == UPTI_ENV_TRACE_LIST)
            continue;
        if (!upti_env_check((upti_env_id)id, msg, sizeof msg))
            continue;
        char *using = strstr(msg, ": using ");
        if (using != NULL && run_default(id) != NULL)
            snprintf(using, sizeof msg - (size_t)(using - msg), ": using %s", run_default(id));
        fprintf(stderr, "upti: %s\n", msg);
        unsetenv(upti_env_name((upti_env_id)id));
    }
}

/* UPTI_RUN_COMMAND=PID<TAB>ARGV: the command line upti run starts, which the
 * program's ring file records (src/program/sdk/shared_buffer.c) instead of
 * /proc/PID/cmdline, which shows the edits a program makes to its argv. The
 * PID is twelve zeros here: launched_command_pid writes the child's in place
 * (after the fork: no allocation). malloc'd for putenv, or NULL. */
#define LAUNCHED_PID_DIGITS 12
static char *launched_command(char *const *program)
{
    static const char name[] = "UPTI_RUN_COMMAND=";
    size_t len = sizeof name + LAUNCHED_PID_DIGITS + 1;
    for (char *const *a = program; *a != NULL; a++)
        len += strlen(*a) + 1;
    char *env = malloc(len);
    if (env == NULL)
        return NULL;
    size_t at = (size_t)snprintf(env, len, "%s%0*d\t", name, LAUNCHED_PID_DIGITS, 0);
    for (char *const *a = program; *a != NULL; a++)
        at += (size_t)snprintf(env + at, len - at, "%s%s", a == program ? "" : " ", *a);
    return env;
}

static void launched_command_pid(char *env)
{
    char digits[LAUNCHED_PID_DIGITS + 1];
    snprintf(digits, sizeof digits, "%0*d", LAUNCHED_PID_DIGITS, (int)getpid());
    memcpy(strchr(env, '=') + 1, digits, LAUNCHED_PID_DIGITS);
}

static pid_t g_child;
static volatile sig_atomic_t g_child_ended, g_collecting_apart;
static void forward(int sig)
{
    int saved_errno = errno; /* kill() may set it under the interrupted waitpid's check */
    /* Once the program ended, a SIGINT/SIGTERM to upti ends the wait for
     * the processes it left running: their traces so far are written. */
    if (g_child_ended && sig != SIGHUP && g_collecting_apart)
        run_collect_apart_stop();
    else if (g_child_ended && sig != SIGHUP)
        run_collect_stop();
    else if (g_child > 0)
        kill(g_child, sig);
    errno = saved_errno;
}

/* Checks o (all of it: the options together), runs the program unless check_only. */
static int run_program(const run_options *o, char **program, int nprogram, int check_only)
{
    const char *include = o->include, *exclude = o->exclude, *formats = o->formats;
    const char *kinds = o->kinds;
    const char *stats = run_stats_reports(o);
    int list = o->list, args = o->args;
    /* Validate before running anything. */
    unsigned format_bits = 0;
    int rc = run_check_formats(formats, &format_bits);
    if (rc != 0)
        return rc;
    const char *res[2] = {include, exclude};
    for (int i = 0; i < 2; i++) {
        if (res[i] != NULL && (rc = run_check_regex(res[i])) != 0)
            return rc;
    }
    char capture_never[512];
    rc = check_only ? run_capture_check(&o->capture)
                    : run_capture_apply(&o->capture, capture_never, sizeof capture_never);
    if (rc != 0)
        return rc;
    char *pattern = NULL;
    rc = run_output_pattern(o, &pattern);
    if (rc != 0)
        return rc;
    if (check_only) {
        free(pattern);
        return nprogram == 0 && !list
                   ? cli_usage_error("run", "missing PROGRAM (upti run [options] -- PROGRAM [ARGS...])")
                   : 0;
    }
    if (nprogram == 0) {
        free(pattern);
        if (list)
            return list_kinds(1);
        return cli_usage_error("run", "missing PROGRAM (upti run [options] -- PROGRAM [ARGS...])");
    }
    /* The directories before the first placeholder; the traced processes make the rest. */
    int dir_rc = cli_make_output_dir(pattern, 1);
    if (dir_rc != 0) {
        free(pattern);
        return dir_rc;
    }

    check_environment();
    if (o->log_level != NULL)
        setenv("UPTI_LOG_LEVEL", o->log_level, 1);
    if (o->force_overwrite)
        setenv("UPTI_TRACE_FORCE_OVERWRITE", "1", 1);
    const char *libdir = cli_library_dir();
    if (libdir == NULL) {
        free(pattern);
        return cli_error("cannot find libupti-trace.so next to the upti executable (../lib)");
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/libupti-trace.so", libdir);
    env_prepend("UPTI_TOOL_LIBRARIES", path);
    snprintf(path, sizeof path, "%s/libupti-opencl.so", libdir);
    if (access(path, R_OK) == 0)
        env_prepend("OPENCL_LAYERS", path);
    /* The Vulkan layer, as an implicit layer that UPTI_VULKAN_LAYER=1 enables:
       the loader looks for implicit manifests in every XDG_DATA_DIRS folder's
       vulkan/implicit_layer.d (its default, when unset, stays searched).
       VK_INSTANCE_LAYERS would work too, but the loader then warns that the
       variable added a layer, through any debug messenger of the program. */
    snprintf(path, sizeof path, "%s/upti-vulkan/vulkan/implicit_layer.d/VkLayer_UPTI_trace.json",
             libdir);
    if (access(path, R_OK) == 0) {
        const char *xdg = getenv("XDG_DATA_DIRS");
        if (xdg == NULL || xdg[0] == '\0')
            setenv("XDG_DATA_DIRS", "/usr/local/share:/usr/share", 1);
        snprintf(path, sizeof path, "%s/upti-vulkan", libdir);
        env_prepend("XDG_DATA_DIRS", path);
        setenv("UPTI_VULKAN_LAYER", "1", 1);
    }
    snprintf(path, sizeof path, "%s/libupti-nvtx.so", libdir);
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (access(path, R_OK) == 0 && (nvtx == NULL || nvtx[0] == '\0'))
        setenv("NVTX_INJECTION64_PATH", path, 1);

    setenv("UPTI_TRACE_KINDS", kinds[0] ? kinds : "all", 1);
    setenv("UPTI_TRACE_FORMATS", formats, 1);
    if (stats != NULL) {
        setenv("UPTI_TRACE_STATS", "1", 1);
        setenv("UPTI_TRACE_STATS_REPORT", stats, 1);
    } else {
        unsetenv("UPTI_TRACE_STATS");
        unsetenv("UPTI_TRACE_STATS_REPORT");
    }
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

    setenv("UPTI_TRACE_OUTPUT", pattern, 1);
    free(pattern);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    char session[32];
    snprintf(session, sizeof session, "%llu",
             (unsigned long long)wall.tv_sec * 1000000000ull + (unsigned long long)wall.tv_nsec);
    setenv("UPTI_TRACE_SESSION_START", session, 1);

    cli_status_is_programs = 1;
    if (list) {
        /* A reader that is gone (upti run -L -- app | head -1) must not end upti
         * (SIGPIPE) before the program runs: the list is lost, said at the end. */
        struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
        sigemptyset(&ign.sa_mask);
        sigaction(SIGPIPE, &ign, &old_pipe);
        int listed = list_kinds(0);
        fflush(stdout);
        sigaction(SIGPIPE, &old_pipe, NULL);
        if (listed != 0)
            return 1;
    }
    char *config = run_resolved_config(o);
    if (config == NULL)
        return cli_error("out of memory");
    run_collect_cfg cfg = {getenv("UPTI_TRACE_OUTPUT"), format_bits, stats, include,
                           exclude, session, o->capture.iterations, capture_never, config,
                           o->output_config};
    rc = run_collect_begin(&cfg);
    free(config);
    if (rc != 0)
        return rc;
    run_outputs_begin(); /* upti's own list of the files it wrote */
    fflush(NULL);
    /* SIGINT, SIGTERM, SIGHUP sent to upti go to the program (which only
     * records: upti writes the outputs once it ended); upti waits for it and
     * exits with its status. The terminal's Ctrl+C reaches both. SIGQUIT from
     * the terminal reaches the program. A file size limit (RLIMIT_FSIZE)
     * fails upti's own writes with EFBIG, said in a message, instead of
     * killing it. The program gets the dispositions upti was started with. */
    static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ};
    enum { NUM_HANDLED = sizeof handled / sizeof handled[0] };
    struct sigaction old_actions[NUM_HANDLED];
    sigset_t block, old_mask;
    sigemptyset(&block);
    for (int i = 0; i < NUM_HANDLED; i++)
        sigaddset(&block, handled[i]);
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    for (int i = 0; i < NUM_HANDLED; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = handled[i] == SIGQUIT || handled[i] == SIGXFSZ ? SIG_IGN : forward;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(handled[i], &sa, &old_actions[i]);
    }
    char *launched = launched_command(program);
    if (launched != NULL)
        putenv(launched);
    /* vfork: the child borrows upti's memory until its exec instead of a copy
     * of its page tables, which upti would then fault back page by page
     * (measured: the program started 2.5-3 ms sooner; page faults are dear on
     * a virtual machine). upti has one thread here, and the child only resets
     * its own signal dispositions and mask (not upti's: it has its own copy),
     * writes its pid into `launched` (which upti frees unread) and execs or
     * says why it could not and _exits. */
    g_child = vfork();
    if (g_child != 0) {
        unsetenv("UPTI_RUN_COMMAND"); /* (the program's, not upti's) */
        free(launched);
        launched = NULL;
    }
    if (g_child < 0) {
        int e = errno;
        for (int i = 0; i < NUM_HANDLED; i++)
            sigaction(handled[i], &old_actions[i], NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        run_outputs_discard();
        run_collect_discard();
        return cli_error("fork: %s", strerror(e));
    }
    if (g_child == 0) {
        for (int i = 0; i < NUM_HANDLED; i++)
            sigaction(handled[i], &old_actions[i], NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        if (launched != NULL)
            launched_command_pid(launched);
        execvp(program[0], program);
        fprintf(stderr, "upti: cannot run '%s': %s\n", program[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    /* The signals' handlers were set before the fork, with the signals
     * blocked until g_child is known: one sent to upti meanwhile is forwarded
     * now, not lost nor fatal to upti. */
    g_collecting_apart = run_collect_apart(g_child);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (!g_collecting_apart)
        (void)run_collect_start(g_child);
    int status = 0;
    while (waitpid(g_child, &status, 0) < 0) {
        if (errno != EINTR) {
            run_outputs_discard();
            return cli_error("waitpid: %s", strerror(errno));
        }
    }
    g_child_ended = 1;
    if (g_collecting_apart)
        (void)run_collect_apart_end(status);
    else
        run_collect_finish(g_child, status);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

/* The options of pass p of the file: the file's, then the command line's over them. */
static int options_of_pass(const run_config_file *f, size_t p, int argc, char **argv,
                           run_options *o, char **program, int *nprogram)
{
    memset(o, 0, sizeof *o);
    o->formats = "db";
    for (size_t i = 0; i < f->passes[p].n; i++) {
        const rc_entry *e = &f->passes[p].entries[i];
        if (e->value != NULL)
            run_on_option(o, e->id, e->value);
    }
    int rc = cli_parse_options("run", run_option_table, run_option_count, argc,
                               argv, CLI_ARGS_PROGRAM, run_on_option, o, program, nprogram);
    o->pass = (int)p + 1;
    o->npasses = (int)f->npasses;
    return rc;
}

static volatile sig_atomic_t g_pass_upti; /* a pid_t (an int) */
static volatile sig_atomic_t g_pass_signal;
/* While a pass runs: a signal that a process sent to upti goes to the pass's
 * upti, which hands it to the program; the terminal's reaches them all
 * already. Either way no later pass starts. */
static void forward_to_pass(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    int saved_errno = errno;
    g_pass_signal = sig;
    if (info != NULL && info->si_code <= 0 && g_pass_upti > 0)
        kill(g_pass_upti, sig);
    errno = saved_errno;
}

/* Runs each pass of the file in its own upti (a fork): the status of the
 * first pass that failed, else 0. */
static int run_passes(const run_config_file *f, int argc, char **argv, char **program)
{
    int nprogram = 0;
    run_options o;
    /* Every pass is checked before the first runs. */
    for (size_t p = 0; p < f->npasses; p++) {
        int rc = options_of_pass(f, p, argc, argv, &o, program, &nprogram);
        char context[700], shown[512];
        if (rc == 0) {
            cli_printable(o.input, shown, sizeof shown);
            if (f->npasses > 1)
                snprintf(context, sizeof context, "%s: pass %zu", shown, p + 1);
            else
                snprintf(context, sizeof context, "%s", shown);
            cli_set_error_context(context);
        }
        if (rc == 0)
            rc = run_program(&o, program, nprogram, 1);
        cli_set_error_context(NULL);
        if (rc != 0)
            return rc;
    }
    if (f->npasses == 1) {
        options_of_pass(f, 0, argc, argv, &o, program, &nprogram);
        return run_program(&o, program, nprogram, 0);
    }
    static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction old[4];
    for (int i = 0; i < 4; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = forward_to_pass;
        /* No SA_RESTART: the signal ends the waitpid below with EINTR (which the
         * loop retries). A ThreadSanitizer build runs a handler only when the
         * interrupted call returns: a restarted waitpid never did, and the
         * signal waited for the pass's end (cli.config_signal under TSan). */
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(handled[i], &sa, &old[i]);
    }
    /* The signals stay blocked from before each fork until g_pass_upti is set: one that
     * came as the pass's upti had started its program, before this process set
     * g_pass_upti (preempted after the fork on a busy machine), was kept for no one, and
     * the pass ran to its end (cli.config_signal waited 60 s). */
    sigset_t block, old_mask;
    sigemptyset(&block);
    for (int i = 0; i < 4; i++)
        sigaddset(&block, handled[i]);
    int first_failed = 0;
    for (size_t p = 0; p < f->npasses && !g_pass_signal; p++) {
        options_of_pass(f, p, argc, argv, &o, program, &nprogram);
        fflush(NULL);
        sigprocmask(SIG_BLOCK, &block, &old_mask);
        if (g_pass_signal) { /* came since the loop's check (fflush may have waited) */
            sigprocmask(SIG_SETMASK, &old_mask, NULL);
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            sigprocmask(SIG_SETMASK, &old_mask, NULL);
            first_failed = cli_error("fork: %s", strerror(errno));
            break;
        }
        if (pid == 0) {
            for (int i = 0; i < 4; i++)
                sigaction(handled[i], &old[i], NULL);
            sigprocmask(SIG_SETMASK, &old_mask, NULL);
            exit(run_program(&o, program, nprogram, 0));
        }
        g_pass_upti = pid;
        sigprocmask(SIG_SETMASK, &old_mask, NULL); /* one sent meanwhile is forwarded now */
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        g_pass_upti = 0;
        int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (rc != 0 && first_failed == 0)
            first_failed = rc;
    }
    for (int i = 0; i < 4; i++)
        sigaction(handled[i], &old[i], NULL);
    return first_failed;
}

int cmd_run(int argc, char **argv)
{
    run_options o = {.formats = "db"};
    char **program = calloc((size_t)argc + 1, sizeof *program);
    int nprogram = 0;
    if (program == NULL)
        return cli_error("out of memory");
    int rc = cli_parse_options("run", run_option_table, run_option_count, argc,
                               argv, CLI_ARGS_PROGRAM, run_on_option, &o, program, &nprogram);
    if (rc == 0 && o.help)
        cmd_run_help(stdout);
    if (rc != 0 || o.help) {
        free(program);
        return rc;
    }
    if (o.input != NULL) {
        /* The command line's own values first, said as the command line's. */
        for (size_t i = 0; i < run_option_count && rc == 0; i++) {
            const char *v = run_given_value(&o, run_option_table[i].id);
            if (v != NULL)
                rc = run_check_value(NULL, run_option_table[i].id, v);
        }
        if (rc != 0) {
            free(program);
            return rc;
        }
        run_config_file f;
        rc = run_config_load(o.input, run_option_table, run_option_count,
                             run_check_value, NULL, &f);
        if (rc == 0)
            rc = run_passes(&f, argc, argv, program);
        run_config_free(&f);
        free(program);
        return rc;
    }
    o.pass = o.npasses = 1;
    rc = run_program(&o, program, nprogram, 0);
    free(program);
    return rc;
}
