/* SPDX-License-Identifier: MIT */
/* Internal: a file's last close handed to a process of its own.
 *
 * Removing a large file frees its pages in the last close of its last name:
 * for the spool of a 2 M-call run (103 MB on ext4), 9 to 14 ms in unlink(),
 * the last step of `upti run`, after the trace is in place. A keeper is a
 * small process, upti's own executable started under another name, that takes
 * over a descriptor of a file already unlinked and closes it as it exits:
 * the pages are freed while upti's own exit goes on. The keeper holds nothing
 * else (its standard input is the pipe that releases it, every other
 * descriptor closed) and runs in a session of its own (no signal from the
 * terminal reaches it). Nothing depends on it: where it cannot be started,
 * the caller's close frees the pages, as before. */
#ifndef UPTI_COMMON_FILE_KEEPER_H
#define UPTI_COMMON_FILE_KEEPER_H

#include <sys/types.h>

/** argv[0] under which an executable runs as a keeper: its main() calls
 *  upti_file_keeper_main() when it finds this name. */
#define UPTI_FILE_KEEPER_ARGV0 "upti-file-keeper"
/** The descriptor the keeper holds the file under. */
#define UPTI_FILE_KEEPER_FD 3

/**
 * Starts exe (NULL: /proc/self/exe) as a keeper of fd: its descriptor
 * UPTI_FILE_KEEPER_FD is a copy of fd, and it exits once every copy of the
 * descriptor put in *release is closed. The caller keeps fd (its to close) and
 * is not to wait for the keeper (an orphan once the caller exits, reaped by
 * init). Returns the keeper's pid, or -1 with errno (fd and *release then
 * untouched: nothing was started).
 */
pid_t upti_file_keeper_start(const char *exe, int fd, int *release);

/**
 * Closes fd and hands the last close of the file to a keeper: fd must be the
 * caller's last descriptor of a file with no name left (unlinked). Where no
 * keeper can be started, the close is the caller's.
 */
void upti_file_keeper_close(int fd);

/** The keeper's whole work: waits for the end of its standard input, then
 *  returns 0 (the exit closes the file). */
int upti_file_keeper_main(void);

#endif
