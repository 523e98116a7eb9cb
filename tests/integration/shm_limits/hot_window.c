/* SPDX-License-Identifier: MIT */
/* A large shared ring costs the program the pages it needs, not its size
 * (check_shm_limits.py, case hot_window).
 *
 *   hot_window DIR SIZE N
 *
 * Its tool (in the executable, upti_force_configure) puts marker records into
 * a shared buffer in DIR with rings of SIZE bytes. The program plays the
 * collector itself, synchronously: after every 1,000 uptx_mark calls it gives
 * its slot's space back (tail = head), as a collector that keeps up does. After
 * N marks it prints "rss_shmem_kb=R max_offset=M": R, its resident shared
 * memory (/proc/self/status RssShmem: the ring pages it touched), and M, the
 * highest offset in the ring it wrote at.
 */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <upti/ring.h>

#include "test_tool.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *g_dir;
static size_t g_size;
static upti_buffer_id_t g_buffer;

static int tool_init(upti_client_finalize_t fini, void *data)
{
    (void)fini;
    (void)data;
    upti_context_id_t ctx;
    if (upti_create_context(&ctx) != UPTI_STATUS_SUCCESS ||
        upti_create_shared_buffer(ctx, g_size, UPTI_BUFFER_POLICY_LOSSLESS, g_dir, 2, &g_buffer) !=
            UPTI_STATUS_SUCCESS ||
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                              g_buffer) != UPTI_STATUS_SUCCESS)
        return 1;
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

static void tool_fini(void *data)
{
    (void)data;
}

TEST_CONFIGURE(configure, tool_init, tool_fini)

static long rss_shmem_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "RssShmem:", 9) == 0)
            kb = atol(line + 9);
    if (f != NULL)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: hot_window DIR SIZE N\n");
        return 2;
    }
    g_dir = argv[1];
    g_size = (size_t)atol(argv[2]);
    long n = atol(argv[3]);
    char path[4096];
    if (upti_force_configure(configure) != UPTI_STATUS_SUCCESS ||
        upti_get_shared_buffer_path(g_buffer, path, sizeof path) != UPTI_STATUS_SUCCESS) {
        fprintf(stderr, "hot_window: no shared buffer\n");
        return 3;
    }
    uptx_mark("first"); /* claims this thread's slot */
    int fd = open(path, O_RDWR);
    struct stat st;
    void *file = fd < 0 || fstat(fd, &st) != 0
                     ? MAP_FAILED
                     : mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (file == MAP_FAILED) {
        fprintf(stderr, "hot_window: cannot map %s\n", path);
        return 3;
    }
    close(fd);
    upti_ring_header_t *h = file;
    upti_ring_slot_t *slot = NULL;
    for (uint32_t i = 0; i < h->max_slots; i++)
        if (atomic_load(&upti_ring_slot(file, i)->owner) == (uint64_t)gettid())
            slot = upti_ring_slot(file, i);
    if (slot == NULL) {
        fprintf(stderr, "hot_window: no slot of this thread\n");
        return 3;
    }
    uint64_t max_offset = 0;
    char text[48];
    for (long i = 0; i < n; i++) {
        snprintf(text, sizeof text, "mark %ld", i);
        uptx_mark(text);
        uint64_t head = atomic_load(&slot->head);
        if (((head - 1) & (h->slot_size - 1)) > max_offset)
            max_offset = (head - 1) & (h->slot_size - 1);
        if (i % 1000 == 999)
            atomic_store(&slot->tail, head); /* drained */
    }
    printf("rss_shmem_kb=%ld max_offset=%llu\n", rss_shmem_kb(), (unsigned long long)max_offset);
    return 0;
}
