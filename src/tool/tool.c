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
 *   UPTI_TRACE_SESSION_START  ns since the epoch when `upti run` started: an output
 *                        file newer than this belongs to another process of the same
 *                        run and is not overwritten ("-<pid>" is appended instead)
 *   UPTI_TRACE_BUFFER_SIZE  bytes per producing thread's buffer region (default 4 MiB)
 * Records stream into the per-process database from the buffer callback;
 * finalize closes it and writes the other formats from it.
 */
#include <upti/upti.h>

#include "output.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { F_DB = 1, F_PFTRACE = 2, F_JSON = 4, F_CSV = 8 };

static struct {
    pthread_mutex_t lock;
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
    upti_context_id_t context;
    upti_buffer_id_t buffer;
    int lock_fd;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .lock_fd = -1};

static void warn(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "upti: ");
    fprintf(stderr, fmt, a ? a : "", b ? b : "");
    fputc('\n', stderr);
}

static uint64_t now_ns(void)
{
    upti_timestamp_t ts = 0;
    upti_get_timestamp(&ts);
    return ts;
}

static const char *op_name(uint32_t kind, uint32_t op)
{
    const char *name = NULL;
    if (upti_get_tracing_operation_name((upti_tracing_kind_t)kind, op, &name) != UPTI_STATUS_SUCCESS)
        return NULL;
    return name;
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
};

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
    }
    free(copy);
    return bits;
}

static unsigned parse_formats(const char *s)
{
    if (s == NULL || s[0] == '\0')
        return F_DB;
    unsigned bits = 0;
    char *copy = strdup(s);
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "db") == 0 || strcmp(t, "rocpd") == 0)
            bits |= F_DB;
        else if (strcmp(t, "pftrace") == 0 || strcmp(t, "perfetto") == 0)
            bits |= F_PFTRACE;
        else if (strcmp(t, "json") == 0)
            bits |= F_JSON;
        else if (strcmp(t, "csv") == 0)
            bits |= F_CSV;
        else
            warn("UPTI_TRACE_FORMATS: unknown format '%s'%s", t, NULL);
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
    if (g.has_include && regexec(&g.include, name, 0, NULL, 0) != 0)
        return 0;
    if (g.has_exclude && regexec(&g.exclude, name, 0, NULL, 0) == 0)
        return 0;
    return 1;
}

static int compile(regex_t *re, const char *var)
{
    const char *v = getenv(var);
    if (v == NULL || v[0] == '\0')
        return 0;
    if (regcomp(re, v, REG_EXTENDED | REG_NOSUB) != 0) {
        warn("%s: invalid regular expression '%s' (ignored)", var, v);
        return 0;
    }
    return 1;
}

static void mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    char *slash = strrchr(tmp, '/');
    if (slash == NULL || slash == tmp)
        return;
    *slash = '\0';
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0777);
            *p = '/';
        }
    }
    mkdir(tmp, 0777);
}

/* The command line from /proc/self/cmdline, arguments joined by spaces. */
static char *command_line(void)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f == NULL)
        return strdup("?");
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n > 0 && buf[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    return strdup(buf);
}

/* 1 if the (unlocked) database at path was written by this run's session. */
static int same_session(const char *path, const char *session)
{
    sqlite3 *db = NULL;
    int same = 0;
    if (session != NULL &&
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "SELECT value FROM metadata WHERE key = 'session'", -1, &st,
                               NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW) {
                const char *v = (const char *)sqlite3_column_text(st, 0);
                same = v != NULL && strcmp(v, session) == 0;
            }
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(db);
    return same;
}

/*
 * Claims <base>.db for this process: created exclusively and flock()ed for
 * the process's life. A file held by a live writer, or left by another
 * process of the same `upti run` (same UPTI_TRACE_SESSION_START), is not
 * overwritten: "-<pid>" is appended to base instead. Returns the lock fd.
 */
static int claim_output(char **base)
{
    const char *session = getenv("UPTI_TRACE_SESSION_START");
    for (int attempt = 0; attempt < 2; attempt++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s.db", *base);
        mkdirs(path);
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            flock(fd, LOCK_EX);
            return fd;
        }
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && !same_session(path, session))
            return fd; /* a leftover of an earlier run: reuse it */
        if (fd >= 0)
            close(fd);
        if (attempt == 0) {
            size_t len = strlen(*base) + 32;
            char *b2 = malloc(len);
            if (b2 == NULL)
                return -1;
            snprintf(b2, len, "%s-%d", *base, (int)getpid());
            free(*base);
            *base = b2;
        }
    }
    return -1;
}

/* Expands the output pattern. */
static char *output_base(void)
{
    const char *pattern = getenv("UPTI_TRACE_OUTPUT");
    if (pattern == NULL || pattern[0] == '\0')
        pattern = "upti-%argv0%-%pid%";
    return uo_expand_placeholders(pattern);
}

static void buffer_callback(upti_context_id_t context, upti_buffer_id_t buffer,
                            upti_record_header_t **headers, size_t n, void *data,
                            uint64_t drop_count)
{
    (void)context;
    (void)buffer;
    (void)data;
    pthread_mutex_lock(&g.lock);
    if (g.db != NULL && !g.finalized && getpid() == g.pid) {
        for (size_t i = 0; i < n; i++) {
            const upti_record_header_t *h = headers[i];
            if (h->category == UPTI_BUFFER_CATEGORY_TRACING)
                uo_db_add_record(g.db, h->kind, h->payload);
        }
        g.drops += drop_count;
        uo_db_checkpoint(g.db, now_ns(), 1000000000ull);
    }
    pthread_mutex_unlock(&g.lock);
}

static void child_after_fork(void)
{
    /* The database belongs to the parent. A child that execs loads its own tool. */
    pthread_mutex_init(&g.lock, NULL);
    if (g.db != NULL)
        uo_db_abandon(g.db);
    g.db = NULL;
    g.finalized = 1;
}

static int tool_initialize(upti_client_finalize_t finalize, void *data)
{
    (void)finalize;
    (void)data;
    g.pid = getpid();
    g.kinds = parse_kinds(getenv("UPTI_TRACE_KINDS"));
    g.formats = parse_formats(getenv("UPTI_TRACE_FORMATS"));
    const char *stats = getenv("UPTI_TRACE_STATS");
    g.stats = stats != NULL && stats[0] != '\0' && strcmp(stats, "0") != 0;
    g.has_include = compile(&g.include, "UPTI_TRACE_KERNEL_INCLUDE");
    g.has_exclude = compile(&g.exclude, "UPTI_TRACE_KERNEL_EXCLUDE");
    g.base = output_base();
    if (g.base == NULL)
        return 1;
    g.lock_fd = claim_output(&g.base);
    size_t len = strlen(g.base) + 4;
    g.db_path = malloc(len);
    snprintf(g.db_path, len, "%s.db", g.base);

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
    g.db = uo_db_create(g.db_path, &proc, op_name, err, sizeof err);
    free(cmd);
    if (g.db == NULL) {
        warn("%s%s", err, NULL);
        return 1;
    }
    const char *session = getenv("UPTI_TRACE_SESSION_START");
    if (session != NULL)
        uo_db_set_metadata(g.db, "session", session);
    if (g.has_include || g.has_exclude)
        uo_db_set_kernel_filter(g.db, kernel_filter, NULL);

    size_t region = 4u << 20;
    const char *bs = getenv("UPTI_TRACE_BUFFER_SIZE");
    if (bs != NULL && strtoull(bs, NULL, 10) >= 4096)
        region = (size_t)strtoull(bs, NULL, 10);
    upti_status_t st = upti_create_context(&g.context);
    if (st == UPTI_STATUS_SUCCESS)
        st = upti_create_buffer(g.context, region, region / 2, UPTI_BUFFER_POLICY_LOSSLESS,
                                buffer_callback, NULL, &g.buffer);
    for (size_t i = 0; st == UPTI_STATUS_SUCCESS && i < sizeof k_kinds / sizeof k_kinds[0]; i++) {
        upti_tracing_kind_t kind = k_kinds[i].kind;
        int want = (g.kinds >> kind) & 1;
        /* Kernel names of symbols come with kernel tracing. */
        if (kind == UPTI_TRACING_KIND_CODE_OBJECT &&
            ((g.kinds >> UPTI_TRACING_KIND_KERNEL_DISPATCH) & 1))
            want = 1;
        if (!want)
            continue;
        upti_status_t s = upti_configure_buffer_tracing_service(g.context, kind, NULL, 0, g.buffer);
        if (s != UPTI_STATUS_SUCCESS && s != UPTI_STATUS_ERROR_KIND_NOT_FOUND)
            warn("cannot trace %s: %s", k_kinds[i].name, upti_get_status_string(s));
    }
    if (st == UPTI_STATUS_SUCCESS)
        st = upti_start_context(g.context);
    if (st != UPTI_STATUS_SUCCESS) {
        warn("tracing not started: %s%s", upti_get_status_string(st), NULL);
        return 1;
    }
    pthread_atfork(NULL, NULL, child_after_fork);
    return 0;
}

static upti_status_t add_agents(const upti_agent_t **agents, size_t n, void *data)
{
    (void)data;
    for (size_t i = 0; i < n; i++)
        uo_db_add_agent(g.db, agents[i]);
    return UPTI_STATUS_SUCCESS;
}

static void write_outputs(void)
{
    char err[512];
    sqlite3 *db = uo_open(g.db_path, 0, err, sizeof err);
    if (db == NULL) {
        warn("%s%s", err, NULL);
        return;
    }
    size_t len = strlen(g.base) + 16;
    char *path = malloc(len);
    if (g.formats & F_PFTRACE) {
        snprintf(path, len, "%s.pftrace", g.base);
        if (uo_export_pftrace(db, path, err, sizeof err) != 0)
            warn("%s%s", err, NULL);
    }
    if (g.formats & F_JSON) {
        snprintf(path, len, "%s.json", g.base);
        if (uo_export_json(db, path, err, sizeof err) != 0)
            warn("%s%s", err, NULL);
    }
    if (g.formats & F_CSV) {
        if (uo_export_csv(db, g.base, 0, NULL, err, sizeof err) != 0)
            warn("%s%s", err, NULL);
        if (g.stats) {
            snprintf(path, len, "%s_stats.csv", g.base);
            FILE *f = fopen(path, "w");
            if (f != NULL) {
                uo_summary(db, f, 1, err, sizeof err);
                fclose(f);
            }
        }
    }
    if (g.stats) {
        fprintf(stderr, "upti: summary of pid %d (%s)\n", (int)g.pid, g.db_path);
        if (uo_summary(db, stderr, 0, err, sizeof err) != 0)
            warn("%s%s", err, NULL);
    }
    sqlite3_close(db);
    free(path);
    if (!(g.formats & F_DB))
        remove(g.db_path);
    if (g.lock_fd >= 0)
        close(g.lock_fd);
    g.lock_fd = -1;
}

static void tool_finalize(void *data)
{
    (void)data;
    pthread_mutex_lock(&g.lock);
    if (g.finalized || g.db == NULL || getpid() != g.pid) {
        g.finalized = 1;
        pthread_mutex_unlock(&g.lock);
        return;
    }
    g.finalized = 1;
    upti_query_available_agents(add_agents, NULL);
    if (g.drops != 0) {
        char n[32];
        snprintf(n, sizeof n, "%llu", (unsigned long long)g.drops);
        warn("%s records were dropped%s", n, NULL);
    }
    int rc = uo_db_close(g.db, now_ns());
    g.db = NULL;
    if (rc == 0)
        write_outputs();
    else
        warn("the trace database %s is incomplete%s", g.db_path, NULL);
    pthread_mutex_unlock(&g.lock);
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
    if (client_id != NULL)
        client_id->name = "upti-trace";
    return &result;
}
