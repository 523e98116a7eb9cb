/* SPDX-License-Identifier: MIT */
/* Unit tests' reading of a shared buffer's file: its header and the records of
 * slot 0 (the test's only thread) as the producer left them, and (with the
 * collector) the file collected in one pass and converted into a database. */
#ifndef UPTI_UNIT_RING_FILE_H
#define UPTI_UNIT_RING_FILE_H

#include <upti/buffer.h>
#include <upti/ring.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef UNIT_HAVE_COLLECTOR
#include "collector.h"
#include <sqlite3.h>
#endif

#include "check.h"

typedef struct unit_ring_file {
    uint8_t *map;
    size_t size;
    uint32_t version;    /* the header's */
    const uint8_t *data; /* slot 0's records, from position 0 */
    uint64_t head;       /* slot 0's committed end */
} unit_ring_file;

/** Maps buffer's file read-only into f: 0, or -1 (a failed check said why). */
static inline int unit_ring_file_open(upti_buffer_id_t buffer, unit_ring_file *f)
{
    char path[PATH_MAX];
    CHECK_STATUS(upti_get_shared_buffer_path(buffer, path, sizeof path), UPTI_STATUS_SUCCESS);
    int fd = open(path, O_RDONLY);
    struct stat st;
    CHECK(fd >= 0 && fstat(fd, &st) == 0);
    if (fd < 0)
        return -1;
    f->size = (size_t)st.st_size;
    f->map = mmap(NULL, f->size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    CHECK(f->map != MAP_FAILED);
    if (f->map == MAP_FAILED)
        return -1;
    f->version = ((const upti_ring_header_t *)f->map)->version;
    const upti_ring_slot_t *slot = upti_ring_slot(f->map, 0);
    f->data = f->map + slot->data_offset;
    f->head = atomic_load(&slot->head);
    return 0;
}

static inline void unit_ring_file_close(unit_ring_file *f) { munmap(f->map, f->size); }

#ifdef UNIT_HAVE_COLLECTOR
/** Buffer's file collected (one pass: this process still runs) into dir/spool and
 *  converted into dir/db-PID.db, whose path goes into db; the spool is removed. */
static inline void unit_collect_convert(upti_buffer_id_t buffer, const char *dir, char *db,
                                        size_t db_len)
{
    char path[PATH_MAX], spool[PATH_MAX], prefix[PATH_MAX];
    CHECK_STATUS(upti_get_shared_buffer_path(buffer, path, sizeof path), UPTI_STATUS_SUCCESS);
    snprintf(spool, sizeof spool, "%s/spool", dir);
    snprintf(prefix, sizeof prefix, "%s/db", dir);
    const char *files[] = {path};
    volatile int stop = 1;
    ur_collect_opts o = {.spool = spool, .files = files, .num_files = 1, .keep = 1,
                         .poll_ns = 1000 * 1000, .stop = &stop};
    CHECK(ur_collect(&o) == 0);
    CHECK(ur_convert(spool, prefix, 0) == 0);
    int w = snprintf(db, db_len, "%s-%d.db", prefix, (int)getpid());
    CHECK(w > 0 && (size_t)w < db_len);
    unlink(spool);
}

/** A query of a database converted from a buffer's file (unit_collect_query). */
typedef struct unit_query {
    sqlite3 *db;
    sqlite3_stmt *st;
    char path[PATH_MAX];
} unit_query;

/** Buffer's file converted (unit_collect_convert) and sql prepared on its database, opened
 *  read-only: the statement (NULL where it failed, said), which unit_query_end ends. */
static inline sqlite3_stmt *unit_collect_query(unit_query *q, upti_buffer_id_t buffer,
                                               const char *dir, const char *sql)
{
    unit_collect_convert(buffer, dir, q->path, sizeof q->path);
    q->db = NULL;
    q->st = NULL;
    CHECK(sqlite3_open_v2(q->path, &q->db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(q->db, sql, -1, &q->st, NULL) == SQLITE_OK);
    return q->st;
}

/** Ends a query of unit_collect_query and removes its database. */
static inline void unit_query_end(unit_query *q)
{
    sqlite3_finalize(q->st);
    sqlite3_close(q->db);
    unlink(q->path);
}
#endif

#endif
