/* See safe_open.h. */
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int uo_open_new(const char *path)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST || attempt == 1)
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
