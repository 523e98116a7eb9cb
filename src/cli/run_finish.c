/* SPDX-License-Identifier: MIT */
/* The end of a run, per converted database (run_state.h): its output name from
 * the pattern and the process's values, the rows only the collector knows
 * (how the process ended, records not stored), the move into place without
 * replacing what upti did not write, and the other formats. */
#include "run_state.h"
#include "run_collect.h"
#include "run_outputs.h"
#include "run_config.h"

#include "cli.h"
#include "collector.h"
#include "dirs.h"
#include "manifest.h"
#include "out_files.h"
#include "output.h"
#include "kv_pairs.h"
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* What run_finish needs of the database db of c: its metadata and its process. */
static void read_db_info(sqlite3 *db, converted *c)
{
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
    if (sqlite3_prepare_v2(db, "SELECT ppid, hostname, command, start, end FROM info_process LIMIT 1",
                           -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            c->ppid = sqlite3_column_int64(st, 0);
            c->host = run_dup_or_null((const char *)sqlite3_column_text(st, 1));
            c->command = run_dup_or_null((const char *)sqlite3_column_text(st, 2));
            c->start = sqlite3_column_int64(st, 3);
            c->end = sqlite3_column_int64(st, 4);
        }
        sqlite3_finalize(st);
    }
}

static void complete_db_on(sqlite3 *db, const converted *c);
static int worth_completing(const converted *c);

/* One connection per database for what upti adds after the conversion: what
 * it reads back (metadata, the process) and, for a trace that will be kept,
 * the rows only the collector knows (complete_db_on), in one transaction. The
 * database is still upti's own file in the run folder (the spool keeps every
 * record until it is moved into place): no journal file and no fsync, which
 * took four fdatasync and a schema read per statement (6 to 17 ms for a short
 * process); one open instead of two (each reads the whole schema). */
static void read_and_complete(converted *c)
{
    sqlite3 *db = NULL;
    int flags = c->complete ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(c->path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK &&
        sqlite3_exec(db, c->complete ? "PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY; BEGIN"
                                     : "BEGIN",
                     NULL, NULL, NULL) == SQLITE_OK) {
        read_db_info(db, c);
        if (c->complete && worth_completing(c))
            complete_db_on(db, c);
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    }
    sqlite3_close(db);
}

/* The entry of the database at path, made if there is none (NULL: out of memory). */
static converted *converted_entry(const char *path, int64_t pid, int *made)
{
    *made = 0;
    for (size_t i = 0; i < g_run.num_dbs; i++)
        if (strcmp(g_run.dbs[i].path, path) == 0)
            return &g_run.dbs[i];
    if (g_run.num_dbs == g_run.cap_dbs) {
        size_t cap = g_run.cap_dbs ? 2 * g_run.cap_dbs : 8;
        converted *n = realloc(g_run.dbs, cap * sizeof *n);
        if (n == NULL)
            return NULL;
        g_run.dbs = n;
        g_run.cap_dbs = cap;
    }
    converted *c = &g_run.dbs[g_run.num_dbs];
    memset(c, 0, sizeof *c);
    if ((c->path = strdup(path)) == NULL)
        return NULL;
    c->pid = pid;
    g_run.num_dbs++;
    *made = 1;
    return c;
}

/* The converter's last transaction on a database: read back and completed on
 * its own connection (read_and_complete's work without an open of its own). */
static void on_completing(void *arg, sqlite3 *conn, const char *path, int64_t pid)
{
    (void)arg;
    int made;
    converted *c = converted_entry(path, pid, &made);
    if (c == NULL || !made)
        return;
    c->complete = 1; /* (as far as it goes: on_converted says) */
    read_db_info(conn, c);
    if (worth_completing(c))
        complete_db_on(conn, c);
}

static void on_converted(void *arg, const char *path, int64_t pid, int complete)
{
    (void)arg;
    int made;
    converted *c = converted_entry(path, pid, &made);
    if (c == NULL)
        return;
    c->complete = complete;
    if (made) /* a database that failed before its last transaction */
        read_and_complete(c);
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

/* Moves the converted database to dst, the file claimed for it: a rename
 * (upti_replace_file), or a copy across file systems. */
static int move_file(const char *src, const char *dst)
{
    if (upti_replace_file(src, dst) == 0)
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

/* Whether finish_one keeps c's trace (it says why not, and counts, itself):
 * a capture window opened, and something was recorded. */
static int worth_completing(const converted *c)
{
    if (upti_kv_get(c->meta, c->meta_len, "capture") != NULL &&
        metadata_int(c, "capture_windows") == 0)
        return 0;
    return metadata_int(c, "records_written") != 0 || metadata_int(c, "records_dropped") != 0;
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
    g_run.sum_processes++;
    g_run.sum_records += metadata_int(c, "records_written");
    g_run.sum_dropped += metadata_int(c, "records_dropped");
    if (c->start > 0 && (g_run.first_start == 0 || c->start < g_run.first_start))
        g_run.first_start = c->start;
    if (c->end > g_run.last_end)
        g_run.last_end = c->end;
    char **n = realloc(g_run.bases, (g_run.num_bases + 1) * sizeof *n);
    if (n != NULL) {
        g_run.bases = n;
        g_run.bases[g_run.num_bases++] = base;
    } else {
        free(base);
    }
    return 1;
}

void run_say_summary(int outputs)
{
    if (g_run.sum_processes == 0 || outputs <= 0)
        return;
    char span[48] = "";
    if (g_run.first_start > 0 && g_run.last_end > g_run.first_start)
        snprintf(span, sizeof span, ", %.3f s",
                 (double)(g_run.last_end - g_run.first_start) / 1e9);
    fprintf(stderr, "upti: traced %lld process%s: %lld records, %lld dropped%s; %d output%s\n",
            g_run.sum_processes, g_run.sum_processes == 1 ? "" : "es", g_run.sum_records,
            g_run.sum_dropped, span, outputs, outputs == 1 ? "" : "s");
}

/* The options of converting this run's spool (prefix: the run folder's "p"). */
static ur_convert_opts convert_options(void)
{
    static char prefix[PATH_MAX + 8];
    snprintf(prefix, sizeof prefix, "%s/p", g_run.folder);
    /* (No losses: the collecting thread adds to them until it ends, while the
     * follow thread opens its converter; the finish is given them.) */
    return (ur_convert_opts){.spool = g_run.spool,
                             .prefix = prefix,
                             .quiet = 1,
                             .kernel_filter = (g_run.has_include || g_run.has_exclude)
                                                  ? run_kernel_filter
                                                  : NULL,
                             .kernel_iterations =
                                 g_run.has_iterations ? &g_run.iteration_range : NULL,
                             .converted = on_converted,
                             .completing = on_completing};
}

/* ---- converting while the program runs ----
 *
 * A program that records millions of records used to leave them all to
 * convert after its end, while the second CPU sat mostly idle during its run
 * (the collecting thread takes a fraction of one). The follow thread converts
 * what the spool holds as it grows, at SCHED_IDLE: it takes only the CPU time
 * that neither the program nor the collecting thread wants, so that the
 * program never waits for it (a program that keeps every CPU busy leaves it
 * all to the end, as before). While the spool is small (a short process, so
 * far) it only makes each process's database ahead of the end
 * (ur_converter_follow), until the producers have closed their rings (their
 * tools ended, the processes exit: run_follow_closed); then it converts what
 * there is while the processes exit (4 to 5 ms for an OpenCL program here), which
 * was left to the end (ur_converter_follow_closed). */
#define FOLLOW_PAUSE_MIN_NS (2 * 1000 * 1000)
#define FOLLOW_PAUSE_MAX_NS (64 * 1000 * 1000)
/* It converts this much of the spool at a time (some 30,000 records, a few ms), and
 * stops between two steps once the program has ended: the end waits for the step under
 * way, at SCHED_IDLE, which another program keeping both CPUs busy leaves little CPU
 * time. In one call up to all the spool held, that wait took 20 to 250 s with two busy
 * loops beside a 2 x 200,000-mark run. */
#define FOLLOW_STEP_BYTES ((uint64_t)2 << 20)

/* Converts the spool up to complete, FOLLOW_STEP_BYTES at a time, by whoever
 * holds follow_busy; closed: the producers closed their rings. -1 if the
 * converter cannot be opened (said; the end tries again). */
static int follow_upto(uint64_t complete, int closed)
{
    if (complete <= g_run.followed)
        return 0;
    if (g_run.converter == NULL) {
        ur_convert_opts o = convert_options();
        if ((g_run.converter = ur_converter_open(&o)) == NULL)
            return -1;
    }
    while (g_run.followed < complete && !__atomic_load_n(&g_run.collect_done, __ATOMIC_ACQUIRE)) {
        uint64_t upto = complete - g_run.followed > FOLLOW_STEP_BYTES
                            ? g_run.followed + FOLLOW_STEP_BYTES
                            : complete;
        if (closed)
            ur_converter_follow_closed(g_run.converter, upto);
        else
            ur_converter_follow(g_run.converter, upto);
        g_run.followed = upto;
    }
    return 0;
}

static void *follow_thread(void *arg)
{
    (void)arg;
    struct sched_param sp = {0};
    (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
    uint64_t pause_ns = FOLLOW_PAUSE_MIN_NS;
    /* Where this thread's last step ended: g_run.followed is read only by
     * the thread that holds follow_busy (the collecting thread converts on
     * from there in run_follow_closed while this one pauses). */
    uint64_t followed = 0;
    pthread_mutex_lock(&g_run.follow_lock);
    while (!g_run.collect_done) {
        if (!g_run.follow_busy) { /* (else the collecting thread converts: run_follow_closed) */
            g_run.follow_busy = 1;
            int closed = g_run.producers_closed;
            pthread_mutex_unlock(&g_run.follow_lock);
            uint64_t before = g_run.followed;
            int failed = follow_upto(__atomic_load_n(&g_run.spool_complete, __ATOMIC_ACQUIRE),
                                     closed);
            followed = g_run.followed;
            if (followed > before)
                pause_ns = FOLLOW_PAUSE_MIN_NS;
            else if (pause_ns < FOLLOW_PAUSE_MAX_NS)
                pause_ns *= 2; /* nothing new: a program that records little wakes it seldom */
            pthread_mutex_lock(&g_run.follow_lock);
            g_run.follow_busy = 0;
            if (failed)
                break;
        }
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)pause_ns;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        __atomic_store_n(&g_run.follow_paused_at, followed, __ATOMIC_RELEASE);
        if (!g_run.collect_done)
            pthread_cond_timedwait(&g_run.follow_wake, &g_run.follow_lock, &until);
        __atomic_store_n(&g_run.follow_paused_at, UINT64_MAX, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_run.follow_lock);
    return NULL;
}

void run_follow_start(void)
{
    pthread_condattr_t ca;
    g_run.follow_started = 0;
    g_run.collect_done = 0;
    if (pthread_mutex_init(&g_run.follow_lock, NULL) != 0)
        return;
    if (pthread_condattr_init(&ca) != 0 ||
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&g_run.follow_wake, &ca) != 0) {
        pthread_mutex_destroy(&g_run.follow_lock);
        return;
    }
    pthread_condattr_destroy(&ca);
    if (pthread_create(&g_run.follow_thread, NULL, follow_thread, NULL) == 0) {
        g_run.follow_started = 1;
        return;
    }
    pthread_cond_destroy(&g_run.follow_wake);
    pthread_mutex_destroy(&g_run.follow_lock);
}

/* The follow thread's pauses grow while nothing comes, to 32 and 64 ms
 * through a program's start (PoCL's takes 45 ms here): a burst of calls
 * after it waited as long to be converted, time the end then spent on it.
 * The collecting thread's pass that leaves a step's worth waiting wakes it:
 * it takes the pause's mark (UINT64_MAX: none), so that it signals once per
 * pause, however long the thread at SCHED_IDLE takes to run; a load per pass
 * otherwise. The signal, under the lock the pausing thread holds until it
 * waits, cannot come before its wait. */
void run_follow_stored(uint64_t complete)
{
    uint64_t at = __atomic_load_n(&g_run.follow_paused_at, __ATOMIC_ACQUIRE);
    if (at == UINT64_MAX || complete < at || complete - at < FOLLOW_STEP_BYTES ||
        !__atomic_compare_exchange_n(&g_run.follow_paused_at, &at, UINT64_MAX, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&g_run.follow_lock);
    pthread_cond_signal(&g_run.follow_wake);
    pthread_mutex_unlock(&g_run.follow_lock);
}

/* Once the producers closed their rings the conversion is what the end will
 * wait for: the collecting thread, idle until the processes are gone, converts
 * what the spool holds itself, at its own priority, unless the follow thread
 * is in a step (which it ends at SCHED_IDLE, then follows as closed) or more
 * than UO_DB_SMALL_SOURCE_BYTES wait (the follow thread's, as closed). At
 * SCHED_IDLE beside a program's exit, the follow thread's conversion of a
 * 1,000-record spool was still under way when the program was gone. A new
 * process meanwhile waits for its ring to be drained at most that long. */
void run_follow_closed(void)
{
    if (!g_run.follow_started)
        return;
    uint64_t complete = __atomic_load_n(&g_run.spool_complete, __ATOMIC_ACQUIRE);
    pthread_mutex_lock(&g_run.follow_lock);
    g_run.producers_closed = 1;
    int mine = !g_run.follow_busy && !g_run.collect_done &&
               complete - g_run.followed <= UO_DB_SMALL_SOURCE_BYTES;
    g_run.follow_busy |= mine;
    pthread_mutex_unlock(&g_run.follow_lock);
    if (mine)
        (void)follow_upto(complete, 1);
    pthread_mutex_lock(&g_run.follow_lock);
    if (mine)
        g_run.follow_busy = 0;
    pthread_cond_signal(&g_run.follow_wake);
    pthread_mutex_unlock(&g_run.follow_lock);
}

/* The follow thread's converter is the end's from now on. Only a step under
 * way is waited for: a follow thread in its pause wakes to find collect_done and
 * returns without touching anything, and is left to do so (detached, its lock
 * and condition kept for the life of the process). Joining it cost the end of a
 * short process up to 3 ms: a SCHED_IDLE thread woken while the collecting
 * thread still ran waited that long for a CPU. */
void run_follow_end(void)
{
    if (!g_run.follow_started)
        return;
    pthread_mutex_lock(&g_run.follow_lock);
    __atomic_store_n(&g_run.collect_done, 1, __ATOMIC_RELEASE); /* (read between steps unlocked) */
    pthread_cond_signal(&g_run.follow_wake);
    int busy = g_run.follow_busy;
    pthread_mutex_unlock(&g_run.follow_lock);
    if (busy)
        pthread_join(g_run.follow_thread, NULL);
    else
        pthread_detach(g_run.follow_thread);
    g_run.follow_started = 0;
}

/* Converts the spool and writes every process's outputs. The number written. */
int run_convert_and_finish(void)
{
    ur_convert_opts o = convert_options();
    run_save_not_stored(); /* for `upti recover`, if the folder is kept */
    struct stat st;
    /* A conversion that failed (a database that could not even be created:
     * $TMPDIR full) keeps the run folder, whose spool holds every record
     * stored, for `upti recover`. */
    ur_converter *c = g_run.converter;
    g_run.converter = NULL;
    /* The collecting thread has ended: its losses are all said. */
    o.losses = g_run.losses;
    o.num_losses = g_run.num_losses;
    if (c != NULL ? ur_converter_finish(c, o.losses, o.num_losses) != 0
                  : stat(g_run.spool, &st) == 0 && st.st_size > 0 && ur_convert_with(&o) != 0)
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

