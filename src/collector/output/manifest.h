/* SPDX-License-Identifier: MIT */
/* Internal: the run manifest (manifest.c). `upti run` names a private file
 * in UPTI_TRACE_MANIFEST; every traced process appends records to it, each
 * one write(2) of NUL-terminated fields (any path, newlines included, is one
 * field):
 *   "db"    PID DATABASE BASE FORMATS   a process claimed its database
 *                                       (FORMATS: UO_FORMAT_* bits, decimal)
 *   "wrote" PATH                        an output file is complete
 *   "done"  DATABASE                    its process wrote all its outputs
 *   "tally" PID RECEIVED WRITTEN FILTERED ERROR
 *                                       the database could not be written:
 *                                       buffer records received, those the
 *                                       file holds, those filtered, and why
 * `upti run` reads it once the program has ended (run_outputs.c). */
#ifndef UPTI_OUTPUT_MANIFEST_H
#define UPTI_OUTPUT_MANIFEST_H

#include <stddef.h>

/** Appends one record of n fields to $UPTI_TRACE_MANIFEST (nothing when unset). 0 or -1. */
int uo_manifest_add(const char *const *fields, size_t n);
/** From now on records go to fd (upti's own manifest, an unlinked file: none is left
 *  behind when upti is killed), not to $UPTI_TRACE_MANIFEST; -1 ends that. */
void uo_manifest_set_fd(int fd);
/** Appends ("wrote", path): called by every writer once path is complete. */
void uo_note_written(const char *path);

#endif
