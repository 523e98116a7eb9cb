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

static inline int sqlf_varint_len(uint64_t v)
{
    int n = 1;
    while (n < 9 && v > 0x7f) {
        v >>= 7;
        n++;
    }
    return n;
}

/* SQLite's varint: big-endian groups of 7 bits, the high bit set on all but
 * the last byte; the ninth byte, if any, holds 8 bits. */
static inline uint8_t *sqlf_put_varint(uint8_t *p, uint64_t v)
{
    if (v <= 0x7f) {
        *p = (uint8_t)v;
        return p + 1;
    }
    uint8_t tmp[9];
    int n = 0;
    if (v > 0x00ffffffffffffffULL) {
        tmp[8] = (uint8_t)v;
        v >>= 8;
        for (int i = 7; i >= 0; i--) {
            tmp[i] = (uint8_t)((v & 0x7f) | 0x80);
            v >>= 7;
        }
        memcpy(p, tmp, 9);
        return p + 9;
    }
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | 0x80);
        v >>= 7;
    } while (v != 0);
    tmp[0] &= 0x7f; /* the least significant group, written last */
    for (int i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
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

/* The serial type of integer v (schema format 4) and its size in bytes. */
static inline int sqlf_int_type(int64_t v, int *bytes)
{
    if (v == 0 || v == 1) {
        *bytes = 0;
        return 8 + (int)v;
    }
    uint64_t u = v < 0 ? ~(uint64_t)v : (uint64_t)v;
    static const int size[] = {0, 1, 2, 3, 4, 6, 8};
    int t = u <= 0x7f ? 1 : u <= 0x7fff ? 2 : u <= 0x7fffff ? 3 : u <= 0x7fffffff ? 4
          : u <= 0x7fffffffffffULL ? 5 : 6;
    *bytes = size[t];
    return t;
}

static inline uint8_t *sqlf_put_int(uint8_t *p, int64_t v, int bytes)
{
    uint64_t u = (uint64_t)v;
    for (int i = bytes - 1; i >= 0; i--) {
        p[i] = (uint8_t)u;
        u >>= 8;
    }
    return p + bytes;
}

/* Pages appended to a database file (uo_pages_attach). */
typedef struct sqlf_out {
    int fd;
    uint32_t page_size;
    uint32_t next;  /* the next page number to append */
    uint8_t *page;  /* one page to fill */
    char *error;    /* the first error, in errlen bytes ("" while none) */
    size_t errlen;
} sqlf_out;

/** Writes data as page pgno. 0, or -1 (o->error says why). */
int sqlf_write_page(sqlf_out *o, uint32_t pgno, const uint8_t *data);

/** Writes the b-tree page header of a page of type, cells cells, content from content on. */
static inline void sqlf_page_header(uint8_t *p, int type, uint32_t cells, uint32_t content)
{
    p[0] = (uint8_t)type;
    sqlf_put_be16(p + 1, 0); /* no free block */
    sqlf_put_be16(p + 3, cells);
    sqlf_put_be16(p + 5, content & 0xffff); /* 65536 is written 0 */
    p[7] = 0;           /* no fragmented bytes */
}

#endif
