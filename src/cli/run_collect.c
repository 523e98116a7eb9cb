/* SPDX-License-Identifier: MIT */
/* See run_collect.h. */
#include "run_collect.h"
#include "run_outputs.h"
#include "run_config.h"

#include "cli.h"
#include "files.h"
#include "collector.h"
#include "manifest.h"
#include "out_files.h"
#include "output.h"
#include "kv_pairs.h"
#include "private_dir.h"
#include "run_folder.h"
#include "safe_open.h"
#include <upti/ring.h>

#include <dirent.h>
#include <upti/upti.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* One converted database: its temporary path and process. */
typedef struct converted {
    char *path;
    long long pid, ppid;
    int complete;
    char *meta;    /* its metadata: key\0value\0... */
    size_t meta_len;
    char *host, *command;
} converted;

/* The state of this `upti run` (or `upti recover`): its folders, the collector
 * thread, the run's configuration and the databases it converted. */
static struct {
    char folder[PATH_MAX];  /* the run folder */
    char rings[PATH_MAX];   /* the ring folder */
    char spool[PATH_MAX + 16];
    int lock_fd;
    pthread_t thread, template_thread;
    int thread_started, collect_rc;
    int template_started; /* template_thread runs (set by the collecting thread) */
    volatile int stop;
    pid_t program;
    /* the run's configuration (also in run.conf) */
    char *pattern, *include, *exclude, *session, *iterations, *capture_never;
    char *config;      /* the resolved settings (JSON) */
    int output_config; /* --output-config: also NAME_config.json */
    upti_iteration_range iteration_range;
    int has_iterations;
    int never_opened; /* processes whose capture window never opened */
    int empty_windows; /* processes whose capture windows opened but recorded nothing */
    unsigned formats;
    int stats;
    regex_t include_re, exclude_re;
    int has_include, has_exclude;
    converted *dbs;
    size_t num_dbs, cap_dbs;
    int status, have_status; /* the program's wait status */
    int recovering;          /* upti recover */
    int quiet;               /* run.conf "quiet": the helper of a program, which shares its stderr */
    int kept;                /* a converted database could not be placed: keep the folder */
    char **bases; /* the output names this run wrote */
    size_t num_bases;
    int lost; /* traced processes that lost records, said in a line */
    int bare; /* upti recover of a ring folder without run.conf (names from the rings) */
    ur_loss *losses; /* records the collectors of this folder could not store, per process */
    size_t num_losses, cap_losses;
} g_run = {.lock_fd = -1};

/* Beside the rings (another file system than a full $TMPDIR: /dev/shm), what a
 * kept folder's database must still say once `upti recover` writes it: the
 * records not stored (NOT_STORED_FILE, "PID RECORDS" lines) and how the
 * program upti run started ended (STATUS_FILE, "PID WAIT_STATUS"). */
#define NOT_STORED_FILE "not-stored"
#define STATUS_FILE "status"

/* The output name of a process traced without `upti run` that did not say its own
 * (the tool's default, src/program/recorder/tool.c). */
#define DEFAULT_PATTERN "upti-%argv0%-%pid%"

/* ---- run.conf: key\0value\0 pairs (kv_pairs.h) ---- */

static int write_conf(void)
{
    char path[PATH_MAX + 16], fmt[16], stats[4], output_config[4];
    snprintf(path, sizeof path, "%s/run.conf", g_run.folder);
    int fd = upti_open_file(path, O_WRONLY | O_CREAT, 0600, 1); /* (a folder just made) */
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    snprintf(fmt, sizeof fmt, "%u", g_run.formats);
    snprintf(stats, sizeof stats, "%d", g_run.stats);
    snprintf(output_config, sizeof output_config, "%d", g_run.output_config);
    int rc = upti_kv_put(f, "rings", g_run.rings) | upti_kv_put(f, "pattern", g_run.pattern) |
             upti_kv_put(f, "formats", fmt) | upti_kv_put(f, "stats", stats) |
             upti_kv_put(f, "include", g_run.include) | upti_kv_put(f, "exclude", g_run.exclude) |
             upti_kv_put(f, "iterations", g_run.iterations) |
             upti_kv_put(f, "session", g_run.session) | upti_kv_put(f, "config", g_run.config) |
             upti_kv_put(f, "output_config", output_config);
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

static char *dup_or_null(const char *s)
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

/* The kernel filter of every database (--kernel-include-regex/--kernel-exclude-regex). */
static int kernel_filter(void *data, int64_t name_id, const char *name)
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
    g_run.include = dup_or_null(cfg->include);
    g_run.exclude = dup_or_null(cfg->exclude);
    g_run.session = dup_or_null(cfg->session);
    g_run.iterations = dup_or_null(cfg->iterations);
    g_run.capture_never = dup_or_null(cfg->capture_never);
    g_run.config = dup_or_null(cfg->config);
    g_run.output_config = cfg->output_config;
    g_run.formats = cfg->formats;
    g_run.stats = cfg->stats;
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

static void save_not_stored(void)
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

/* The empty database the traces of this run start from (the schema made once,
 * ahead of time; SQLite loaded and warm), made in a thread of its own while
 * the program runs, once a process has a ring (a program that traces nothing
 * gets no database and costs nothing more). */
static void *template_thread(void *arg)
{
    (void)arg;
    char template[sizeof g_run.folder + 16];
    snprintf(template, sizeof template, "%s/schema.db", g_run.folder);
    if (uo_db_make_template(template) == 0)
        uo_db_use_template(template);
    return NULL;
}

static void start_template(void *arg)
{
    (void)arg;
    g_run.template_started = pthread_create(&g_run.template_thread, NULL, template_thread, NULL) == 0;
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
                         .first_ring = start_template};
    g_run.collect_rc = ur_collect(&o);
    return NULL;
}

int run_collect_start(pid_t program)
{
    g_run.program = program;
    if (pthread_create(&g_run.thread, NULL, collect_thread, NULL) != 0)
        return -1;
    g_run.thread_started = 1;
    return 0;
}

void run_collect_stop(void)
{
    /* From the main thread (a signal forwarded), read by the collector's thread. */
    __atomic_store_n(&g_run.stop, 1, __ATOMIC_RELEASE);
}

/* ---- naming and writing the outputs ---- */

/* A NAME_config.json that upti wrote (it starts with RC_CONFIG_HEAD). */
static int config_file_is_ours(const char *path)
{
    char head[sizeof RC_CONFIG_HEAD];
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    return n == sizeof head - 1 && memcmp(head, RC_CONFIG_HEAD, n) == 0;
}

static void read_db_info(converted *c)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(c->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT key, value FROM metadata", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *k = (const char *)sqlite3_column_text(st, 0);
            const char *v = (const char *)sqlite3_column_text(st, 1);
            if (k == NULL || v == NULL)
                continue;
            size_t kl = strlen(k) + 1, vl = strlen(v) + 1;
            char *n = realloc(c->meta, c->meta_len + kl + vl);
            if (n == NULL)
                break;
            c->meta = n;
            memcpy(c->meta + c->meta_len, k, kl);
            memcpy(c->meta + c->meta_len + kl, v, vl);
            c->meta_len += kl + vl;
        }
        sqlite3_finalize(st);
    }
    if (sqlite3_prepare_v2(db, "SELECT ppid, hostname, command FROM info_process LIMIT 1", -1, &st,
                           NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            c->ppid = sqlite3_column_int64(st, 0);
            c->host = dup_or_null((const char *)sqlite3_column_text(st, 1));
            c->command = dup_or_null((const char *)sqlite3_column_text(st, 2));
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

static void on_converted(void *arg, const char *path, int64_t pid, int complete)
{
    (void)arg;
    if (g_run.num_dbs == g_run.cap_dbs) {
        size_t cap = g_run.cap_dbs ? 2 * g_run.cap_dbs : 8;
        converted *n = realloc(g_run.dbs, cap * sizeof *n);
        if (n == NULL)
            return;
        g_run.dbs = n;
        g_run.cap_dbs = cap;
    }
    converted *c = &g_run.dbs[g_run.num_dbs++];
    memset(c, 0, sizeof *c);
    c->path = strdup(path);
    c->pid = pid;
    c->complete = complete;
    read_db_info(c);
}

/* A value the program gave for its outputs' names: its own, else (a child
 * forked without exec, which wrote none) its parent's. */
static const char *naming_value(const converted *c, const char *key)
{
    for (int depth = 0; c != NULL && depth < 64; depth++) {
        const char *v = upti_kv_get(c->meta, c->meta_len, key);
        if (v != NULL)
            return v;
        const converted *parent = NULL;
        for (size_t i = 0; i < g_run.num_dbs && parent == NULL; i++)
            if (g_run.dbs[i].pid == c->ppid)
                parent = &g_run.dbs[i];
        c = parent;
    }
    return NULL;
}

static const char *env_value(void *data, const char *name)
{
    char key[300];
    snprintf(key, sizeof key, "env:%s", name);
    return naming_value(data, key);
}

/* 1 if the relative path leaves its folder: a ".." component. */
static int climbs_out(const char *path)
{
    for (const char *p = path; *p != '\0';) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p += n;
        p += *p == '/';
    }
    return 0;
}

/* 1 if the absolute path's folder is the current folder or inside it. */
static int absolute_inside_cwd(const char *path)
{
    char cwd[PATH_MAX], dir[PATH_MAX], *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char *real = realpath(dir[0] != '\0' ? dir : "/", NULL);
    int inside = 0;
    if (real != NULL && getcwd(cwd, sizeof cwd) != NULL) {
        size_t n = strlen(cwd);
        inside = strncmp(real, cwd, n) == 0 && (real[n] == '\0' || real[n] == '/' ||
                                                 (n == 1 && cwd[0] == '/'));
    }
    free(real);
    return inside;
}

/* A name that comes from a ring file (a bare ring folder: the output name its
 * process recorded) stays inside the output folder, the current one: a name
 * with ".." or an absolute one outside it keeps its last component only (said). */
static char *inside_output_folder(char *base, long long pid)
{
    if (base[0] == '/' ? absolute_inside_cwd(base) && !climbs_out(base) : !climbs_out(base))
        return base;
    const char *last = strrchr(base, '/') != NULL ? strrchr(base, '/') + 1 : base;
    char *inside = NULL;
    if (strcmp(last, "..") != 0 && strcmp(last, ".") != 0 && last[0] != '\0')
        inside = strdup(last);
    else if ((inside = malloc(32)) != NULL)
        snprintf(inside, 32, "upti-%lld", pid);
    fprintf(stderr, "upti: pid %lld: the output name %s its ring gives leaves the current "
                    "folder: written as %s instead\n", pid, base, inside ? inside : "nothing");
    free(base);
    return inside;
}

/* The output path without extension of one process, as the program would
 * have expanded the pattern (malloc'd). */
static char *output_base(const converted *c)
{
    char argv0[1024] = "";
    const char *a = naming_value(c, "argv0");
    if (a == NULL && c->command != NULL) {
        /* the command line's first word, its last component */
        size_t n = strcspn(c->command, " ");
        snprintf(argv0, sizeof argv0, "%.*s", (int)n, c->command);
        char *slash = strrchr(argv0, '/');
        if (slash != NULL)
            memmove(argv0, slash + 1, strlen(slash + 1) + 1);
        a = argv0;
    }
    uo_placeholder_values v = {c->pid, c->ppid, c->host, naming_value(c, "rank"), a, env_value,
                               (void *)c};
    /* A bare ring folder: the pattern the process recorded (metadata "output",
     * written when it was traced without `upti run`), else the tool's default. */
    const char *pattern = g_run.pattern;
    if (pattern == NULL)
        pattern = naming_value(c, "output");
    if (pattern == NULL)
        pattern = DEFAULT_PATTERN;
    char err[256];
    char *base = uo_expand_placeholders_with(pattern, &v, err, sizeof err);
    if (base == NULL && err[0] != '\0' && strcmp(pattern, DEFAULT_PATTERN) != 0) {
        /* The program's UPTI_TRACE_OUTPUT (`upti run` checks its own -o before it
         * starts): said once per run, and the default name used. */
        static int said;
        if (!said++)
            fprintf(stderr, "upti: UPTI_TRACE_OUTPUT='%.200s': %s: using %s\n", pattern, err,
                    DEFAULT_PATTERN);
        base = uo_expand_placeholders_with(DEFAULT_PATTERN, &v, err, sizeof err);
    }
    if (base != NULL && g_run.bare)
        base = inside_output_folder(base, c->pid);
    if (base == NULL) {
        size_t len = 64;
        base = malloc(len);
        if (base != NULL)
            snprintf(base, len, "upti-%lld", c->pid);
    }
    char *whole = base != NULL ? strdup(base) : NULL;
    if (whole != NULL && uo_shorten_base(base))
        fprintf(stderr, "upti: the output name %s is longer than a file name may be: shortened to "
                        "its first %d bytes, %s\n", whole, UO_BASE_NAME_MAX, base);
    free(whole);
    return base;
}

/* A new file at part (an output's NAME.part), O_EXCL and O_NOFOLLOW (uo_open_new). A
 * NAME.part left there that uo_open_new will not replace (a symbolic link, a second name
 * of another file, another user's) is only a name: removed, which never touches what it
 * links to, and made again. One that another upti is writing (EBUSY) is left to it.
 * O_TRUNC on a hard link once overwrote the other file with the database. */
static int open_part(const char *part)
{
    int fd = uo_open_new(part);
    if (fd < 0 && (errno == EEXIST || errno == ELOOP) && unlink(part) == 0)
        fd = uo_open_new(part);
    return fd;
}

/* Moves the converted database to dst (a rename, or a copy across file systems). */
static int move_file(const char *src, const char *dst)
{
    if (rename(src, dst) == 0)
        return 0;
    if (errno != EXDEV)
        return -1;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    char *part = uo_part_path(dst);
    int out = part != NULL ? open_part(part) : -1;
    int ok = in >= 0 && out >= 0;
    char buf[1 << 16];
    ssize_t n;
    while (ok && (n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0 || write(out, buf, (size_t)n) != n)
            ok = 0;
    }
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = 0;
    char err[256];
    int e = errno;
    /* (A DST.part that could not be opened is not this run's to remove: another upti
     * may be writing it.) */
    int rc = out >= 0 && uo_part_finish(part, dst, ok, err, sizeof err) == 0 ? 0 : -1;
    free(part);
    if (rc == 0)
        unlink(src);
    else if (out < 0)
        errno = e;
    return rc;
}

static long long metadata_int(const converted *c, const char *key)
{
    const char *v = upti_kv_get(c->meta, c->meta_len, key);
    return v != NULL ? strtoll(v, NULL, 10) : 0;
}

/* Runs sql on db, with one text parameter if param. */
static void db_exec(sqlite3 *db, const char *sql, const char *param)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (param != NULL)
            sqlite3_bind_text(st, 1, param, -1, SQLITE_TRANSIENT);
        sqlite3_step(st);
    }
    sqlite3_finalize(st);
}

/* The first column of the first row of sql on db, or 0. */
static long long db_count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* What the process told about itself in metadata, where the schema has a
 * column for it (its MPI rank); and for a process that did not finalize
 * UPTI (its tool writes "finalized" at the end): how it ended, in metadata
 * "ended". Every record it committed is there either way. */
static void complete_db_on(sqlite3 *db, const converted *c)
{
    if (g_run.config != NULL)
        db_exec(db, "INSERT OR REPLACE INTO metadata(key, value) VALUES('config', ?1)",
                g_run.config);
    const char *rank = upti_kv_get(c->meta, c->meta_len, "rank");
    if (rank != NULL)
        db_exec(db, "UPDATE info_process SET rank = CAST(?1 AS INTEGER)", rank);
    int finalized = upti_kv_get(c->meta, c->meta_len, "finalized") != NULL;
    /* Kernels that never completed: seen unfinished when the process ended
     * (a device record whose status is the last execution status seen, > 0),
     * or, for a process that did not finalize, still in flight (enqueued,
     * their API records there, no device record). */
    const char *kinds = upti_kv_get(c->meta, c->meta_len, "kinds");
    if (kinds != NULL && ((strtoull(kinds, NULL, 16) >> UPTI_TRACING_KIND_KERNEL_DISPATCH) & 1)) {
        long long n = db_count(db, "SELECT count(*) FROM kernel_dispatch WHERE status > 0");
        if (!finalized)
            n += db_count(db,
                 "SELECT count(*) FROM apis a WHERE a.name IN ('clEnqueueNDRangeKernel', "
                 "'clEnqueueTask', 'clEnqueueNativeKernel') AND NOT EXISTS (SELECT 1 FROM "
                 "kernel_dispatch k WHERE k.correlation_id = a.correlation_id)");
        char text[24];
        snprintf(text, sizeof text, "%lld", n);
        if (n > 0 || !finalized)
            db_exec(db, "INSERT OR REPLACE INTO metadata(key, value) VALUES('kernels_incomplete', ?1)",
                    text);
    }
    if (finalized)
        return;
    char reason[160];
    if (g_run.have_status && c->pid == g_run.program && WIFEXITED(g_run.status) &&
        metadata_int(c, "records_not_stored") > 0)
        snprintf(reason, sizeof reason, "exited with status %d (its last records, the closing of "
                 "its trace among them, could not be stored)", WEXITSTATUS(g_run.status));
    else if (g_run.have_status)
        run_describe_end(reason, sizeof reason, (pid_t)c->pid, g_run.program, g_run.status);
    else
        snprintf(reason, sizeof reason, "ended without closing its trace");
    db_exec(db, "INSERT OR REPLACE INTO metadata(key, value) VALUES('ended', ?1)", reason);
}

/* complete_db_on() in one connection and one transaction. The database is
 * still upti's own file in the run folder (the spool keeps every record until
 * it is moved into place): no journal file and no fsync, which took four
 * fdatasync and a schema read per statement (6 to 17 ms for a short process). */
static void complete_db(const converted *c)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(c->path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_exec(db, "PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY; BEGIN", NULL, NULL,
                     NULL) == SQLITE_OK) {
        complete_db_on(db, c);
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    }
    sqlite3_close(db);
}

/* --output-config: the resolved settings in BASE_config.json (BASE-PID_config.json
 * when a file of that name exists that upti did not write). */
static void write_config_file(const char *base, int pid)
{
    size_t len = strlen(base) + 48;
    char *path = malloc(len);
    if (path == NULL)
        return;
    snprintf(path, len, "%s_config.json", base);
    if (!uo_file_is_replaceable(path) && !config_file_is_ours(path)) {
        char *alt = malloc(len);
        if (alt != NULL)
            snprintf(alt, len, "%s-%d_config.json", base, pid);
        fprintf(stderr, "upti: %s exists and was not written by upti: not replaced (upti run "
                        "--force-overwrite replaces it); writing %s instead\n", path,
                alt ? alt : "nothing");
        free(path);
        path = alt;
        if (path == NULL)
            return;
    }
    char *part = uo_part_path(path);
    int fd = part != NULL ? open_part(part) : -1;
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && f == NULL)
        close(fd);
    char err[256];
    int ok = f != NULL && fputs(g_run.config, f) >= 0;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    if (part == NULL || f == NULL || uo_part_finish(part, path, ok, err, sizeof err) != 0)
        fprintf(stderr, "upti: cannot write %s: %s\n", path,
                f == NULL ? uo_open_new_reason(errno) : err);
    else
        uo_note_written(path);
    free(part);
    free(path);
}

/* Names, moves and writes the outputs of one converted database. 1 if written. */
static int finish_one(converted *c)
{
    if (!c->complete) {
        /* The converter said how many records; the spool keeps them, and so
         * does the run folder, for `upti recover` once there is room. */
        g_run.lost++;
        g_run.kept = 1;
        unlink(c->path);
        return 0;
    }
    if (upti_kv_get(c->meta, c->meta_len, "capture") != NULL &&
        metadata_int(c, "capture_windows") == 0) {
        g_run.never_opened++; /* said once for the run, instead of an empty trace */
        unlink(c->path);
        return 0;
    }
    if (metadata_int(c, "records_written") == 0 && metadata_int(c, "records_dropped") == 0) {
        if (upti_kv_get(c->meta, c->meta_len, "capture") != NULL)
            g_run.empty_windows++;
        unlink(c->path); /* nothing recorded (a process that only loaded UPTI) */
        return 0;
    }
    complete_db(c);
    char *base = output_base(c);
    if (base == NULL)
        return 0;
    /* Two processes of this run whose names expand alike (a pattern without
     * %pid%): the later gets "-<pid>", as when the program wrote its own. */
    for (size_t i = 0; i < g_run.num_bases; i++) {
        if (strcmp(g_run.bases[i], base) == 0) {
            size_t len = strlen(base) + 32;
            char *b2 = malloc(len);
            if (b2 == NULL)
                break;
            snprintf(b2, len, "%s-%lld", base, c->pid);
            free(base);
            base = b2;
            break;
        }
    }
    const char *db = c->path;
    char final[PATH_MAX];
    int fd = -1;
    if (g_run.formats & UO_FORMAT_DB) {
        /* Recovering, this run's own earlier files are replaced, not kept. */
        const char *session = g_run.recovering ? NULL : g_run.session;
        fd = uo_claim_output(&base, ".db", session, (int)c->pid);
        if (fd < 0) {
            /* A folder that cannot be written: the outputs go to $TMPDIR, said once. */
            char reason[128];
            snprintf(reason, sizeof reason, "%s", strerror(errno));
            char *fallback = uo_fallback_base(base);
            if (fallback != NULL && (fd = uo_claim_output(&fallback, ".db", session, (int)c->pid)) >= 0) {
                fprintf(stderr, "upti: cannot create %s.db (%s): the trace goes to %s.db instead\n",
                        base, reason, fallback);
                free(base);
                base = fallback;
            } else {
                free(fallback);
            }
        }
        snprintf(final, sizeof final, "%s.db", base);
        if (fd < 0 || move_file(c->path, final) != 0) {
            fprintf(stderr, "upti: cannot write %s (%s): the trace of pid %lld stays in %s\n",
                    final, strerror(errno), c->pid, c->path);
            g_run.kept = 1;
            if (fd >= 0) {
                /* The name claimed for it, still empty, is not left behind (read
                 * as an empty trace until `upti recover` replaced it). */
                struct stat sb;
                if (fstat(fd, &sb) == 0 && sb.st_size == 0)
                    unlink(final);
                close(fd);
            }
            free(base);
            return 0;
        }
        db = final;
        uo_note_written(final);
    }
    if (g_run.formats & ~(unsigned)UO_FORMAT_DB || g_run.stats)
        uo_write_outputs(db, base, g_run.formats & ~(unsigned)UO_FORMAT_DB, g_run.stats,
                         (int)c->pid);
    if (g_run.output_config && g_run.config != NULL)
        write_config_file(base, (int)c->pid);
    if (!(g_run.formats & UO_FORMAT_DB))
        unlink(c->path);
    if (fd >= 0)
        close(fd);
    char **n = realloc(g_run.bases, (g_run.num_bases + 1) * sizeof *n);
    if (n != NULL) {
        g_run.bases = n;
        g_run.bases[g_run.num_bases++] = base;
    } else {
        free(base);
    }
    return 1;
}

/* Converts the spool and writes every process's outputs. The number written. */
static int convert_and_finish(void)
{
    char prefix[PATH_MAX + 8];
    snprintf(prefix, sizeof prefix, "%s/p", g_run.folder);
    ur_convert_opts o = {.spool = g_run.spool,
                         .prefix = prefix,
                         .quiet = 1,
                         .kernel_filter =
                             (g_run.has_include || g_run.has_exclude) ? kernel_filter : NULL,
                         .kernel_iterations = g_run.has_iterations ? &g_run.iteration_range : NULL,
                         .converted = on_converted,
                         .losses = g_run.losses,
                         .num_losses = g_run.num_losses};
    save_not_stored(); /* for `upti recover`, if the folder is kept */
    struct stat st;
    /* A conversion that failed (a database that could not even be created:
     * $TMPDIR full) keeps the run folder, whose spool holds every record
     * stored, for `upti recover`. */
    if (stat(g_run.spool, &st) == 0 && st.st_size > 0 && ur_convert_with(&o) != 0)
        g_run.kept = 1;
    int written = 0;
    for (size_t i = 0; i < g_run.num_dbs; i++)
        written += finish_one(&g_run.dbs[i]);
    for (size_t i = 0; i < g_run.num_dbs; i++) {
        free(g_run.dbs[i].path);
        free(g_run.dbs[i].meta);
        free(g_run.dbs[i].host);
        free(g_run.dbs[i].command);
    }
    free(g_run.dbs);
    g_run.dbs = NULL;
    g_run.num_dbs = g_run.cap_dbs = 0;
    return written;
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

int run_collect_end(pid_t program, int status)
{
    /* g_run.program is the collecting thread's (read as it starts): set after it ended. */
    if (g_run.thread_started)
        pthread_join(g_run.thread, NULL);
    if (g_run.template_started)
        pthread_join(g_run.template_thread, NULL);
    g_run.template_started = 0;
    g_run.program = program;
    g_run.status = status;
    g_run.have_status = 1;
    g_run.thread_started = 0;
    char note[64];
    snprintf(note, sizeof note, "%lld %d\n", (long long)program, status);
    write_ring_note(STATUS_FILE, note);
    int written = convert_and_finish();
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
    g_run.stats = stats != NULL && strcmp(stats, "1") == 0;
    g_run.include = dup_or_null(upti_kv_get(conf, len, "include"));
    g_run.exclude = dup_or_null(upti_kv_get(conf, len, "exclude"));
    g_run.iterations = dup_or_null(upti_kv_get(conf, len, "iterations"));
    g_run.session = dup_or_null(upti_kv_get(conf, len, "session"));
    g_run.config = dup_or_null(upti_kv_get(conf, len, "config"));
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
    if (g_run.lock_fd < 0 || flock(g_run.lock_fd, LOCK_EX | LOCK_NB) != 0)
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
    int written = convert_and_finish();
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
