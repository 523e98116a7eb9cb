/* SPDX-License-Identifier: MIT */
/* A file's last close handed to a process of its own (file_keeper.h). */
#include "file_keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <unistd.h>

extern char **environ;

/* posix_spawn: the caller is suspended only until the keeper's exec (no copy of
 * its page tables, which a large upti would then fault back page by page). */
pid_t upti_file_keeper_start(const char *exe, int fd, int *release)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t none, dflt;
    sigemptyset(&none);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGINT);
    sigaddset(&dflt, SIGHUP);
    sigaddset(&dflt, SIGTERM);
    sigaddset(&dflt, SIGPIPE);
    int e = posix_spawn_file_actions_init(&actions);
    if (e == 0) {
        /* The pipe's read end its standard input, fd its UPTI_FILE_KEEPER_FD (dup2
         * clears close-on-exec); every other descriptor closed: a copy of an
         * output pipe, a lock or another file would outlive upti with it. */
        if ((e = posix_spawn_file_actions_adddup2(&actions, pipefd[0], 0)) == 0 &&
            (e = posix_spawn_file_actions_adddup2(&actions, fd, UPTI_FILE_KEEPER_FD)) == 0 &&
            (e = posix_spawn_file_actions_addclose(&actions, 1)) == 0 &&
            (e = posix_spawn_file_actions_addclose(&actions, 2)) == 0)
            e = posix_spawn_file_actions_addclosefrom_np(&actions, UPTI_FILE_KEEPER_FD + 1);
        if (e == 0 && (e = posix_spawnattr_init(&attr)) == 0) {
            (void)((e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID |
                                                            POSIX_SPAWN_SETSIGMASK |
                                                            POSIX_SPAWN_SETSIGDEF)) == 0 &&
                   (e = posix_spawnattr_setsigmask(&attr, &none)) == 0 &&
                   (e = posix_spawnattr_setsigdefault(&attr, &dflt)) == 0);
            pid_t pid = -1;
            char *argv[] = {(char *)UPTI_FILE_KEEPER_ARGV0, NULL};
            if (e == 0)
                e = posix_spawn(&pid, exe != NULL ? exe : "/proc/self/exe", &actions, &attr,
                                argv, environ);
            posix_spawnattr_destroy(&attr);
            posix_spawn_file_actions_destroy(&actions);
            if (e == 0) {
                close(pipefd[0]);
                *release = pipefd[1];
                return pid;
            }
        } else {
            posix_spawn_file_actions_destroy(&actions);
        }
    }
    close(pipefd[0]);
    close(pipefd[1]);
    errno = e;
    return -1;
}

void upti_file_keeper_close(int fd)
{
    int release = -1;
    int started = upti_file_keeper_start(NULL, fd, &release) > 0;
    /* First fd, then the pipe: the keeper's read ends only once the pipe is
     * closed, when the keeper's copy is the last one left. */
    close(fd);
    if (started)
        close(release);
}

int upti_file_keeper_main(void)
{
    (void)prctl(PR_SET_NAME, "upti-keeper"); /* (for ps and top: not "exe") */
    char c;
    for (;;) {
        ssize_t n = read(0, &c, 1);
        if (n == 0 || (n < 0 && errno != EINTR))
            return 0;
    }
}
