/* SPDX-License-Identifier: MIT */
/* See safe_open.h. */
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 if another process holds the flock of the existing file at path: an
 * output (a .part) that another upti is writing at this moment. */
static int held_by_another(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* and the lock with it */
    return held;
}

int uo_open_new(const char *path)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            /* Held while the file is written: another writer of the same name
             * (two exports at once) keeps off it (held_by_another). */
            flock(fd, LOCK_EX | LOCK_NB);
            return fd;
        }
        if (errno != EEXIST || attempt == 1)
            return fd;
        struct stat st;
        if (lstat(path, &st) != 0)
            continue; /* gone meanwhile: try again */
        if (S_ISLNK(st.st_mode)) {
            errno = ELOOP;
            return -1;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
            errno = EEXIST;
            return -1;
        }
        if (held_by_another(path)) {
            errno = EBUSY;
            return -1;
        }
        /* Unlinking removes the name, never what a link planted meanwhile points to. */
        if (unlink(path) != 0)
            return -1;
    }
    return -1;
}

FILE *uo_fopen_new(const char *path, const char *mode)
{
    int fd = uo_open_new(path);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, mode);
    if (f == NULL) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

const char *uo_open_new_reason(int e)
{
    return e == EBUSY ? "another upti is writing it" : strerror(e);
}
