/* SPDX-License-Identifier: MIT */
/* "In use by pid N". A process writing a trace database holds an exclusive
 * flock() on it for its life (the tool's claim; `upti run` tests it before a
 * recovery). flock() rather than a POSIX lock: SQLite's own F_UNLCK of the
 * whole file would drop a POSIX lock of the same process. The holder's pid
 * is read from /proc/locks. */
#include "out_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The pid of the process holding a flock() on (dev, ino), other than this one; 0 if none. */
static pid_t flock_holder(dev_t dev, ino_t ino)
{
    FILE *f = fopen("/proc/locks", "re");
    if (f == NULL)
        return 0;
    char line[256];
    pid_t found = 0;
    while (found == 0 && fgets(line, sizeof line, f) != NULL) {
        char kind[16];
        int pid;
        unsigned maj, min;
        unsigned long long inode;
        /* "1: FLOCK  ADVISORY  WRITE 4242 fe:00:10953074 0 EOF" */
        if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%llu", kind, &pid, &maj, &min, &inode) == 5 &&
            kind[0] == 'F' && major(dev) == maj && minor(dev) == min &&
            (unsigned long long)ino == inode && pid != (int)getpid())
            found = (pid_t)pid;
    }
    fclose(f);
    return found;
}

pid_t uo_writer_pid(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    pid_t pid = 0;
    struct stat st;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0 && fstat(fd, &st) == 0)
        pid = flock_holder(st.st_dev, st.st_ino);
    close(fd); /* also releases the probe's shared lock */
    return pid;
}
