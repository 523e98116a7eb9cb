/* SPDX-License-Identifier: MIT */
/* See dirs.h. */
#include "dirs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
