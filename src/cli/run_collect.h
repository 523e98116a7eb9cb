/* SPDX-License-Identifier: MIT */
/* Internal: `upti run` as the collector of the programs it runs
 * (run_collect.c). The traced processes only record, into shared rings
 * (include/upti/ring.h) in the run's ring folder; `upti run` drains
 * them into its spool while they run (src/collector/collect), and after they ended
 * converts the spool into each process's database and other outputs, named
 * from the output pattern with each process's own values.
 *
 * The run folder ($TMPDIR/upti-collect-XXXXXX) holds the spool, run.conf (what
 * `upti recover` needs to finish the run: the ring folder, the pattern, the
 * formats) and a lock held by the live `upti run`. A run that completes
 * removes it; a run whose `upti` was killed leaves it for `upti recover`. */
#ifndef UPTI_CLI_RUN_COLLECT_H
#define UPTI_CLI_RUN_COLLECT_H

#include <sys/types.h>

/** What the outputs of a run are. */
typedef struct run_collect_cfg {
    const char *pattern;  /**< output path without extension, placeholders unexpanded */
    unsigned formats;     /**< UO_FORMAT_* bits */
    const char *stats;    /**< the reports printed on stderr (and in NAME_stats.csv), or NULL */
    const char *include, *exclude; /**< kernel name regexes, or NULL */
    const char *session;  /**< UPTI_TRACE_SESSION_START of the run */
    const char *iterations; /**< --kernel-iteration-range (checked), or NULL */
    /** Why a process whose capture window never opened recorded nothing ("" or NULL: no window) */
    const char *capture_never;
    const char *config; /**< the resolved settings (JSON): metadata "config" of every database */
    int output_config;  /**< also written to NAME_config.json (--output-config) */
} run_collect_cfg;

/**
 * Creates the run folder and the ring folder, writes run.conf, and sets
 * UPTI_TRACE_RING_DIR for the program. 0, or an exit status after one line.
 */
int run_collect_begin(const run_collect_cfg *cfg);

/** Starts draining the rings while the program (pid) runs. 0, or -1 after one line
 *  (the trace is then written after the program's end). */
int run_collect_start(pid_t program);

/** Ends draining at once (a second SIGINT or SIGTERM to `upti run`): async-signal-safe. */
void run_collect_stop(void);

/**
 * Starts collecting for the program (pid) in a process of its own, in a
 * session of its own (run_collect.c says why), which also converts and
 * writes the outputs once run_collect_apart_end() gave it the program's
 * status. Called with one thread. 1 in upti; 0 where the process could not
 * be made (upti then collects itself: run_collect_start()).
 */
int run_collect_apart(pid_t program);

/** run_collect_stop() for the collecting process (SIGUSR2): async-signal-safe. */
void run_collect_apart_stop(void);

/**
 * Once the program ended: gives the collecting process its wait status and
 * waits for it to end (run_collect_end() and the closing lines are its). 0,
 * or -1 if it did not end well (killed: said once).
 */
int run_collect_apart_end(int status);

/**
 * Once the program ended: waits until every traced process of the run
 * ended (or run_collect_stop), converts, writes the outputs and removes the
 * run folder. A process that did not finalize UPTI (killed, crashed, _exit)
 * gets metadata "ended" saying how (the program's own from status).
 * Returns the number of processes whose outputs were written, or -1 when
 * none was and what was lost or kept was said already, or that no capture
 * window opened ("upti: the capture range never opened (WHY): no trace
 * written", WHY from capture_never).
 */
int run_collect_end(pid_t program, int status);

/** run_collect_end(), then the outputs' closing lines and the run's summary line. */
void run_collect_finish(pid_t program, int status);

/** Removes the run folder and the ring folder (the program never ran). */
void run_collect_discard(void);

/** In a bare ring folder (no run.conf), what `upti recover` adds beside the
 *  rings while it works: its spool (kept if it is killed, resumed by the next
 *  recover) and its lock. Both removed once the databases are written. */
#define RECOVER_SPOOL "recover.spool"
#define RECOVER_LOCK "recover.lock"

/**
 * `upti recover FOLDER`: finishes a run whose `upti` was killed: collects
 * what its rings still hold (waiting for traced processes still running, and
 * for wait_pid when not 0), converts, writes the outputs, removes the folder.
 * FOLDER is a run folder (run.conf), or a bare ring folder (ring files and/or
 * RECOVER_SPOOL: UPTI_TRACE_RING_DIR set by hand): then each process's
 * database is named from the pattern it recorded (metadata "output"), else
 * upti-%argv0%-%pid%, and the folder itself stays. background: once the folder
 * is locked, the caller's process returns 0 and a child in a session of its
 * own does the rest. FOLDER (and a run folder's ring folder) must be the
 * caller's and writable by nobody else (private_dir.h): else one line and 2.
 * Traced processes still running (their pid and start time as their ring
 * says) are named and waited for at most max_wait_s seconds once wait_pid
 * has ended; their rings then stay. 0, or 1 after one line.
 */
int run_collect_recover(const char *folder, pid_t wait_pid, int background, unsigned max_wait_s);

/** upti run's closing line, after the "upti: wrote" lines: processes, records,
 *  drops, time span and outputs (outputs: the files said written; nothing is
 *  said for 0). */
void run_say_summary(int outputs);

#endif
