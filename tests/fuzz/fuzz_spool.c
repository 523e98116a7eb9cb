/* SPDX-License-Identifier: MIT */
/* libFuzzer: the spool's readers (src/collector/collect/spool.c, convert.c) on a spool
 * a killed collector or another program left (issue 20, section 3): resuming
 * it (ur_spool_open: read whole, cut after the last whole chunk) and
 * converting it into databases. A message, never a crash or a read past a
 * chunk.
 *
 * The input patches a valid spool (the magic, a PROCESS chunk with a ring
 * header, a DATA chunk of slot 0 with a THREAD record, a compact marker, a
 * compact API call, a compact mark and a kernel dispatch record with its
 * name, a DROPS and a WAITS chunk): an empty input is that spool. Its first
 * byte cuts that many bytes off the end (a collector killed while
 * appending); each 3 bytes after it XOR a byte at an offset they name
 * (ring_template.h). */
#include "fuzz_workdir.h"
#include "collector.h"
#include "output.h"
#include "spool.h"
#include "ring_template.h"

#include <upti/upti.h>

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *g_dir; /* fuzz_workdir */
static uint8_t g_template[8192];
static size_t g_template_len;

static void quiet(void *data, const char *msg)
{
    (void)data;
    (void)msg;
}

static void put(const void *p, size_t n)
{
    memcpy(g_template + g_template_len, p, n);
    g_template_len += (n + 7) & ~(size_t)7;
}

static void put_chunk(uint32_t type, uint32_t slot, uint64_t bytes, uint64_t a, uint64_t b)
{
    ur_chunk_t c = {UR_CHUNK_MAGIC, type, bytes, 42, slot, 0, a, b, 0, 0};
    put(&c, sizeof c);
}

static void make_template(void)
{
    memcpy(g_template, UR_SPOOL_MAGIC, sizeof UR_SPOOL_MAGIC - 1);
    g_template_len = sizeof UR_SPOOL_MAGIC - 1;
    upti_ring_header_t h = {.magic = UPTI_RING_MAGIC, .version = UPTI_RING_VERSION,
                            .header_bytes = UPTI_RING_HEADER_BYTES,
                            .slot_bytes = UPTI_RING_SLOT_BYTES, .max_slots = 2,
                            .slot_size = 4096, .file_size = 16384,
                            .record_abi = sizeof(void *), .uid = 42, .pid = 77};
    put_chunk(UR_CHUNK_PROCESS, UR_NO_SLOT, (sizeof h + 7) & ~(size_t)7, 0, 0);
    put(&h, sizeof h);
    /* Slot 0's records. */
    uint8_t recs[512];
    size_t n = ring_template_records(recs);
    upti_ring_record_header_t rh;
    upti_buffer_tracing_kernel_dispatch_record_t k;
    memset(&k, 0, sizeof k);
    k.size = sizeof k;
    k.kind = UPTI_TRACING_KIND_KERNEL_DISPATCH;
    k.start_timestamp = 3;
    k.end_timestamp = 4;
    /* The producer's address of the name: producer_base (0) + position + header + struct. */
    uint64_t at = n + sizeof rh + sizeof k;
    memcpy((uint8_t *)&k + offsetof(upti_buffer_tracing_kernel_dispatch_record_t, kernel_name),
           &at, sizeof at);
    rh = (upti_ring_record_header_t){(uint32_t)(sizeof rh + sizeof k + 8),
                                     UPTI_TRACING_KIND_KERNEL_DISPATCH};
    memcpy(recs + n, &rh, sizeof rh);
    memcpy(recs + n + sizeof rh, &k, sizeof k);
    memcpy(recs + n + sizeof rh + sizeof k, "vadd\0\0\0", 8);
    n += rh.len;
    put_chunk(UR_CHUNK_DATA, 0, n, 0, n);
    put(recs, n);
    put_chunk(UR_CHUNK_DROPS, 1, 0, 0, 0);
    put_chunk(UR_CHUNK_WAITS, 0, 0, 2, 1000);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_dir == NULL) {
        g_dir = fuzz_workdir("spool");
        uo_set_reporter(quiet, NULL);
        make_template();
    }
    if (size > 4096)
        return 0;
    size_t len = g_template_len;
    uint8_t *bytes = calloc(1, len);
    memcpy(bytes, g_template, len);
    if (size > 0) {
        fuzz_apply_patches(bytes, len, data + 1, size - 1);
        len -= data[0] < len ? data[0] : 0;
    }
    fuzz_clean_dir(g_dir);
    char spool[128], prefix[128];
    snprintf(spool, sizeof spool, "%s/spool", g_dir);
    snprintf(prefix, sizeof prefix, "%s/out", g_dir);
    int fd = open(spool, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0 && write(fd, bytes, len) == (ssize_t)len) {
        close(fd);
        ur_convert_opts c = {.spool = spool, .prefix = prefix, .quiet = 1};
        ur_convert_with(&c);
        /* Resumed by a collector: read whole, cut after its last whole chunk. */
        fd = ur_spool_open(spool, NULL, NULL);
    }
    if (fd >= 0)
        close(fd);
    free(bytes);
    return 0;
}
