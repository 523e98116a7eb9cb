/* SPDX-License-Identifier: MIT */
/* See run_outputs.h. The manifest's records are described in src/collector/output/manifest.h. */
#include "run_outputs.h"

#include "manifest.h"
#include "out_files.h"
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_manifest[PATH_MAX]; /* "" when none: the file itself is unlinked at once */
static int g_manifest_fd = -1;

int run_outputs_begin(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_manifest, sizeof g_manifest, "%s/upti-run-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    int fd = mkstemp(g_manifest);
    if (fd < 0) {
        snprintf(g_manifest, sizeof g_manifest, "/tmp/upti-run-XXXXXX");
        fd = mkstemp(g_manifest);
    }
    if (fd < 0) {
        g_manifest[0] = '\0';
        fprintf(stderr, "upti: cannot create a run manifest (%s): the traces of processes that "
                        "die without closing them will not be recovered\n", strerror(errno));
        return -1;
    }
    /* Only upti writes it (the program only records): open, it needs no name, and
     * an upti killed leaves no file behind. */
    unlink(g_manifest);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, O_APPEND);
    g_manifest_fd = fd;
    uo_manifest_set_fd(fd);
    return 0;
}

void run_outputs_discard(void)
{
    uo_manifest_set_fd(-1);
    if (g_manifest_fd >= 0)
        close(g_manifest_fd);
    g_manifest_fd = -1;
    g_manifest[0] = '\0';
}

/* The manifest's fields: NUL-terminated strings, one after the other. */
typedef struct fields {
    char *data;
    const char **f;
    size_t n;
} fields;

static void read_fields(fields *m)
{
    memset(m, 0, sizeof *m);
    int fd = g_manifest_fd;
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0 ||
        (m->data = malloc((size_t)st.st_size + 1)) == NULL)
        return;
    size_t len = 0;
    ssize_t got;
    while (len < (size_t)st.st_size &&
           (got = pread(fd, m->data + len, (size_t)st.st_size - len, (off_t)len)) > 0)
        len += (size_t)got;
    m->data[len] = '\0';
    size_t count = 0;
    for (size_t i = 0; i < len; i++)
        count += m->data[i] == '\0';
    m->f = calloc(count + 1, sizeof *m->f);
    if (m->f == NULL)
        return;
    for (size_t i = 0; i < len && m->n < count; i += strlen(m->data + i) + 1)
        m->f[m->n++] = m->data + i;
}

static void free_fields(fields *m)
{
    free(m->data);
    free(m->f);
}

/* Fields per record, the tag included. */
static size_t record_len(const char *tag)
{
    if (strcmp(tag, "db") == 0)
        return 5;
    if (strcmp(tag, "wrote") == 0 || strcmp(tag, "done") == 0)
        return 2;
    if (strcmp(tag, "tally") == 0)
        return 6;
    return 1; /* unknown: skip the tag alone */
}

/* The tally the process with this pid left (write error), or NULL. */
static const char *const *find_tally(const fields *m, const char *pid)
{
    const char *const *found = NULL;
    for (size_t i = 0; i < m->n; i += record_len(m->f[i]))
        if (strcmp(m->f[i], "tally") == 0 && i + 5 < m->n && strcmp(m->f[i + 1], pid) == 0)
            found = &m->f[i];
    return found;
}

void run_describe_end(char *out, size_t len, pid_t pid, pid_t top, int status)
{
    if (pid == top && WIFSIGNALED(status))
        snprintf(out, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (pid == top && WIFEXITED(status))
        snprintf(out, len, "exited with status %d without closing its trace", WEXITSTATUS(status));
    else
        snprintf(out, len, "ended without closing its trace");
}

/* What a database left by a process holds: -1 no trace at all (nothing was
 * ever committed), else whether it was closed (*closed) and its records. */
static int trace_state(const char *path, int *closed, long long *records)
{
    sqlite3 *db = NULL;
    int rc = -1;
    /* Read-write: a hot journal left by the dead process is rolled back. */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
        int64_t c = uo_sql_int(db, "SELECT end IS NOT NULL FROM info_process", -1);
        if (c >= 0) {
            *closed = (int)c;
            *records = (long long)uo_sql_int(
                db, "SELECT (SELECT count(*) FROM api) + (SELECT count(*) FROM kernel_dispatch) +"
                    " (SELECT count(*) FROM memory_copy) + (SELECT count(*) FROM memory_allocate) +"
                    " (SELECT count(*) FROM marker)", 0);
            rc = 0;
        }
    }
    sqlite3_close(db);
    return rc;
}

static long long metadata_int(const char *path, const char *key, long long fallback)
{
    char err[256];
    sqlite3 *db = uo_open(path, 0, err, sizeof err);
    if (db == NULL)
        return fallback;
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT CAST(value AS INTEGER) FROM metadata WHERE key = '%s'", key);
    long long v = (long long)uo_sql_int(db, sql, fallback);
    sqlite3_close(db);
    return v;
}

static void remove_db(const char *path)
{
    size_t n = strlen(path) + sizeof "-journal";
    char *journal = malloc(n);
    if (journal != NULL) {
        snprintf(journal, n, "%s-journal", path);
        unlink(journal);
        free(journal);
    }
    unlink(path);
}

/* Removes the unfinished NAME.part files of the formats of base; returns the
 * formats that had one (to be written again), saying which. */
static unsigned remove_leftovers(const char *pid, const char *base, unsigned formats)
{
    unsigned found = 0;
    size_t len = strlen(base) + 64;
    char *path = malloc(len);
    if (path == NULL)
        return 0;
    for (int k = 0;; k++) {
        unsigned f;
        if (k == 0) {
            f = UO_FORMAT_PFTRACE;
            snprintf(path, len, "%s.pftrace.part", base);
        } else if (k == 1) {
            f = UO_FORMAT_JSON;
            snprintf(path, len, "%s.json.part", base);
        } else if (k == 2) {
            f = UO_FORMAT_CSV;
            snprintf(path, len, "%s_stats.csv.part", base);
        } else if (uo_csv_suffix((size_t)(k - 3)) != NULL) {
            f = UO_FORMAT_CSV;
            snprintf(path, len, "%s_%s.csv.part", base, uo_csv_suffix((size_t)(k - 3)));
        } else {
            break;
        }
        struct stat st;
        if (!(formats & f) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        unlink(path);
        found |= f;
        fprintf(stderr, "upti: pid %s ended while writing %s: removed it; that output is "
                        "written again from its database\n", pid, path);
    }
    free(path);
    return found;
}

/* 1 if the process of the database db wrote all its outputs ("done"). */
static int wrote_all_outputs(const fields *m, const char *db)
{
    for (size_t i = 0; i < m->n; i += record_len(m->f[i]))
        if (strcmp(m->f[i], "done") == 0 && i + 1 < m->n && strcmp(m->f[i + 1], db) == 0)
            return 1;
    return 0;
}

/* 1 if the manifest has a "wrote" record of a path: base + tail (tail_end
 * also ending it when not NULL: a prefix then). */
static int wrote(const fields *m, const char *base, const char *tail, const char *tail_end)
{
    size_t bl = strlen(base), tl = strlen(tail), el = tail_end ? strlen(tail_end) : 0;
    for (size_t i = 0; i < m->n; i += record_len(m->f[i])) {
        if (strcmp(m->f[i], "wrote") != 0 || i + 1 >= m->n)
            continue;
        const char *p = m->f[i + 1];
        size_t pl = strlen(p);
        if (pl < bl + tl + el || strncmp(p, base, bl) != 0 || strncmp(p + bl, tail, tl) != 0)
            continue;
        if (tail_end == NULL ? pl == bl + tl : strcmp(p + pl - el, tail_end) == 0)
            return 1;
    }
    return 0;
}

/* The formats of a closed database that its process did not write (killed
 * after closing its database, before its other outputs), saying which. */
static unsigned not_written(const fields *m, const char *pid, const char *base, unsigned formats)
{
    unsigned missing = 0;
    if ((formats & UO_FORMAT_PFTRACE) && !wrote(m, base, ".pftrace", NULL))
        missing |= UO_FORMAT_PFTRACE;
    if ((formats & UO_FORMAT_JSON) && !wrote(m, base, ".json", NULL))
        missing |= UO_FORMAT_JSON;
    if ((formats & UO_FORMAT_CSV) && !wrote(m, base, "_", ".csv"))
        missing |= UO_FORMAT_CSV;
    if (missing)
        fprintf(stderr, "upti: pid %s ended before writing its%s%s%s output: written from its "
                        "database\n", pid, (missing & UO_FORMAT_PFTRACE) ? " pftrace" : "",
                (missing & UO_FORMAT_JSON) ? " json" : "", (missing & UO_FORMAT_CSV) ? " csv" : "");
    return missing;
}

/* One database of the manifest (a "db" record: pid, path, base, formats). */
static void finish_one(const fields *m, const char *const *rec, pid_t top, int status, int stats)
{
    const char *pid_s = rec[1], *db = rec[2], *base = rec[3];
    unsigned formats = (unsigned)strtoul(rec[4], NULL, 10);
    pid_t pid = (pid_t)strtol(pid_s, NULL, 10);
    size_t dl = strlen(db);
    int working = dl > 5 && strcmp(db + dl - 5, ".part") == 0; /* db not asked for */
    /* A process of the run that still lives holds its lock: leave it. */
    int fd = open(db, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return; /* written and removed by its process */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return;
    }
    int closed = 0;
    long long records = 0;
    if (trace_state(db, &closed, &records) != 0 || (!closed && records == 0)) {
        /* Nothing committed, or nothing recorded before the process ended
         * (a child that exec'd, a program that ended at once): no trace. */
        remove_db(db);
        close(fd);
        return;
    }
    unsigned pending = 0;
    const char *const *tally = find_tally(m, pid_s);
    if (!closed) {
        char reason[160], err[512];
        run_describe_end(reason, sizeof reason, pid, top, status);
        int rc = uo_db_recover(db, reason, NULL, err, sizeof err);
        if (tally != NULL) {
            unsigned long long received = strtoull(tally[2], NULL, 10);
            unsigned long long written = strtoull(tally[3], NULL, 10);
            unsigned long long filtered = strtoull(tally[4], NULL, 10);
            unsigned long long lost =
                received > written + filtered ? received - written - filtered : 0;
            fprintf(stderr, "upti: pid %d: %s: %s%s%s: it holds %llu records; %llu of the %llu "
                            "records received are lost\n",
                    (int)pid, db, tally[5], rc < 0 ? "; cannot recover it: " : "; recovered it",
                    rc < 0 ? err : "", written, lost, received);
        } else if (rc < 0) {
            fprintf(stderr, "upti: cannot recover the trace of pid %d (%s): %s\n", (int)pid, db, err);
        } else {
            fprintf(stderr, "upti: pid %d %s: recovered its trace %s: it holds the %lld records "
                            "of its last commit; what it recorded after that commit is lost\n",
                    (int)pid, reason, db, metadata_int(db, "records_written", records));
        }
        if (rc < 0) {
            close(fd);
            return;
        }
        if (!working)
            uo_note_written(db);
        pending = formats & ~(unsigned)UO_FORMAT_DB;
    } else {
        if (!wrote_all_outputs(m, db))
            pending = remove_leftovers(pid_s, base, formats) | not_written(m, pid_s, base, formats);
        if (working)
            pending = formats & ~(unsigned)UO_FORMAT_DB;
    }
    if (pending)
        uo_write_outputs(db, base, pending, stats && !closed, (int)pid);
    if (working)
        remove_db(db);
    close(fd);
}

static void say_path(const char *prefix, const char *path)
{
    uo_buf b;
    uo_buf_init(&b, stderr);
    uo_buf_puts(&b, prefix);
    uo_text_escape(&b, path, 0);
    uo_buf_putc(&b, '\n');
    uo_buf_flush(&b, 0);
    uo_buf_free(&b);
}

/* run_outputs_quiet(): no closing lines. */
static int g_quiet;

void run_outputs_quiet(void)
{
    g_quiet = 1;
}

void run_outputs_end(pid_t top, int status, int stats, int traced_elsewhere)
{
    if (g_manifest[0] == '\0')
        return;
    fields m;
    read_fields(&m);
    int traced = traced_elsewhere;
    for (size_t i = 0; i < m.n; i += record_len(m.f[i])) {
        if (strcmp(m.f[i], "db") != 0 || i + 4 >= m.n)
            continue;
        traced = 1;
        /* The last record of a database path is the one that counts. */
        int later = 0;
        for (size_t j = i + 5; j < m.n && !later; j += record_len(m.f[j]))
            later = strcmp(m.f[j], "db") == 0 && j + 4 < m.n && strcmp(m.f[j + 2], m.f[i + 2]) == 0;
        if (!later)
            finish_one(&m, &m.f[i], top, status, stats);
    }
    free_fields(&m);
    /* What the processes and the recovery wrote, once per path, in order. */
    read_fields(&m);
    int said = 0;
    for (size_t i = 0; i < m.n; i += record_len(m.f[i])) {
        if (strcmp(m.f[i], "wrote") != 0 || i + 1 >= m.n)
            continue;
        int again = 0;
        for (size_t j = 0; j < i && !again; j += record_len(m.f[j]))
            again = strcmp(m.f[j], "wrote") == 0 && j + 1 < m.n && strcmp(m.f[j + 1], m.f[i + 1]) == 0;
        struct stat st;
        if (again || stat(m.f[i + 1], &st) != 0)
            continue;
        if (!g_quiet)
            say_path("upti: wrote ", m.f[i + 1]);
        said++;
    }
    free_fields(&m);
    if (g_quiet)
        ;
    else if (!traced)
        fprintf(stderr, "upti: no OpenCL, uptx or NVTX use seen: no trace written\n");
    else if (said == 0 && traced_elsewhere >= 0)
        fprintf(stderr, "upti: nothing was recorded: no trace written\n");
    run_outputs_discard();
}
