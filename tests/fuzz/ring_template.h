/* SPDX-License-Identifier: MIT */
/* A valid ring file and records, for the fuzzers of the collector's readers
 * (fuzz_ring_file.c, fuzz_spool.c) and unit.ring_check: inputs are XORed onto
 * them, so that every mutation is a change of some field. */
#ifndef UPTI_TESTS_RING_TEMPLATE_H
#define UPTI_TESTS_RING_TEMPLATE_H

#include <upti/ring.h>
#include <upti/types.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/** The template's size: header, slot table page, 2 slots of 4096 bytes. */
#define RING_TEMPLATE_BYTES 16384u

/** A valid ring header of two 4096-byte slots (data at 8192 and 12288) into file. */
static inline void ring_template_header(uint8_t *file)
{
    memset(file, 0, RING_TEMPLATE_BYTES);
    upti_ring_header_t *h = (upti_ring_header_t *)file;
    h->magic = UPTI_RING_MAGIC;
    h->version = UPTI_RING_VERSION;
    h->header_bytes = UPTI_RING_HEADER_BYTES;
    h->slot_bytes = UPTI_RING_SLOT_BYTES;
    h->max_slots = 2;
    h->slot_size = 4096;
    h->file_size = RING_TEMPLATE_BYTES;
    h->record_abi = sizeof(void *);
    upti_ring_slot(file, 0)->data_offset = 8192;
    upti_ring_slot(file, 1)->data_offset = 12288;
}

/** A THREAD record (tid 1234), a compact marker "mark", a compact API call and a compact
 *  mark of value 9 and text "tick" at p: their bytes. */
static inline size_t ring_template_records(uint8_t *p)
{
    upti_ring_record_header_t rh = {sizeof rh + sizeof(upti_ring_thread_t), UPTI_RING_KIND_THREAD};
    upti_ring_thread_t t = {1234, 1};
    memcpy(p, &rh, sizeof rh);
    memcpy(p + sizeof rh, &t, sizeof t);
    size_t n = rh.len;
    upti_ring_compact_marker_t m = {1, 1, 7, 0, 2, 0};
    rh = (upti_ring_record_header_t){sizeof rh + sizeof m + 8, UPTI_RING_KIND_COMPACT_MARKER};
    memcpy(p + n, &rh, sizeof rh);
    memcpy(p + n + sizeof rh, &m, sizeof m);
    memcpy(p + n + sizeof rh + sizeof m, "mark\0\0\0", 8);
    n += rh.len;
    upti_ring_compact_api_t a = {UPTI_TRACING_KIND_OPENCL_API, 3, 8, 10, 15, -30};
    rh = (upti_ring_record_header_t){sizeof rh + sizeof a, UPTI_RING_KIND_COMPACT_API};
    memcpy(p + n, &rh, sizeof rh);
    memcpy(p + n + sizeof rh, &a, sizeof a);
    n += rh.len;
    upti_ring_compact_mark_t k = {1, UPTI_RING_MARK_VALUE | UPTI_RING_MARK_MESSAGE, 9, 20};
    uint64_t value = 9;
    rh = (upti_ring_record_header_t){sizeof rh + sizeof k + sizeof value + 8,
                                     UPTI_RING_KIND_COMPACT_MARK};
    memcpy(p + n, &rh, sizeof rh);
    memcpy(p + n + sizeof rh, &k, sizeof k);
    memcpy(p + n + sizeof rh + sizeof k, &value, sizeof value);
    memcpy(p + n + sizeof rh + sizeof k + sizeof value, "tick\0\0\0", 8);
    return n + rh.len;
}

/**
 * Applies a fuzzer's input to buf[0..len) as patches: each 3 bytes are an
 * offset (2 bytes, little-endian, modulo len) and a byte XORed there. Short
 * inputs reach every field of the file, the slots' and the records' too.
 */
static inline void fuzz_apply_patches(uint8_t *buf, size_t len, const uint8_t *data, size_t size)
{
    for (size_t i = 0; i + 3 <= size; i += 3)
        buf[(size_t)(data[i] | data[i + 1] << 8) % len] ^= data[i + 2];
}

/** Removes the files a fuzzer's last input left in dir. */
static inline void fuzz_clean_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

#endif
