/* SPDX-License-Identifier: MIT */
/* See out_files.h: uo_claim_output. */
#include "out_files.h"
#include "output.h"

#include "dirs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 if the (unlocked) database at path was written by the run of this session. */
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

/* 1 if the file was modified at or after the start of this session (its
 * UPTI_TRACE_SESSION_START, CLOCK_REALTIME ns): by another run beside this
 * one (several `upti run -o NAME` at once, one per MPI rank), whose trace a
 * replacement would lose. An earlier run's file is older than that. */
static int written_since(const struct stat *sb, const char *session)
{
    if (session == NULL)
        return 0;
    unsigned long long start = strtoull(session, NULL, 10);
    unsigned long long mtime =
        (unsigned long long)sb->st_mtim.tv_sec * 1000000000ull + (unsigned long long)sb->st_mtim.tv_nsec;
    return start > 0 && mtime >= start;
}

int uo_claim_output(char **base, const char *suffix, const char *session, int pid)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s%s", *base, suffix);
        upti_mkdirs_for(path);
        /* O_NOFOLLOW: a symbolic link planted as the output is neither
         * followed nor reused (a regular file of this user with one link only). */
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            flock(fd, LOCK_EX);
            return fd;
        }
        if (errno != EEXIST)
            return -1;
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat sb;
        int foreign = 0, concurrent = 0;
        if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
            sb.st_nlink == 1) {
            if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
                concurrent = session != NULL; /* being written now: under upti run, by another run */
            } else if (!same_session(path, session)) {
                if (!uo_file_is_replaceable(path))
                    foreign = 1;
                else if (written_since(&sb, session))
                    concurrent = 1;
                else
                    return fd; /* a leftover of an earlier run: reuse it */
            }
        }
        if (fd >= 0)
            close(fd);
        if (attempt == 0 && foreign)
            uo_report("%s exists and was not written by upti: not replaced (upti run "
                      "--force-overwrite replaces it); the trace goes to %s-%d%s instead",
                      path, *base, pid, suffix);
        if (attempt == 0 && concurrent)
            uo_report("%s was written by another upti run while this one ran (one output name "
                      "for several runs at once): not replaced; the trace goes to %s-%d%s instead",
                      path, *base, pid, suffix);
        if (attempt == 0) {
            size_t len = strlen(*base) + 32;
            char *b2 = malloc(len);
            if (b2 == NULL)
                return -1;
            snprintf(b2, len, "%s-%d", *base, pid);
            free(*base);
            *base = b2;
        }
    }
    return -1;
}

int uo_shorten_base(char *base)
{
    char *slash = strrchr(base, '/');
    char *name = slash != NULL ? slash + 1 : base;
    size_t n = strlen(name);
    if (n <= UO_BASE_NAME_MAX)
        return 0;
    name[uo_utf8_cut(name, UO_BASE_NAME_MAX)] = '\0';
    return 1;
}

char *uo_fallback_base(const char *base)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] != '/')
        dir = "/tmp";
    const char *name = strrchr(base, '/');
    name = name != NULL ? name + 1 : base;
    if (name[0] == '\0')
        name = "upti-trace";
    size_t len = strlen(dir) + strlen(name) + 2;
    char *out = malloc(len);
    if (out == NULL)
        return NULL;
    snprintf(out, len, "%s/%s", dir, name);
    if (strcmp(out, base) == 0) {
        free(out);
        return NULL;
    }
    return out;
}
