/* SPDX-License-Identifier: MIT */
/* src/common/file_keeper.c: a file's last close handed to a process of its own.
 * The keeper is this driver under the keeper's name (unit_tests.c's main):
 *   - it holds the unlinked file under UPTI_FILE_KEEPER_FD, and nothing but
 *     that and its pipe (a descriptor left open without close-on-exec here
 *     does not reach it), in a session of its own;
 *   - it stays while the pipe is open, after the caller closed its copy, and
 *     exits with 0 once the pipe is closed;
 *   - SIGTERM, ignored here, ends it (its signals are the defaults);
 *   - an executable that cannot be started: -1, ENOENT, the caller's
 *     descriptors as they were;
 *   - upti_file_keeper_close: the file's pages outlive the caller's close in
 *     the keeper, which exits by itself. */
#include "file_keeper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

#define FILE_BYTES (1u << 20)

/* A file of FILE_BYTES, already unlinked: its descriptor. */
static int unlinked_file(void)
{
    char path[] = "/tmp/upti-keeper-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    static char block[4096];
    memset(block, 'k', sizeof block);
    for (unsigned done = 0; fd >= 0 && done < FILE_BYTES; done += sizeof block)
        CHECK(write(fd, block, sizeof block) == (ssize_t)sizeof block);
    CHECK(unlink(path) == 0);
    return fd;
}

/* The descriptors pid holds, as a bit mask of those below 64 (bit 63: one above). */
static unsigned long long fds_of(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    unsigned long long mask = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        long n = strtol(e->d_name, NULL, 10);
        mask |= 1ull << (n < 63 ? n : 63);
    }
    if (d != NULL)
        closedir(d);
    return mask;
}

/* Until pid holds exactly its pipe (0) and the file (UPTI_FILE_KEEPER_FD): its start
 * (the loader) opens and closes files for a while. False after 10 s. */
static bool holds_only_its_two(pid_t pid)
{
    unsigned long long want = 1ull | 1ull << UPTI_FILE_KEEPER_FD;
    for (int i = 0; i < 10000; i++) {
        if (fds_of(pid) == want)
            return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    fprintf(stderr, "keeper %d holds fds %#llx, not %#llx\n", (int)pid, fds_of(pid), want);
    return false;
}

/* pid's wait status; one still running after 10 s is killed (SIGKILL: a check fails). */
static int exit_status(pid_t pid)
{
    int how = 0;
    for (int i = 0; i < 10000; i++) {
        if (waitpid(pid, &how, WNOHANG) == pid)
            return how;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &how, 0) < 0 && errno == EINTR)
        ;
    return how;
}

UNIT_TEST(file_keeper)
{
    int fd = unlinked_file();
    int leaked = open("/dev/null", O_RDONLY); /* no close-on-exec */
    CHECK(leaked > UPTI_FILE_KEEPER_FD);
    int release = -1;
    pid_t pid = upti_file_keeper_start(NULL, fd, &release);
    CHECK(pid > 0 && release > UPTI_FILE_KEEPER_FD);
    CHECK(holds_only_its_two(pid));
    char link[64], target[256] = "";
    snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)pid, UPTI_FILE_KEEPER_FD);
    ssize_t len = readlink(link, target, sizeof target - 1);
    CHECK(len > 0 && strstr(target, "/tmp/upti-keeper-") == target &&
          strstr(target, " (deleted)") != NULL);
    struct stat mine, its;
    CHECK(fstat(fd, &mine) == 0 && stat(link, &its) == 0);
    CHECK(mine.st_ino == its.st_ino && mine.st_dev == its.st_dev &&
          its.st_size == (off_t)FILE_BYTES && its.st_nlink == 0);
    CHECK(getsid(pid) == pid);
    CHECK(close(fd) == 0);
    CHECK(stat(link, &its) == 0 && its.st_size == (off_t)FILE_BYTES); /* its copy holds it */
    CHECK(waitpid(pid, NULL, WNOHANG) == 0);
    CHECK(close(release) == 0);
    int how = exit_status(pid);
    CHECK(WIFEXITED(how) && WEXITSTATUS(how) == 0);

    /* Signals ignored here are not ignored there. */
    fd = unlinked_file();
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ignore.sa_mask);
    CHECK(sigaction(SIGTERM, &ignore, &old) == 0);
    pid = upti_file_keeper_start(NULL, fd, &release);
    CHECK(sigaction(SIGTERM, &old, NULL) == 0);
    CHECK(pid > 0 && holds_only_its_two(pid));
    CHECK(kill(pid, SIGTERM) == 0);
    how = exit_status(pid);
    CHECK(WIFSIGNALED(how) && WTERMSIG(how) == SIGTERM);
    close(release);

    /* Nothing started: the caller's descriptors stay. */
    release = -7;
    errno = 0;
    CHECK(upti_file_keeper_start("/nonexistent/upti", fd, &release) == -1 && errno == ENOENT);
    CHECK(release == -7 && fcntl(fd, F_GETFD) >= 0);
    CHECK(fcntl(leaked, F_GETFD) >= 0);

    /* The close handed over: the keeper was started as this process's child (its
     * only one now) and ends by itself once it holds the last copy. */
    upti_file_keeper_close(fd);
    CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
    pid = waitpid(-1, &how, WNOHANG);
    how = pid > 0 ? how : exit_status(-1);
    CHECK(WIFEXITED(how) && WEXITSTATUS(how) == 0);
    close(leaked);
    return test_result("file_keeper");
}
