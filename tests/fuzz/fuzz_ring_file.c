/* SPDX-License-Identifier: MIT */
/* libFuzzer: what the collector does with a ring file a killed or hostile
 * process left (issue 20, section 3): upti-ring collect on it (header checks,
 * slots, positions), into a spool (fuzz_spool converts spools). A message,
 * never a crash, a hang or a read past the file.
 *
 * The input patches a valid ring (two slots of 4096 bytes; slot 0 holds a
 * THREAD record, a compact marker, a compact API call and a compact mark,
 * committed): an empty input is that
 * ring; each 3 bytes XOR a byte at an offset they name (ring_template.h),
 * so that the header, the slot table and the records are all reached. */
#include "fuzz_workdir.h"
#include "collector.h"
#include "output.h"
#include "ring_template.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RING_BYTES RING_TEMPLATE_BYTES

static const char *g_dir; /* fuzz_workdir */

static void quiet(void *data, const char *msg)
{
    (void)data;
    (void)msg;
}

/* The template: ring_template.h's, slot 0 holding its records, committed. */
static void template_ring(uint8_t *file)
{
    ring_template_header(file);
    upti_ring_header_t *h = (upti_ring_header_t *)file;
    h->uid = 42;
    h->state = UPTI_RING_STATE_CLOSED;
    snprintf(h->command, sizeof h->command, "fuzzed ring");
    upti_ring_slot(file, 0)->head = ring_template_records(file + 8192);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_dir == NULL) {
        g_dir = fuzz_workdir("ring");
        uo_set_reporter(quiet, NULL);
    }
    if (size > 4096)
        return 0;
    size_t len = RING_BYTES;
    uint8_t *file = calloc(1, len);
    template_ring(file);
    fuzz_apply_patches(file, len, data, size);
    fuzz_clean_dir(g_dir);
    char ring[128], spool[128];
    snprintf(ring, sizeof ring, "%s/f.upti-ring", g_dir);
    snprintf(spool, sizeof spool, "%s/spool", g_dir);
    int fd = open(ring, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        if (write(fd, file, len) == (ssize_t)len) {
            close(fd);
            /* One pass (stop set) over the file, kept: a header naming a live
             * pid is not waited for. */
            static const volatile int stop = 1;
            const char *files[1] = {ring};
            ur_collect_opts o = {.spool = spool, .files = files, .num_files = 1, .keep = 1,
                                 .stop = &stop};
            ur_collect(&o); /* (what it stored: fuzz_spool converts such spools) */
        } else {
            close(fd);
        }
    }
    free(file);
    return 0;
}
