/* SPDX-License-Identifier: MIT */
/* libupti-trace.so: the bundled tracing tool behind `upti run`.
 *
 * A client of UPTI's public API only. Configured by environment variables
 * (set by `upti run`, documented in docs/cli.md):
 *   UPTI_TRACE_KINDS     comma list: opencl_api, marker_api, kernel_dispatch,
 *                        memory_copy, memory_allocation, code_object, or all (default all)
 *   UPTI_TRACE_OUTPUT    output path without extension; placeholders %pid% %ppid%
 *                        %hostname% %rank% %argv0% %env{NAME}% (default upti-%argv0%-%pid%)
 *   UPTI_TRACE_FORMATS   comma list: db, pftrace, json, csv (default db)
 *   UPTI_TRACE_STATS     1: print the summary tables on stderr at exit
 *   UPTI_TRACE_KERNEL_INCLUDE / UPTI_TRACE_KERNEL_EXCLUDE  POSIX extended regexes on kernel names
 *   UPTI_TRACE_KERNEL_ITERATIONS  without `upti run` (which applies --kernel-iteration-range
 *                        itself): the executions of each kernel name kept, e.g. [1-3,5]
 *   UPTI_TRACE_SESSION_START  ns since the epoch when `upti run` started: an output
 *                        file newer than this belongs to another process of the same
 *                        run and is not overwritten ("-<pid>" is appended instead)
 *   UPTI_TRACE_BUFFER_SIZE  bytes per producing thread's buffer region (default 4 MiB)
 *   UPTI_TRACE_ARGS      1: record the arguments of OpenCL calls (arg table)
 *   UPTI_TRACE_LIST      1: print the agents seen (upti_query_available_agents) at finalize
 *   UPTI_TRACE_SIGNALS   0: do not finalize on SIGINT/SIGTERM nor on a crash (default:
 *                        finalize, then chain to the handler the program had, or its
 *                        default action)
 *   UPTI_TRACE_FLUSH_MS  the longest a record waits before it is committed to the
 *                        database, halved (default 50: what SIGKILL takes with it is at
 *                        most the last 2 x 50 ms)
 *   UPTI_TRACE_MANIFEST  a file to which the database's path is appended (set by
 *                        `upti run`, which recovers the databases of processes that died
 *                        without closing them)
 *   UPTI_TRACE_CAPTURE_RANGE, UPTI_TRACE_CAPTURE_END, UPTI_TRACE_START_PAUSED,
 *   UPTI_TRACE_COLLECTION_PERIOD  capture windows (capture.h): when records are kept
 *   UPTI_TRACE_RING_DIR  set by `upti run`: the program only records, into a shared
 *                        buffer in this folder (ring_mode.c); upti builds the outputs
 *   UPTI_TRACE_RECORD_ONLY  1, without `upti run`: the program only records too, and a
 *                        helper collector (collector_helper.c) builds the outputs
 *   UPTI_TRACE_COLLECTOR the `upti` program of that helper (default: beside this library)
 * Numbers, switches (0/1) and choices are read through src/common/env.c, one
 * parser for every UPTI_* variable: a bad value is one "upti:" line and the default.
 * Under `upti run` (UPTI_TRACE_RING_DIR) or with a helper collector everything
 * below is unused: ring_mode.c records and nothing else. Without them (the tool
 * loaded through UPTI_TOOL_LIBRARIES alone, no collector), records stream into the
 * per-process database from the buffer callback, committed at least every
 * UPTI_TRACE_FLUSH_MS; finalize closes it and writes the other formats from it.
 */
#include <upti/upti.h>

#include "manifest.h"
#include "out_files.h"
#include "output.h"
#include "safe_open.h"
#include "ring_mode.h"
#include "collector_helper.h"
#include "capture.h"
#include "env.h"
#include "dirs.h"
#include "log.h"
#include "proc_stat.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <semaphore.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * The tool's locks, outermost first:
 *   g_tick_lock     the tool thread's commit; fork() takes it first (below)
 *   g_tool.lock     the database writer and everything in g_tool. Taken inside UPTI's
 *                   buffer lock (the buffer callback) and under g_tick_lock; under
 *                   it the tool takes g_batches_lock, then (one at a time) a
 *                   batch's lock, and UPTI's leaf locks (agents, metadata).
 *   g_batches_lock  the list of per-thread argument batches
 *   arg_batch.lock  one batch: its thread appends, the drain takes it
 *   g_cap.lock      (capture.c) the capture windows' state: a leaf
 * UPTI's own order is in src/program/sdk/internal.h.
 */
/* The tool's state in this process: its database and settings (g_tool.lock). */
static struct {
    pthread_mutex_t lock; /* the writer's (see above) */
    uo_db *db;
    int finalized;
    pid_t pid;
    char *base; /* output path without extension */
    char *db_path;
    unsigned formats;
    int stats;
    unsigned kinds; /* bit per upti_tracing_kind_t */
    regex_t include, exclude;
    int has_include, has_exclude;
    uint64_t drops;
    uint64_t received; /* tracing records delivered by UPTI's buffer */
    upti_context_id_t context;
    upti_buffer_id_t buffer;
    int lock_fd;
    int args, list;
    upti_context_id_t args_context;
    upti_client_finalize_t finalize;
    upti_client_id_t client_id;
    uint64_t flush_ns;    /* UPTI_TRACE_FLUSH_MS */
    size_t agents_added;  /* agents already in the database */
    int ring;             /* record-only (UPTI_TRACE_RING_DIR, ring_mode.h) */
} g_tool = {.lock = PTHREAD_MUTEX_INITIALIZER, .lock_fd = -1};

/*
 * API arguments (UPTI_TRACE_ARGS): the callback at EXIT of each OpenCL call
 * prints the arguments (upti_iterate_callback_tracing_operation_args, one
 * dereference) into its thread's batch; the buffer callback and finalize
 * move the batches into the database. A batch entry is an arg_head followed
 * by the type, name and value strings, each with its NUL.
 */
typedef struct arg_head {
    uint64_t correlation;
    uint32_t position;
    uint32_t type_len, name_len, value_len; /* with the NULs */
} arg_head;

typedef struct arg_batch {
    pthread_mutex_t lock; /* the owning thread appends, the drain takes */
    char *data;
    size_t len, cap;
    struct arg_batch *next;
} arg_batch;

static pthread_mutex_t g_batches_lock = PTHREAD_MUTEX_INITIALIZER;
static arg_batch *g_batches;
static __thread arg_batch *t_batch;

static arg_batch *my_batch(void)
{
    arg_batch *b = t_batch;
    if (b != NULL)
        return b;
    b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    pthread_mutex_init(&b->lock, NULL);
    pthread_mutex_lock(&g_batches_lock);
    b->next = g_batches;
    g_batches = b;
    pthread_mutex_unlock(&g_batches_lock);
    t_batch = b;
    return b;
}

typedef struct arg_ctx {
    arg_batch *batch;
    uint64_t correlation;
} arg_ctx;

static int append_arg(upti_tracing_kind_t kind, uint32_t operation, uint32_t arg_index,
                      const void *arg_value_addr, int32_t indirection_count, const char *arg_type,
                      const char *arg_name, const char *arg_value_string, int32_t dereference_count,
                      void *data)
{
    (void)kind;
    (void)operation;
    (void)arg_value_addr;
    (void)indirection_count;
    (void)dereference_count;
    arg_ctx *c = data;
    arg_batch *b = c->batch;
    if (arg_type == NULL)
        arg_type = "";
    if (arg_name == NULL)
        arg_name = "";
    if (arg_value_string == NULL)
        arg_value_string = "";
    arg_head h = {c->correlation, arg_index, (uint32_t)strlen(arg_type) + 1,
                  (uint32_t)strlen(arg_name) + 1, (uint32_t)strlen(arg_value_string) + 1};
    size_t need = sizeof h + h.type_len + h.name_len + h.value_len;
    if (uo_grow(&b->data, &b->cap, b->len + need, 1, 16384) != 0)
        return 1;
    char *p = b->data + b->len;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    memcpy(p, arg_type, h.type_len);
    p += h.type_len;
    memcpy(p, arg_name, h.name_len);
    p += h.name_len;
    memcpy(p, arg_value_string, h.value_len);
    b->len += need;
    return 0;
}

static void args_callback(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                          void *callback_data)
{
    (void)user_data;
    (void)callback_data;
    if (record.phase != UPTI_CALLBACK_PHASE_EXIT ||
        __atomic_load_n(&g_tool.finalized, __ATOMIC_RELAXED))
        return;
    arg_batch *b = my_batch();
    if (b == NULL)
        return;
    arg_ctx c = {b, record.correlation_id.internal};
    pthread_mutex_lock(&b->lock);
    upti_iterate_callback_tracing_operation_args(record, append_arg, 1, &c);
    pthread_mutex_unlock(&b->lock);
}

/* Moves every thread's batch into the database (g_tool.lock held). */
static void drain_args(void)
{
    pthread_mutex_lock(&g_batches_lock);
    arg_batch *list = g_batches;
    pthread_mutex_unlock(&g_batches_lock);
    for (arg_batch *b = list; b != NULL; b = b->next) {
        pthread_mutex_lock(&b->lock);
        char *data = b->data;
        size_t len = b->len;
        b->data = NULL;
        b->len = b->cap = 0;
        pthread_mutex_unlock(&b->lock);
        for (size_t off = 0; off + sizeof(arg_head) <= len;) {
            arg_head h;
            memcpy(&h, data + off, sizeof h);
            const char *type = data + off + sizeof h;
            const char *name = type + h.type_len;
            const char *value = name + h.name_len;
            uo_db_add_arg(g_tool.db, h.correlation, h.position, type, name, value);
            off += sizeof h + h.type_len + h.name_len + h.value_len;
        }
        free(data);
    }
}

/* src/collector/output's messages (a database's first error, an output written under
 * another name): this program's, said through UPTI's log like the tool's own. */
static void report_output_problem(void *data, const char *message)
{
    (void)data;
    upti_log_error("%s", message);
}

static uint64_t now_ns(void)
{
    upti_timestamp_t ts = 0;
    upti_get_timestamp(&ts);
    return ts;
}

static const struct {
    const char *name;
    upti_tracing_kind_t kind;
} k_kinds[] = {
    {"marker_api", UPTI_TRACING_KIND_MARKER_API},
    {"opencl_api", UPTI_TRACING_KIND_OPENCL_API},
    {"kernel_dispatch", UPTI_TRACING_KIND_KERNEL_DISPATCH},
    {"memory_copy", UPTI_TRACING_KIND_MEMORY_COPY},
    {"memory_allocation", UPTI_TRACING_KIND_MEMORY_ALLOCATION},
    {"code_object", UPTI_TRACING_KIND_CODE_OBJECT},
    {"vulkan_api", UPTI_TRACING_KIND_VULKAN_API},
};

static int kind_known(const char *t)
{
    for (size_t i = 0; i < sizeof k_kinds / sizeof k_kinds[0]; i++)
        if (strcmp(t, k_kinds[i].name) == 0)
            return 1;
    return 0;
}

static unsigned parse_kinds(const char *s)
{
    if (s == NULL || s[0] == '\0' || strcmp(s, "all") == 0)
        return ~0u;
    unsigned bits = 0;
    char *copy = strdup(s);
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < sizeof k_kinds / sizeof k_kinds[0]; i++)
            if (strcmp(t, k_kinds[i].name) == 0)
                bits |= 1u << k_kinds[i].kind;
        if (strcmp(t, "all") == 0)
            bits = ~0u;
        else if (i == sizeof k_kinds / sizeof k_kinds[0] && !kind_known(t))
            upti_log_warning("UPTI_TRACE_KINDS: unknown kind '%s' (ignored)", t);
    }
    free(copy);
    return bits;
}

static unsigned parse_formats(const char *s)
{
    if (s == NULL || s[0] == '\0')
        return UO_FORMAT_DB;
    unsigned bits = 0;
    char *copy = strdup(s);
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "db") == 0 || strcmp(t, "rocpd") == 0)
            bits |= UO_FORMAT_DB;
        else if (strcmp(t, "pftrace") == 0 || strcmp(t, "perfetto") == 0)
            bits |= UO_FORMAT_PFTRACE;
        else if (strcmp(t, "json") == 0)
            bits |= UO_FORMAT_JSON;
        else if (strcmp(t, "csv") == 0)
            bits |= UO_FORMAT_CSV;
        else
            upti_log_warning("UPTI_TRACE_FORMATS: unknown format '%s'", t);
    }
    free(copy);
    return bits;
}

static int kernel_filter(void *data, int64_t name_id, const char *name)
{
    (void)data;
    (void)name_id;
    if (name == NULL)
        name = "";
    if (g_tool.has_include && regexec(&g_tool.include, name, 0, NULL, 0) != 0)
        return 0;
    if (g_tool.has_exclude && regexec(&g_tool.exclude, name, 0, NULL, 0) == 0)
        return 0;
    return 1;
}

static int compile(regex_t *re, const char *var)
{
    const char *v = getenv(var);
    if (v == NULL || v[0] == '\0')
        return 0;
    if (regcomp(re, v, REG_EXTENDED | REG_NOSUB) != 0) {
        upti_log_warning("%s: invalid regular expression '%s' (ignored)", var, v);
        return 0;
    }
    return 1;
}

/* The command line from /proc/self/cmdline, arguments joined by spaces. */
static char *command_line(void)
{
    char buf[4096];
    if (upti_proc_command_line(buf, sizeof buf) != 0)
        return strdup("?");
    return strdup(buf);
}

/*
 * Claims <base>.db for this process: created exclusively and flock()ed for
 * the process's life. A file held by a live writer, or left by another
 * process of the same `upti run` (same UPTI_TRACE_SESSION_START), is not
 * overwritten: "-<pid>" is appended to base instead. Returns the lock fd.
 */
/* The database's suffix: <base>.db when db is a format asked for; else the
 * working file <base>.db.part, removed once the other formats are written
 * (a run replaces only what it is asked to write). */
static const char *db_suffix(void)
{
    return (g_tool.formats & UO_FORMAT_DB) ? ".db" : ".db.part";
}

static int claim_output(char **base)
{
    return uo_claim_output(base, db_suffix(), getenv("UPTI_TRACE_SESSION_START"), (int)getpid());
}

/* The output pattern: UPTI_TRACE_OUTPUT, or the default when it is unset or has an
 * unknown placeholder (said once). */
static const char *output_pattern(void)
{
    static const char k_default[] = "upti-%argv0%-%pid%";
    const char *pattern = getenv("UPTI_TRACE_OUTPUT");
    if (pattern == NULL || pattern[0] == '\0')
        return k_default;
    char err[256];
    char *base = uo_expand_placeholders(pattern, err, sizeof err);
    if (base == NULL && err[0] != '\0') {
        upti_log_error("UPTI_TRACE_OUTPUT='%.200s': %s: using %s", pattern, err, k_default);
        return k_default;
    }
    free(base);
    return pattern;
}

/* Expands the output pattern. */
static char *output_base(void)
{
    return uo_expand_placeholders(output_pattern(), NULL, 0);
}

/*
 * Record-only without `upti run` (UPTI_TRACE_RECORD_ONLY=1): a helper collector
 * beside the program (collector_helper.h), then ring_mode.c. 0 or 1 as
 * ut_ring_start; -1 when no helper started (said): the tool writes the database.
 */
static int start_with_helper(void)
{
    char *pattern = ut_absolute_pattern(output_pattern());
    if (pattern == NULL)
        return -1;
    ut_helper_conf c = {pattern, g_tool.formats, g_tool.stats, getenv("UPTI_TRACE_KERNEL_INCLUDE"),
                        getenv("UPTI_TRACE_KERNEL_EXCLUDE"), getenv("UPTI_TRACE_KERNEL_ITERATIONS")};
    char rings[PATH_MAX];
    int rc = -1;
    if (ut_helper_start(&c, rings, sizeof rings) == 0) {
        /* The helper is the collector: a full ring waits for it up to 1 s without
         * progress, as under `upti run` (the user's setting stays). */
        setenv(upti_env_name(UPTI_ENV_RING_FULL_WAIT_MS), "1000", 0);
        g_tool.ring = 1;
        rc = ut_ring_start(rings, g_tool.kinds, g_tool.args, pattern);
    }
    free(pattern);
    return rc;
}

static void buffer_callback(upti_context_id_t context, upti_buffer_id_t buffer,
                            upti_record_header_t **headers, size_t n, void *data,
                            uint64_t drop_count)
{
    (void)context;
    (void)buffer;
    (void)data;
    pthread_mutex_lock(&g_tool.lock);
    if (g_tool.db != NULL && !g_tool.finalized && getpid() == g_tool.pid) {
        for (size_t i = 0; i < n; i++) {
            const upti_record_header_t *h = headers[i];
            if (h->category == UPTI_BUFFER_CATEGORY_TRACING) {
                g_tool.received++;
                uo_db_add_record(g_tool.db, h->kind, h->payload);
            }
        }
        g_tool.drops += drop_count;
        uo_db_set_tally(g_tool.db, g_tool.received, g_tool.drops);
        if (g_tool.args)
            drain_args();
        uo_db_checkpoint(g_tool.db, now_ns(), g_tool.flush_ns);
    }
    pthread_mutex_unlock(&g_tool.lock);
}

static int open_output(void);
static void start_tool_thread(void);
static int g_tool_thread_started;
static uo_db *g_parent_db;

/*
 * The tool's thread commits (SQLite, UPTI's agent list) inside g_tick_lock,
 * which a fork() takes first (pthread_atfork): a child never inherits a
 * lock held by a thread it does not have. Not g_tool.lock itself: UPTI's own fork
 * handler, which runs after this one, waits for a delivery under way, and
 * the delivery's callback takes g_tool.lock.
 */
static pthread_mutex_t g_tick_lock = PTHREAD_MUTEX_INITIALIZER;

static void fork_prepare(void)
{
    pthread_mutex_lock(&g_tick_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&g_tick_lock);
} /* the parent's, left alone (and reachable) in a child */

/*
 * The argument batches (UPTI_TRACE_ARGS) in a child: their locks may have
 * been held at the fork by threads the child does not have, and cannot be
 * taken by fork_prepare (a delivery under way, which libupti's handler waits
 * for after this one, takes them under g_tool.lock). The child gets fresh locks
 * and empty batches: what they held are the parent's calls. The data is
 * left, not freed: a thread may have been inside realloc() at the fork.
 */
static void forget_args_after_fork(void)
{
    pthread_mutex_init(&g_batches_lock, NULL);
    for (arg_batch *b = g_batches; b != NULL; b = b->next) {
        pthread_mutex_init(&b->lock, NULL);
        b->data = NULL;
        b->len = b->cap = 0;
    }
}

static void child_after_fork(void)
{
    /* The database belongs to the parent (a child that execs loads its own
     * tool). A child that goes on without exec traces into its own output:
     * the pattern expanded again (%pid% is the child's), "-<pid>" appended
     * when that is the parent's file. libupti's own fork handler made sure no
     * delivery, and fork_prepare no commit of the tool's thread (so no SQLite
     * call), was under way at the fork. */
    pthread_mutex_init(&g_tick_lock, NULL);
    pthread_mutex_init(&g_tool.lock, NULL);
    forget_args_after_fork();
    int traced = g_tool.db != NULL && !g_tool.finalized;
    if (g_tool.db != NULL)
        uo_db_abandon(g_tool.db);
    g_parent_db = g_tool.db;
    g_tool.db = NULL;
    g_tool.finalized = 1;
    if (g_tool.lock_fd >= 0)
        close(g_tool.lock_fd);
    g_tool.lock_fd = -1;
    if (!traced)
        return;
    free(g_tool.base);
    free(g_tool.db_path);
    g_tool.base = g_tool.db_path = NULL;
    g_tool.pid = getpid();
    g_tool.drops = 0;
    g_tool.received = 0;
    g_tool.agents_added = 0;
    g_tool_thread_started = 0;
    if (open_output() == 0) {
        g_tool.finalized = 0;
        start_tool_thread();
    }
}

/* Writes a fact a runtime reported (upti_runtime_set_metadata) into the database (g_tool.lock
 * held). */
static void write_runtime_metadata(const char *key, const char *value, void *data)
{
    (void)data;
    uo_db_set_metadata(g_tool.db, key, value);
}

/* Adds the agents that appeared since the last call (g_tool.lock held). The list
 * only grows, so the new ones are those past g_tool.agents_added. */
static upti_status_t add_new_agents(const upti_agent_t **agents, size_t n, void *data)
{
    (void)data;
    for (size_t i = g_tool.agents_added; i < n; i++)
        uo_db_add_agent(g_tool.db, agents[i]);
    if (n > g_tool.agents_added)
        g_tool.agents_added = n;
    return UPTI_STATUS_SUCCESS;
}

/*
 * The tool's thread. Every half UPTI_TRACE_FLUSH_MS it commits what the
 * buffer callback inserted since the last commit, with the agents known so
 * far: a process killed without warning (SIGKILL) loses at most the records
 * of its last two intervals (one waiting in UPTI's buffer, one waiting for
 * its commit) plus the time the writing took, and `upti run` recovers the
 * rest.
 *
 * It also finalizes on a signal. SIGINT/SIGTERM (Ctrl+C, or forwarded by
 * `upti run`) and crashes (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, when the
 * program has no handler of its own) get the outputs written before the
 * process goes. Finalizing inside a signal handler would take locks the
 * interrupted thread may hold, so the handler wakes this thread (sem_post is
 * async-signal-safe), which finalizes through UPTI (finalize_func: buffers
 * flushed, then tool_finalize), and waits for it: at most 30 s, 5 s after a
 * crash (the crashed thread may hold a lock the finalization needs; then the
 * trace is what the last commit holds). Then the handler chains to the
 * program's previous handler or, if it had none, restores the default action
 * and re-raises (the signal stays blocked until the handler returns, so the
 * process ends with the signal, as without UPTI; a faulting instruction
 * simply faults again).
 */
static const int k_signals[] = {SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NUM_SIGNALS (sizeof k_signals / sizeof k_signals[0])
#define FIRST_CRASH_SIGNAL 2 /* k_signals[2..]: install only over the default action */
static struct sigaction g_old_action[NUM_SIGNALS];
static sem_t g_sig_wake, g_sig_done;
static int g_sig_busy;
static int g_crashes;  /* crash signals taken */
static int g_signals;  /* the handlers are wanted (UPTI_TRACE_SIGNALS) */
static void retake_crash_signals(void);
static pthread_t g_tool_thread;

static void *tool_thread(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        /* Ticks every half interval, committing what is older than that: a
         * row waits at most one interval for its commit. */
        uint64_t ns = (uint64_t)until.tv_nsec + g_tool.flush_ns / 2;
        until.tv_sec += (time_t)(ns / 1000000000u);
        until.tv_nsec = (long)(ns % 1000000000u);
        if (sem_timedwait(&g_sig_wake, &until) == 0)
            break;
        if (errno != ETIMEDOUT)
            continue;
        pthread_mutex_lock(&g_tick_lock);
        pthread_mutex_lock(&g_tool.lock);
        if (g_tool.db != NULL && !g_tool.finalized && getpid() == g_tool.pid) {
            upti_query_available_agents(add_new_agents, NULL);
            upti_query_runtime_metadata(write_runtime_metadata, NULL);
            uo_db_checkpoint(g_tool.db, now_ns(), g_tool.flush_ns / 2);
            retake_crash_signals();
        }
        pthread_mutex_unlock(&g_tool.lock);
        pthread_mutex_unlock(&g_tick_lock);
    }
    if (g_tool.finalize != NULL)
        g_tool.finalize(g_tool.client_id);
    sem_post(&g_sig_done);
    return NULL;
}

static void start_tool_thread(void)
{
    if (sem_init(&g_sig_wake, 0, 0) != 0 || sem_init(&g_sig_done, 0, 0) != 0)
        return;
    /* The thread takes no signals: they go to the program's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&g_tool_thread, NULL, tool_thread, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        upti_log_warning("cannot start the tool's thread (%s): records are committed only as "
                         "they arrive", strerror(rc));
        return;
    }
    pthread_detach(g_tool_thread);
    g_tool_thread_started = 1;
}

static void wait_finalized(int seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    while (sem_timedwait(&g_sig_done, &until) != 0 && errno == EINTR)
        ;
    sem_post(&g_sig_done); /* a second signal does not wait again */
}

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    size_t i = 0;
    while (i < NUM_SIGNALS - 1 && k_signals[i] != sig)
        i++;
    int crash = i >= FIRST_CRASH_SIGNAL;
    if (crash && __atomic_fetch_add(&g_crashes, 1, __ATOMIC_ACQ_REL) > 0) {
        /* Again (a reporter chained to put this handler back, or a crash
         * while finalizing): the default action, at once. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);
        raise(sig);
        errno = saved;
        return;
    }
    /* A crash in the tool's own thread cannot wait for that thread. */
    if (getpid() == g_tool.pid && g_tool_thread_started &&
        !(crash && pthread_equal(pthread_self(), g_tool_thread))) {
        if (!__atomic_exchange_n(&g_sig_busy, 1, __ATOMIC_ACQ_REL))
            sem_post(&g_sig_wake);
        wait_finalized(crash ? 5 : 30);
    }
    struct sigaction *old = &g_old_action[i];
    errno = saved;
    if (old->sa_flags & SA_RESETHAND) { /* what the kernel would have done for it */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);
    }
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction != NULL)
            old->sa_sigaction(sig, info, uctx);
        return;
    }
    if (old->sa_handler == SIG_IGN)
        return;
    if (old->sa_handler == SIG_DFL) {
        sigaction(sig, old, NULL);
        raise(sig); /* delivered when this handler returns */
        return;
    }
    old->sa_handler(sig);
}

/* Installs on_signal for k_signals[i] over what is there, when it may. */
static void take_signal(size_t i, int only_over_reporters)
{
    struct sigaction cur;
    if (sigaction(k_signals[i], NULL, &cur) != 0 ||
        (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN))
        return; /* an ignored signal stays ignored (nohup) */
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal)
        return; /* ours already */
    /* A program that handles its own faults (a JIT, a GC) keeps them; a
     * one-shot crash reporter (SA_RESETHAND, as LLVM inside PoCL or Mesa
     * installs) runs after the trace is written. */
    int reporter = (cur.sa_flags & SA_RESETHAND) != 0;
    if (i >= FIRST_CRASH_SIGNAL && !reporter && ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL))
        return;
    if (only_over_reporters && !reporter)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(k_signals[i], &sa, &g_old_action[i]);
}

static void install_signal_handlers(void)
{
    if (upti_env_get(UPTI_ENV_TRACE_SIGNALS) == 0)
        return;
    g_signals = 1;
    for (size_t i = 0; i < NUM_SIGNALS; i++)
        take_signal(i, 0);
}

/* A runtime loaded after the tool started (LLVM inside PoCL, at the first
 * build) may put its one-shot crash reporter over the tool's handlers; it
 * restores the tool's when it runs, but abort() then goes straight to the
 * default action. The tool's thread puts its handler back on top, chained. */
static void retake_crash_signals(void)
{
    if (g_signals && __atomic_load_n(&g_crashes, __ATOMIC_ACQUIRE) == 0)
        for (size_t i = 0; i < NUM_SIGNALS; i++)
            take_signal(i, 1);
}

/* UPTI_TRACE_MANIFEST: tells `upti run` where this process's database is. */
static void add_to_manifest(void)
{
    char pid[24], formats[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    snprintf(formats, sizeof formats, "%u", g_tool.formats);
    const char *fields[] = {"db", pid, g_tool.db_path, g_tool.base, formats};
    if (uo_manifest_add(fields, 5) != 0)
        upti_log_warning("cannot add %s to the run's manifest", g_tool.db_path);
}

/* Creates this process's output (<base>.db, or the fallback) and opens the
 * database. 0, or -1 when nothing is traced (said on stderr). */
static int open_output(void)
{
    g_tool.base = output_base();
    if (g_tool.base == NULL)
        return -1;
    g_tool.lock_fd = claim_output(&g_tool.base);
    if (g_tool.lock_fd < 0) {
        /* An output directory that cannot be written: the trace goes to the
         * fallback and says where, in one line. */
        char reason[128];
        snprintf(reason, sizeof reason, "%s", strerror(errno));
        char *fallback = uo_fallback_base(g_tool.base);
        int fd = fallback != NULL ? claim_output(&fallback) : -1;
        if (fd >= 0) {
            upti_log_warning("cannot create %s.db (%s): the trace goes to %s.db instead",
                             g_tool.base, reason, fallback);
            free(g_tool.base);
            g_tool.base = fallback;
            g_tool.lock_fd = fd;
        } else {
            upti_log_error("cannot create %s.db (%s) nor a fallback in $TMPDIR or /tmp: "
                           "nothing is traced", g_tool.base, reason);
            free(fallback);
            return -1;
        }
    }
    size_t len = strlen(g_tool.base) + 16;
    g_tool.db_path = malloc(len);
    snprintf(g_tool.db_path, len, "%s%s", g_tool.base, db_suffix());

    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const char *rank = NULL;
    const char *rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID",
                               "MPI_LOCALRANKID"};
    for (size_t i = 0; i < 5 && rank == NULL; i++)
        rank = getenv(rank_vars[i]);
    char *cmd = command_line();
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    uo_process_info proc = {getpid(),
                            getppid(),
                            rank ? strtoll(rank, NULL, 10) : -1,
                            host,
                            cmd,
                            now_ns(),
                            (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec};
    char err[512];
    g_tool.db = uo_db_create(g_tool.db_path, &proc, uo_upti_operation_name, err, sizeof err);
    free(cmd);
    if (g_tool.db == NULL) {
        upti_log_error("%s: nothing is traced", err);
        return -1;
    }
    const char *session = getenv("UPTI_TRACE_SESSION_START");
    if (session != NULL)
        uo_db_set_metadata(g_tool.db, "session", session);
    if (g_tool.has_include || g_tool.has_exclude)
        uo_db_set_kernel_filter(g_tool.db, kernel_filter, NULL);
    const char *iterations = getenv("UPTI_TRACE_KERNEL_ITERATIONS");
    static upti_iteration_range range;
    if (iterations != NULL && iterations[0] != '\0') {
        if (upti_parse_iteration_range(iterations, &range) == 0)
            uo_db_set_kernel_iterations(g_tool.db, &range);
        else
            upti_log_warning("UPTI_TRACE_KERNEL_ITERATIONS='%s' is not N, N-M, N- or a comma "
                             "list of them (e.g. [1-3,5]): every execution is kept", iterations);
    }
    add_to_manifest();
    return 0;
}

static int tool_initialize(upti_client_finalize_t finalize, void *data)
{
    (void)data;
    g_tool.finalize = finalize;
    g_tool.pid = getpid();
    uo_set_reporter(report_output_problem, NULL);
    g_tool.kinds = parse_kinds(getenv("UPTI_TRACE_KINDS"));
    g_tool.formats = parse_formats(getenv("UPTI_TRACE_FORMATS"));
    g_tool.stats = upti_env_get(UPTI_ENV_TRACE_STATS) != 0;
    g_tool.args = upti_env_get(UPTI_ENV_TRACE_ARGS) != 0 && ((g_tool.kinds >> UPTI_TRACING_KIND_OPENCL_API) & 1);
    g_tool.list = upti_env_get(UPTI_ENV_TRACE_LIST) != 0;
    g_tool.has_include = compile(&g_tool.include, "UPTI_TRACE_KERNEL_INCLUDE");
    g_tool.has_exclude = compile(&g_tool.exclude, "UPTI_TRACE_KERNEL_EXCLUDE");
    g_tool.flush_ns = 1000000ull * upti_env_get(UPTI_ENV_TRACE_FLUSH_MS);
    if (ut_ring_dir() != NULL) {
        /* Under `upti run`: the program only records (ring_mode.h). A ring folder set
         * by hand (no UPTI_TRACE_SESSION_START, which `upti run` always sets) also
         * records the output pattern, for `upti recover` of that folder. */
        g_tool.ring = 1;
        char *pattern = getenv("UPTI_TRACE_SESSION_START") == NULL
                            ? ut_absolute_pattern(output_pattern())
                            : NULL;
        int rc = ut_ring_start(ut_ring_dir(), g_tool.kinds, g_tool.args, pattern);
        free(pattern);
        return rc;
    }
    if (upti_env_get(UPTI_ENV_TRACE_RECORD_ONLY) != 0) {
        int rc = start_with_helper();
        if (rc >= 0)
            return rc;
    }
    if (open_output() != 0)
        return g_tool.base == NULL ? 1 : 0;

    size_t region = (size_t)upti_env_get(UPTI_ENV_TRACE_BUFFER_SIZE);
    upti_status_t st = upti_create_context(&g_tool.context);
    if (st == UPTI_STATUS_SUCCESS)
        st = upti_create_buffer(g_tool.context, region, region / 2, UPTI_BUFFER_POLICY_LOSSLESS,
                                buffer_callback, NULL, &g_tool.buffer);
    if (st == UPTI_STATUS_SUCCESS)
        st = upti_set_buffer_flush_interval(g_tool.buffer, g_tool.flush_ns);
    for (size_t i = 0; st == UPTI_STATUS_SUCCESS && i < sizeof k_kinds / sizeof k_kinds[0]; i++) {
        upti_tracing_kind_t kind = k_kinds[i].kind;
        int want = (g_tool.kinds >> kind) & 1;
        /* Kernel names of symbols come with kernel tracing. */
        if (kind == UPTI_TRACING_KIND_CODE_OBJECT &&
            ((g_tool.kinds >> UPTI_TRACING_KIND_KERNEL_DISPATCH) & 1))
            want = 1;
        if (!want)
            continue;
        upti_status_t s =
            upti_configure_buffer_tracing_service(g_tool.context, kind, NULL, 0, g_tool.buffer);
        if (s != UPTI_STATUS_SUCCESS && s != UPTI_STATUS_ERROR_KIND_NOT_FOUND)
            upti_log_warning("cannot trace %s: %s", k_kinds[i].name, upti_get_status_string(s));
    }
    int args_ok = 0;
    if (st == UPTI_STATUS_SUCCESS && g_tool.args) {
        /* Arguments come from a callback service, on a context of their own. */
        upti_status_t s = upti_create_context(&g_tool.args_context);
        if (s == UPTI_STATUS_SUCCESS)
            s = upti_configure_callback_tracing_service(g_tool.args_context,
                                                        UPTI_TRACING_KIND_OPENCL_API, NULL, 0,
                                                        args_callback, NULL);
        if (s == UPTI_STATUS_SUCCESS)
            args_ok = 1;
        else if (s != UPTI_STATUS_ERROR_KIND_NOT_FOUND)
            upti_log_warning("cannot record API arguments: %s", upti_get_status_string(s));
    }
    /* Started now, or when a capture window opens (capture.h: uptx_profiler_pause/resume
     * and the UPTI_TRACE_CAPTURE_* variables work without `upti run` too). */
    if (st == UPTI_STATUS_SUCCESS) {
        upti_context_id_t gated[2] = {g_tool.context, g_tool.args_context};
        st = ut_capture_start(gated, args_ok ? 2 : 1, g_tool.buffer);
    }
    if (st != UPTI_STATUS_SUCCESS) {
        upti_log_error("tracing not started: %s", upti_get_status_string(st));
        return 1;
    }
    pthread_atfork(fork_prepare, fork_parent, child_after_fork);
    /* Before the thread, which reads what this writes (retake_crash_signals). */
    install_signal_handlers();
    start_tool_thread();
    return 0;
}

/* UPTI_TRACE_LIST: the agents this process saw, on stderr. */
static upti_status_t print_agents(const upti_agent_t **agents, size_t n, void *data)
{
    (void)data;
    static const char *const types[] = {"NONE", "CPU", "GPU", "ACCELERATOR"};
    fprintf(stderr, "upti: agents of pid %d:\n", (int)g_tool.pid);
    for (size_t i = 0; i < n; i++) {
        const upti_agent_t *a = agents[i];
        /* An empty vendor or driver version is left out, not printed as ", ;". */
        int has_driver = a->driver_version != NULL && a->driver_version[0] != '\0';
        fprintf(stderr, "  %llu %s %s: %s (%s%s%s; %u compute units, %llu bytes)\n",
                (unsigned long long)a->id.handle, a->runtime ? a->runtime : "?",
                (unsigned)a->type < 4 ? types[a->type] : "?", a->name ? a->name : "?",
                a->vendor != NULL && a->vendor[0] != '\0' ? a->vendor : "vendor unknown",
                has_driver ? ", driver " : "", has_driver ? a->driver_version : "",
                a->compute_units, (unsigned long long)a->global_memory_bytes);
    }
    return UPTI_STATUS_SUCCESS;
}

static void write_outputs(void)
{
    uo_write_outputs(g_tool.db_path, g_tool.base, g_tool.formats, g_tool.stats, (int)g_tool.pid);
    const char *done[] = {"done", g_tool.db_path};
    uo_manifest_add(done, 2);
    if (!(g_tool.formats & UO_FORMAT_DB))
        remove(g_tool.db_path);
    if (g_tool.lock_fd >= 0)
        close(g_tool.lock_fd);
    g_tool.lock_fd = -1;
}

/*
 * The database could not be written (a full disk, a file size limit): what
 * it holds is its last commit. The counts are measured: records received
 * from UPTI, those the last commit stored. Under `upti run` they go to the
 * manifest (the run recovers the database and says them once); else here.
 */
static void report_incomplete(uint64_t committed, uint64_t filtered)
{
    char received[24], written[24], filt[24], pid[24];
    snprintf(received, sizeof received, "%llu", (unsigned long long)g_tool.received);
    snprintf(written, sizeof written, "%llu", (unsigned long long)committed);
    snprintf(filt, sizeof filt, "%llu", (unsigned long long)filtered);
    snprintf(pid, sizeof pid, "%d", (int)g_tool.pid);
    const char *fields[] = {"tally", pid, received, written, filt, "the database could not be written"};
    const char *manifest = getenv("UPTI_TRACE_MANIFEST");
    if (manifest != NULL && manifest[0] != '\0' && uo_manifest_add(fields, 6) == 0)
        return;
    uint64_t lost =
        g_tool.received > committed + filtered ? g_tool.received - committed - filtered : 0;
    upti_log_error("the trace database %s could not be written: it holds %llu records; "
                   "%llu of the %llu records received are lost", g_tool.db_path,
                   (unsigned long long)committed, (unsigned long long)lost,
                   (unsigned long long)g_tool.received);
}

static void tool_finalize(void *data)
{
    (void)data;
    if (g_tool.ring) {
        if (g_tool.list)
            upti_query_available_agents(print_agents, NULL);
        ut_ring_finalize();
        return;
    }
    /* Before g_tool.lock: capture.c's lock is taken first at a fork (its atfork
     * handler runs before libupti's, which takes the buffers' locks, under
     * which the buffer callback takes g_tool.lock). */
    ut_capture_finalize();
    pthread_mutex_lock(&g_tool.lock);
    if (g_tool.finalized || g_tool.db == NULL || getpid() != g_tool.pid) {
        g_tool.finalized = 1;
        pthread_mutex_unlock(&g_tool.lock);
        return;
    }
    if (g_tool.args)
        drain_args();
    g_tool.finalized = 1;
    upti_query_available_agents(add_new_agents, NULL);
    if (g_tool.list)
        upti_query_available_agents(print_agents, NULL);
    if (g_tool.drops != 0) {
        char n[32];
        snprintf(n, sizeof n, "%llu", (unsigned long long)g_tool.drops);
        upti_log_warning("%s records were dropped", n);
    }
    uint64_t cut = 0;
    upti_get_marker_texts_truncated(&cut);
    char cut_text[32];
    snprintf(cut_text, sizeof cut_text, "%llu", (unsigned long long)cut);
    uo_db_set_metadata(g_tool.db, "marker_texts_truncated", cut_text);
    upti_query_runtime_metadata(write_runtime_metadata, NULL);
    uo_db_set_tally(g_tool.db, g_tool.received, g_tool.drops);
    uint64_t committed = uo_db_committed_records(g_tool.db);
    uint64_t filtered = uo_db_filtered_records(g_tool.db);
    int rc = uo_db_close(g_tool.db, now_ns());
    g_tool.db = NULL;
    if (rc == 0) {
        if (g_tool.formats & UO_FORMAT_DB)
            uo_note_written(g_tool.db_path);
        write_outputs();
    } else {
        report_incomplete(committed, filtered);
    }
    pthread_mutex_unlock(&g_tool.lock);
}

UPTI_API upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                                      uint32_t priority,
                                                      upti_client_id_t *client_id)
{
    (void)version;
    (void)runtime_version;
    (void)priority;
    static upti_tool_configure_result_t result = {sizeof(upti_tool_configure_result_t),
                                                  tool_initialize, tool_finalize, NULL};
    if (client_id != NULL) {
        client_id->name = "upti-trace";
        g_tool.client_id = *client_id;
    }
    return &result;
}
