/* SPDX-License-Identifier: MIT */
/* src/collector/collect/ring_check.c: a ring file's header is checked against the
 * file's size before anything of it is used (docs/reliability.md, "Files a
 * killed or hostile process left"). Each field a killed or hostile producer
 * could leave wrong, alone, with the exact reason; sums that overflow 64 bits
 * included (they passed the collector's old check and it read past the file). */
#include "ring_check.h"
#include <upti/ring.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/ring_template.h"
#include "check.h"
#include "unit_tests.h"

#define SIZE RING_TEMPLATE_BYTES /* header, slot table page, two slots of 4096 bytes */

static void valid(uint8_t *file)
{
    ring_template_header(file);
}

/* The reason ur_ring_check gives for file, "" if it passes. */
static const char *reason(const uint8_t *file)
{
    static char why[256];
    why[0] = '\0';
    upti_ring_header_t checked;
    if (ur_ring_check(file, SIZE, &checked, why, sizeof why) == 0 && why[0] == '\0')
        return "";
    return why;
}

#define CHECK_REASON(file, want)                                                         \
    do {                                                                                 \
        const char *got_ = reason(file);                                                 \
        if (strcmp(got_, want) != 0) {                                                   \
            fprintf(stderr, "FAIL %s:%d: reason '%s', expected '%s'\n", __FILE__, __LINE__, \
                    got_, want);                                                         \
            test_failures++;                                                             \
        }                                                                                \
    } while (0)

UNIT_TEST(ring_check)
{
    uint8_t *file = aligned_alloc(4096, SIZE);
    upti_ring_header_t *h = (upti_ring_header_t *)file;
    valid(file);
    CHECK_REASON(file, "");

    h->max_slots = 65536; /* more slots than the file holds */
    CHECK_REASON(file, "max_slots 65536 need 25169920 bytes, the file has 16384");
    h->max_slots = 0;
    CHECK_REASON(file, "max_slots 0 (1 to 65536)");
    h->max_slots = 70000;
    CHECK_REASON(file, "max_slots 70000 (1 to 65536)");
    valid(file);
    h->slot_size = 1ull << 63;
    CHECK_REASON(file, "slot_size 9223372036854775808 (a power of two the file holds)");
    h->slot_size = 0;
    CHECK_REASON(file, "slot_size 0 (a power of two the file holds)");
    h->slot_size = 3000;
    CHECK_REASON(file, "slot_size 3000 (a power of two the file holds)");
    valid(file);
    /* data_offset + slot_size overflows to 0: inside the file by a plain sum */
    upti_ring_slot(file, 1)->data_offset = 0ull - 4096;
    CHECK_REASON(file, "slot 1: data_offset 18446744073709547520 + slot_size 4096 outside the "
                       "file's 16384 bytes");
    upti_ring_slot(file, 1)->data_offset = 12289;
    CHECK_REASON(file, "slot 1: data_offset 12289 + slot_size 4096 outside the file's 16384 bytes");
    upti_ring_slot(file, 1)->data_offset = 4096; /* over the slots' table */
    CHECK_REASON(file, "slot 1: data_offset 4096 + slot_size 4096 outside the file's 16384 bytes");
    upti_ring_slot(file, 1)->data_offset = 0; /* a slot never claimed: its producer sets it */
    CHECK_REASON(file, "");
    /* Slots the producer says it never claimed (slots_unused) are not read: slot 1's
     * data_offset is not looked at; 0 (a file made before the field) or more than
     * max_slots reads them all. */
    upti_ring_slot(file, 1)->data_offset = 12289;
    h->slots_unused = 1;
    CHECK_REASON(file, "");
    h->slots_unused = 2;
    CHECK_REASON(file, "");
    h->slots_unused = 3;
    CHECK_REASON(file, "slot 1: data_offset 12289 + slot_size 4096 outside the file's 16384 bytes");
    h->slots_unused = 0;
    CHECK_REASON(file, "slot 1: data_offset 12289 + slot_size 4096 outside the file's 16384 bytes");
    upti_ring_slot(file, 0)->data_offset = 1;
    h->slots_unused = 1;
    CHECK_REASON(file, "slot 0: data_offset 1 + slot_size 4096 outside the file's 16384 bytes");
    valid(file);
    h->file_size = 1ull << 40;
    CHECK_REASON(file, "file_size 1099511627776, the file has 16384 bytes");
    valid(file);
    h->version = 7;
    CHECK_REASON(file, "version 7, header 4096 bytes, slot 384 bytes: not this format");
    valid(file);
    /* Version 1 is read too (version 2 added a record kind: the layout is the same). */
    h->version = 1;
    CHECK_REASON(file, "");
    h->version = 0;
    CHECK_REASON(file, "version 0, header 4096 bytes, slot 384 bytes: not this format");
    h->version = UPTI_RING_VERSION + 1;
    CHECK_REASON(file, "version 3, header 4096 bytes, slot 384 bytes: not this format");
    valid(file);
    h->record_abi = 4;
    CHECK_REASON(file, "records of 4-byte pointers");

    CHECK(ur_span_fits(0, 16384, 16384));
    CHECK(!ur_span_fits(1, 16384, 16384));
    CHECK(!ur_span_fits(0ull - 1, 2, 16384));
    CHECK(!ur_span_fits(16385, 0, 16384));
    free(file);
    return test_result("ring_check");
}
