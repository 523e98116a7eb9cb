/* SPDX-License-Identifier: MIT */
/* The spool: the collector's own file of what it drained, in chunks.
 *
 *   file   = UR_SPOOL_MAGIC (8 bytes), then chunks
 *   chunk  = ur_chunk_t (64 bytes), then `bytes` bytes of payload (a multiple of 8)
 *
 * A chunk is complete when its header and its whole payload are in the file;
 * a collector killed while appending leaves an incomplete last chunk, which
 * the next one cuts off (ur_spool_open). Chunks of one ring slot are in
 * position order; DATA chunks of a slot never overlap.
 */
#ifndef UPTI_COLLECTOR_SPOOL_H
#define UPTI_COLLECTOR_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define UR_SPOOL_MAGIC "UPTISPL1"
#define UR_CHUNK_MAGIC 0x4b4e4843u /* "CHNK" */

enum {
    UR_CHUNK_PROCESS = 1, /**< payload: the ring file's upti_ring_header_t, once per ring uid */
    UR_CHUNK_DATA = 2,    /**< payload: slot's records [pos_begin, pos_end), as in the ring */
    UR_CHUNK_DROPS = 3,   /**< no payload: dropped = the slot's count so far (slot UR_NO_SLOT:
                               the header's no_slot_drops) */
    UR_CHUNK_WAITS = 4,   /**< no payload: the slot's waits for room so far (pos_begin: how
                               many, pos_end: ns in all, dropped: ns of those after the
                               room was made; 0 in a spool or ring older than that count:
                               all for room), written when its ring is closed */
};
#define UR_NO_SLOT 0xffffffffu

typedef struct ur_chunk_t {
    uint32_t magic;     /**< UR_CHUNK_MAGIC */
    uint32_t type;      /**< UR_CHUNK_* */
    uint64_t bytes;     /**< payload bytes after this header */
    uint64_t ring_uid;  /**< the ring file's header uid */
    uint32_t slot;
    uint32_t reserved;
    uint64_t pos_begin, pos_end; /**< DATA: ring positions of the payload */
    uint64_t dropped;   /**< DATA and DROPS: the slot's drop count when read */
    uint64_t producer_base; /**< DATA: the producer's address of the slot's data */
} ur_chunk_t;
_Static_assert(sizeof(ur_chunk_t) == 64, "chunk header size");

/** What ur_spool_read calls for each complete chunk; payload is valid only during the call. */
typedef void (*ur_chunk_fn)(void *arg, const ur_chunk_t *c, const uint8_t *payload);
/**
 * Reads the spool from its start to its end, calling fn (if not NULL) for
 * each complete chunk. *end receives the bytes of the magic and the complete
 * chunks (where an incomplete or corrupt last chunk begins), 0 if fd holds no
 * spool. Returns 0, or -1 with errno set when the file could not be read
 * (then *end is only how far it got and must not be used to cut it).
 */
int ur_spool_read(int fd, ur_chunk_fn fn, void *arg, size_t *end);

/** A read buffer kept between calls of ur_spool_read_range (zeroed: none yet). */
typedef struct ur_spool_buffer {
    uint8_t *data;
    size_t cap;
} ur_spool_buffer;

/** Frees b's memory (b stays usable). */
void ur_spool_buffer_free(ur_spool_buffer *b);

/**
 * ur_spool_read from file offset `from` (0: the start, where the magic is
 * checked; else where a complete chunk ended) up to `limit` (UINT64_MAX: the
 * file's size), nothing past it read: a spool still being written is read up
 * to what its writer says is complete. *end: where the last complete chunk
 * ends (from if none; 0 if from is 0 and fd holds no spool). buffer (NULL:
 * one for this call) is reused across calls.
 */
int ur_spool_read_range(int fd, uint64_t from, uint64_t limit, ur_chunk_fn fn, void *arg,
                        uint64_t *end, ur_spool_buffer *buffer);

/**
 * Opens (creating) the spool for appending: an incomplete last chunk is cut
 * off, and fn (if not NULL) sees each complete chunk. Returns the fd or -1.
 */
int ur_spool_open(const char *path, ur_chunk_fn fn, void *arg);

/** Appends one chunk (header then the pieces). Returns 0 or -1 (errno). With errno
 *  EFAULT (a piece could not be read) the spool is left as it was before the call. */
int ur_spool_append(int fd, const ur_chunk_t *c, const struct iovec *pieces, int n);

#endif
