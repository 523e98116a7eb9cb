/* SPDX-License-Identifier: MIT */
/* The work folder of a fuzz target: /tmp/upti-fuzz-NAME-PID, made at its
 * first input and removed with all it holds when the fuzzer exits (libFuzzer
 * calls exit() at the end of -max_total_time or -runs). A crash (abort,
 * _exit) leaves it beside the reproducer. Each CI run used to leave every
 * target's folder behind: one held thousands of folders named by the inputs
 * of the option parser's fuzzer. */
#ifndef UPTI_FUZZ_WORKDIR_H
#define UPTI_FUZZ_WORKDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_workdir_path[64];

static int fuzz_workdir_remove_one(const char *path, const struct stat *st, int flag,
                                   struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path); /* (a file, or a folder already emptied: FTW_DEPTH) */
    return 0;
}

static void fuzz_workdir_remove(void)
{
    nftw(fuzz_workdir_path, fuzz_workdir_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The folder of the target named name, made (and its removal at exit
 * registered) by the first call. */
static inline const char *fuzz_workdir(const char *name)
{
    if (fuzz_workdir_path[0] == '\0') {
        snprintf(fuzz_workdir_path, sizeof fuzz_workdir_path, "/tmp/upti-fuzz-%s-%d", name,
                 (int)getpid());
        mkdir(fuzz_workdir_path, 0700);
        atexit(fuzz_workdir_remove);
    }
    return fuzz_workdir_path;
}

#endif
