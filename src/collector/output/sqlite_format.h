/* SPDX-License-Identifier: MIT */
/* Internal: SQLite's file format, what table_pages.c and index_pages.c write
 * (https://www.sqlite.org/fileformat2.html): its integers, its record
 * serial types, its b-tree page types, and the file the pages go to. */
#ifndef UPTI_OUTPUT_SQLITE_FORMAT_H
#define UPTI_OUTPUT_SQLITE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    SQLF_INTERIOR_INDEX = 2,
    SQLF_INTERIOR_TABLE = 5,
    SQLF_LEAF_INDEX = 10,
    SQLF_LEAF_TABLE = 13,
    SQLF_LEAF_HEADER = 8,      /* bytes of a leaf page's header */
    SQLF_INTERIOR_HEADER = 12, /* an interior page's, with its right-most child */
    SQLF_DB_HEADER = 100,      /* the file's header, on page 1 */
};

/* Bytes of v as a varint: 7 bits a byte up to 8 bytes (56 bits), else 9. */
static inline int sqlf_varint_len(uint64_t v)
{
    if (v <= 0x7f)
        return 1;
    int bits = 64 - __builtin_clzll(v);
    return bits > 56 ? 9 : (bits + 6) / 7;
}

/* SQLite's varint: big-endian groups of 7 bits, the high bit set on all but
 * the last byte; the ninth byte, if any, holds 8 bits. */
static inline uint8_t *sqlf_put_varint(uint8_t *p, uint64_t v)
{
    if (v <= 0x7f) {
        *p = (uint8_t)v;
        return p + 1;
    }
    int n = sqlf_varint_len(v);
    if (n == 9) {
        p[8] = (uint8_t)v;
        v >>= 8;
        for (int i = 7; i >= 0; i--) {
            p[i] = (uint8_t)((v & 0x7f) | 0x80);
            v >>= 7;
        }
        return p + 9;
    }
    p[n - 1] = (uint8_t)(v & 0x7f);
    for (int i = n - 2; i >= 0; i--) {
        v >>= 7;
        p[i] = (uint8_t)((v & 0x7f) | 0x80);
    }
    return p + n;
}

static inline void sqlf_put_be16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void sqlf_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint32_t sqlf_get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The serial type of integer v (schema format 4) and its size in bytes:
 * 0 and 1 are types 8 and 9 (no bytes); else the fewest bytes of 1, 2, 3, 4,
 * 6, 8 that hold v in two's complement (types 1 to 6). */
static inline int sqlf_int_type(int64_t v, int *bytes)
{
    if ((uint64_t)v <= 1) {
        *bytes = 0;
        return 8 + (int)v;
    }
    uint64_t u = v < 0 ? ~(uint64_t)v : (uint64_t)v; /* the magnitude, less its sign bit */
    int need = (72 - __builtin_clzll(u | 1)) >> 3;   /* bytes with a sign bit: 1..8 */
    /* Per need, the type (low 4 bits) and its size (high 4): 1-4 bytes as they are, 5
     * and 6 in 6 (type 5), 7 and 8 in 8 (type 6). One load, not two in a row. */
    static const unsigned char type_size[9] = {0, 0x11, 0x22, 0x33, 0x44, 0x65, 0x65, 0x86, 0x86};
    unsigned ts = type_size[need];
    *bytes = (int)(ts >> 4);
    return (int)(ts & 0xf);
}

/* Writes v's low bytes big-endian at p (bytes 1..8, or 0: nothing). */
static inline uint8_t *sqlf_put_int(uint8_t *p, int64_t v, int bytes)
{
    uint64_t u = (uint64_t)v;
    for (int i = bytes - 1; i >= 0; i--) {
        p[i] = (uint8_t)u;
        u >>= 8;
    }
    return p + bytes;
}

/* The same where 8 bytes may be written at p (the ones past bytes are left
 * as garbage, to be overwritten): one store. */
static inline uint8_t *sqlf_put_int_wide(uint8_t *p, int64_t v, int bytes)
{
    if (bytes > 0) {
        uint64_t be = __builtin_bswap64((uint64_t)v << (64 - 8 * bytes));
        memcpy(p, &be, 8);
    }
    return p + bytes;
}

/* The page that holds the bytes SQLite locks (offset 2^30, its
 * PENDING_BYTE): never a page of a tree, in a file past 1 GiB. */
static inline uint32_t sqlf_lock_page(uint32_t page_size) { return 0x40000000u / page_size + 1; }

/* Pages appended to a database file (uo_pages_attach): pages 1 to sqlite_pages
 * (SQLite's: the roots) into sqlite_fd, the others into fd. */
typedef struct sqlf_out {
    int fd;
    int sqlite_fd;
    uint32_t sqlite_pages;
    uint32_t page_size;
    uint32_t next;  /* the next page number to append (never the lock page) */
    uint8_t *page;  /* one page to fill */
    char *error;    /* the first error, in errlen bytes ("" while none) */
    size_t errlen;
} sqlf_out;

/** A new page's number, after the last one appended: the next, less the lock page. */
static inline uint32_t sqlf_new_page(sqlf_out *o)
{
    if (o->next == sqlf_lock_page(o->page_size))
        o->next++;
    return o->next++;
}

/** Writes data as page pgno. 0, or -1 (o->error says why). */
int sqlf_write_page(sqlf_out *o, uint32_t pgno, const uint8_t *data);

/** Writes the b-tree page header of a page of type, cells cells, content from
 * content on, and zeroes the free space between its cell pointers and its
 * content (an interior page's right-most child, at p + 8, is the caller's). */
static inline void sqlf_page_header(uint8_t *p, int type, uint32_t cells, uint32_t content)
{
    p[0] = (uint8_t)type;
    sqlf_put_be16(p + 1, 0); /* no free block */
    sqlf_put_be16(p + 3, cells);
    sqlf_put_be16(p + 5, content & 0xffff); /* 65536 is written 0 */
    p[7] = 0;           /* no fragmented bytes */
    int interior = type == SQLF_INTERIOR_INDEX || type == SQLF_INTERIOR_TABLE;
    uint32_t end = (interior ? SQLF_INTERIOR_HEADER : SQLF_LEAF_HEADER) + 2 * cells;
    memset(p + end, 0, content - end);
}

#endif
