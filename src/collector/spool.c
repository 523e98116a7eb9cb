/* The spool file: reading (scan), resuming (open) and appending chunks. */
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

size_t ur_spool_scan(const uint8_t *data, size_t len, ur_chunk_fn fn, void *arg)
{
    size_t off = sizeof UR_SPOOL_MAGIC - 1;
    if (len < off || memcmp(data, UR_SPOOL_MAGIC, off) != 0)
        return 0;
    while (len - off >= sizeof(ur_chunk_t)) {
        ur_chunk_t c;
        memcpy(&c, data + off, sizeof c);
        if (c.magic != UR_CHUNK_MAGIC || c.bytes % 8 != 0 ||
            c.bytes > len - off - sizeof c)
            break;
        if (fn != NULL)
            fn(arg, &c, data + off + sizeof c);
        off += sizeof c + c.bytes;
    }
    return off;
}

int ur_spool_open(const char *path, ur_chunk_fn fn, void *arg)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
            goto fail;
        size_t end = ur_spool_scan(map, (size_t)st.st_size, fn, arg);
        munmap(map, (size_t)st.st_size);
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
        return -1;
    size_t done = (size_t)w;
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
                return -1;
            }
            p += k;
            left -= (size_t)k;
        }
    }
    return 0;
}
