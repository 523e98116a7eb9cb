/* SPDX-License-Identifier: MIT */
/* See dirs.h. */
#include "dirs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int make_one(const char *path)
{
    /* Never writable by others, whatever the umask (000 in some containers): an output
     * folder anyone may write is refused (cli_make_output_dir). The group as the umask says. */
    if (mkdir(path, 0775) == 0)
        return 0;
    int err = errno;
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return 0;
        err = ENOTDIR;
    }
    errno = err;
    return -1;
}

int upti_mkdirs(const char *path)
{
    if (path == NULL || path[0] == '\0')
        return 0;
    char *copy = strdup(path);
    if (copy == NULL)
        return -1;
    int rc = 0;
    /* Each parent in turn ("a", "a/b", then "a/b/c"); "/" and "." are there already. */
    for (char *p = copy + 1; rc == 0 && *p != '\0'; p++) {
        if (*p != '/' || p[-1] == '/')
            continue;
        *p = '\0';
        rc = make_one(copy);
        *p = '/';
    }
    if (rc == 0)
        rc = make_one(copy);
    int err = errno;
    free(copy);
    errno = err;
    return rc;
}

int upti_mkdirs_for(const char *file)
{
    const char *slash = file != NULL ? strrchr(file, '/') : NULL;
    if (slash == NULL || slash == file)
        return 0;
    char *dir = strndup(file, (size_t)(slash - file));
    if (dir == NULL)
        return -1;
    int rc = upti_mkdirs(dir);
    int err = errno;
    free(dir);
    errno = err;
    return rc;
}

int upti_replace_file(const char *from, const char *to)
{
    struct stat want, got;
    int fd = open(to, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int exchanged = fd >= 0 && fstat(fd, &want) == 0 && S_ISREG(want.st_mode) &&
                    renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0;
    if (fd >= 0)
        close(fd);
    if (exchanged) {
        if (lstat(from, &got) == 0 && got.st_dev == want.st_dev && got.st_ino == want.st_ino) {
            unlink(from); /* (the move is done: a file left there would only be a leftover) */
            return 0;
        }
        /* Not the file looked at: back where it was, then as rename would. */
        if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) != 0)
            return -1;
    }
    return rename(from, to);
}
