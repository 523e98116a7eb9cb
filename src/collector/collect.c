/* `upti-ring collect`: drains ring files into the spool while their
 * producers run (the consumer side of src/common/upti_ring_abi.h).
 *
 * For each slot: load-acquire head, append [tail, head) to the spool as one
 * DATA chunk (straight from the mapping), then store-release tail. A
 * collector killed between the append and the tail store finds, when started
 * again, chunks in the spool that go past the slot's tail: it moves the tail
 * there first (resume_pos), so nothing is appended twice.
 *
 * A spool that cannot be written (a full disk, a file size limit, an I/O
 * error, or one that cannot even be opened) never makes a producer wait: the
 * collector says so once, then goes on draining every ring without storing,
 * counting the records it discards (discard_slot), and reports the count per
 * producer process at the end (ur_collect_opts.discarded). What the spool
 * held before the failure stays whole and is converted as usual.
 */
#include "collector.h"
#include "output.h"
#include "proc_stat.h"
#include "ring_futex.h"
#include "spool.h"
#include "upti_ring_abi.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_RINGS 4096
/* A pass that moved less than this pauses BUSY_PAUSE_NS before the next one. */
#define BUSY_BATCH_BYTES (256u << 10)
#define BUSY_PAUSE_NS (100u * 1000u)
#define BUSY_PAUSE_MIN_NS (10u * 1000u)

struct ring {
    char *path;
    uint64_t uid;
    upti_ring_header_t *hdr;
    void *map;
    size_t map_size;
    uint64_t *resume_pos;    /* per slot: where the spool ends for it */
    uint64_t *dropped_seen;  /* per slot: the last drop count in the spool */
    uint64_t no_slot_seen;
    int process_written;     /* the PROCESS chunk is in the spool */
    int done;                /* the producer ended and the rings are empty */
    int pidfd;               /* the producer's pidfd, -1 if none (then /proc is read) */
};

/* Records a process lost because the spool could not be written. */
struct loss {
    int64_t pid;
    uint64_t records;
};

/* What a resumed spool already holds, per ring uid (known before the files are opened). */
struct seen {
    uint64_t uid;
    uint32_t slot;
    uint64_t pos_end, dropped;
    int process;
};

struct collector {
    const ur_collect_opts *opts;
    long crash_after; /* tests: SIGKILL itself after this many DATA chunks, before their tail store */
    int fd;
    struct ring rings[MAX_RINGS];
    int num_rings;
    struct seen *seen;
    size_t num_seen, cap_seen;
    int wait_pidfd;          /* opts->wait_pid's pidfd, -1 if none */
    int starving;            /* a producer waited for room during this pass */
    uint64_t pause_ns;       /* the busy pause now (BUSY_PAUSE_MIN_NS..BUSY_PAUSE_NS) */
    int discarding;          /* the spool failed: drain without storing */
    char reason[256];        /* why (strerror of the failed write) */
    struct loss *losses;
    size_t num_losses, cap_losses;
};

int ur_process_alive(int64_t pid, uint64_t start_ticks)
{
    char state;
    uint64_t ticks;
    if (pid <= 0 || upti_proc_stat(pid, &state, &ticks) != 0)
        return 0;
    if (state == 'Z' || state == 'X' || state == 'x')
        return 0; /* a zombie has ended: its memory is gone */
    return start_ticks == 0 || ticks == start_ticks;
}

/* A pidfd of the live process pid that started at start_ticks (0: any), or -1
 * (none: it has ended, or pidfds are not available). Checking liveness every
 * pass through a pidfd is one poll() instead of reading /proc/PID/stat (tens
 * of microseconds on some machines, twice a pass). The check after the open
 * makes sure the pidfd is that process's, not one that took over its pid. */
static int open_pidfd(int64_t pid, uint64_t start_ticks)
{
#ifdef SYS_pidfd_open
    if (pid <= 0 || !ur_process_alive(pid, start_ticks))
        return -1;
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (fd >= 0 && !ur_process_alive(pid, start_ticks)) {
        close(fd);
        return -1;
    }
    return fd; /* close-on-exec: pidfd_open always sets it */
#else
    (void)pid;
    (void)start_ticks;
    return -1;
#endif
}

/* Whether the process behind pidfd (or, without one, pid started at start_ticks) runs:
 * a pidfd becomes readable when its process has ended (a zombie included). */
static int alive_by(int pidfd, int64_t pid, uint64_t start_ticks)
{
    if (pidfd < 0)
        return ur_process_alive(pid, start_ticks);
    struct pollfd p = {pidfd, POLLIN, 0};
    int n;
    do
        n = poll(&p, 1, 0);
    while (n < 0 && errno == EINTR);
    return n == 0;
}

static void remember(void *arg, const ur_chunk_t *c, const uint8_t *payload)
{
    (void)payload;
    struct collector *collector = arg;
    struct seen *s = NULL;
    for (size_t i = 0; i < collector->num_seen; i++)
        if (collector->seen[i].uid == c->ring_uid && collector->seen[i].slot == c->slot)
            s = &collector->seen[i];
    if (s == NULL) {
        if (uo_grow(&collector->seen, &collector->cap_seen, collector->num_seen + 1,
                    sizeof *collector->seen, 64) != 0)
            return;
        s = &collector->seen[collector->num_seen++];
        *s = (struct seen){c->ring_uid, c->slot, 0, 0, 0};
    }
    if (c->type == UR_CHUNK_PROCESS)
        s->process = 1;
    if (c->type == UR_CHUNK_DATA && c->pos_end > s->pos_end)
        s->pos_end = c->pos_end;
    if ((c->type == UR_CHUNK_DATA || c->type == UR_CHUNK_DROPS) && c->dropped > s->dropped)
        s->dropped = c->dropped;
}

static const struct seen *find_seen(const struct collector *collector, uint64_t uid, uint32_t slot)
{
    for (size_t i = 0; i < collector->num_seen; i++)
        if (collector->seen[i].uid == uid && collector->seen[i].slot == slot)
            return &collector->seen[i];
    return NULL;
}

static int known_path(const struct collector *collector, const char *path)
{
    for (int i = 0; i < collector->num_rings; i++)
        if (strcmp(collector->rings[i].path, path) == 0)
            return 1;
    return 0;
}

/* Maps a ring file and checks its header. 1: added; 0: not (yet) a ring. */
static int add_ring(struct collector *collector, const char *path)
{
    if (known_path(collector, path) || collector->num_rings == MAX_RINGS)
        return 0;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < UPTI_RING_HEADER_BYTES) {
        close(fd);
        return 0;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    upti_ring_header_t *h = map;
    if (h->magic != UPTI_RING_MAGIC ||
        atomic_load_explicit(&h->state, memory_order_acquire) == UPTI_RING_STATE_CREATING) {
        munmap(map, (size_t)st.st_size); /* being created: the next scan takes it */
        return 0;
    }
    if (h->version != UPTI_RING_VERSION || h->header_bytes != UPTI_RING_HEADER_BYTES ||
        h->slot_bytes != UPTI_RING_SLOT_BYTES || h->file_size != (uint64_t)st.st_size ||
        h->record_abi != sizeof(void *) || (h->slot_size & (h->slot_size - 1)) != 0 ||
        h->max_slots == 0 || h->max_slots > 65536) {
        uo_report("%s is not a ring file this collector reads: skipped", path);
        munmap(map, (size_t)st.st_size);
        struct ring *r = &collector->rings[collector->num_rings++];
        *r = (struct ring){.path = strdup(path), .done = 1, .pidfd = -1};
        return 0;
    }
    struct ring *r = &collector->rings[collector->num_rings++];
    *r = (struct ring){.path = strdup(path), .uid = h->uid, .hdr = h, .map = map,
                       .map_size = (size_t)st.st_size,
                       .pidfd = open_pidfd(h->pid, h->proc_start_ticks)};
    r->resume_pos = calloc(h->max_slots, sizeof *r->resume_pos);
    r->dropped_seen = calloc(h->max_slots, sizeof *r->dropped_seen);
    for (uint32_t i = 0; i < h->max_slots; i++) {
        const struct seen *s = find_seen(collector, r->uid, i);
        if (s != NULL) {
            r->resume_pos[i] = s->pos_end;
            r->dropped_seen[i] = s->dropped;
        }
    }
    const struct seen *s = find_seen(collector, r->uid, UR_NO_SLOT);
    if (s != NULL) {
        r->no_slot_seen = s->dropped;
        r->process_written = s->process;
    }
    atomic_store(&h->collector_pid, (int64_t)getpid());
    return 1;
}

static void scan_dir(struct collector *collector)
{
    DIR *d = opendir(collector->opts->dir);
    if (d == NULL)
        return;
    struct dirent *e;
    size_t suffix = strlen(UPTI_RING_SUFFIX);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= suffix || strcmp(e->d_name + n - suffix, UPTI_RING_SUFFIX) != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", collector->opts->dir, e->d_name);
        add_ring(collector, path);
    }
    closedir(d);
}

/* Reports "WHAT PATH: strerror(errno)"; returns -1. */
static int report_errno(const char *what, const char *path)
{
    uo_report("%s %s: %s", what, path, strerror(errno));
    return -1;
}

/* The spool cannot be written (errno): say so once; from now on every ring is
 * drained without storing. */
static void spool_failed(struct collector *collector)
{
    if (collector->discarding)
        return;
    snprintf(collector->reason, sizeof collector->reason, "%s", strerror(errno));
    uo_report("cannot write the spool %s: %s: the records the rings still hold are counted and "
              "discarded", collector->opts->spool, collector->reason);
    collector->discarding = 1;
}

static void add_loss(struct collector *collector, int64_t pid, uint64_t records)
{
    if (records == 0)
        return;
    for (size_t i = 0; i < collector->num_losses; i++) {
        if (collector->losses[i].pid == pid) {
            collector->losses[i].records += records;
            return;
        }
    }
    if (uo_grow(&collector->losses, &collector->cap_losses, collector->num_losses + 1,
                sizeof *collector->losses, 8) != 0)
        return;
    collector->losses[collector->num_losses++] = (struct loss){pid, records};
}

/* The records in [tail, head) of a slot: its tracing records (what the
 * converter counts as records: upti_tracing_kind_t values and compact
 * markers), not padding, THREAD, AGENT or TOOL records. A header that cannot
 * be framed ends the count (the rest is corrupt). */
static uint64_t count_records(const uint8_t *data, uint64_t mask, uint64_t tail, uint64_t head)
{
    uint64_t n = 0;
    for (uint64_t pos = tail; pos < head;) {
        upti_ring_record_header_t h;
        if (head - pos < sizeof h || (pos & mask) + sizeof h > mask + 1)
            break;
        memcpy(&h, data + (pos & mask), sizeof h);
        if (h.len < sizeof h || h.len % 8 != 0 || h.len > head - pos)
            break;
        if (h.kind != UPTI_RING_KIND_PADDING && h.kind != UPTI_RING_KIND_THREAD &&
            h.kind != UPTI_RING_KIND_AGENT && h.kind != UPTI_RING_KIND_TOOL)
            n++;
        pos += h.len;
    }
    return n;
}

/* Moves the slot's tail to head (the space is free again), waking its producer
 * if it waits for room. The fence orders the tail store before the starving
 * load, as the producer's orders its starving store before its tail load:
 * one of the two sees the other (ring_futex.h). */
static void give_back(upti_ring_slot_t *slot, uint64_t head)
{
    atomic_store_explicit(&slot->tail, head, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&slot->starving, memory_order_relaxed))
        upti_ring_futex_wake(&slot->tail);
}

/* tail, or past the padding record there when it reaches the ring's end and is
 * committed: a producer goes back to its ring's start early (while the collector
 * keeps up it writes only the ring's first part) and pads the rest, which holds
 * nothing and whose pages it may never have written: not read, not stored. */
static uint64_t skip_padding(const struct ring *r, const upti_ring_slot_t *slot, uint64_t tail,
                             uint64_t head)
{
    uint64_t size = r->hdr->slot_size, rest = size - (tail & (size - 1));
    if (head - tail < rest || head - tail > size || rest < sizeof(upti_ring_record_header_t) ||
        slot->data_offset + size > r->map_size)
        return tail;
    upti_ring_record_header_t h;
    memcpy(&h, (const uint8_t *)r->map + slot->data_offset + (tail & (size - 1)), sizeof h);
    return h.kind == UPTI_RING_KIND_PADDING && h.len == rest ? tail + rest : tail;
}

/* head, or where a padding record that ends a lap early starts, when [tail, head)
 * reaches the ring's end: the records there are walked (once per lap) to find it,
 * so that what follows it is not read. */
static uint64_t lap_end(const struct ring *r, const upti_ring_slot_t *slot, uint64_t tail,
                        uint64_t head)
{
    uint64_t size = r->hdr->slot_size, mask = size - 1;
    if (head - tail > size || (tail & mask) + (head - tail) < size ||
        slot->data_offset + size > r->map_size)
        return head;
    const uint8_t *data = (const uint8_t *)r->map + slot->data_offset;
    for (uint64_t pos = tail; pos < head;) {
        upti_ring_record_header_t h;
        uint64_t rest = size - (pos & mask);
        if ((pos > tail && rest == size) || rest < sizeof h || head - pos < sizeof h)
            break; /* a lap that ended with a record, not a padding */
        memcpy(&h, data + (pos & mask), sizeof h);
        if (h.len < sizeof h || h.len % 8 != 0 || h.len > head - pos || h.len > rest)
            break; /* malformed: read as it is, the converter counts it */
        if (h.kind == UPTI_RING_KIND_PADDING && h.len == rest)
            return pos > tail ? pos : head; /* at tail: skip_padding's */
        pos += h.len;
    }
    return head;
}

/* Discard mode: counts slot i's records in [tail, head) and the drops its
 * producer made since the spool last stored its count, and gives the space
 * back. */
static void discard_slot(struct collector *collector, struct ring *r, uint32_t i, uint64_t tail,
                         uint64_t head, uint64_t dropped)
{
    upti_ring_slot_t *slot = upti_ring_slot(r->map, i);
    uint64_t size = r->hdr->slot_size, lost = 0;
    if (head != tail && head - tail <= size && slot->data_offset + size <= r->map_size)
        lost = count_records((const uint8_t *)r->map + slot->data_offset, size - 1, tail, head);
    lost += dropped - r->dropped_seen[i];
    r->dropped_seen[i] = dropped;
    r->resume_pos[i] = head;
    give_back(slot, head);
    add_loss(collector, r->hdr->pid, lost);
}

/* Drains slot i of ring r (see drain_ring). Returns records' bytes moved; *again is set
 * when it stopped at a padding record that ends a lap early (lap_end): the rest is read by
 * a second call, past it. */
static long long drain_slot(struct collector *collector, struct ring *r, uint32_t i, int *again)
{
    upti_ring_header_t *h = r->hdr;
    long long moved = 0;
    uint64_t size = h->slot_size, mask = size - 1;
    upti_ring_slot_t *slot = upti_ring_slot(r->map, i);
    uint64_t head = atomic_load_explicit(&slot->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_relaxed);
    if (r->resume_pos[i] > tail && r->resume_pos[i] <= head) {
        tail = r->resume_pos[i]; /* appended by a collector killed before its tail store */
        give_back(slot, tail);   /* its producer may sleep waiting for that room */
    }
    uint64_t skipped = skip_padding(r, slot, tail, head);
    if (skipped != tail) {
        tail = skipped;
        if (r->resume_pos[i] < tail)
            r->resume_pos[i] = tail;
        give_back(slot, tail);
    }
    uint64_t clip = lap_end(r, slot, tail, head);
    *again = clip != head;
    head = clip;
    uint64_t dropped = atomic_load_explicit(&slot->dropped, memory_order_relaxed);
    collector->starving |= atomic_load_explicit(&slot->starving, memory_order_relaxed) != 0;
    if (collector->discarding) {
        moved += (long long)(head - tail);
        discard_slot(collector, r, i, tail, head, dropped);
        return moved;
    }
    if (head != tail) {
        if (head - tail > size || slot->data_offset + size > r->map_size) {
            uo_report("%s: slot %u is corrupt (head %llu, tail %llu): skipped", r->path, i,
                      (unsigned long long)head, (unsigned long long)tail);
            give_back(slot, head);
            return moved;
        }
        const uint8_t *data = (const uint8_t *)r->map + slot->data_offset;
        uint64_t a = tail & mask, n = head - tail;
        struct iovec iov[2];
        int pieces = 1;
        if (a + n <= size) {
            iov[0] = (struct iovec){(void *)(data + a), n};
        } else {
            iov[0] = (struct iovec){(void *)(data + a), size - a};
            iov[1] = (struct iovec){(void *)data, n - (size - a)};
            pieces = 2;
        }
        ur_chunk_t c = {UR_CHUNK_MAGIC, UR_CHUNK_DATA, n, r->uid, i, 0, tail, head, dropped,
                        slot->producer_base};
        if (ur_spool_append(collector->fd, &c, iov, pieces) != 0) {
            spool_failed(collector);
            moved += (long long)n;
            discard_slot(collector, r, i, tail, head, dropped);
            return moved;
        }
        if (collector->crash_after > 0 && --collector->crash_after == 0)
            raise(SIGKILL); /* the worst moment: appended, tail not yet moved */
        r->resume_pos[i] = head;
        r->dropped_seen[i] = dropped;
        give_back(slot, head);
        moved += (long long)n;
    } else if (dropped != r->dropped_seen[i]) {
        ur_chunk_t c = {UR_CHUNK_MAGIC, UR_CHUNK_DROPS, 0, r->uid, i, 0, 0, 0, dropped, 0};
        if (ur_spool_append(collector->fd, &c, NULL, 0) != 0) {
            spool_failed(collector);
            discard_slot(collector, r, i, tail, head, dropped);
            return moved;
        }
        r->dropped_seen[i] = dropped;
    }
    return moved;
}

/* Appends what ring r's slots committed since the last pass (or, once the
 * spool failed, counts and discards it). Returns records' bytes moved. */
static long long drain_ring(struct collector *collector, struct ring *r)
{
    upti_ring_header_t *h = r->hdr;
    long long moved = 0;
    if (!r->process_written && !collector->discarding) {
        ur_chunk_t c = {UR_CHUNK_MAGIC, UR_CHUNK_PROCESS, sizeof *h, r->uid, UR_NO_SLOT, 0, 0, 0, 0, 0};
        c.bytes = (sizeof *h + 7) & ~(uint64_t)7;
        upti_ring_header_t copy;
        memcpy(&copy, h, sizeof copy);
        struct iovec iov[2] = {{&copy, sizeof copy}, {(void *)"\0\0\0\0\0\0\0", c.bytes - sizeof copy}};
        if (ur_spool_append(collector->fd, &c, iov, 2) != 0)
            spool_failed(collector);
        else
            r->process_written = 1;
    }
    for (uint32_t i = 0; i < h->max_slots; i++) {
        int again = 0;
        moved += drain_slot(collector, r, i, &again);
        if (again)
            moved += drain_slot(collector, r, i, &again);
    }
    uint64_t no_slot = atomic_load_explicit(&h->no_slot_drops, memory_order_relaxed);
    if (no_slot != r->no_slot_seen) {
        ur_chunk_t c = {UR_CHUNK_MAGIC, UR_CHUNK_DROPS, 0, r->uid, UR_NO_SLOT, 0, 0, 0, no_slot, 0};
        if (collector->discarding || ur_spool_append(collector->fd, &c, NULL, 0) != 0) {
            spool_failed(collector);
            add_loss(collector, h->pid, no_slot - r->no_slot_seen);
        }
        r->no_slot_seen = no_slot;
    }
    return moved;
}

/* The program's waits for room in r, per slot, into the spool (the ring's counts only grow:
 * a later collector that writes them again for a kept file gives the converter the same). */
static void note_waits(struct collector *collector, struct ring *r)
{
    for (uint32_t i = 0; i < r->hdr->max_slots && !collector->discarding; i++) {
        upti_ring_slot_t *slot = upti_ring_slot(r->map, i);
        uint64_t waits = atomic_load_explicit(&slot->waits, memory_order_relaxed);
        if (waits == 0)
            continue;
        uint64_t ns = atomic_load_explicit(&slot->wait_ns, memory_order_relaxed);
        ur_chunk_t c = {UR_CHUNK_MAGIC, UR_CHUNK_WAITS, 0, r->uid, i, 0, waits, ns, 0, 0};
        if (ur_spool_append(collector->fd, &c, NULL, 0) != 0)
            spool_failed(collector);
    }
}

static void close_ring(struct collector *collector, struct ring *r, int keep)
{
    if (r->map != NULL) {
        note_waits(collector, r);
        atomic_store(&r->hdr->collector_pid, 0);
        munmap(r->map, r->map_size);
    }
    r->map = NULL;
    r->hdr = NULL;
    if (r->pidfd >= 0)
        close(r->pidfd);
    r->pidfd = -1;
    if (!keep)
        unlink(r->path);
}

int ur_collect(const ur_collect_opts *opts)
{
    struct collector *collector = calloc(1, sizeof *collector);
    if (collector == NULL)
        return 1;
    collector->opts = opts;
    collector->pause_ns = BUSY_PAUSE_NS;
    /* This thread's sleeps end on time (the default slack of 50 us would double the
     * 100 us busy pause, and the program's rings fill meanwhile). */
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    collector->wait_pidfd = open_pidfd(opts->wait_pid, 0);
    const char *crash = getenv("UPTI_RING_TEST_CRASH_AFTER_CHUNKS");
    collector->crash_after = crash != NULL ? atol(crash) : 0;
    collector->fd = ur_spool_open(opts->spool, remember, collector);
    if (collector->fd < 0)
        spool_failed(collector); /* the rings are drained all the same */
    for (int i = 0; i < opts->num_files; i++)
        if (!add_ring(collector, opts->files[i]))
            uo_report("%s is not a ring file: skipped", opts->files[i]);
    int rc = 0;
    uint64_t pass = 0;
    for (;;) {
        /* Whether the producers were alive before this pass: a pass that starts
         * after a producer ended sees all it committed. */
        int stopping = opts->stop != NULL && *opts->stop;
        int waiting =
            !stopping && opts->wait_pid > 0 && alive_by(collector->wait_pidfd, opts->wait_pid, 0);
        if (opts->dir != NULL && (pass % 8 == 0 || !waiting))
            scan_dir(collector);
        pass++;
        int alive[MAX_RINGS];
        for (int i = 0; i < collector->num_rings; i++) {
            struct ring *r = &collector->rings[i];
            alive[i] = !r->done && alive_by(r->pidfd, r->hdr->pid, r->hdr->proc_start_ticks);
            /* A producer still running when collecting is stopped keeps its
             * file (an `upti recover` takes the rest). */
        }
        long long moved = 0;
        int open_rings = 0;
        collector->starving = 0;
        for (int i = 0; i < collector->num_rings; i++) {
            struct ring *r = &collector->rings[i];
            if (r->done)
                continue;
            moved += drain_ring(collector, r);
            if (!alive[i] || stopping) {
                r->done = 1; /* ended before this pass, which took the rest */
                close_ring(collector, r, opts->keep || alive[i]);
            } else {
                open_rings++;
            }
        }
        if (open_rings == 0 && !waiting) {
            if (opts->dir == NULL || stopping)
                break;
            int before = collector->num_rings;
            scan_dir(collector); /* a child's file that appeared meanwhile */
            if (collector->num_rings == before)
                break;
            continue;
        }
        /* Idle (nothing moved, nobody waits): poll_ns. Busy: a pause all the
         * same, so that each pass takes a batch (fewer system calls, and the
         * program's threads keep the CPU), unless the pass took a full batch.
         * A producer that waited for room means the pause was too long for
         * its pace: it halves (down to BUSY_PAUSE_MIN_NS), and grows back
         * while nobody waits. Never a pass straight after another for a
         * starving producer: the pass emptied its slot and woke it, and a
         * pass that finds nothing new only takes the CPU it needs. */
        if (collector->starving)
            collector->pause_ns = collector->pause_ns / 2 > BUSY_PAUSE_MIN_NS
                                      ? collector->pause_ns / 2
                                      : BUSY_PAUSE_MIN_NS;
        else if (collector->pause_ns < BUSY_PAUSE_NS)
            collector->pause_ns += collector->pause_ns / 8 + 1;
        if (moved < BUSY_BATCH_BYTES) {
            uint64_t ns = moved == 0 && !collector->starving ? opts->poll_ns : collector->pause_ns;
            struct timespec pause = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
            nanosleep(&pause, NULL);
        }
    }
    for (int i = 0; i < collector->num_rings; i++) {
        if (collector->rings[i].map != NULL)
            close_ring(collector, &collector->rings[i], 1);
        free(collector->rings[i].path);
        free(collector->rings[i].resume_pos);
        free(collector->rings[i].dropped_seen);
    }
    if (collector->fd >= 0 && close(collector->fd) != 0 && !collector->discarding)
        rc = report_errno("cannot write the spool", opts->spool) != 0;
    if (opts->discarded != NULL)
        for (size_t i = 0; i < collector->num_losses; i++)
            opts->discarded(opts->discarded_arg, collector->losses[i].pid,
                            collector->losses[i].records, collector->reason);
    if (collector->wait_pidfd >= 0)
        close(collector->wait_pidfd);
    free(collector->losses);
    free(collector->seen);
    free(collector);
    return rc;
}
