/* SPDX-License-Identifier: MIT */
/* Internal: what UPTI reads of a process from /proc and its environment (the SDK
 * stamps its ring files with its own start time; the collector tells a live
 * writer from a reused pid; outputs are named after the program and its rank). */
#ifndef UPTI_COMMON_PROC_STAT_H
#define UPTI_COMMON_PROC_STAT_H

#include <stddef.h>
#include <stdint.h>

/**
 * Reads process pid's state letter (field 3: 'R', 'S', 'Z'...) and start time
 * (field 22, clock ticks after boot) from /proc/<pid>/stat; pid 0: this process.
 * Returns 0, or -1 when the process or its stat cannot be read.
 */
int upti_proc_stat(int64_t pid, char *state, uint64_t *start_ticks);

/**
 * This process's command line (/proc/self/cmdline), its arguments joined by
 * spaces, in out[0..cap) (cut to fit, NUL-terminated). Returns 0, or -1 (out
 * is then "") when it cannot be read.
 */
int upti_proc_command_line(char *out, size_t cap);

/** This process's program name: the basename of /proc/self/cmdline's first
 *  entry, in out[0..n) (cut to fit; "" when it cannot be read). */
void upti_proc_argv0(char *out, size_t n);

/** This process's MPI rank from the launcher's environment (OMPI_COMM_WORLD_RANK,
 *  PMI_RANK, PMIX_RANK, SLURM_PROCID, MPI_LOCALRANKID, the first set), or NULL. */
const char *upti_proc_mpi_rank(void);

#endif
