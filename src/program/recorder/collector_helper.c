/* SPDX-License-Identifier: MIT */
/* See collector_helper.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, posix_spawn_file_actions_addclosefrom_np */
#endif
#include "collector_helper.h"

#include "log.h"

#include "kv_pairs.h"
#include "run_folder.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef UPTI_TOOL_BINDIR
#define UPTI_TOOL_BINDIR "/usr/local/bin"
#endif

/* What would trace the helper, or make it a collector of another run. */
static const char *const k_not_inherited[] = {
    "UPTI_TOOL_LIBRARIES=", "OPENCL_LAYERS=",         "LD_PRELOAD=",
    "LD_AUDIT=",            "NVTX_INJECTION64_PATH=", "VK_INSTANCE_LAYERS=",
    "UPTI_VULKAN_LAYER=",   "UPTI_TRACE_RING_DIR="};

#ifndef UPTI_TOOL_BIN_FROM_LIB
#define UPTI_TOOL_BIN_FROM_LIB "../bin"
#endif

/* The `upti` program: 0 with its path in out, or an errno with the path looked at:
 * UPTI_TRACE_COLLECTOR, else beside this library (the build tree's ../bin, the
 * installed bindir relative to the installed libdir), else the installed bindir. */
static int find_collector(char *out, size_t len)
{
    const char *set = getenv("UPTI_TRACE_COLLECTOR");
    if (set != NULL && set[0] != '\0') {
        snprintf(out, len, "%s", set);
        return access(out, X_OK) == 0 ? 0 : errno;
    }
    Dl_info info;
    char first[PATH_MAX] = "";
    if (dladdr((void *)ut_helper_start, &info) != 0 && info.dli_fname != NULL &&
        strrchr(info.dli_fname, '/') != NULL) {
        int dir = (int)(strrchr(info.dli_fname, '/') - info.dli_fname);
        static const char *const rel[] = {"../bin", UPTI_TOOL_BIN_FROM_LIB};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            snprintf(out, len, "%.*s/%s/upti", dir, info.dli_fname, rel[i]);
            if (i == 0)
                snprintf(first, sizeof first, "%s", out);
            if (access(out, X_OK) == 0)
                return 0;
        }
    }
    snprintf(out, len, "%s/upti", UPTI_TOOL_BINDIR);
    if (access(out, X_OK) == 0)
        return 0;
    int e = errno;
    if (first[0] != '\0')
        snprintf(out, len, "%s", first); /* the one beside the library: what the user expects */
    return e;
}

/* run.conf and the lock of `upti run`'s run folder (src/cli/run_collect.c reads them). */
static int write_conf(const char *folder, const char *rings, const ut_helper_conf *c)
{
    char path[PATH_MAX + 16], formats[16];
    snprintf(path, sizeof path, "%s/lock", folder);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    close(fd);
    snprintf(path, sizeof path, "%s/run.conf", folder);
    FILE *f = fopen(path, "we");
    if (f == NULL)
        return -1;
    snprintf(formats, sizeof formats, "%u", c->formats);
    int rc = upti_kv_put(f, "rings", rings) | upti_kv_put(f, "pattern", c->pattern) |
             upti_kv_put(f, "formats", formats) | upti_kv_put(f, "stats", c->stats ? c->stats : "0") |
             upti_kv_put(f, "include", c->include) | upti_kv_put(f, "exclude", c->exclude) |
             upti_kv_put(f, "iterations", c->iterations) |
             /* The program's stderr is the helper's: no "upti: wrote" lines on it. */
             upti_kv_put(f, "quiet", "1");
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

static void remove_folders(const char *folder, const char *rings)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/run.conf", folder);
    unlink(path);
    snprintf(path, sizeof path, "%s/lock", folder);
    unlink(path);
    if (strcmp(rings, folder) != 0)
        rmdir(rings);
    rmdir(folder);
}

/* The environment without what would trace the helper (malloc'd array, entries shared). */
static char **helper_environment(void)
{
    size_t n = 0;
    while (environ != NULL && environ[n] != NULL)
        n++;
    char **env = calloc(n + 1, sizeof *env);
    if (env == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int keep = 1;
        for (size_t j = 0; keep && j < sizeof k_not_inherited / sizeof k_not_inherited[0]; j++)
            keep = strncmp(environ[i], k_not_inherited[j], strlen(k_not_inherited[j])) != 0;
        if (keep)
            env[k++] = environ[i];
    }
    return env;
}

/*
 * Starts `upti recover --wait-pid PID --background FOLDER` and waits for that
 * process only: it locks the folder, forks the helper (a new session: the
 * program's Ctrl-C, its process group killed, its terminal closed do not end
 * it) and exits 0. So the helper is never the program's child. Its stdin and
 * stdout are /dev/null, no other file of the program is open in it, its
 * stderr is the program's (an "upti:" line of it is seen, and a reader of a
 * pipe on it gets its end once the outputs are written). 0, or an errno (-1:
 * it exited with a failure it said itself).
 */
static int spawn_helper(const char *upti, const char *folder)
{
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    char *argv[] = {(char *)upti, "recover", "--wait-pid", pid, "--background", (char *)folder, NULL};
    char **env = helper_environment();
    if (env == NULL)
        return ENOMEM;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
    posix_spawnattr_init(&attr);
    /* Not the program's blocked or ignored signals: the helper's own defaults. */
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t child;
    int rc = posix_spawn(&child, upti, &fa, &attr, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free(env);
    if (rc != 0)
        return rc;
    int status = 0;
    pid_t w;
    while ((w = waitpid(child, &status, 0)) < 0 && errno == EINTR)
        ;
    /* ECHILD: the program ignores SIGCHLD (its children are reaped for it): the
     * helper's start cannot be checked; its folder says if it never ran. */
    if (w < 0)
        return errno == ECHILD ? 0 : errno;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int ut_helper_start(const ut_helper_conf *conf, char *rings, size_t len)
{
    char upti[PATH_MAX], folder[PATH_MAX - 64];
    int tmpdir_errno;
    if (upti_make_run_folder(folder, sizeof folder, rings, len, &tmpdir_errno) != 0) {
        upti_log_error("cannot create a run folder in $TMPDIR or /tmp (%s): pid %d not traced",
                       strerror(errno), (int)getpid());
        return -1;
    }
    if (write_conf(folder, rings, conf) != 0) {
        int e = errno;
        remove_folders(folder, rings);
        upti_log_error("cannot write %s/run.conf (%s): pid %d not traced", folder, strerror(e),
                       (int)getpid());
        return -1;
    }
    int e = find_collector(upti, sizeof upti);
    if (e == 0) {
        e = spawn_helper(upti, folder);
        if (e == 0)
            return 0;
        upti_log_error("the collector %s did not start (%s): the records stay in %s "
                       "(upti recover %s writes the outputs)", upti,
                       e > 0 ? strerror(e) : "it failed", folder, folder);
    } else {
        upti_log_error("no collector %s (%s): the records stay in %s (upti recover %s writes "
                       "the outputs)", upti, strerror(e), folder, folder);
    }
    return 1;
}

char *ut_absolute_pattern(const char *pattern)
{
    if (pattern[0] == '/')
        return strdup(pattern);
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL)
        return strdup(pattern); /* relative to wherever the helper runs: its cwd is this one */
    size_t n = strlen(pattern) + 2 * strlen(cwd) + 2;
    char *out = malloc(n), *p = out;
    if (out == NULL)
        return NULL;
    for (const char *c = cwd; *c != '\0'; c++) {
        if (*c == '%')
            *p++ = '%'; /* a literal '%' of the folder's name */
        *p++ = *c;
    }
    *p++ = '/';
    strcpy(p, pattern);
    return out;
}
