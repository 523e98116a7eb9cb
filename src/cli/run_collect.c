/* SPDX-License-Identifier: MIT */
/* See run_collect.h. */
#include "run_collect.h"
#include "run_state.h"
#include "run_outputs.h"

#include "cli.h"
#include "files.h"
#include "collector.h"
#include "output.h"
#include "kv_pairs.h"
#include "private_dir.h"
#include "run_folder.h"
#include "stats_reports.h"
#include <upti/ring.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct run_state g_run = {.lock_fd = -1,
                         .follow_paused_at = UINT64_MAX,
                         .drained_lock = PTHREAD_MUTEX_INITIALIZER,
                         .drained_wake = PTHREAD_COND_INITIALIZER};

/* ---- run.conf: key\0value\0 pairs (kv_pairs.h) ---- */

static int write_conf(void)
{
    char path[PATH_MAX + 16], fmt[16], output_config[4];
    snprintf(path, sizeof path, "%s/run.conf", g_run.folder);
    int fd = upti_open_file(path, O_WRONLY | O_CREAT, 0600, 1); /* (a folder just made) */
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    snprintf(fmt, sizeof fmt, "%u", g_run.formats);
    snprintf(output_config, sizeof output_config, "%d", g_run.output_config);
    int rc = upti_kv_put(f, "rings", g_run.rings) | upti_kv_put(f, "pattern", g_run.pattern) |
             upti_kv_put(f, "formats", fmt) | upti_kv_put(f, "stats", g_run.stats ? g_run.stats : "0") |
             upti_kv_put(f, "include", g_run.include) | upti_kv_put(f, "exclude", g_run.exclude) |
             upti_kv_put(f, "iterations", g_run.iterations) |
             upti_kv_put(f, "session", g_run.session) | upti_kv_put(f, "config", g_run.config) |
             upti_kv_put(f, "output_config", output_config);
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

char *run_dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static int compile_filters(void)
{
    g_run.has_include = g_run.include != NULL && regcomp(&g_run.include_re, g_run.include, REG_EXTENDED | REG_NOSUB) == 0;
    g_run.has_exclude = g_run.exclude != NULL && regcomp(&g_run.exclude_re, g_run.exclude, REG_EXTENDED | REG_NOSUB) == 0;
    g_run.has_iterations = g_run.iterations != NULL &&
                       upti_parse_iteration_range(g_run.iterations, &g_run.iteration_range) == 0;
    return 0;
}

int run_kernel_filter(void *data, int64_t name_id, const char *name)
{
    (void)data;
    (void)name_id;
    if (name == NULL)
        return 1;
    if (g_run.has_include && regexec(&g_run.include_re, name, 0, NULL, 0) != 0)
        return 0;
    if (g_run.has_exclude && regexec(&g_run.exclude_re, name, 0, NULL, 0) == 0)
        return 0;
    return 1;
}

/* ---- folders ---- */

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static int make_run_folder(void)
{
    int tmpdir_errno = 0;
    if (upti_make_run_folder(g_run.folder, sizeof g_run.folder, g_run.rings, sizeof g_run.rings, &tmpdir_errno) != 0)
        return -1;
    if (tmpdir_errno != 0) /* said once; the run goes on in /tmp (the program is not kept from running) */
        fprintf(stderr, "upti: cannot create the run folder in TMPDIR %s (%s): it is in /tmp\n",
                getenv("TMPDIR"), strerror(tmpdir_errno));
    snprintf(g_run.spool, sizeof g_run.spool, "%s/spool", g_run.folder);
    char lock[PATH_MAX + 16];
    snprintf(lock, sizeof lock, "%s/lock", g_run.folder);
    g_run.lock_fd = upti_open_file(lock, O_RDWR | O_CREAT, 0600, 1);
    if (g_run.lock_fd >= 0)
        flock(g_run.lock_fd, LOCK_EX);
    return 0;
}

static void remove_folders(void)
{
    if (strcmp(g_run.rings, g_run.folder) != 0)
        remove_tree(g_run.rings);
    remove_tree(g_run.folder);
    if (g_run.lock_fd >= 0)
        close(g_run.lock_fd);
    g_run.lock_fd = -1;
}

int run_collect_begin(const run_collect_cfg *cfg)
{
    g_run.pattern = strdup(cfg->pattern);
    g_run.include = run_dup_or_null(cfg->include);
    g_run.exclude = run_dup_or_null(cfg->exclude);
    g_run.session = run_dup_or_null(cfg->session);
    g_run.iterations = run_dup_or_null(cfg->iterations);
    g_run.capture_never = run_dup_or_null(cfg->capture_never);
    g_run.config = run_dup_or_null(cfg->config);
    g_run.output_config = cfg->output_config;
    g_run.formats = cfg->formats;
    g_run.stats = run_dup_or_null(cfg->stats);
    compile_filters();
    if (make_run_folder() != 0)
        return cli_error("cannot create the run folder in $TMPDIR or /tmp: %s", strerror(errno));
    if (write_conf() != 0) {
        int e = errno;
        remove_folders();
        return cli_error("cannot write %s/run.conf: %s", g_run.folder, strerror(e));
    }
    setenv("UPTI_TRACE_RING_DIR", g_run.rings, 1);
    /* upti is the collector: a full ring waits for it up to 1 s without
     * progress (a loaded machine may not run it for tens of ms) before its
     * records are dropped and counted; the user's setting stays. */
    setenv("UPTI_RING_FULL_WAIT_MS", "1000", 0);
    return 0;
}

void run_collect_discard(void)
{
    remove_folders();
}

/* ---- collecting ---- */

/* The records a process lost because the spool could not be written (the
 * collector counted them as it discarded them). */
static void add_not_stored(int64_t pid, uint64_t records)
{
    ur_loss_add(&g_run.losses, &g_run.num_losses, &g_run.cap_losses, pid, records);
}

/* A file beside the rings (see NOT_STORED_FILE), written whole or not at all. */
static void write_ring_note(const char *name, const char *text)
{
    char path[PATH_MAX + 64], tmp[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", g_run.rings, name);
    snprintf(tmp, sizeof tmp, "%s/%s.new", g_run.rings, name);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    size_t len = strlen(text);
    int ok = write(fd, text, len) == (ssize_t)len;
    if (close(fd) != 0 || !ok || rename(tmp, path) != 0)
        unlink(tmp);
}

void run_save_not_stored(void)
{
    if (g_run.num_losses == 0)
        return;
    size_t cap = g_run.num_losses * 48 + 1, len = 0;
    char *text = malloc(cap);
    if (text == NULL)
        return;
    text[0] = '\0';
    for (size_t i = 0; i < g_run.num_losses; i++)
        len += (size_t)snprintf(text + len, cap - len, "%lld %llu\n",
                                (long long)g_run.losses[i].pid,
                                (unsigned long long)g_run.losses[i].records);
    write_ring_note(NOT_STORED_FILE, text);
    free(text);
}

/* What an earlier collector of the folder noted (recover). */
static void load_ring_notes(void)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/" NOT_STORED_FILE, g_run.rings);
    FILE *f = fopen(path, "re");
    long long pid;
    unsigned long long records;
    while (f != NULL && fscanf(f, "%lld %llu", &pid, &records) == 2)
        add_not_stored(pid, records);
    if (f != NULL)
        fclose(f);
    snprintf(path, sizeof path, "%s/" STATUS_FILE, g_run.rings);
    f = fopen(path, "re");
    int status;
    if (f != NULL && fscanf(f, "%lld %d", &pid, &status) == 2 && g_run.program == 0) {
        g_run.program = (pid_t)pid;
        g_run.status = status;
        g_run.have_status = 1;
    }
    if (f != NULL)
        fclose(f);
}

static void on_discarded(void *arg, int64_t pid, uint64_t records, const char *reason)
{
    (void)arg;
    g_run.lost++;
    add_not_stored(pid, records);
    fprintf(stderr, "upti: pid %lld: %llu records could not be stored (%s)\n", (long long)pid,
            (unsigned long long)records, reason);
}

/* From the collecting thread: the spool holds every record (the rings are
 * removed after this, while the main thread converts). */
static void on_drained(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_run.drained_lock);
    g_run.collect_drained = 1;
    pthread_cond_signal(&g_run.drained_wake);
    pthread_mutex_unlock(&g_run.drained_lock);
}

static void on_closed(void *arg)
{
    (void)arg;
    run_follow_closed();
}

static void on_stored(void *arg, uint64_t complete)
{
    (void)arg;
    run_follow_stored(complete);
}

static void *collect_thread(void *arg)
{
    (void)arg;
    ur_collect_opts o = {.spool = g_run.spool,
                         .dir = g_run.rings,
                         .wait_pid = g_run.program,
                         .poll_ns = 500 * 1000,
                         .stop = &g_run.stop,
                         .discarded = on_discarded,
                         .spool_complete = &g_run.spool_complete,
                         .stored = on_stored,
                         .wake = &g_run.collect_wake,
                         .drained = on_drained,
                         .leave_mapped = 1,
                         .closed = on_closed};
    g_run.collect_rc = ur_collect(&o);
    on_drained(NULL); /* (an ur_collect that failed before its passes did not) */
    return NULL;
}

/* Until the collecting thread has put every record in the spool (on_drained).
 * A condition, not a bare futex: a signal forwarded to the program (its
 * handler stops the collecting) must run here, and ThreadSanitizer delivers
 * one only inside the calls it knows. */
static void wait_drained(void)
{
    pthread_mutex_lock(&g_run.drained_lock);
    while (!g_run.collect_drained)
        pthread_cond_wait(&g_run.drained_wake, &g_run.drained_lock);
    pthread_mutex_unlock(&g_run.drained_lock);
}

int run_collect_start(pid_t program)
{
    g_run.program = program;
    run_follow_start(); /* (first: the collecting thread tells it when the rings close) */
    if (pthread_create(&g_run.thread, NULL, collect_thread, NULL) != 0) {
        fprintf(stderr, "upti: cannot start collecting: the trace is written after the program "
                        "ended\n");
        return -1;
    }
    g_run.thread_started = 1;
    return 0;
}

void run_collect_stop(void)
{
    /* From the main thread (a signal forwarded), read by the collector's thread. */
    __atomic_store_n(&g_run.stop, 1, __ATOMIC_RELEASE);
    ur_collect_wake(&g_run.collect_wake);
}

/* Ring files left in the ring folder (processes still running when collecting
 * stopped), and claims still locked (forked children that may still record:
 * the folder must stay for their ring files). */
static int rings_left(void)
{
    DIR *d = opendir(g_run.rings);
    int n = 0;
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        n += ur_name_has_suffix(e->d_name, UPTI_RING_SUFFIX);
        if (ur_name_has_suffix(e->d_name, UPTI_RING_PENDING_SUFFIX)) {
            char path[sizeof g_run.rings + 256];
            snprintf(path, sizeof path, "%s/%s", g_run.rings, e->d_name);
            n += ur_claim_state(path) == 1;
        }
    }
    closedir(d);
    return n;
}

/* ---- collecting in a process of its own ----
 *
 * The collecting, the conversion and the outputs run in a fork of upti in a
 * session of its own. The scheduler groups the processes of a session
 * (autogroup, on where the kernel has it: /proc/sys/kernel/sched_autogroup_enabled)
 * and gives each group an equal share of the CPUs. In upti's own process, its
 * threads were in the program's group, one thread's share among the program's
 * threads, and the follow thread (SCHED_IDLE) got no CPU while the program kept
 * both busy: the conversion waited for the program's end. Apart, they get half
 * of the CPUs when both groups want them (figures in docs/cli.md). The program
 * stays in upti's session and process group (its terminal, its job control) and
 * upti's child: upti waits for it and forwards its signals, and hands its wait
 * status to the collecting process through a pipe; once the program ended, a
 * SIGINT or SIGTERM to upti reaches the collecting process as SIGUSR2
 * (run_collect_stop), the one signal it takes. The collecting process dies with upti
 * (PR_SET_PDEATHSIG): a killed upti leaves its run folder to `upti recover`, as
 * before. */
static pid_t g_apart;       /* in upti: the collecting process, or 0 */
static int g_apart_fd = -1; /* in upti: the pipe's end the program's status goes to */

static void stop_on_signal(int sig)
{
    (void)sig;
    run_collect_stop();
}

/* The collecting process: collects for program, then, given its status on
 * from_upti, writes the outputs and exits. */
static void collect_apart(pid_t program, pid_t upti, int from_upti)
{
    /* Dies with upti (its SIGKILL included); upti may have died before this. */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != upti)
        _exit(1);
    (void)setsid(); /* (a fork: never a process group's leader) */
    /* upti's handlers forward to the program: not this process's. Signals meant for
     * the program or for upti reach it too (`pkill -f`, whose pattern matches upti's
     * command line, which it shares): ignored. Only upti stops it, with SIGUSR2. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = stop_on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &sa, NULL);
    /* Its threads keep SIGUSR2 blocked: it comes to this thread, in calls ThreadSanitizer
     * knows (read, then wait_drained's condition), where it delivers signals; in the
     * collecting thread's futex waits it held one back (shapes.daemon_idle_run). */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    (void)run_collect_start(program);
    pthread_sigmask(SIG_UNBLOCK, &stop, NULL);
    int status = 0;
    size_t got = 0;
    while (got < sizeof status) {
        ssize_t n = read(from_upti, (char *)&status + got, sizeof status - got);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0 || errno != EINTR)
            _exit(1); /* upti ended without it: killed (this process too, by now) */
    }
    close(from_upti);
    run_collect_finish(program, status);
    exit(0);
}

int run_collect_apart(pid_t program)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return 0;
    pid_t upti = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[1]);
        collect_apart(program, upti, fds[0]);
    }
    close(fds[0]);
    if (pid < 0) {
        close(fds[1]);
        return 0;
    }
    g_apart = pid;
    g_apart_fd = fds[1];
    return 1;
}

void run_collect_apart_stop(void)
{
    if (g_apart > 0)
        kill(g_apart, SIGUSR2);
}

int run_collect_apart_end(int status)
{
    /* A collecting process that is gone (killed by someone) fails the write: EPIPE,
     * not SIGPIPE's end of upti, which says so below and ends with the program's status. */
    signal(SIGPIPE, SIG_IGN);
    ssize_t n;
    do
        n = write(g_apart_fd, &status, sizeof status);
    while (n < 0 && errno == EINTR);
    close(g_apart_fd);
    g_apart_fd = -1;
    /* Its end awaited in poll(): a SIGINT or SIGTERM to upti meanwhile runs its handler
     * (run_collect_apart_stop) there, under ThreadSanitizer too, which delivers signals
     * only in the calls it knows (not waitpid: shapes.daemon_idle_run waited forever). */
    int pidfd = (int)syscall(SYS_pidfd_open, g_apart, 0);
    if (pidfd >= 0) {
        struct pollfd ended = {pidfd, POLLIN, 0};
        while (poll(&ended, 1, -1) < 0 && errno == EINTR)
            ;
        close(pidfd);
    }
    int how = 0;
    while (waitpid(g_apart, &how, 0) < 0 && errno == EINTR)
        ;
    g_apart = 0;
    if (WIFEXITED(how) && WEXITSTATUS(how) == 0)
        return 0;
    /* (Its own messages came first, if it could say anything.) */
    if (WIFSIGNALED(how))
        fprintf(stderr, "upti: the collecting process was killed by signal %d: what it had "
                        "not written stays in %s (upti recover %s)\n",
                WTERMSIG(how), g_run.folder, g_run.folder);
    return -1;
}

int run_collect_end(pid_t program, int status)
{
    /* g_run.program is the collecting thread's (read as it starts): set once it drained. */
    if (g_run.thread_started) {
        ur_collect_wake(&g_run.collect_wake); /* the program ended: its last pass, now */
        wait_drained();
    }
    run_follow_end();
    g_run.program = program;
    g_run.status = status;
    g_run.have_status = 1;
    char note[64];
    snprintf(note, sizeof note, "%lld %d\n", (long long)program, status);
    write_ring_note(STATUS_FILE, note);
    int written = run_convert_and_finish();
    /* The collecting thread removed the ring files meanwhile (their mappings
     * stay until upti exits: leave_mapped): the ring folder is as it leaves
     * it (rings_left) once it ended. */
    if (g_run.thread_started)
        pthread_join(g_run.thread, NULL);
    g_run.thread_started = 0;
    if (written == 0 && (g_run.lost > 0 || g_run.kept))
        written = -1; /* traced, and said what was lost or kept: nothing more to say */
    else if (written == 0 && g_run.never_opened > 0) {
        fprintf(stderr, "upti: the capture range never opened (%s): no trace written\n",
                g_run.capture_never != NULL && g_run.capture_never[0] ? g_run.capture_never
                                                              : "no window opened");
        written = -1;
    } else if (written == 0 && g_run.empty_windows > 0) {
        fprintf(stderr, "upti: the capture windows opened but nothing was recorded in them: "
                        "no trace written\n");
        written = -1;
    }
    int left = rings_left();
    if (g_run.kept) {
        fprintf(stderr, "upti: what could not be written stays in %s: upti recover %s, once "
                        "there is room\n", g_run.folder, g_run.folder);
        if (g_run.lock_fd >= 0)
            close(g_run.lock_fd);
        g_run.lock_fd = -1;
    } else if (left > 0 || g_run.collect_rc != 0) {
        fprintf(stderr, "upti: %d traced process%s still running when upti stopped: the rest of "
                        "their trace is kept in %s (upti recover %s)\n",
                left, left == 1 ? " was" : "es were", g_run.folder, g_run.folder);
        if (g_run.lock_fd >= 0)
            close(g_run.lock_fd);
        g_run.lock_fd = -1;
    } else {
        remove_folders();
    }
    return written;
}

void run_collect_finish(pid_t program, int status)
{
    run_say_summary(run_outputs_end(run_collect_end(program, status)));
}

/* A folder of ring files without run.conf (UPTI_TRACE_RING_DIR set by hand, or the
 * ring folder of a helper collector): a ring file or the spool of an earlier recover. */
static int is_ring_folder(const char *folder)
{
    DIR *d = opendir(folder);
    if (d == NULL)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        found = strcmp(e->d_name, RECOVER_SPOOL) == 0 ||
                ur_name_has_suffix(e->d_name, UPTI_RING_SUFFIX);
    }
    closedir(d);
    return found;
}

/* What run.conf says, into g_run. 0, or 1 after one line. */
static int read_conf(const char *folder, const char *conf, size_t len)
{
    const char *rings = upti_kv_get(conf, len, "rings"), *pattern = upti_kv_get(conf, len, "pattern");
    const char *formats = upti_kv_get(conf, len, "formats");
    if (rings == NULL || pattern == NULL || formats == NULL)
        return cli_error("%s/run.conf is incomplete: not a run folder of upti run", folder);
    snprintf(g_run.rings, sizeof g_run.rings, "%s", rings);
    snprintf(g_run.spool, sizeof g_run.spool, "%s/spool", folder);
    g_run.pattern = strdup(pattern);
    g_run.formats = (unsigned)strtoul(formats, NULL, 10);
    const char *stats = upti_kv_get(conf, len, "stats");
    /* "0" or none; "1" (a folder of an older upti, or its helper): the default reports */
    g_run.stats = stats == NULL || strcmp(stats, "0") == 0 ? NULL
                  : run_dup_or_null(strcmp(stats, "1") == 0 ? report_default_list : stats);
    g_run.include = run_dup_or_null(upti_kv_get(conf, len, "include"));
    g_run.exclude = run_dup_or_null(upti_kv_get(conf, len, "exclude"));
    g_run.iterations = run_dup_or_null(upti_kv_get(conf, len, "iterations"));
    g_run.session = run_dup_or_null(upti_kv_get(conf, len, "session"));
    g_run.config = run_dup_or_null(upti_kv_get(conf, len, "config"));
    const char *output_config = upti_kv_get(conf, len, "output_config");
    g_run.output_config = output_config != NULL && strcmp(output_config, "1") == 0;
    const char *quiet = upti_kv_get(conf, len, "quiet");
    g_run.quiet = quiet != NULL && strcmp(quiet, "1") == 0;
    return 0;
}

/* --background: the parent returns 0 once the child is in a session of its own
 * (no terminal: Ctrl-C, the caller's process group killed, a closed terminal do
 * not reach it), so that from then on nothing the caller's group gets ends it.
 * The child goes on, holding the lock. */
static int detach(void)
{
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0)
        return cli_error("cannot go on in the background: %s", strerror(errno));
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        close(ready[0]);
        close(ready[1]);
        return cli_error("cannot go on in the background: %s", strerror(errno));
    }
    if (child > 0) {
        close(ready[1]);
        char c;
        ssize_t n;
        while ((n = read(ready[0], &c, 1)) < 0 && errno == EINTR)
            ;
        _exit(n == 1 ? 0 : 1); /* 1: the child died before it was detached */
    }
    close(ready[0]);
    setsid();
    signal(SIGPIPE, SIG_IGN); /* a stderr whose reader is gone: the outputs still get written */
    signal(SIGHUP, SIG_IGN);
    while (write(ready[1], "", 1) < 0 && errno == EINTR)
        ;
    close(ready[1]);
    return 0;
}

/* How long recover waits for a run folder's lock: the collecting process of a
 * `upti run` just killed holds it until its own SIGKILL (PR_SET_PDEATHSIG) has
 * ended it, a moment after upti is seen gone (shapes.daemon_idle, once in CI). */
#define RECOVER_LOCK_WAIT_MS 3000

/* flock(fd, LOCK_EX), tried every 10 ms for ms at most. 0, or -1. */
static int lock_within(int fd, int ms)
{
    for (int waited = 0;; waited += 10) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK || waited >= ms)
            return -1;
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/* A folder recover reads and writes in: the caller's, writable by nobody else
 * (private_dir.h). 0, or 2 after one line. */
static int check_private(const char *folder)
{
    char why[PATH_MAX + 256];
    int fd = upti_open_private_dir(folder, why, sizeof why);
    if (fd < 0 && errno == ENOENT)
        return 0; /* (said below, as before) */
    if (fd < 0) {
        cli_error("%s", why);
        return 2;
    }
    close(fd);
    return 0;
}

int run_collect_recover(const char *folder, pid_t wait_pid, int background, unsigned max_wait_s)
{
    if (strlen(folder) >= sizeof g_run.folder - 32)
        return cli_error("%s: path too long", folder);
    struct stat fst;
    if (stat(folder, &fst) == 0 && S_ISDIR(fst.st_mode) && check_private(folder) != 0)
        return 2;
    snprintf(g_run.folder, sizeof g_run.folder, "%s", folder);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/run.conf", folder);
    size_t len = 0;
    char *conf = cli_read_file(path, &len);
    if (conf == NULL) {
        int e = errno;
        struct stat st;
        int found = stat(folder, &st) == 0, exists = found && S_ISDIR(st.st_mode);
        if (!found)
            return cli_error("cannot open the folder %s: %s", folder, strerror(errno));
        if (S_ISREG(st.st_mode))
            return cli_error("%s is a file, not a folder (a ring file: upti-ring recover PREFIX "
                             "%s converts it)", folder, folder);
        if (!exists || (wait_pid == 0 && !is_ring_folder(folder)))
            return cli_error("%s is neither a run folder of upti run (no readable run.conf: %s) "
                             "nor a ring folder (no *" UPTI_RING_SUFFIX " file, no "
                             RECOVER_SPOOL ")", folder, strerror(e));
        /* A bare ring folder: the spool and the lock beside the rings; the names
         * each process recorded (or the default); the database only. */
        g_run.bare = 1;
        snprintf(g_run.rings, sizeof g_run.rings, "%s", folder);
        snprintf(g_run.spool, sizeof g_run.spool, "%s/" RECOVER_SPOOL, folder);
        g_run.formats = UO_FORMAT_DB;
        snprintf(path, sizeof path, "%s/" RECOVER_LOCK, folder);
        /* Never through a link planted in the folder (private_dir.h). */
        g_run.lock_fd = upti_open_file(path, O_RDWR | O_CREAT, 0600, 0);
        if (g_run.lock_fd < 0)
            return cli_error("cannot create %s: %s", path,
                             errno == EPERM ? "not a regular file of yours" : strerror(errno));
    } else {
        int rc = read_conf(folder, conf, len);
        free(conf);
        if (rc != 0)
            return rc;
        if (strcmp(g_run.rings, folder) != 0 && check_private(g_run.rings) != 0)
            return 2;
        snprintf(path, sizeof path, "%s/lock", folder);
        g_run.lock_fd = upti_open_file(path, O_RDWR, 0, 0);
    }
    if (g_run.lock_fd < 0 || lock_within(g_run.lock_fd, RECOVER_LOCK_WAIT_MS) != 0)
        return cli_error("%s is in use by a running upti", folder);
    /* A spool that cannot be opened (a link planted in its place) is said here:
     * the collector would drain the rings without storing them. */
    int spool_fd = upti_open_file(g_run.spool, O_RDWR | O_CREAT, 0600, 0);
    if (spool_fd < 0)
        return cli_error("cannot open %s: %s: nothing collected", g_run.spool,
                         errno == EPERM ? "not a regular file of yours" : strerror(errno));
    close(spool_fd);
    if (background && detach() != 0)
        return 1;
    /* The helper a program started (in the background, on the program's stderr) says
     * no "wrote" line; `upti recover` of its folder by hand says what it wrote. */
    if (background && g_run.quiet)
        run_outputs_quiet();
    g_run.recovering = 1;
    g_run.program = wait_pid;
    int skipped = 0;
    load_ring_notes();
    compile_filters();
    ur_collect_opts o = {.spool = g_run.spool, .dir = g_run.rings, .wait_pid = wait_pid,
                         .poll_ns = 500 * 1000, .discarded = on_discarded,
                         .producer_wait_ns = (uint64_t)max_wait_s * 1000000000u,
                         .skipped = &skipped};
    g_run.collect_rc = ur_collect(&o);
    int written = run_convert_and_finish();
    if (g_run.kept) /* (each database that could not be completed was said) */
        fprintf(stderr, "upti: what could not be written stays in %s: upti recover %s, once "
                        "there is room\n", folder, folder);
    /* (files skipped as not rings stay, said; they keep nothing of the run) */
    if (g_run.collect_rc == 0 && rings_left() - skipped <= 0 && !g_run.kept) {
        if (g_run.bare) {
            /* The user's folder stays; what recover made in it goes. */
            unlink(g_run.spool);
            snprintf(path, sizeof path, "%s/" RECOVER_LOCK, folder);
            unlink(path);
            close(g_run.lock_fd);
            g_run.lock_fd = -1;
        } else {
            remove_folders();
        }
    }
    /* A database not completed fails the recovery, whatever else it wrote. */
    return !g_run.kept && (written > 0 || g_run.collect_rc == 0) ? 0 : 1;
}
