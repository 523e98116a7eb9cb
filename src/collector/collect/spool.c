/* SPDX-License-Identifier: MIT */
/* The spool file: reading (scan), resuming (open) and appending chunks. */
#include "spool.h"

#include "private_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reading goes through one reused buffer, not a mapping of the whole spool:
 * every page of a fresh mapping costs a page fault (on some virtual machines
 * tens of microseconds each: a 128 MiB spool then costs more than its
 * conversion), while read() copies from the page cache into memory that stays
 * mapped. The buffer starts at READ_BLOCK and is filled READ_BLOCK at a time,
 * growing only for a bigger chunk: a buffer of 4 MiB filled whole had a short
 * process's 80 KiB spool fault in 20 fresh pages, and was a mapping of its own
 * to make and unmap. */
#define READ_BLOCK (64u << 10)

/* Fills buf[have..cap) from fd, buf[have] being at file offset at, reading
 * nothing at or past limit; the new have, or -1 on an error. */
static ssize_t fill(int fd, uint8_t *buf, size_t have, size_t cap, uint64_t at, uint64_t limit)
{
    if (at >= limit)
        return (ssize_t)have;
    if (cap - have > limit - at)
        cap = have + (size_t)(limit - at);
    while (have < cap) {
        ssize_t n = pread(fd, buf + have, cap - have, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        have += (size_t)n;
        at += (uint64_t)n;
    }
    return (ssize_t)have;
}

int ur_spool_read(int fd, ur_chunk_fn fn, void *arg, size_t *end)
{
    uint64_t e = 0;
    int rc = ur_spool_read_range(fd, 0, UINT64_MAX, fn, arg, &e, NULL);
    *end = (size_t)e;
    return rc;
}

void ur_spool_buffer_free(ur_spool_buffer *b)
{
    free(b->data);
    b->data = NULL;
    b->cap = 0;
}

/* How full a fill makes a buffer of cap bytes whose next chunk needs need. */
static size_t read_upto(size_t need, size_t cap)
{
    size_t upto = need > READ_BLOCK ? need : READ_BLOCK;
    return upto < cap ? upto : cap;
}

int ur_spool_read_range(int fd, uint64_t from, uint64_t limit, ur_chunk_fn fn, void *arg,
                        uint64_t *end, ur_spool_buffer *buffer)
{
    size_t magic = sizeof UR_SPOOL_MAGIC - 1;
    *end = from;
    if (limit == UINT64_MAX) {
        struct stat st;
        if (fstat(fd, &st) != 0)
            return -1;
        limit = (uint64_t)st.st_size; /* a chunk claiming more is incomplete */
    }
    if (from == 0 && limit < magic) {
        *end = 0;
        return 0;
    }
    if (limit < from)
        return -1;
    ur_spool_buffer own = {NULL, 0}, *b = buffer != NULL ? buffer : &own;
    if (b->data == NULL) {
        if ((b->data = malloc(READ_BLOCK)) == NULL)
            return -1;
        b->cap = READ_BLOCK;
    }
    uint8_t *buf = b->data;
    size_t cap = b->cap;
    int rc = 0;
    ssize_t got = fill(fd, buf, 0, read_upto(0, cap), from, limit);
    if (got < 0) {
        rc = -1;
        goto out;
    }
    size_t have = (size_t)got, at = 0; /* buf[at..have): not yet taken */
    uint64_t done = from;              /* file offset of buf[at] */
    if (from == 0) {
        if ((size_t)got < magic || memcmp(buf, UR_SPOOL_MAGIC, magic) != 0) {
            *end = 0; /* not a spool */
            goto out;
        }
        at = done = magic;
    }
    for (;;) {
        ur_chunk_t c;
        size_t need = sizeof c;
        if (have - at >= sizeof c) {
            memcpy(&c, buf + at, sizeof c);
            if (c.magic != UR_CHUNK_MAGIC || c.bytes % 8 != 0 || c.bytes > SIZE_MAX / 2)
                break;
            need = sizeof c + (size_t)c.bytes;
            if (need > limit - done)
                break; /* an incomplete last chunk, or a corrupt size */
            if (have - at >= need) {
                if (fn != NULL)
                    fn(arg, &c, buf + at + sizeof c);
                at += need;
                done += need;
                continue;
            }
        }
        if (done + (have - at) >= limit)
            break; /* an incomplete last chunk */
        /* Keep what is left at the front, make room for the whole chunk, read on. */
        memmove(buf, buf + at, have - at);
        have -= at;
        at = 0;
        if (need > cap) {
            uint8_t *nb = realloc(buf, need);
            if (nb == NULL) {
                rc = -1;
                break;
            }
            b->data = buf = nb;
            b->cap = cap = need;
        }
        got = fill(fd, buf, have, read_upto(need, cap), done + have, limit);
        if (got < 0) {
            rc = -1;
            break;
        }
        if ((size_t)got == have)
            break; /* the file ends before limit */
        have = (size_t)got;
    }
    *end = done;
out:
    if (b == &own)
        ur_spool_buffer_free(&own);
    return rc;
}

int ur_spool_open(const char *path, ur_chunk_fn fn, void *arg)
{
    /* Created new, or resumed: never through a symbolic link, only a regular
     * file of the caller (private_dir.h). */
    int fd = upti_open_file(path, O_RDWR | O_CREAT, 0600, 0);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0)
        goto fail;
    size_t keep = sizeof UR_SPOOL_MAGIC - 1;
    if (st.st_size == 0) {
        if (write(fd, UR_SPOOL_MAGIC, keep) != (ssize_t)keep)
            goto fail;
    } else {
        size_t end;
        if (ur_spool_read(fd, fn, arg, &end) != 0)
            goto fail; /* never cut a spool that could not be read whole */
        if (end == 0) {
            errno = EINVAL; /* not a spool */
            goto fail;
        }
        keep = end;
        if ((off_t)keep != st.st_size && ftruncate(fd, (off_t)keep) != 0)
            goto fail;
    }
    if (lseek(fd, (off_t)keep, SEEK_SET) < 0)
        goto fail;
    return fd;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* A piece could not be read (EFAULT: a ring file cut short under the mapping it is
 * written from): the `written` bytes of the chunk already in the spool are taken out
 * again, so that the spool stays whole for the next chunk (the spool is written only at
 * its end: the position is there). -1, errno EFAULT; EIO if they could not be taken out
 * (then the spool cannot take another chunk). */
static int unwrite(int fd, size_t written)
{
    off_t end = lseek(fd, 0, SEEK_CUR);
    if (end < (off_t)written || ftruncate(fd, end - (off_t)written) != 0 ||
        lseek(fd, end - (off_t)written, SEEK_SET) < 0) {
        errno = EIO;
        return -1;
    }
    errno = EFAULT;
    return -1;
}

int ur_spool_append(int fd, const ur_chunk_t *c, const struct iovec *pieces, int n)
{
    struct iovec iov[4];
    iov[0] = (struct iovec){(void *)c, sizeof *c};
    size_t total = sizeof *c;
    for (int i = 0; i < n && i < 3; i++) {
        iov[i + 1] = pieces[i];
        total += pieces[i].iov_len;
    }
    int cnt = 1 + (n < 3 ? n : 3);
    /* writev may write less (a signal, a full disk): finish the rest. */
    ssize_t w = writev(fd, iov, cnt);
    if (w == (ssize_t)total)
        return 0;
    if (w < 0)
        return errno == EFAULT ? unwrite(fd, 0) : -1;
    size_t written = (size_t)w, done = written;
    for (int i = 0; i < cnt; i++) {
        if (done >= iov[i].iov_len) {
            done -= iov[i].iov_len;
            continue;
        }
        const char *p = (const char *)iov[i].iov_base + done;
        size_t left = iov[i].iov_len - done;
        done = 0;
        while (left > 0) {
            ssize_t k = write(fd, p, left);
            if (k < 0) {
                if (errno == EINTR)
                    continue;
                return errno == EFAULT ? unwrite(fd, written) : -1;
            }
            p += k;
            left -= (size_t)k;
            written += (size_t)k;
        }
    }
    return 0;
}
