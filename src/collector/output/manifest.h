/* SPDX-License-Identifier: MIT */
/* Internal: the run manifest (manifest.c): a private, unlinked file of
 * `upti run` and `upti recover` (run_outputs.c), to which their writers append
 * records, each one write(2) of NUL-terminated fields (any path, newlines
 * included, is one field):
 *   "db"    PID DATABASE BASE FORMATS   a process claimed its database
 *                                       (FORMATS: UO_FORMAT_* bits, decimal)
 *   "wrote" PATH                        an output file is complete
 *   "done"  DATABASE                    its process wrote all its outputs
 *   "tally" PID RECEIVED WRITTEN FILTERED ERROR
 *                                       the database could not be written:
 *                                       buffer records received, those the
 *                                       file holds, those filtered, and why
 * ("db", "done" and "tally" came from the bundled tool's database writer in
 * the program, which is gone: the program only records.) upti reads it once
 * the program has ended. */
#ifndef UPTI_OUTPUT_MANIFEST_H
#define UPTI_OUTPUT_MANIFEST_H

#include <stddef.h>

/** Appends one record of n fields to the manifest (nothing without one). 0 or -1. */
int uo_manifest_add(const char *const *fields, size_t n);
/** Records go to fd (upti's own manifest, an unlinked file: none is left behind when
 *  upti is killed); -1 ends that. */
void uo_manifest_set_fd(int fd);
/** Appends ("wrote", path): called by every writer once path is complete.
 *  Without a manifest, after uo_say_written(): says "upti: wrote PATH" on
 *  stderr instead (the commands that write files themselves). */
void uo_note_written(const char *path);
/** From now on, uo_note_written says each path on stderr where there is no
 *  manifest (upti export, merge, stats -o: every command says what it wrote). */
void uo_say_written(void);
/** Writes "PREFIX PATH\n" on stderr, PATH with control bytes escaped. */
void uo_say_path(const char *prefix, const char *path);

#endif
