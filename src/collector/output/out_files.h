/* SPDX-License-Identifier: MIT */
/* Internal: how UPTI writes and replaces its output files (out_files.c,
 * part_file.c, writer_lock.c). Nothing an output writer does may destroy a
 * file UPTI did not write, nor leave a half-written file under a final name. */
#ifndef UPTI_OUTPUT_OUT_FILES_H
#define UPTI_OUTPUT_OUT_FILES_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/** SQLite's PRAGMA application_id of every database UPTI writes ("UPTI"). */
#define UO_APPLICATION_ID 0x55505449
#define UO_APPLICATION_ID_SQL "1431327817"

/** The first bytes of every Chrome JSON trace UPTI writes. */
#define UO_JSON_HEAD "{\"otherData\":{\"writer\":\"upti\"},\"traceEvents\":[\n"

/**
 * 1 if the file at path may be replaced by an output of UPTI: it does not
 * exist, is an empty regular file, or is a regular file UPTI wrote (a
 * database with UPTI's application_id, or an older one whose metadata names
 * UPTI as its writer; a JSON trace starting with UO_JSON_HEAD; a Perfetto
 * trace starting with UPTI's first packet; a CSV with one of UPTI's headers;
 * what `upti stats` writes: its reports as a table, CSV or JSON, or the
 * summary of upti 0.2 and earlier).
 * 0 otherwise (a symbolic link, another program's file).
 */
int uo_file_is_replaceable(const char *path);

/** 1 when UPTI_TRACE_FORCE_OVERWRITE=1 (upti run --force-overwrite): any regular file is replaced. */
int uo_force_overwrite(void);

/**
 * Checks every file that the formats (UO_FORMAT_* bits except db) would
 * write for base. Returns 1 if all may be replaced (or force), else 0 with
 * the first refused path in which.
 */
int uo_outputs_replaceable(const char *base, unsigned formats, char *which, size_t len);

/** The CSV files' suffixes ("api_trace", ...), NULL past the last; *n of them. */
const char *uo_csv_suffix(size_t i);


/** path + ".part" (malloc'd): where a writer writes before renaming to path. */
char *uo_part_path(const char *path);
/**
 * Creates path's part file (uo_fopen_new with mode): the stream, and in *part its
 * path (malloc'd); NULL after a message in err ("cannot write ..."), *part NULL.
 */
FILE *uo_part_open(const char *path, const char *mode, char **part, char *err, size_t errlen);
/**
 * Ends a write of path through part: rename(part, path) when ok, else unlink
 * part. Returns 0, or -1 with a message in err (part unlinked).
 */
int uo_part_finish(const char *part, const char *path, int ok, char *err, size_t errlen);

/**
 * Claims <*base><suffix> as the database of process pid: created
 * exclusively, or an earlier run's leftover that UPTI wrote, and flock()ed
 * (LOCK_EX) until the returned descriptor is closed. A file held by a live
 * writer, left by another process of the same run (its metadata "session"
 * equals session), written by another run since this session started (several
 * runs at once with one output name; reported once), or not written by UPTI
 * (reported once: uo_set_reporter) is kept: "-<pid>" is appended to *base
 * (reallocated) instead. Parent folders are
 * created. Returns the locked descriptor, or -1 with errno set.
 */
int uo_claim_output(char **base, const char *suffix, const char *session, int pid);

/** The longest file name an output's base may have: NAME_MAX less what
 *  upti appends to it ("-<pid>", the longest extension, ".part"). */
#define UO_BASE_NAME_MAX (255 - 48)
/**
 * Shortens base's last component to its first UO_BASE_NAME_MAX bytes (cut
 * before a UTF-8 continuation byte) when it is longer: a name the file system
 * refuses (ENAMETOOLONG) would never be written, by this run or a recovery.
 * Returns 1 if it was shortened.
 */
int uo_shorten_base(char *base);

/** Where outputs go when base's folder cannot be written: $TMPDIR (else /tmp)
 *  plus base's last component. malloc'd; NULL if base is already there. */
char *uo_fallback_base(const char *base);

/**
 * The pid of another process writing the database at path (it holds an
 * exclusive flock() on it: the tool's claim), or 0.
 */
pid_t uo_writer_pid(const char *path);

#endif
