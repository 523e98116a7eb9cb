/* "In use by pid N": a process writing a trace database holds a POSIX read
 * lock on one byte of it (UO_WRITER_LOCK_BYTE, beyond SQLite's own lock
 * bytes), which F_GETLK reports with the holder's pid. A lock of a process
 * is not inherited by fork and ends with the process. */
#include "out_files.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int uo_writer_lock(int fd)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_RDLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = UO_WRITER_LOCK_BYTE;
    fl.l_len = 1;
    return fcntl(fd, F_SETLK, &fl);
}

pid_t uo_writer_pid(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = UO_WRITER_LOCK_BYTE;
    fl.l_len = 1;
    pid_t pid = 0;
    if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
        pid = fl.l_pid;
    close(fd);
    return pid;
}
