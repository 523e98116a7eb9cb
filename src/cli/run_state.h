/* SPDX-License-Identifier: MIT */
/* Internal: the state of one `upti run` or `upti recover` that the collector's
 * two halves share: run_collect.c (the run folder, the collecting thread, the
 * end of the run, recover) and run_finish.c (each converted database named,
 * completed, moved into place, its other outputs written). */
#ifndef UPTI_CLI_RUN_STATE_H
#define UPTI_CLI_RUN_STATE_H

#include "capture_spec.h"
#include "collector.h"

#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One converted database: its temporary path and process. */
typedef struct converted {
    char *path;
    long long pid, ppid;
    int complete;
    char *meta;    /* its metadata: key\0value\0... */
    size_t meta_len;
    char *host, *command;
    long long start, end; /* info_process: its first start, its last end (0: unknown) */
} converted;

/* The state of this `upti run` (or `upti recover`): its folders, the collector
 * thread, the run's configuration and the databases it converted. */
struct run_state {
    char folder[PATH_MAX];  /* the run folder */
    char rings[PATH_MAX];   /* the ring folder */
    char spool[PATH_MAX + 16];
    int lock_fd;
    pthread_t thread;
    int thread_started, collect_rc;
    volatile int stop;
    uint32_t collect_wake; /* ends the collecting thread's sleep (ur_collect_wake) */
    /* The spool holds every record (ur_collect_opts.drained), under drained_lock. */
    int collect_drained;
    pthread_mutex_t drained_lock;
    pthread_cond_t drained_wake;
    /* Converting while the program runs (run_finish.c): the thread that
     * follows the spool, the spool's complete size as the collecting thread
     * last said it (atomic), whether that thread has ended, whether a thread
     * is converting and whether the producers closed their rings (under
     * follow_lock; follow_wake ends the follow thread's pause at once). */
    pthread_t follow_thread;
    int follow_started;
    uint64_t spool_complete;
    int collect_done;
    int follow_busy;      /* a thread converts (the follow thread, or run_follow_closed) */
    int producers_closed; /* every ring was closed once (ur_collect_opts.closed) */
    uint64_t followed;    /* the spool converted so far (by whoever holds follow_busy) */
    /* While the follow thread pauses: where the spool it converted ended then
     * (else UINT64_MAX; atomic): run_follow_stored wakes it once a step waits. */
    uint64_t follow_paused_at;
    pthread_mutex_t follow_lock;
    pthread_cond_t follow_wake;
    ur_converter *converter; /* the follow thread's, finished after it is joined */
    pid_t program;
    /* the run's configuration (also in run.conf) */
    char *pattern, *include, *exclude, *session, *iterations, *capture_never;
    char *config;      /* the resolved settings (JSON) */
    int output_config; /* --output-config: also NAME_config.json */
    upti_iteration_range iteration_range;
    int has_iterations;
    int never_opened; /* processes whose capture window never opened */
    int empty_windows; /* processes whose capture windows opened but recorded nothing */
    unsigned formats;
    char *stats; /* the reports of --stats (stats_reports.h), or NULL */
    regex_t include_re, exclude_re;
    int has_include, has_exclude;
    converted *dbs;
    size_t num_dbs, cap_dbs;
    int status, have_status; /* the program's wait status */
    int recovering;          /* upti recover */
    int quiet;               /* run.conf "quiet": the helper of a program, which shares its stderr */
    int kept;                /* a converted database could not be placed: keep the folder */
    char **bases; /* the output names this run wrote */
    size_t num_bases;
    int lost; /* traced processes that lost records, said in a line */
    /* What the processes whose outputs were written hold, for the closing line
     * of upti run: how many, their records and drops, their first start and last end. */
    long long sum_processes, sum_records, sum_dropped, first_start, last_end;
    int bare; /* upti recover of a ring folder without run.conf (names from the rings) */
    ur_loss *losses; /* records the collectors of this folder could not store, per process */
    size_t num_losses, cap_losses;
};

/** This process's run (run_collect.c). */
extern struct run_state g_run;

/* Beside the rings (another file system than a full $TMPDIR: /dev/shm), what a
 * kept folder's database must still say once `upti recover` writes it: the
 * records not stored (NOT_STORED_FILE, "PID RECORDS" lines) and how the
 * program upti run started ended (STATUS_FILE, "PID WAIT_STATUS"). */
#define NOT_STORED_FILE "not-stored"
#define STATUS_FILE "status"

/* The output name of a process traced without `upti run` that did not say its own
 * (the tool's default, src/program/recorder/tool.c). */
#define DEFAULT_PATTERN "upti-%argv0%-%pid%"

/** A malloc'd copy of s, or NULL when s is NULL (run_collect.c). */
char *run_dup_or_null(const char *s);

/** The kernel filter of every database (--kernel-include-regex/--kernel-exclude-regex). */
int run_kernel_filter(void *data, int64_t name_id, const char *name);

/** Writes the records not stored, per process, beside the rings (NOT_STORED_FILE). */
void run_save_not_stored(void);

/** Starts the thread that converts the spool while the program runs (run_finish.c). */
void run_follow_start(void);

/** The spool is complete up to complete (from the collecting thread,
 *  ur_collect_opts.stored): wakes the follow thread from its pause if a
 *  step's worth of it waits. */
void run_follow_stored(uint64_t complete);

/** Tells the follow thread that every producer closed its ring (from the
 *  collecting thread, ur_collect_opts.closed): it converts a small spool too. */
void run_follow_closed(void);

/** Ends the follow thread (at once, even in its pause), waiting only for a
 *  conversion step under way: the collecting thread has drained the rings. */
void run_follow_end(void);

/** Converts the spool (the rest of it, after the follow thread) into one
 *  database per process, then names, completes and moves each into place and
 *  writes its other outputs. The number of processes whose outputs were
 *  written. */
int run_convert_and_finish(void);

#endif
