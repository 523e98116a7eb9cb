/* SPDX-License-Identifier: MIT */
/* See ring_room.h. */
#include "ring_room.h"

#include <upti/ring.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define PAGE 4096u
/* Slots are not made smaller than this before there are fewer of them: a
 * record may take half a slot, and the bundled tool's records reach 4 KiB. */
#define SMALL_SLOT ((size_t)16 << 10)

size_t upti_ring_data_start(uint32_t slots)
{
    size_t blocks = ((size_t)slots * UPTI_RING_SLOT_BYTES + PAGE - 1) & ~(size_t)(PAGE - 1);
    return UPTI_RING_HEADER_BYTES + blocks;
}

size_t upti_ring_file_bytes(uint32_t slots, size_t slot_size)
{
    return upti_ring_data_start(slots) + (size_t)slots * slot_size;
}

/* The most slots of slot_size that fit in budget (0 if not one). */
static uint32_t slots_that_fit(uint32_t slots, size_t slot_size, size_t budget)
{
    if (budget < UPTI_RING_HEADER_BYTES + PAGE)
        return 0;
    /* An estimate from above, then down to what fits with the blocks' page rounding. */
    size_t n = (budget - UPTI_RING_HEADER_BYTES) / (slot_size + UPTI_RING_SLOT_BYTES);
    if (n > slots)
        n = slots;
    while (n > 0 && upti_ring_file_bytes((uint32_t)n, slot_size) > budget)
        n--;
    return (uint32_t)n;
}

bool upti_ring_room_fit(uint32_t *slots, size_t *slot_size, size_t budget)
{
    size_t floor = *slot_size < SMALL_SLOT ? *slot_size : SMALL_SLOT;
    while (*slot_size > floor && upti_ring_file_bytes(*slots, *slot_size) > budget)
        *slot_size >>= 1;
    if (upti_ring_file_bytes(*slots, *slot_size) <= budget)
        return true;
    uint32_t n = slots_that_fit(*slots, *slot_size, budget);
    if (n > 0) {
        *slots = n;
        return true;
    }
    *slots = 1;
    while (*slot_size > PAGE && upti_ring_file_bytes(1, *slot_size) > budget)
        *slot_size >>= 1;
    return upti_ring_file_bytes(1, *slot_size) <= budget;
}

/* Bytes of address space this process maps now (/proc/self/statm, first field). */
static size_t address_space_used(void)
{
    FILE *f = fopen("/proc/self/statm", "re");
    unsigned long pages = 0;
    if (f != NULL) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

size_t upti_ring_room_budget(const char *dir, char *why, size_t cap)
{
    size_t budget = SIZE_MAX;
    why[0] = '\0';
    struct statvfs fs;
    /* f_blocks 0: a tmpfs without a size limit. */
    if (statvfs(dir, &fs) == 0 && fs.f_blocks != 0) {
        size_t free_bytes = (size_t)fs.f_bavail * (size_t)fs.f_frsize;
        budget = free_bytes / 2;
        snprintf(why, cap, "%s has %.1f MiB free", dir, (double)free_bytes / (1 << 20));
    }
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        size_t used = address_space_used();
        size_t left = (size_t)as.rlim_cur > used ? (size_t)as.rlim_cur - used : 0;
        if (left / 2 < budget) {
            budget = left / 2;
            snprintf(why, cap, "%.1f MiB of address space are left (ulimit -v)",
                     (double)left / (1 << 20));
        }
    }
    return budget;
}

int upti_ring_room_reserve_fd(int fd, off_t off, size_t len)
{
    return posix_fallocate(fd, off, (off_t)len);
}

int upti_ring_room_reserve(const char *path, dev_t dev, ino_t ino, off_t off, size_t len)
{
    /* A descriptor of its own: the program may close or reuse any other. */
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno;
    struct stat st;
    int e = fstat(fd, &st) != 0 ? errno : st.st_dev != dev || st.st_ino != ino ? ESTALE : 0;
    if (e == 0)
        e = upti_ring_room_reserve_fd(fd, off, len);
    close(fd);
    return e;
}
