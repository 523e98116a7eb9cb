/* SPDX-License-Identifier: MIT */
/* Internal: folders and files that no other user can read, forge, redirect or
 * replace (docs/reliability.md, "Shared machines").
 *
 * A folder UPTI creates, is given or recovers (a ring folder, a run folder)
 * must be owned by the caller and writable by nobody else: in a folder another
 * user owns or may write, that user could remove the rings, put forged ones in,
 * or plant symbolic links where UPTI creates its files. Every file UPTI opens in
 * such a folder is opened relative to the folder's descriptor (openat), never
 * through a symbolic link (O_NOFOLLOW), and created with O_EXCL. */
#ifndef UPTI_COMMON_PRIVATE_DIR_H
#define UPTI_COMMON_PRIVATE_DIR_H

#include <stddef.h>
#include <sys/types.h>

/**
 * Opens the folder path (O_DIRECTORY) and checks that it is owned by the
 * caller (effective uid) and not writable by group or others, and, if path
 * itself is a symbolic link, that the link is the caller's too. Returns the
 * folder's descriptor (close-on-exec), or -1 with errno and, in why, the
 * reason for a message ("PATH is owned by user NAME (uid N), not by you").
 */
int upti_open_private_dir(const char *path, char *why, size_t why_len);

/**
 * Where a traced program creates its ring files: a private folder
 * (upti_open_private_dir), or a folder of root's with the sticky bit, where
 * nobody else may remove or rename the caller's files (/dev/shm, /tmp: the
 * default). 0, or -1 with errno and the reason in why.
 */
int upti_check_ring_folder(const char *path, char *why, size_t why_len);

/** The same check on a folder already open: 0, or -1 with the reason in why. */
int upti_check_private_dir(int dirfd, const char *path, char *why, size_t why_len);

/**
 * Opens the file name in the folder dirfd (a single name, no '/') without
 * following a symbolic link. With O_CREAT in flags: created with O_EXCL
 * (mode); if it exists already and exclusive is 0, the existing one is opened
 * instead, provided it is a regular file of the caller with one link. Without
 * O_CREAT: the file must be a regular file of the caller. Returns the
 * descriptor (close-on-exec) or -1 with errno (ELOOP: a symbolic link;
 * EPERM: not a regular file of the caller with one link).
 */
int upti_open_in_dir(int dirfd, const char *name, int flags, mode_t mode, int exclusive);

/**
 * upti_open_in_dir() on a path: its folder is opened (O_DIRECTORY) and the
 * last component opened in it.
 */
int upti_open_file(const char *path, int flags, mode_t mode, int exclusive);

#endif
