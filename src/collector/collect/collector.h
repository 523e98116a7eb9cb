/* SPDX-License-Identifier: MIT */
/* The collector: the process outside the traced program that drains its
 * shared rings (include/upti/ring.h) into a spool file while it runs,
 * and converts the spool into the SQLite database afterwards.
 *
 *   ring files --(collect.c, while the program runs)--> spool --(convert.c)--> <prefix>-<pid>.db
 *
 * The spool (spool.h) is the collector's compact form: the ring records
 * appended as they were read, in chunks; cheap to append, and enough to
 * resume: a collector killed and started again continues where the spool
 * ends, without losing or repeating a record.
 */
#ifndef UPTI_COLLECTOR_H
#define UPTI_COLLECTOR_H

#include "output.h"

#include <stdint.h>
#include <string.h>

/** What `upti-ring collect` does. */
typedef struct ur_collect_opts {
    const char *spool;    /**< the spool file: created, or resumed if it exists */
    const char *dir;      /**< a folder scanned for *.upti-ring files, or NULL */
    const char **files;   /**< ring files named on the command line */
    int num_files;
    int64_t wait_pid;     /**< keep collecting until this process has ended (0: none) */
    int keep;             /**< 1: leave drained ring files in place (default: remove them) */
    uint64_t poll_ns;     /**< pause when no ring had anything new */
    /** Once wait_pid (if any) has ended: how long to wait at most for the
     *  producers still running (ns; each is named once, uo_report), after
     *  which their files are kept and said. 0: as long as they run. A producer
     *  is only waited for when its pid runs and started at the time its ring
     *  names (proc_start_ticks). */
    uint64_t producer_wait_ns;
    /** If not NULL: set to the number of ring files skipped (not rings this
     *  collector reads, each said once): they stay where they are. */
    int *skipped;
    /** Set (to non-zero, e.g. by a signal handler) to end collecting: one last
     *  pass over every ring, then return, producers alive or not. NULL: never. */
    const volatile int *stop;
    /** Once the spool could not be written (or opened), the rings are drained
     *  without storing: at the end, called once per producer process that
     *  lost records that way, with their number (tracing records: not
     *  padding, THREAD, AGENT or TOOL records; plus the records its producer
     *  dropped whose count the spool could not store) and the reason
     *  (strerror). NULL: not reported. */
    void (*discarded)(void *arg, int64_t pid, uint64_t records, const char *reason);
    void *discarded_arg;
    /** If not NULL: set (atomically, release) after each pass that stored
     *  something to the spool's size, where its last complete chunk ends, for
     *  a converter that follows it (ur_converter_follow). */
    uint64_t *spool_complete;
    /** If not NULL: called (from the collecting thread) after each pass that
     *  set spool_complete, with its value: a converter that follows the spool
     *  and pauses while nothing comes can be woken when something does. */
    void (*stored)(void *arg, uint64_t complete);
    void *stored_arg;
    /** If not NULL: the collector sleeps between passes on the doorbells of its
     *  rings (upti/ring.h, "Doorbell") and on this word, a futex private to the
     *  process, and its idle sleeps are longer: whoever needs a pass at once
     *  (wait_pid ended, stop set) calls ur_collect_wake(wake) after. NULL: it
     *  polls, and wait_pid's end ends a pause (its pidfd). */
    uint32_t *wake;
    /** If not NULL: called once every record is in the spool and the spool is
     *  closed, the losses said (discarded) and skipped set, from the collecting
     *  thread, before ur_collect unmaps the last rings and removes their files
     *  (which takes a while for big rings): a converter may read the whole
     *  spool from then on; the ring folder is as ur_collect leaves it only once
     *  it has returned. */
    void (*drained)(void *arg);
    void *drained_arg;
    /** 1: the rings still mapped when collecting ends stay mapped (their files
     *  are removed all the same), for a caller whose process ends soon: its
     *  exit unmaps them with one thread left, where an unmap while its other
     *  threads run has the kernel interrupt each CPU that runs them to flush
     *  its TLB (0.4 to 0.7 ms at the end of a short `upti run` on a 2-CPU
     *  guest). 0: unmapped before ur_collect returns. */
    int leave_mapped;
    /** If not NULL: called after a pass once every ring found so far was closed
     *  by its producer (upti/ring.h, UPTI_RING_STATE_CLOSED: its tool ended,
     *  before its process exits) and drained since (spool_complete covers it),
     *  or has ended: nothing more is expected unless a new process starts.
     *  Called again only after a ring that is not. From the collecting thread. */
    void (*closed)(void *arg);
    void *closed_arg;
} ur_collect_opts;

/** Ends the sleep of the collector whose ur_collect_opts.wake is word
 *  (async-signal-safe: a signal handler may call it). */
void ur_collect_wake(uint32_t *word);

/**
 * Drains ring files into the spool until every producer whose file it found
 * has ended (and wait_pid too), and its rings are empty. A spool that cannot
 * be written is reported once (uo_set_reporter: the program prints it) and
 * the rest is counted and discarded (opts->discarded): producers never wait
 * on it. A ring file that cannot be read is reported and skipped. Returns 0,
 * or 1 if the spool could not be closed cleanly (reported).
 */
int ur_collect(const ur_collect_opts *opts);

/**
 * Converts a spool into one database per traced process, named
 * <prefix>-<pid>.db; prints each path on stdout, and with stats a last line
 * "converted N records, D dropped, P processes". Returns 0 or 1.
 */
int ur_convert(const char *spool, const char *prefix, int stats);

/** Records a process lost because its collector could not store them (ur_collect_opts.discarded). */
typedef struct ur_loss {
    int64_t pid;
    uint64_t records;
} ur_loss;

/**
 * Adds records to pid's entry of the list (*list, *num of *cap), made if
 * missing; nothing for 0 records or when memory is short.
 */
void ur_loss_add(ur_loss **list, size_t *num, size_t *cap, int64_t pid, uint64_t records);

/** Whether a file name in a ring folder is a NAME + suffix (UPTI_RING_SUFFIX, ...) with a NAME. */
static inline int ur_name_has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && strcmp(name + n - k, suffix) == 0;
}

/** What ur_convert_with() does: ur_convert, and more. */
typedef struct ur_convert_opts {
    const char *spool;   /**< the spool file */
    const char *prefix;  /**< databases are <prefix>-<pid>.db */
    int stats;           /**< the closing "converted ..." line on stdout */
    int quiet;           /**< 1: do not print each database's path on stdout */
    /** Applied to every process's database (uo_db_set_kernel_filter), or NULL. */
    uo_kernel_filter_fn kernel_filter;
    void *kernel_filter_data;
    /** --kernel-iteration-range of every process's database (uo_db_set_kernel_iterations), or NULL. */
    const upti_iteration_range *kernel_iterations;
    /** Called once per database after it is closed: its path, its process,
     *  and complete = 1 (0: it could not be completed). NULL: none. */
    void (*converted)(void *arg, const char *db_path, int64_t pid, int complete);
    /** Called before converted, with the database's last connection, within
     *  its last transaction, once every row is in (uo_db_close_with): to read
     *  back and add to it without opening it again. Not called for a database
     *  that failed before. NULL: none. */
    void (*completing)(void *arg, sqlite3 *conn, const char *db_path, int64_t pid);
    void *arg;
    /** Records not stored, per process: each database says its sum
     *  (metadata records_not_stored). */
    const ur_loss *losses;
    size_t num_losses;
} ur_convert_opts;

/** ur_convert with options. Returns 0 or 1. */
int ur_convert_with(const ur_convert_opts *opts);

/**
 * A conversion that begins while the spool is still written (the collector
 * drains rings into it while the program runs), so that less is left to do
 * once the program ends: ur_converter_open, then ur_converter_follow as the
 * spool grows (from one thread, the same that finishes), then
 * ur_converter_finish once nothing more will be written, which converts the
 * rest and does all that ur_convert_with does at the end. The databases are
 * the same as ur_convert_with would make of the whole spool.
 */
typedef struct ur_converter ur_converter;

/** Opens opts->spool for converting (opts is copied; its losses are given at the finish).
 *  NULL if it cannot be opened (reported). */
ur_converter *ur_converter_open(const ur_convert_opts *opts);

/** Converts the chunks of the spool that end at or before file offset complete
 *  (ur_collect_opts.spool_complete: what its writer says is whole); a chunk
 *  that passes it waits for a later call. */
void ur_converter_follow(ur_converter *c, uint64_t complete);

/** ur_converter_follow once every producer closed its ring
 *  (ur_collect_opts.closed): a spool under UO_DB_SMALL_SOURCE_BYTES is converted
 *  too, not left to the finish, while the processes exit. The databases are
 *  those of the whole spool, but for a process that starts after it and makes
 *  the spool big: its database is sized by the spool when it starts. */
void ur_converter_follow_closed(ur_converter *c, uint64_t complete);

/** Converts the rest of the spool (to its end), closes every database and frees c:
 *  ur_convert_with's result, with losses as its opts would give them. */
int ur_converter_finish(ur_converter *c, const ur_loss *losses, size_t num_losses);

/** 1 if process pid is running and started at start_ticks (0: not checked). */
int ur_process_alive(int64_t pid, uint64_t start_ticks);

/** What the file at path (a forked child's claim, UPTI_RING_PENDING_SUFFIX) says:
 *  1 locked (its process may still make a ring file), 0 unlocked or gone
 *  (nothing more will come from it), -1 not a claim (not a regular file of this
 *  user: a FIFO, a link, another user's file), never waited for. Never blocks. */
int ur_claim_state(const char *path);

#endif
