/* SPDX-License-Identifier: MIT */
/* The unit cases of the trace database (src/collector/output): a new
 * database in a new temporary folder. */
#ifndef UPTI_UNIT_DB_H
#define UPTI_UNIT_DB_H

#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

/* A database dir/trace.db for a process (pid 1, host "h", command "c") in a
 * folder made from dir ("/tmp/upti-NAME-XXXXXX"), its path in path (256
 * bytes); NULL after a message on stderr. */
static inline uo_db *unit_temp_db(char *dir, char path[256])
{
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "mkdtemp %s failed\n", dir);
        return NULL;
    }
    snprintf(path, 256, "%s/trace.db", dir);
    uo_process_info proc = {.pid = 1, .ppid = 0, .rank = -1, .hostname = "h", .command = "c"};
    char err[256] = "";
    uo_db *db = uo_db_create(path, &proc, NULL, err, sizeof err);
    if (db == NULL)
        fprintf(stderr, "uo_db_create: %s\n", err);
    return db;
}

/* Sets the soft limit on the size of the files this process writes (bytes;
 * RLIM_INFINITY: none). A write past it fails with EFBIG where SIGXFSZ is
 * ignored; 0, or -1 if the limit could not be set. */
static inline int unit_limit_files(rlim_t bytes)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_FSIZE, &r) != 0)
        return -1;
    r.rlim_cur = bytes;
    return setrlimit(RLIMIT_FSIZE, &r);
}

#endif
