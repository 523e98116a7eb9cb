/* SPDX-License-Identifier: MIT */
/* Internal: room for a shared buffer's ring file (shared_buffer.c).
 *
 * A ring file is sparse: its pages get storage when first written. On a full
 * tmpfs (a container's 64 MiB /dev/shm) that first write would be a SIGBUS in
 * the traced program. So a ring file is sized at creation to what its folder
 * and the address space can give, and every part of it is given storage
 * before anything is written there: the header and control blocks when the
 * file is created, a slot's data when a thread claims the slot. Where storage
 * cannot be had, the slot is not used and its records are dropped, counted.
 */
#ifndef UPTI_SDK_RING_ROOM_H
#define UPTI_SDK_RING_ROOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** Where the slots' data starts in a ring file of slots slots: after the header
 *  and the slots' control blocks, rounded up to a page. */
size_t upti_ring_data_start(uint32_t slots);

/** Bytes of a ring file of slots slots of slot_size data bytes each. */
size_t upti_ring_file_bytes(uint32_t slots, size_t slot_size);

/**
 * Shrinks *slots and *slot_size until the file takes at most budget bytes:
 * first smaller slots (halved, not below 16 KiB unless asked smaller), then
 * fewer slots, then slots below 16 KiB (not below 4 KiB). Returns false if
 * the file still does not fit (it then has one slot of 4 KiB).
 */
bool upti_ring_room_fit(uint32_t *slots, size_t *slot_size, size_t budget);

/**
 * What a ring file in folder dir may take: half the space free on dir's file
 * system and half the address space this process has left (RLIMIT_AS);
 * SIZE_MAX where neither is limited. why[0..cap) says which limit holds (for
 * the line that says what was chosen).
 */
size_t upti_ring_room_budget(const char *dir, char *why, size_t cap);

/**
 * Gives bytes [off, off + len) of the ring file open as fd storage now
 * (posix_fallocate), so that no write to them through a mapping can fault for
 * want of it. Pages are only allocated, not mapped: the program's resident
 * memory grows only with the pages it writes. 0, or an errno (ENOSPC: no room).
 */
int upti_ring_room_reserve_fd(int fd, off_t off, size_t len);

/** The same through the file's path (opened anew, checked to be the file of device dev
 *  and inode ino: the program may have closed or reused the descriptor UPTI had). */
int upti_ring_room_reserve(const char *path, dev_t dev, ino_t ino, off_t off, size_t len);

#endif
