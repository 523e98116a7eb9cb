/* SPDX-License-Identifier: MIT */
/* See run_folder.h. */
#include "run_folder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int upti_make_run_folder(char *folder, size_t folder_len, char *rings, size_t rings_len,
                         int *tmpdir_errno)
{
    const char *tmp = getenv("TMPDIR");
    int custom = tmp != NULL && tmp[0] != '\0' && strcmp(tmp, "/tmp") != 0;
    *tmpdir_errno = 0;
    snprintf(folder, folder_len, "%s/" UPTI_RUN_FOLDER_PREFIX "XXXXXX", custom ? tmp : "/tmp");
    if (mkdtemp(folder) == NULL) {
        if (!custom)
            return -1;
        *tmpdir_errno = errno;
        snprintf(folder, folder_len, "/tmp/" UPTI_RUN_FOLDER_PREFIX "XXXXXX");
        if (mkdtemp(folder) == NULL)
            return -1;
    }
    snprintf(rings, rings_len, "/dev/shm/%s", strrchr(folder, '/') + 1);
    if (mkdir(rings, 0700) != 0)
        snprintf(rings, rings_len, "%s", folder);
    return 0;
}
