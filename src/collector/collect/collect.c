/* SPDX-License-Identifier: MIT */
/* `upti-ring collect`: drains ring files into the spool while their
 * producers run (the consumer side of include/upti/ring.h).
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
#include "clock.h"
#include "fnv1a.h"
#include "output.h"
#include "private_dir.h"
#include "proc_stat.h"
#include "ring_check.h"
#include "ring_futex.h"
#include "ring_guard.h"
#include "spool.h"
#include "thread_slice.h"
#include <upti/ring.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A pass that moved less than this pauses BUSY_PAUSE_NS before the next one. */
#define BUSY_BATCH_BYTES (256u << 10)
#define BUSY_PAUSE_NS (100u * 1000u)
#define BUSY_PAUSE_MIN_NS (10u * 1000u)
/* The collecting thread's time slice: the least the scheduler takes. A 2 M-call
 * run of one thread, 20 alternating runs: the program waited for room 2.8 ms
 * on average (0.8 median), against 11.6 (2.7) with the default slice. */
#define COLLECTOR_SLICE_NS (100u * 1000u)
/* The pause while the only processes left are forked children yet to record (claims). */
#define CLAIM_POLL_NS (10u * 1000u * 1000u)

struct ring {
    char *path;
    uint64_t uid;            /* in the spool: the header's, or one of its own (unique_uid) */
    upti_ring_header_t *hdr;
    void *map;
    size_t map_size;
    /* Copied from the header once it was checked (ring_check.h): the file is
     * shared, and what is used after the check must be what was checked. */
    uint32_t max_slots;
    uint64_t slot_size;
    int64_t pid;
    uint64_t start_ticks;
    char command[64];        /* its first word, for the line saying it is waited for */
    int alive;               /* its producer ran at the start of this pass */
    int announced;           /* said that the collector waits for its producer */
    uint64_t *resume_pos;    /* per slot: where the spool ends for it */
    uint64_t *dropped_seen;  /* per slot: the last drop count in the spool */
    uint64_t no_slot_seen;
    int process_written;     /* the PROCESS chunk is in the spool */
    int done;                /* the producer ended and the rings are empty */
    int pidfd;               /* the producer's pidfd, -1 if none (then /proc is read) */
    int armed;               /* its doorbell is set for this sleep (sleep_on_doorbells) */
    int closed;              /* its producer closed it (state CLOSED) before a pass that drained it */
    int release;             /* closed: to unmap, and its file to remove (release_rings) */
    int keep_file;           /* closed with its file kept */
};

/* What a resumed spool already holds, per ring uid (known before the files are opened). */
struct seen {
    uint64_t uid;
    uint32_t slot;
    uint64_t pos_end, dropped;
    int process;
};

/* A forked child's claim (UPTI_RING_PENDING_SUFFIX): it may still make a ring file. */
struct pending {
    char *path;
    int done;   /* found unlocked or gone, not a claim, or given up: nothing more from it */
    int locked; /* locked at the last look */
};

struct collector {
    const ur_collect_opts *opts;
    long crash_after; /* tests: SIGKILL itself after this many DATA chunks, before their tail store */
    int fd;
    struct ring *rings;      /* every file seen, as many as there are */
    size_t num_rings, cap_rings;
    upti_map by_path;        /* hash of a ring's path -> its index in rings (known_path) */
    DIR *dir;                /* opts->dir read by scans (rewound), NULL until opened */
    int dirfd;               /* dir's descriptor (the ring files opened in it), or -1 */
    struct stat dir_seen;    /* opts->dir as its last scan began (scan_due), if dir_known */
    int dir_known;
    int unready;             /* the last scan found a ring file still being made */
    struct seen *seen;
    size_t num_seen, cap_seen;
    int wait_pidfd;          /* opts->wait_pid's pidfd, -1 if none */
    int starving;            /* a producer waited for room during this pass */
    int filling;             /* a slot gave more than LIGHT_SHARE of its size this pass */
    uint64_t pause_ns;       /* the busy pause now (BUSY_PAUSE_MIN_NS..BUSY_PAUSE_NS) */
    uint64_t idle_passes;    /* idle passes in a row (idle_pause_ns) */
    int no_doorbells;        /* futex_waitv is not there: opts->wake or not, it polls */
    int slept_long;          /* the last pause was a long idle sleep: scan the folder */
    int said_closed;         /* opts->closed was called, and no ring opened since */
    uint64_t test_doorbell_ns; /* tests: the length of every sleep on doorbells (0: none) */
    int discarding;          /* the spool failed: drain without storing */
    char reason[256];        /* why (strerror of the failed write) */
    uint64_t wait_since;     /* CLOCK_MONOTONIC ns when only producers were left to wait for */
    int told_waiting;        /* the wait without a bound (producer_wait_ns 0) was said */
    int skipped;             /* files skipped as not rings this collector reads */
    ur_loss *losses;         /* records lost because the spool could not be written */
    size_t num_losses, cap_losses;
    struct pending *pending;
    size_t num_pending, cap_pending;
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

/* The pause of an idle pass: opts->poll_ns, doubled every IDLE_STEP idle passes
 * in a row, up to IDLE_MAX_FACTOR times poll_ns (2 ms at 0.5 ms). A pass is idle
 * when no producer waited and no slot gave more than 1/LIGHT_SHARE of its size:
 * a program that records nothing, or a call now and then (a short process
 * starting its runtime), is far from filling a ring, and is not woken for 2,000
 * times a second. Each pass is a wake-up of this thread, two context switches
 * and a few system calls (tens of microseconds of CPU on a virtual machine,
 * taken from the program on a busy one): with a ramp to 2 ms in 64-pass steps,
 * reset by every record, a 0.3 s OpenCL process cost upti some 200 passes,
 * 12 ms of CPU. A pass that fills a slot faster goes back to the short
 * pauses; a producer that fills its ring meanwhile waits for room, which the
 * next pass gives: the cap bounds that wait (a 1 MiB ring fills in about a
 * millisecond at full speed; with an 8 ms cap the 2 M-call bench's program
 * waited 49 to 116 times instead of 31 to 36, on a loaded machine). */
#define IDLE_STEP 4u
#define LIGHT_SHARE 16u
#define IDLE_MAX_FACTOR 4u
/* With doorbells (ur_collect_opts.wake), while the program runs: a producer that
 * fills its slot, or waits for room, rings, and the program's end wakes the
 * collector too; the idle sleep only bounds what nothing rings for (a new
 * process's ring file, a few records under a slot's mark), and grows to 16 times
 * poll_ns (8 ms at 0.5 ms). A 0.1 s OpenCL process cost some 60 passes at a 2 ms
 * cap, most of them finding nothing. */
#define DOORBELL_MAX_FACTOR 16u
static uint64_t idle_pause_ns(uint64_t poll_ns, uint64_t idle_passes, uint64_t max_factor)
{
    uint64_t doublings = idle_passes / IDLE_STEP;
    uint64_t factor = doublings < 8 ? (uint64_t)1 << doublings : max_factor;
    return poll_ns * (factor < max_factor ? factor : max_factor);
}

/* Sleeps ns, or less: while the program is awaited, until it ends (its pidfd
 * becomes readable), so that its last records are taken at once. */
static void pause_pass(const struct collector *c, int waiting, uint64_t ns)
{
    struct timespec pause = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    if (waiting && c->wait_pidfd >= 0) {
        struct pollfd p = {c->wait_pidfd, POLLIN, 0};
        ppoll(&p, 1, &pause, NULL);
    } else {
        nanosleep(&pause, NULL);
    }
}

void ur_collect_wake(uint32_t *word)
{
    __atomic_fetch_add(word, 1, __ATOMIC_RELEASE);
    (void)syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

#if defined(SYS_futex_waitv) && defined(FUTEX_32) && defined(FUTEX_WAITV_MAX)
#define HAVE_FUTEX_WAITV 1
#endif

/* The slots of r that a producer may have claimed: [0, the result) (upti/ring.h,
 * slots_unused). The others are all zero: their pages are neither read nor
 * faulted in (a ring of 256 slots, most never used, has 24 pages of them, and
 * each pass read every slot). Read under the caller's guard. */
static uint32_t slots_claimed(const struct ring *r)
{
    return ur_slots_claimed(r->max_slots,
                            atomic_load_explicit(&r->hdr->slots_unused, memory_order_acquire));
}

#ifdef HAVE_FUTEX_WAITV
/* Sets ring r's doorbell to value; with 1, *due tells whether r needs a pass
 * rather than a sleep: a slot holding its doorbell's bytes unread, or a producer
 * waiting for room (upti/ring.h, "Doorbell": the store, the fence, then the
 * reads). Under a guard: -1 if the file was cut short (the next pass gives it up). */
static int set_doorbell(struct ring *r, uint32_t value, int *due)
{
    ur_guard g;
    ur_guard_push(&g, r->map, r->map_size);
    if (sigsetjmp(g.env, 0) != 0)
        return -1;
    atomic_store(&r->hdr->doorbell, value);
    if (value != 0) {
        atomic_thread_fence(memory_order_seq_cst);
        uint64_t mark = UPTI_RING_DOORBELL_BYTES(r->slot_size);
        uint32_t claimed = slots_claimed(r);
        for (uint32_t i = 0; i < claimed && !*due; i++) {
            upti_ring_slot_t *slot = upti_ring_slot(r->map, i);
            uint64_t head = atomic_load_explicit(&slot->head, memory_order_acquire);
            uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_relaxed);
            *due = head - tail >= mark ||
                   atomic_load_explicit(&slot->starving, memory_order_relaxed) != 0;
        }
    }
    ur_guard_leave(&g);
    return 0;
}
#endif

/* The pause without doorbells: ns at most on opts->wake alone (a plain futex: it
 * ends at the program's end or a stop all the same). */
static void sleep_on_wake(const struct collector *c, uint32_t seen, uint64_t ns)
{
    struct timespec pause = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    (void)syscall(SYS_futex, c->opts->wake, FUTEX_WAIT_PRIVATE, seen, &pause, NULL, 0);
}

/* Sleeps ns at most on opts->wake (unless it moved past seen, read before this
 * pass looked at the program and the stop flag) and the doorbells of the rings
 * (at most FUTEX_WAITV_MAX - 1 of them; with more, the others are polled: ns is
 * capped at poll_ns), or not at all where a ring is due (set_doorbell). Where
 * futex_waitv is refused (not in this kernel, a seccomp filter of a container),
 * on the wake word alone from then on. */
static void sleep_on_doorbells(struct collector *c, uint32_t seen, uint64_t ns)
{
#ifdef HAVE_FUTEX_WAITV
    const ur_collect_opts *o = c->opts;
    struct futex_waitv w[FUTEX_WAITV_MAX];
    w[0] = (struct futex_waitv){.val = seen, .uaddr = (uintptr_t)o->wake,
                                .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG};
    unsigned n = 1;
    int due = 0, capped = 0;
    for (size_t i = 0; i < c->num_rings && !due; i++) {
        struct ring *r = &c->rings[i];
        if (r->done || r->map == NULL)
            continue;
        if (n == FUTEX_WAITV_MAX) {
            ns = ns < o->poll_ns ? ns : o->poll_ns;
            capped = 1;
            break;
        }
        if (set_doorbell(r, 1, &due) != 0)
            continue;
        r->armed = 1;
        w[n++] = (struct futex_waitv){.val = 1, .uaddr = (uintptr_t)&r->hdr->doorbell,
                                      .flags = FUTEX_32};
    }
    if (c->test_doorbell_ns > 0 && n > 1 && !capped)
        ns = c->test_doorbell_ns; /* (only once a ring can ring: a new one is found by a pass) */
    if (!due) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t at = (uint64_t)t.tv_nsec + ns;
        t.tv_sec += (time_t)(at / 1000000000u);
        t.tv_nsec = (long)(at % 1000000000u);
        if (syscall(SYS_futex_waitv, w, n, 0, &t, CLOCK_MONOTONIC) < 0 && errno != EAGAIN &&
            errno != ETIMEDOUT && errno != EINTR) {
            /* Refused (ENOSYS, EPERM from a filter: then never again), or a ring cut
             * short (EFAULT: its next pass gives it up): this pause on the wake word. */
            c->no_doorbells |= errno != EFAULT;
            sleep_on_wake(c, seen, ns);
        }
    }
    for (size_t i = 0; i < c->num_rings; i++) {
        struct ring *r = &c->rings[i];
        if (r->armed && r->map != NULL)
            (void)set_doorbell(r, 0, &due);
        r->armed = 0;
    }
#else
    c->no_doorbells = 1; /* (headers older than futex_waitv) */
    sleep_on_wake(c, seen, ns);
#endif
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

/* Whether path is one of collector->rings already: found by the hash of its
 * name (a scan sees every file of the folder again, and a folder may hold
 * thousands), compared whole. */
static int known_path(const struct collector *collector, const char *path)
{
    const uint64_t *i;
    uint64_t h = upti_fnv1a64(UPTI_FNV1A64_BASIS, path);
    for (size_t pos = 0; (i = upti_map_next(&collector->by_path, h, &pos)) != NULL;)
        if (strcmp(collector->rings[*i].path, path) == 0)
            return 1;
    return 0;
}

/* A new entry for path in collector->rings (zeroed but path), or NULL. */
static struct ring *new_ring(struct collector *collector, const char *path)
{
    if (uo_grow(&collector->rings, &collector->cap_rings, collector->num_rings + 1,
                sizeof *collector->rings, 64) != 0)
        return NULL;
    char *copy = strdup(path);
    if (copy == NULL)
        return NULL;
    uint64_t *index = upti_map_add(&collector->by_path, upti_fnv1a64(UPTI_FNV1A64_BASIS, path));
    if (index == NULL) {
        free(copy);
        return NULL;
    }
    *index = collector->num_rings;
    struct ring *r = &collector->rings[collector->num_rings++];
    *r = (struct ring){.path = copy, .pidfd = -1};
    return r;
}

/* A file that is not (or no longer) a ring this collector reads: said once,
 * remembered so that the next scans pass it by. -1. */
static int skip_file(struct collector *collector, const char *path, const char *why)
{
    uo_report("%s is not a ring file this collector reads (%s): skipped", path, why);
    struct ring *r = new_ring(collector, path);
    if (r != NULL)
        r->done = 1;
    collector->skipped++;
    return -1;
}

/* The spool's uid for a ring whose header uid another file of this collection
 * has already (a copied or forged file): one derived from its name, so that
 * each file is a process of its own, and a collector resumed on the same files
 * derives the same one. */
static uint64_t unique_uid(const struct collector *collector, uint64_t uid, const char *path)
{
    const char *name = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
    for (int round = 0; round < 64; round++) {
        int taken = 0;
        for (size_t i = 0; i < collector->num_rings && !taken; i++)
            taken = collector->rings[i].max_slots != 0 && collector->rings[i].uid == uid;
        if (!taken)
            return uid;
        uid ^= upti_fnv1a64(UPTI_FNV1A64_BASIS ^ (uint64_t)round, name);
    }
    return 0;
}

static void ring_cut(struct collector *collector, struct ring *r);

/* The header of a ring file just mapped, checked (ring_check.h) into *checked. 0: a ring;
 * 1: not yet one (being created, or cut short while read); -1: not a ring this collector
 * reads (why says why). */
static int check_mapped(void *map, size_t size, upti_ring_header_t *checked, char *why,
                        size_t cap)
{
    upti_ring_header_t *h = map;
    ur_guard g;
    ur_guard_push(&g, map, size);
    if (sigsetjmp(g.env, 0) != 0)
        return 1; /* cut short meanwhile: the next scan looks at it again */
    int rc = 0;
    if (h->magic != UPTI_RING_MAGIC ||
        atomic_load_explicit(&h->state, memory_order_acquire) == UPTI_RING_STATE_CREATING)
        rc = 1;
    else if (ur_ring_check(map, (uint64_t)size, checked, why, cap) != 0)
        rc = -1;
    ur_guard_leave(&g);
    return rc;
}

/* Opens the ring file name in dirfd (dirfd -1: the path as given), maps it and
 * checks its header (ring_check.h). 1: added; 0: not (yet) a ring: the next scan
 * looks again; -1: skipped for good (said). */
static int add_ring(struct collector *collector, int dirfd, const char *name, const char *path)
{
    if (known_path(collector, path))
        return 0;
    /* Never through a symbolic link, never a FIFO or a device, only a file of the caller. */
    int fd = dirfd >= 0 ? upti_open_in_dir(dirfd, name, O_RDWR, 0, 0)
                        : upti_open_file(path, O_RDWR, 0, 0);
    if (fd < 0) {
        if (errno == ELOOP || errno == EPERM)
            return skip_file(collector, path, errno == ELOOP ? "a symbolic link"
                                                              : "not a regular file of yours");
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < UPTI_RING_HEADER_BYTES ||
        (uint64_t)st.st_size > SIZE_MAX) {
        collector->unready = 1; /* (created, not yet sized) */
        close(fd);
        return 0;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    upti_ring_header_t *h = map;
    char why[256];
    upti_ring_header_t checked;
    int check = check_mapped(map, (size_t)st.st_size, &checked, why, sizeof why);
    if (check != 0) {
        collector->unready |= check > 0;
        munmap(map, (size_t)st.st_size); /* 1: being created, the next scan takes it */
        return check < 0 ? skip_file(collector, path, why) : 0;
    }
    uint64_t uid = unique_uid(collector, checked.uid, path);
    if (uid == 0) {
        munmap(map, (size_t)st.st_size);
        return skip_file(collector, path, "its uid is another file's");
    }
    uint32_t max_slots = checked.max_slots;
    uint64_t *resume_pos = calloc(max_slots, sizeof *resume_pos);
    uint64_t *dropped_seen = calloc(max_slots, sizeof *dropped_seen);
    struct ring *r = resume_pos != NULL && dropped_seen != NULL ? new_ring(collector, path) : NULL;
    if (r == NULL) {
        free(resume_pos);
        free(dropped_seen);
        munmap(map, (size_t)st.st_size);
        return 0;
    }
    if (uid != checked.uid)
        uo_report("%s has the ring uid of another file (a copy?): collected as a process of "
                  "its own", path);
    *r = (struct ring){.path = r->path, .uid = uid, .hdr = h, .map = map,
                       .map_size = (size_t)st.st_size, .max_slots = max_slots,
                       .slot_size = checked.slot_size, .pid = checked.pid,
                       .start_ticks = checked.proc_start_ticks, .resume_pos = resume_pos,
                       .dropped_seen = dropped_seen, .pidfd = -1};
    memcpy(r->command, checked.command, sizeof r->command - 1);
    r->command[sizeof r->command - 1] = '\0';
    r->command[strcspn(r->command, " ")] = '\0';
    /* Its producer is the process of that pid only if it started when the ring
     * says (a ring naming pid 1, or a pid reused since, is not waited for). */
    if (r->start_ticks != 0)
        r->pidfd = open_pidfd(r->pid, r->start_ticks);
    for (uint32_t i = 0; i < max_slots; i++) {
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
    ur_guard g;
    ur_guard_push(&g, map, r->map_size);
    if (sigsetjmp(g.env, 0) != 0) {
        ring_cut(collector, r);
        return 1;
    }
    atomic_store(&h->collector_pid, (int64_t)getpid());
    ur_guard_leave(&g);
    return 1;
}

static void add_pending(struct collector *collector, const char *path)
{
    for (size_t i = 0; i < collector->num_pending; i++)
        if (strcmp(collector->pending[i].path, path) == 0)
            return;
    char *copy = strdup(path);
    if (copy == NULL || uo_grow(&collector->pending, &collector->cap_pending,
                                collector->num_pending + 1, sizeof *collector->pending, 16) != 0) {
        free(copy);
        return;
    }
    collector->pending[collector->num_pending++] = (struct pending){.path = copy};
}

int ur_claim_state(const char *path)
{
    /* O_NONBLOCK: a FIFO's open for reading would wait for a writer for ever. */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    struct stat st;
    int state = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
        state = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return state;
}

/* The forked children that may still make a ring file: those whose claim is
 * still locked (upti/ring.h). A claim found unlocked is done, and removed;
 * anything else under that name is said once and not waited for. */
static int pending_alive(struct collector *collector)
{
    int alive = 0;
    for (size_t i = 0; i < collector->num_pending; i++) {
        struct pending *p = &collector->pending[i];
        if (p->done)
            continue;
        int state = ur_claim_state(p->path);
        p->locked = state == 1;
        if (p->locked) {
            alive++;
            continue;
        }
        p->done = 1;
        if (state < 0)
            uo_report("%s is not a claim (not a regular file of yours): not waited for", p->path);
        else if (!collector->opts->keep)
            unlink(p->path);
    }
    return alive;
}

/* opts->producer_wait_ns has passed: the claims still locked are said and kept
 * (a process that neither records nor ends holds them; upti recover takes its
 * ring later). */
static void give_up_claims(struct collector *collector)
{
    for (size_t i = 0; i < collector->num_pending; i++) {
        struct pending *p = &collector->pending[i];
        if (p->done || !p->locked)
            continue;
        uo_report("%s is still locked after %llu s: the process that may still record holds it "
                  "(kept: upti recover again once it has ended)", p->path,
                  (unsigned long long)(collector->opts->producer_wait_ns / 1000000000u));
        p->done = 1;
    }
}

/* Whether opts->dir changed since the last scan began: its size (a tmpfs or
 * ext4 folder grows with its entries), modification or change time. A file
 * that comes in while another goes, within a clock tick of that scan's start
 * (the times are coarse where the kernel has no fine-grained ones), leaves no
 * trace here: the periodic scans find it. */
static int dir_changed(struct collector *collector)
{
    struct stat st;
    if (!collector->dir_known || fstat(collector->dirfd, &st) != 0)
        return 1;
    const struct stat *was = &collector->dir_seen;
    return st.st_size != was->st_size || st.st_mtim.tv_sec != was->st_mtim.tv_sec ||
           st.st_mtim.tv_nsec != was->st_mtim.tv_nsec ||
           st.st_ctim.tv_sec != was->st_ctim.tv_sec || st.st_ctim.tv_nsec != was->st_ctim.tv_nsec;
}

/* Whether this pass scans opts->dir. While the program runs, the folder is
 * read only once its state changed (dir_changed: one fstat), or the last scan
 * found a ring file still being made (its producer writes its header through
 * its mapping, which changes nothing in the folder), every 16th pass and after
 * a long sleep. A scan is some six system calls and a read of the folder: a
 * 0.1 s OpenCL process cost 20 to 30 of them at every 8th pass, most finding
 * nothing new, all of it CPU taken beside the program. (An inotify watch told
 * of new files for one read a pass, but closing it waits for the kernel to
 * free its mark, an RCU grace period: 0.1 to 16 ms, 10 ms in the median, at
 * the end of every short process.) Once the program has ended (or without
 * one), every pass. */
static int scan_due(struct collector *collector, uint64_t pass, int waiting)
{
    if (collector->dirfd < 0 || !waiting)
        return 1;
    return pass % 16 == 0 || collector->slept_long || collector->unready ||
           dir_changed(collector);
}

static void scan_dir(struct collector *collector)
{
    if (collector->dir == NULL) {
        int fd = open(collector->opts->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || (collector->dir = fdopendir(fd)) == NULL) {
            if (fd >= 0)
                close(fd);
            return;
        }
        collector->dirfd = fd;
    }
    collector->dir_known = fstat(collector->dirfd, &collector->dir_seen) == 0;
    rewinddir(collector->dir);
    collector->unready = 0;
    struct dirent *e;
    while ((e = readdir(collector->dir)) != NULL) {
        int ring = ur_name_has_suffix(e->d_name, UPTI_RING_SUFFIX);
        if (!ring && !ur_name_has_suffix(e->d_name, UPTI_RING_PENDING_SUFFIX))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", collector->opts->dir, e->d_name);
        if (ring)
            add_ring(collector, collector->dirfd, e->d_name, path);
        else
            add_pending(collector, path);
    }
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

void ur_loss_add(ur_loss **list, size_t *num, size_t *cap, int64_t pid, uint64_t records)
{
    if (records == 0)
        return;
    for (size_t i = 0; i < *num; i++) {
        if ((*list)[i].pid == pid) {
            (*list)[i].records += records;
            return;
        }
    }
    if (uo_grow(list, cap, *num + 1, sizeof **list, 8) == 0)
        (*list)[(*num)++] = (ur_loss){pid, records};
}

static void add_loss(struct collector *collector, int64_t pid, uint64_t records)
{
    ur_loss_add(&collector->losses, &collector->num_losses, &collector->cap_losses, pid, records);
}

/* The records in [tail, head) of a slot: its tracing records (what the
 * converter counts as records: upti_tracing_kind_t values and the compact
 * records), not padding, THREAD, AGENT or TOOL records. A header that cannot
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

/* Whether a slot's data_offset, read once, places its data inside the file past the
 * slots' table (0 is a slot never claimed: it holds nothing to read). */
static int slot_data_fits(const struct ring *r, uint64_t offset)
{
    return offset >= UPTI_RING_HEADER_BYTES + (uint64_t)r->max_slots * UPTI_RING_SLOT_BYTES &&
           ur_span_fits(offset, r->slot_size, r->map_size);
}

/* Moves the slot's tail to head (the space is free again), waking its producer
 * if it waits for room. The fence orders the tail store before the starving
 * load, as the producer's orders its starving store before its tail load:
 * one of the two sees the other (ring_futex.h). A tail that moves has room_at
 * stored first, which the tail's release publishes: a producer that waited
 * tells the time until this room from the time it then waited to run
 * (upti/ring.h, "Full ring"); a tail stored again where it was (a discarding
 * pass) made no room and keeps its time. */
static void give_back(upti_ring_slot_t *slot, uint64_t head)
{
    if (atomic_load_explicit(&slot->tail, memory_order_relaxed) != head)
        atomic_store_explicit(&slot->room_at, upti_mono_ns(), memory_order_relaxed);
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
    uint64_t size = r->slot_size, rest = size - (tail & (size - 1));
    uint64_t offset = slot->data_offset; /* read once: what is used is what was checked */
    if (head - tail < rest || head - tail > size || rest < sizeof(upti_ring_record_header_t) ||
        !slot_data_fits(r, offset))
        return tail;
    upti_ring_record_header_t h;
    memcpy(&h, (const uint8_t *)r->map + offset + (tail & (size - 1)), sizeof h);
    return h.kind == UPTI_RING_KIND_PADDING && h.len == rest ? tail + rest : tail;
}

/* head, or where a padding record that ends a lap early starts, when [tail, head)
 * reaches the ring's end: the records there are walked (once per lap) to find it,
 * so that what follows it is not read. */
static uint64_t lap_end(const struct ring *r, const upti_ring_slot_t *slot, uint64_t tail,
                        uint64_t head)
{
    uint64_t size = r->slot_size, mask = size - 1;
    uint64_t offset = slot->data_offset; /* read once: what is used is what was checked */
    if (head - tail > size || (tail & mask) + (head - tail) < size ||
        !slot_data_fits(r, offset))
        return head;
    const uint8_t *data = (const uint8_t *)r->map + offset;
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
    uint64_t size = r->slot_size, lost = 0, offset = slot->data_offset;
    if (head != tail && head - tail <= size && slot_data_fits(r, offset))
        lost = count_records((const uint8_t *)r->map + offset, size - 1, tail, head);
    lost += dropped - r->dropped_seen[i];
    r->dropped_seen[i] = dropped;
    r->resume_pos[i] = head;
    give_back(slot, head);
    add_loss(collector, r->pid, lost);
}

/* Drains slot i of ring r (see drain_ring). Returns records' bytes moved; *again is set
 * when it stopped at a padding record that ends a lap early (lap_end): the rest is read by
 * a second call, past it. */
static long long drain_slot(struct collector *collector, struct ring *r, uint32_t i, int *again)
{
    long long moved = 0;
    uint64_t size = r->slot_size, mask = size - 1;
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
        /* Read once: the file is shared, and what is used is what was checked. */
        uint64_t offset = slot->data_offset;
        if (head - tail > size || !slot_data_fits(r, offset)) {
            uo_report("%s: slot %u is corrupt (head %llu, tail %llu): skipped", r->path, i,
                      (unsigned long long)head, (unsigned long long)tail);
            give_back(slot, head);
            return moved;
        }
        const uint8_t *data = (const uint8_t *)r->map + offset;
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
            if (errno == EFAULT)
                ur_guard_fault(); /* the ring's file was cut short: as a SIGBUS (drain_guarded) */
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
        collector->filling |= n > size / LIGHT_SHARE;
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
        copy.max_slots = r->max_slots; /* what was checked, whatever the file says now */
        copy.slot_size = r->slot_size;
        copy.pid = r->pid;
        struct iovec iov[2] = {{&copy, sizeof copy}, {(void *)"\0\0\0\0\0\0\0", c.bytes - sizeof copy}};
        if (ur_spool_append(collector->fd, &c, iov, 2) != 0)
            spool_failed(collector);
        else
            r->process_written = 1;
    }
    uint32_t claimed = slots_claimed(r);
    for (uint32_t i = 0; i < claimed; i++) {
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
            add_loss(collector, r->pid, no_slot - r->no_slot_seen);
        }
        r->no_slot_seen = no_slot;
    }
    return moved;
}

/* The program's waits for room in r, per slot, into the spool (the ring's counts only grow:
 * a later collector that writes them again for a kept file gives the converter the same). */
static void note_waits(struct collector *collector, struct ring *r)
{
    uint32_t claimed = slots_claimed(r);
    for (uint32_t i = 0; i < claimed && !collector->discarding; i++) {
        upti_ring_slot_t *slot = upti_ring_slot(r->map, i);
        uint64_t waits = atomic_load_explicit(&slot->waits, memory_order_relaxed);
        if (waits == 0)
            continue;
        uint64_t ns = atomic_load_explicit(&slot->wait_ns, memory_order_relaxed);
        uint64_t after = atomic_load_explicit(&slot->after_room_ns, memory_order_relaxed);
        ur_chunk_t c = {UR_CHUNK_MAGIC, UR_CHUNK_WAITS, 0, r->uid, i, 0, waits, ns, after, 0};
        if (ur_spool_append(collector->fd, &c, NULL, 0) != 0)
            spool_failed(collector);
    }
}

/* The last reads of a ring's header and slots, before it is unmapped. */
static void close_mapped(struct collector *collector, struct ring *r)
{
    ur_guard g;
    ur_guard_push(&g, r->map, r->map_size);
    if (sigsetjmp(g.env, 0) != 0) {
        uo_report("%s was cut short while being read (by its program or another process "
                  "of yours): its counts of waits are lost", r->path);
        return;
    }
    note_waits(collector, r);
    atomic_store(&r->hdr->collector_pid, 0);
    ur_guard_leave(&g);
}

/* drain_ring() under a guard (ring_guard.h): a ring whose file is cut short meanwhile
 * is given up (ring_cut), not a SIGBUS that ends the collector and every trace it holds. */
static long long drain_guarded(struct collector *collector, struct ring *r)
{
    ur_guard g;
    ur_guard_push(&g, r->map, r->map_size);
    if (sigsetjmp(g.env, 0) != 0) {
        ring_cut(collector, r);
        return 0;
    }
    /* Read first: what the producer committed before it closed the ring, this pass takes. */
    int closed = atomic_load_explicit(&r->hdr->state, memory_order_acquire) == UPTI_RING_STATE_CLOSED;
    long long moved = drain_ring(collector, r);
    r->closed = closed;
    ur_guard_leave(&g);
    return moved;
}

/* Ends the reading of ring r: its last counts go to the spool and its header
 * says no collector reads it. Unmapping it and removing its file (unless
 * keep) wait for release_rings, after the pass (ur_collect_opts.drained,
 * leave_mapped). */
static void close_ring(struct collector *collector, struct ring *r, int keep)
{
    if (r->map != NULL)
        close_mapped(collector, r);
    if (r->pidfd >= 0)
        close(r->pidfd);
    r->pidfd = -1;
    r->release = 1;
    r->keep_file = keep;
}

/* Unmaps the rings closed since the last call (but with unmap 0) and removes
 * their files (close_ring). */
static void release_rings(struct collector *collector, int unmap)
{
    for (size_t i = 0; i < collector->num_rings; i++) {
        struct ring *r = &collector->rings[i];
        if (!r->release)
            continue;
        if (r->map != NULL && unmap)
            munmap(r->map, r->map_size);
        r->map = NULL;
        r->hdr = NULL;
        r->release = 0;
        if (!r->keep_file)
            unlink(r->path);
    }
}

/* The file of ring r was cut short while the collector read it (truncated by its
 * program or another process of the user): reading on would fault again. What the spool
 * has of it stays; the rest is lost, said once. Closed as a ring whose producer ended
 * (unmapped first: nothing more is read from it), its file removed unless kept. */
static void ring_cut(struct collector *collector, struct ring *r)
{
    uo_report("%s was cut short while being read (by its program or another process of "
              "yours): what it held past what was collected is lost", r->path);
    munmap(r->map, r->map_size);
    r->map = NULL;
    r->done = 1;
    r->alive = 0;
    close_ring(collector, r, collector->opts->keep);
}

/* opts->closed, once every ring found so far was closed by its producer and
 * drained since (or has ended): said again only after a ring that is not. */
static void say_if_all_closed(struct collector *collector)
{
    int rings = 0, all = 1;
    for (size_t i = 0; i < collector->num_rings && all; i++) {
        const struct ring *r = &collector->rings[i];
        if (r->max_slots == 0)
            continue; /* a file skipped, or not yet a ring */
        rings++;
        all = r->done || r->closed;
    }
    if (!all || rings == 0) {
        collector->said_closed = 0;
        return;
    }
    if (!collector->said_closed)
        collector->opts->closed(collector->opts->closed_arg);
    collector->said_closed = 1;
}

/* opts->producer_wait_ns: whether the producers still running have been
 * waited for that long (counted from the first pass with nothing else to wait for). */
static int waited_enough(struct collector *collector)
{
    if (collector->opts->producer_wait_ns == 0)
        return 0;
    uint64_t now = upti_clock_now();
    if (collector->wait_since == 0)
        collector->wait_since = now;
    return now - collector->wait_since >= collector->opts->producer_wait_ns;
}

/* How long a wait without a bound (producer_wait_ns 0: upti run waiting for
 * the processes its program left) goes on before it is said. */
#define SAY_WAIT_AFTER_NS (10ull * 1000 * 1000 * 1000)

/* A wait without a bound, for producers and claims once the --wait-pid program
 * ended (a daemon that neither ends nor records is waited for as long as it
 * runs): after SAY_WAIT_AFTER_NS, says once whom it waits for and how to stop. */
static void say_unbounded_wait(struct collector *collector)
{
    if (collector->told_waiting || collector->opts->producer_wait_ns != 0 ||
        collector->opts->wait_pid <= 0)
        return;
    uint64_t now = upti_clock_now();
    if (collector->wait_since == 0)
        collector->wait_since = now;
    if (now - collector->wait_since < SAY_WAIT_AFTER_NS)
        return;
    char pids[128] = "";
    size_t n = 0, count = 0;
    for (size_t i = 0; i < collector->num_rings; i++) {
        const struct ring *r = &collector->rings[i];
        if (!r->done && r->alive && n + 24 < sizeof pids)
            n += (size_t)snprintf(pids + n, sizeof pids - n, " %lld", (long long)r->pid);
        count += !r->done && r->alive;
    }
    for (size_t i = 0; i < collector->num_pending; i++) {
        const struct pending *p = &collector->pending[i];
        const char *base = strrchr(p->path, '/');
        int pid = 0;
        if (p->done || !p->locked)
            continue;
        count++;
        if (sscanf(base != NULL ? base + 1 : p->path, "upti-%d-", &pid) == 1 && n + 24 < sizeof pids)
            n += (size_t)snprintf(pids + n, sizeof pids - n, " %d", pid);
    }
    uo_report("the program has ended; waiting for %zu traced process%s it started (pid%s%s) to "
              "end: Ctrl-C stops the wait, what they recorded is written and the rest kept "
              "for upti recover", count, count == 1 ? "" : "es", count == 1 ? "" : "s", pids);
    collector->told_waiting = 1;
}

/* Says once which process the collector waits for, and for how long at most. */
static void announce_wait(struct collector *collector, struct ring *r)
{
    uo_report("waiting for pid %lld (%s, started at tick %llu, as its ring says) to end: it "
              "writes to %s (at most %llu s)", (long long)r->pid, r->command,
              (unsigned long long)r->start_ticks, r->path,
              (unsigned long long)(collector->opts->producer_wait_ns / 1000000000u));
    r->announced = 1;
}

/* A setting for UPTI's own tests, from the environment: honoured only by a program
 * of the build tree (UPTI_BUILD_BIN_DIR, set by CMake), else 0. An installed upti,
 * whatever its environment, never kills itself nor sleeps longer. */
static long test_setting(const char *name)
{
    const char *v = getenv(name);
#ifdef UPTI_BUILD_BIN_DIR
    char exe[4096];
    ssize_t n = v != NULL ? readlink("/proc/self/exe", exe, sizeof exe - 1) : -1;
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL)
        return 0;
    *slash = '\0';
    return strcmp(exe, UPTI_BUILD_BIN_DIR) == 0 ? atol(v) : 0;
#else
    (void)v;
    return 0;
#endif
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
    /* And once woken (a doorbell, its pause's end) it runs at once rather than after
     * the slice of the thread on the CPU, up to 3 ms, while a ring fills (thread_slice.h). */
    (void)ur_thread_slice_set(0, COLLECTOR_SLICE_NS);
    collector->wait_pidfd = open_pidfd(opts->wait_pid, 0);
    /* UPTI_RING_TEST_CRASH_AFTER_CHUNKS: rings.collector_kill. UPTI_TEST_DOORBELL_SLEEP_MS:
     * every sleep on doorbells that long (crash.run_doorbell: only the doorbells and the
     * program's end can end it). */
    collector->crash_after = test_setting("UPTI_RING_TEST_CRASH_AFTER_CHUNKS");
    collector->test_doorbell_ns = (uint64_t)test_setting("UPTI_TEST_DOORBELL_SLEEP_MS") * 1000000u;
    collector->fd = ur_spool_open(opts->spool, remember, collector);
    if (collector->fd < 0)
        spool_failed(collector); /* the rings are drained all the same */
    collector->dirfd = -1;
    for (int i = 0; i < opts->num_files; i++)
        if (add_ring(collector, -1, NULL, opts->files[i]) == 0)
            uo_report("%s is not a ring file: skipped", opts->files[i]);
    int rc = 0;
    uint64_t pass = 0;
    for (;;) {
        /* Whether the producers were alive before this pass: a pass that starts
         * after a producer ended sees all it committed. */
        /* Read first: a wake after it (the program's end, a stop) ends this pass's sleep. */
        uint32_t wake_seen = opts->wake != NULL ? __atomic_load_n(opts->wake, __ATOMIC_ACQUIRE) : 0;
        int stopping = opts->stop != NULL && __atomic_load_n(opts->stop, __ATOMIC_ACQUIRE);
        int waiting =
            !stopping && opts->wait_pid > 0 && alive_by(collector->wait_pidfd, opts->wait_pid, 0);
        release_rings(collector, 1); /* (those the last pass closed) */
        if (opts->dir != NULL && scan_due(collector, pass, waiting))
            scan_dir(collector);
        pass++;
        /* Checked before the rings: a child's claim goes after its ring file exists.
         * Only once the --wait-pid program ended: until then the claims decide
         * nothing (a program with 1,000 idle forked children cost the collector
         * 3,000 system calls a pass, 4 s of CPU over 10 s). */
        int claims = stopping || waiting ? 0 : pending_alive(collector);
        for (size_t i = 0; i < collector->num_rings; i++) {
            struct ring *r = &collector->rings[i];
            /* A producer whose start time is unknown is not waited for. */
            r->alive = !r->done && r->start_ticks != 0 &&
                       alive_by(r->pidfd, r->pid, r->start_ticks);
            /* A producer still running when collecting is stopped keeps its
             * file (an `upti recover` takes the rest). */
        }
        int expired = !stopping && !waiting && waited_enough(collector);
        if (expired && claims > 0) {
            give_up_claims(collector);
            claims = 0;
        }
        long long moved = 0;
        int open_rings = 0;
        collector->starving = 0;
        collector->filling = 0;
        for (size_t i = 0; i < collector->num_rings; i++) {
            struct ring *r = &collector->rings[i];
            if (r->done)
                continue;
            moved += drain_guarded(collector, r);
            if (r->done)
                continue; /* cut short (ring_cut) */
            if (!r->alive || stopping || expired) {
                if (r->alive && expired)
                    uo_report("pid %lld still runs after %llu s: %s is kept (upti recover "
                              "again once it has ended)", (long long)r->pid,
                              (unsigned long long)(opts->producer_wait_ns / 1000000000u), r->path);
                r->done = 1; /* ended before this pass, which took the rest */
                close_ring(collector, r, opts->keep || r->alive);
            } else {
                open_rings++;
                if (opts->producer_wait_ns > 0 && !waiting && !r->announced)
                    announce_wait(collector, r);
            }
        }
        if (moved > 0 && opts->spool_complete != NULL && !collector->discarding) {
            /* Every chunk of this pass is whole in the spool: a converter may read it. */
            off_t end = lseek(collector->fd, 0, SEEK_CUR);
            if (end > 0) {
                __atomic_store_n(opts->spool_complete, (uint64_t)end, __ATOMIC_RELEASE);
                if (opts->stored != NULL)
                    opts->stored(opts->stored_arg, (uint64_t)end);
            }
        }
        if (opts->closed != NULL)
            say_if_all_closed(collector);
        if (!waiting && !stopping && (open_rings > 0 || claims > 0))
            say_unbounded_wait(collector);
        if (open_rings == 0 && !waiting && claims == 0) {
            if (opts->dir == NULL || stopping)
                break;
            size_t before = collector->num_rings;
            size_t claims_before = collector->num_pending;
            scan_dir(collector); /* a child's file or claim that appeared meanwhile */
            if (collector->num_rings == before && collector->num_pending == claims_before)
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
        int idle = !collector->filling && !collector->starving;
        collector->idle_passes = idle ? collector->idle_passes + 1 : 0;
        collector->slept_long = 0;
        if (moved < BUSY_BATCH_BYTES) {
            int doorbells = opts->wake != NULL;
            uint64_t ns = idle ? idle_pause_ns(opts->poll_ns, collector->idle_passes - 1,
                                               doorbells && !collector->no_doorbells && waiting
                                                   ? DOORBELL_MAX_FACTOR
                                                   : IDLE_MAX_FACTOR)
                               : collector->pause_ns;
            if (open_rings == 0 && !waiting && claims > 0)
                ns = CLAIM_POLL_NS; /* only a daemon that has not recorded yet: no hurry */
            /* The short pauses of a busy pass stay plain sleeps: what they wait
             * for is a batch, and a producer that far behind its mark rings nothing. */
            if (doorbells && collector->no_doorbells) {
                sleep_on_wake(collector, wake_seen, ns);
            } else if (doorbells && ns >= opts->poll_ns) {
                sleep_on_doorbells(collector, wake_seen, ns);
                collector->slept_long = ns > IDLE_MAX_FACTOR * opts->poll_ns;
            } else {
                pause_pass(collector, waiting, ns);
            }
        }
    }
    for (size_t i = 0; i < collector->num_rings; i++)
        if (collector->rings[i].map != NULL && !collector->rings[i].release)
            close_ring(collector, &collector->rings[i], 1); /* (a producer still running) */
    if (collector->fd >= 0 && close(collector->fd) != 0 && !collector->discarding)
        rc = report_errno("cannot write the spool", opts->spool) != 0;
    if (opts->discarded != NULL)
        for (size_t i = 0; i < collector->num_losses; i++)
            opts->discarded(opts->discarded_arg, collector->losses[i].pid,
                            collector->losses[i].records, collector->reason);
    if (opts->skipped != NULL)
        *opts->skipped = collector->skipped;
    if (opts->drained != NULL)
        opts->drained(opts->drained_arg);
    release_rings(collector, !opts->leave_mapped);
    for (size_t i = 0; i < collector->num_rings; i++) {
        free(collector->rings[i].path);
        free(collector->rings[i].resume_pos);
        free(collector->rings[i].dropped_seen);
    }
    if (collector->wait_pidfd >= 0)
        close(collector->wait_pidfd);
    if (collector->dir != NULL)
        closedir(collector->dir); /* (and dirfd) */
    free(collector->rings);
    upti_map_free(&collector->by_path);
    for (size_t i = 0; i < collector->num_pending; i++)
        free(collector->pending[i].path);
    free(collector->pending);
    free(collector->losses);
    free(collector->seen);
    free(collector);
    return rc;
}
