/* SPDX-License-Identifier: MIT */
/* src/collector/collect/spool.c: the collector's spool is read in blocks, not mapped.
 * Exact chunk counts and payloads across block boundaries, a chunk larger than
 * the read block, read in ranges (as a converter that follows it), an incomplete last chunk (cut off by ur_spool_open, never
 * by a read that failed), a file that is not a spool, and appending after a
 * reopen. */
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

struct seen {
    unsigned chunks;
    uint64_t payload_bytes;
    uint64_t last_pos_end;
    int payload_ok;
};

static void on_chunk(void *arg, const ur_chunk_t *c, const uint8_t *payload)
{
    struct seen *s = arg;
    s->chunks++;
    s->payload_bytes += c->bytes;
    s->last_pos_end = c->pos_end;
    /* every payload byte is its chunk's slot number */
    for (uint64_t i = 0; i < c->bytes; i++)
        if (payload[i] != (uint8_t)c->slot)
            s->payload_ok = 0;
}

static int append(int fd, uint32_t slot, size_t bytes, uint64_t pos)
{
    ur_chunk_t c = {.magic = UR_CHUNK_MAGIC, .type = UR_CHUNK_DATA, .bytes = bytes,
                    .ring_uid = 7, .slot = slot, .pos_begin = pos, .pos_end = pos + bytes};
    uint8_t *p = malloc(bytes ? bytes : 1);
    memset(p, (int)(uint8_t)slot, bytes);
    struct iovec iov = {p, bytes};
    int rc = ur_spool_append(fd, &c, &iov, bytes ? 1 : 0);
    free(p);
    return rc;
}

/* Reads the spool at path whole: what on_chunk saw into *s (reset first), where its last
 * whole chunk ends into *end. ur_spool_read's status. */
static int read_back(const char *path, struct seen *s, size_t *end)
{
    memset(s, 0, sizeof *s);
    s->payload_ok = 1;
    int fd = open(path, O_RDONLY);
    int rc = ur_spool_read(fd, on_chunk, s, end);
    close(fd);
    return rc;
}

static off_t size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

UNIT_TEST(spool)
{
    char dir[] = "/tmp/upti-spool-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/spool", dir);

    /* 1000 chunks of 40 KiB cross many 64 KiB reads; one of 9 MiB is bigger than a read. */
    int fd = ur_spool_open(path, NULL, NULL);
    CHECK(fd >= 0);
    uint64_t pos = 0, want_bytes = 0;
    for (unsigned i = 0; i < 1000; i++) {
        size_t b = (i == 500) ? (9u << 20) : 40960 + 8 * (i % 7);
        CHECK(append(fd, i % 200, b, pos) == 0);
        pos += b;
        want_bytes += b;
    }
    close(fd);
    off_t whole = size_of(path);
    CHECK_EQ_U64((uint64_t)whole, 8 + 1000 * 64 + want_bytes);

    struct seen s;
    size_t end = 0;
    CHECK(read_back(path, &s, &end) == 0);
    CHECK_EQ_U64(s.chunks, 1000);
    CHECK_EQ_U64(s.payload_bytes, want_bytes);
    CHECK_EQ_U64(s.last_pos_end, pos);
    CHECK(s.payload_ok);
    CHECK_EQ_U64(end, (uint64_t)whole);

    /* Read in ranges, as a converter that follows the spool reads it: each stops
     * before the first chunk that passes its limit and the next goes on from
     * there; together they see every chunk once, in order. A small buffer
     * grows for the 9 MiB chunk and is kept. */
    memset(&s, 0, sizeof s);
    s.payload_ok = 1;
    fd = open(path, O_RDONLY);
    ur_spool_buffer buffer = {malloc(4096), 4096};
    uint64_t at = 0, step = 1000003, ranges = 0, limit = 0;
    int edges_ok = 1;
    while (at < (uint64_t)whole) {
        limit = limit + step < (uint64_t)whole ? limit + step : (uint64_t)whole;
        uint64_t got = 0, was = at;
        CHECK(ur_spool_read_range(fd, at, limit, on_chunk, &s, &got, &buffer) == 0);
        /* got: a chunk's end at or below limit (the magic's for the first) */
        edges_ok &= got >= was && got <= limit && (got == was || got >= 8);
        at = got;
        ranges++;
    }
    close(fd);
    CHECK(edges_ok);
    CHECK_EQ_U64(s.chunks, 1000);
    CHECK_EQ_U64(s.payload_bytes, want_bytes);
    CHECK_EQ_U64(s.last_pos_end, pos);
    CHECK(s.payload_ok);
    CHECK_EQ_U64(at, (uint64_t)whole);
    CHECK(ranges > 10);
    CHECK(buffer.cap >= (9u << 20) + 64);
    ur_spool_buffer_free(&buffer);
    CHECK(buffer.data == NULL && buffer.cap == 0);
    /* A limit inside the first chunk: only the magic; below the magic: nothing. */
    fd = open(path, O_RDONLY);
    uint64_t got = 99;
    CHECK(ur_spool_read_range(fd, 0, 8 + 63, on_chunk, &s, &got, NULL) == 0);
    CHECK_EQ_U64(got, 8);
    CHECK(ur_spool_read_range(fd, 0, 5, on_chunk, &s, &got, NULL) == 0);
    CHECK_EQ_U64(got, 0);
    close(fd);
    CHECK_EQ_U64(s.chunks, 1000);

    /* An incomplete last chunk: its header promises more than the file holds. */
    fd = open(path, O_WRONLY | O_APPEND);
    ur_chunk_t cut = {.magic = UR_CHUNK_MAGIC, .type = UR_CHUNK_DATA, .bytes = 4096, .slot = 1};
    CHECK(write(fd, &cut, sizeof cut) == (ssize_t)sizeof cut);
    CHECK(write(fd, "partial!", 8) == 8);
    close(fd);
    CHECK_EQ_U64((uint64_t)size_of(path), (uint64_t)whole + 72);
    CHECK(read_back(path, &s, &end) == 0);
    CHECK_EQ_U64(s.chunks, 1000);
    CHECK_EQ_U64(end, (uint64_t)whole);
    CHECK_EQ_U64((uint64_t)size_of(path), (uint64_t)whole + 72); /* reading never cuts */

    /* Reopening for append cuts the incomplete chunk and appends after the last whole one. */
    memset(&s, 0, sizeof s);
    s.payload_ok = 1;
    fd = ur_spool_open(path, on_chunk, &s);
    CHECK(fd >= 0);
    CHECK_EQ_U64(s.chunks, 1000);
    CHECK_EQ_U64((uint64_t)size_of(path), (uint64_t)whole);
    CHECK(append(fd, 3, 16, pos) == 0);
    close(fd);
    CHECK(read_back(path, &s, &end) == 0);
    CHECK_EQ_U64(s.chunks, 1001);
    CHECK_EQ_U64(s.last_pos_end, pos + 16);
    CHECK(s.payload_ok);

    /* A piece that cannot be read (a ring file cut short under its mapping: EFAULT from
     * writev, or from the write of the rest after a partial one): -1, errno EFAULT, and the
     * spool as it was, so that the next chunk follows the last whole one. */
    char ringpath[256];
    snprintf(ringpath, sizeof ringpath, "%s/cut.upti-ring", dir);
    int ring = open(ringpath, O_CREAT | O_RDWR, 0600);
    CHECK(ring >= 0 && ftruncate(ring, 3 * 4096) == 0);
    uint8_t *ringmap = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ring, 0);
    CHECK(ringmap != MAP_FAILED);
    memset(ringmap, 3, 3 * 4096);
    CHECK(ftruncate(ring, 4096) == 0); /* the last two pages are gone */
    fd = ur_spool_open(path, NULL, NULL);
    CHECK(fd >= 0);
    for (int partial = 0; partial < 2; partial++) {
        /* partial 0: the only piece starts in the cut pages; 1: the first page is written
         * before the fault, then taken out again. */
        struct iovec piece = {ringmap + (partial ? 0 : 4096), 2 * 4096};
        ur_chunk_t c = {UR_CHUNK_MAGIC, UR_CHUNK_DATA, 2 * 4096, 1, 3, 0, pos, pos + 2 * 4096, 0, 0};
        errno = 0;
        CHECK(ur_spool_append(fd, &c, &piece, 1) == -1);
        CHECK(errno == EFAULT);
        CHECK_EQ_U64((uint64_t)size_of(path), (uint64_t)whole + 64 + 16);
    }
    CHECK(append(fd, 3, 16, pos + 16) == 0);
    close(fd);
    munmap(ringmap, 3 * 4096);
    close(ring);
    unlink(ringpath);
    CHECK(read_back(path, &s, &end) == 0);
    CHECK_EQ_U64(s.chunks, 1002);
    CHECK_EQ_U64(s.last_pos_end, pos + 32);
    CHECK(s.payload_ok);
    CHECK_EQ_U64(end, (uint64_t)whole + 2 * (64 + 16));

    /* A file that is not a spool: *end is 0, and ur_spool_open refuses it untouched. */
    char other[256];
    snprintf(other, sizeof other, "%s/notes.txt", dir);
    fd = open(other, O_CREAT | O_WRONLY, 0644);
    CHECK(write(fd, "my own data, not a spool\n", 25) == 25);
    close(fd);
    fd = open(other, O_RDONLY);
    CHECK(ur_spool_read(fd, on_chunk, &s, &end) == 0);
    close(fd);
    CHECK_EQ_U64(end, 0);
    errno = 0;
    CHECK(ur_spool_open(other, NULL, NULL) == -1);
    CHECK(errno == EINVAL);
    CHECK_EQ_U64((uint64_t)size_of(other), 25);

    /* A descriptor that cannot be read is an error, not an empty spool. */
    fd = open(path, O_WRONLY);
    CHECK(ur_spool_read(fd, NULL, NULL, &end) == -1);
    close(fd);

    unlink(path);
    unlink(other);
    rmdir(dir);
    return test_failures != 0;
}
