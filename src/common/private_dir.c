/* SPDX-License-Identifier: MIT */
/* See private_dir.h. */
#include "private_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "user NAME (uid N)", or "uid N" for a uid without a name. */
static void describe_owner(uid_t uid, char *out, size_t len)
{
    struct passwd pw, *found = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != NULL)
        snprintf(out, len, "user %s (uid %u)", found->pw_name, (unsigned)uid);
    else
        snprintf(out, len, "uid %u", (unsigned)uid);
}

static int refuse(char *why, size_t why_len, int err, const char *fmt, const char *path,
                  const char *detail)
{
    if (why != NULL && why_len > 0)
        snprintf(why, why_len, fmt, path, detail);
    errno = err;
    return -1;
}

int upti_check_private_dir(int dirfd, const char *path, char *why, size_t why_len)
{
    struct stat st;
    if (fstat(dirfd, &st) != 0)
        return refuse(why, why_len, errno, "cannot read %s%s", path, "");
    char owner[160];
    if (st.st_uid != geteuid()) {
        describe_owner(st.st_uid, owner, sizeof owner);
        return refuse(why, why_len, EPERM, "%s is owned by %s, not by you: not used (a folder "
                      "another user owns could hold forged rings or links)", path, owner);
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(owner, sizeof owner, "%s%s", st.st_mode & S_IWGRP ? "its group" : "",
                 st.st_mode & S_IWOTH ? (st.st_mode & S_IWGRP ? " and others" : "others") : "");
        return refuse(why, why_len, EPERM, "%s may be written by %s: not used (chmod go-w "
                      "makes it private)", path, owner);
    }
    return 0;
}

int upti_open_private_dir(const char *path, char *why, size_t why_len)
{
    struct stat link;
    if (lstat(path, &link) != 0)
        return refuse(why, why_len, errno, "cannot open the folder %s: %s", path, strerror(errno));
    if (S_ISLNK(link.st_mode) && link.st_uid != geteuid()) {
        char owner[160];
        describe_owner(link.st_uid, owner, sizeof owner);
        return refuse(why, why_len, EPERM, "%s is a symbolic link of %s, not yours: not used",
                      path, owner);
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return refuse(why, why_len, errno, "cannot open the folder %s: %s", path, strerror(errno));
    if (upti_check_private_dir(fd, path, why, why_len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int upti_check_ring_folder(const char *path, char *why, size_t why_len)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 && (st.st_mode & S_ISVTX))
        return 0;
    int fd = upti_open_private_dir(path, why, why_len);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

/* A regular file of the caller with one link (not a hard link to another's file). */
static int owned_regular(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 0;
    return S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1;
}

int upti_open_in_dir(int dirfd, const char *name, int flags, mode_t mode, int exclusive)
{
    if (strchr(name, '/') != NULL || name[0] == '\0' || strcmp(name, "..") == 0 ||
        strcmp(name, ".") == 0) {
        errno = EINVAL;
        return -1;
    }
    int base = (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_NOFOLLOW | O_CLOEXEC;
    int fd;
    if (flags & O_CREAT) {
        fd = openat(dirfd, name, base | O_CREAT | O_EXCL, mode);
        if (fd >= 0 || errno != EEXIST || exclusive)
            return fd;
    }
    /* An existing file: never a FIFO or a device (O_NONBLOCK: opening one does not wait). */
    fd = openat(dirfd, name, base | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (!owned_regular(fd)) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    if (!(base & O_NONBLOCK))
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if ((flags & O_TRUNC) && ftruncate(fd, 0) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int upti_open_file(const char *path, int flags, mode_t mode, int exclusive)
{
    const char *slash = strrchr(path, '/');
    int dirfd;
    if (slash == NULL) {
        dirfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } else {
        char *dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
        if (dir == NULL)
            return -1;
        dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        free(dir);
    }
    if (dirfd < 0)
        return -1;
    int fd = upti_open_in_dir(dirfd, slash != NULL ? slash + 1 : path, flags, mode, exclusive);
    int e = errno;
    close(dirfd);
    errno = e;
    return fd;
}
