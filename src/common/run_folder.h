/* SPDX-License-Identifier: MIT */
/* Internal: the folders of a run whose program only records (docs/shared-rings.md):
 * made alike by `upti run` (src/cli/run_collect.c) and by the tool for its helper
 * collector (src/program/recorder/collector_helper.c). */
#ifndef UPTI_COMMON_RUN_FOLDER_H
#define UPTI_COMMON_RUN_FOLDER_H

#include <stddef.h>

/** The name of every run and ring folder starts so (libupti tells a collector's folder by it). */
#define UPTI_RUN_FOLDER_PREFIX "upti-collect-"

/**
 * Makes the run folder $TMPDIR/upti-collect-XXXXXX (mode 0700; /tmp when
 * TMPDIR is unset, empty or cannot hold it: then *tmpdir_errno says why, else
 * 0) into folder, and the ring folder /dev/shm/upti-collect-XXXXXX (the same
 * name, in memory: nothing written back to a disk) into rings, or the run
 * folder itself when /dev/shm cannot hold it. 0, or -1 (errno).
 */
int upti_make_run_folder(char *folder, size_t folder_len, char *rings, size_t rings_len,
                         int *tmpdir_errno);

#endif
