/* SPDX-License-Identifier: MIT */
/* Shared buffers: per-thread rings in a file-backed shared mapping that a
 * collector in another process drains (include/upti/ring.h is the
 * format, docs/shared-rings.md the design).
 *
 * A shared buffer is an ordinary buffer (buffer.c, ring.h) whose producers
 * live in the ring file: each thread's struct upti_producer is the first
 * 320 bytes of its slot's control block, so the unchanged inline fast path
 * (reserve, write, store-release of head) commits straight into the file. No
 * callback thread delivers it; nothing in the process reads it back.
 */
#include "clock.h"
#include "internal.h"
#include "ring_futex.h"
#include "env.h"
#include "private_dir.h"
#include "proc_stat.h"
#include "ring.h"
#include "ring_room.h"
#include "run_folder.h"
#include <upti/ring.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The producer's own fields sit where the format says the collector finds them. */
_Static_assert(offsetof(struct upti_producer, data) == offsetof(upti_ring_slot_t, producer_base),
               "slot: producer_base");
_Static_assert(offsetof(struct upti_producer, dropped) == offsetof(upti_ring_slot_t, dropped),
               "slot: dropped");
_Static_assert(offsetof(struct upti_producer, starving) == offsetof(upti_ring_slot_t, starving) &&
                   sizeof(((struct upti_producer *)0)->starving) == 1,
               "slot: starving");
_Static_assert(offsetof(struct upti_producer, head) == offsetof(upti_ring_slot_t, head),
               "slot: head");
_Static_assert(offsetof(struct upti_producer, tail) == offsetof(upti_ring_slot_t, tail),
               "slot: tail");
_Static_assert(sizeof(struct upti_producer) <= offsetof(upti_ring_slot_t, owner),
               "slot: the producer fits before owner");
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "positions are 64-bit");

#define DEFAULT_DIR "/dev/shm"
#define PAGE 4096u
/* The part of its ring a producer writes while the collector keeps up: larger
 * rings are the room for bursts, touched only when the collector falls behind. */
#define HOT_BYTES ((size_t)1 << 20)

/* A slot of the hot part's size or less (the default 1 MiB) gets storage this much at
 * its claim, then at least as much again as it had each time its producer goes further
 * (grow_limit). The whole slot at its claim cost a short process 0.1 to 1 ms per MiB
 * (zeroed pages, on a virtual machine more) for the 20 to 100 KiB most of its threads
 * write, and as much again to free at the end. */
#define RESERVE_STEP ((size_t)128 << 10)

/* Where a producer's writing goes back to the ring's start while the collector keeps up:
 * its hot part, within what has storage. */
static inline size_t hot_limit(const struct upti_producer *p)
{
    size_t hot = p->size < HOT_BYTES ? p->size : HOT_BYTES;
    return hot < p->reserved ? hot : p->reserved;
}

struct upti_shared_ring {
    char path[PATH_MAX];
    char dir[PATH_MAX - 128]; /* where a forked child creates its own file */
    void *map;
    size_t map_size;
    upti_ring_header_t *hdr;
    uint32_t max_slots;
    size_t slot_size;
    uint64_t full_wait_ns;
    dev_t dev; /* the file's: a slot's storage may be allocated through its path */
    ino_t ino;
    /* No storage could be had for a slot of this file: slots never used stay so. */
    _Atomic bool room_exhausted;
    /* A thread waited full_wait_ns for a slot a thread left to be drained, in vain: threads
     * without a slot drop at once until a left slot is taken again (wait_for_left_slot). */
    _Atomic bool left_wait_stalled;
    /* A forked child's file is created at its first record (a child that
     * execs at once leaves none); the lock orders the child's threads. */
    bool file_pending;
    int pending_fd; /* the child's claim while file_pending (UPTI_RING_PENDING_SUFFIX), or -1 */
    bool claims;    /* dir is a collector's folder of upti's: its collector waits for claims */
    /* Of its files: UPTI_RING_VERSION in a collector's folder of upti's (claims), whose
     * reader is upti's; 1 elsewhere, for a reader of the format's first version (a tool's
     * own collector), which knows no compact API record. */
    uint32_t version;
    uint32_t claim_id; /* tells this buffer's claim from another's of the same process */
    pthread_mutex_t create_lock;
};

static _Atomic uint32_t g_file_counter;
static _Atomic uint32_t g_claim_ids;

/* Field 22 of /proc/self/stat: this process's start time, in clock ticks. */
static uint64_t proc_start_ticks(void)
{
    char state;
    uint64_t ticks;
    return upti_proc_stat(0, &state, &ticks) == 0 ? ticks : 0;
}

/* The command line of this image, read when libupti was loaded: a program may
 * rewrite its argv in place later (e.g. an option parser that cuts "a=b" into
 * "a" and "b"), and /proc/self/cmdline shows those edits. */
static char g_command[sizeof(((upti_ring_header_t *)0)->command)];

__attribute__((constructor)) static void read_command_at_load(void)
{
    (void)upti_proc_command_line(g_command, sizeof g_command);
}

/* Whether two command lines start with the same program name (argv[0]). */
static bool same_argv0(const char *a, const char *b)
{
    size_t n = strcspn(a, " ");
    return n == strcspn(b, " ") && strncmp(a, b, n) == 0;
}

/* The command line for a ring file's header. The first ring file of the
 * process `upti run` started (UPTI_RUN_COMMAND = "PID<TAB>ARGV", set by upti
 * run in its child before the exec) has the argv upti run gave it, if this
 * image is the program upti run started (same argv[0]): a wrapper that did not
 * record (`sh -c 'exec app'`, `env`) passes the variable on to the image it
 * execs, under the same pid. The files of later images have their own. */
static void read_command(char *out, size_t cap, bool first_of_pid)
{
    const char *launched = getenv("UPTI_RUN_COMMAND");
    char *tab = NULL;
    if (g_command[0] == '\0')
        (void)upti_proc_command_line(g_command, sizeof g_command); /* (loaded before /proc) */
    if (first_of_pid && launched != NULL && strtol(launched, &tab, 10) == (long)getpid() &&
        tab != NULL && *tab == '\t' && same_argv0(tab + 1, g_command)) {
        snprintf(out, cap, "%s", tab + 1);
        return;
    }
    snprintf(out, cap, "%s", g_command);
}

static void auto_name(struct upti_shared_ring *r, uint32_t n);

/* Creates, sizes, maps and fills the ring file r->path (automatically named:
 * the first upti-PID-N.upti-ring that does not exist yet). Returns 0 or an errno. */
static int ring_file_create(struct upti_shared_ring *r, uint32_t policy, bool automatic)
{
    size_t data = upti_ring_data_start(r->max_slots);
    size_t size = upti_ring_file_bytes(r->max_slots, r->slot_size);
    int fd = -1;
    bool first_of_pid = true;
    if (automatic) {
        /* A program that exec'd keeps its pid, and its earlier image's files
         * are still there (its collector reads them): the next free number.
         * Relative to its folder, never through a symbolic link (private_dir.h). */
        for (int tries = 0; fd < 0 && tries < 4096; tries++) {
            uint32_t n = atomic_fetch_add(&g_file_counter, 1);
            auto_name(r, n);
            fd = upti_open_file(r->path, O_RDWR | O_CREAT, 0600, 1);
            if (fd < 0 && errno != EEXIST)
                return errno;
            first_of_pid = n == 0;
        }
    } else {
        /* A named file that exists is reused (emptied) only if it is a regular
         * file of this user with one link. */
        fd = upti_open_file(r->path, O_RDWR | O_CREAT | O_TRUNC, 0600, 0);
    }
    if (fd < 0)
        return errno;
    if (ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        close(fd);
        unlink(r->path);
        return e;
    }
    /* The header and the control blocks get their storage before they are written
     * (the slots' data when each is claimed: claim_slot). */
    struct stat st;
    int e = fstat(fd, &st) != 0
                ? errno
                : upti_ring_room_reserve_fd(fd, 0, data);
    void *map = e != 0 ? MAP_FAILED : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (e == 0 && map == MAP_FAILED)
        e = errno;
    close(fd);
    if (map == MAP_FAILED) {
        unlink(r->path);
        return e;
    }
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    atomic_store(&r->room_exhausted, false);
    atomic_store(&r->left_wait_stalled, false); /* (a forked child's new file) */
    r->map = map;
    r->map_size = size;
    upti_ring_header_t *h = map;
    h->magic = UPTI_RING_MAGIC;
    h->version = r->version;
    h->header_bytes = UPTI_RING_HEADER_BYTES;
    h->slot_bytes = UPTI_RING_SLOT_BYTES;
    h->max_slots = r->max_slots;
    h->slot_size = r->slot_size;
    h->file_size = size;
    h->policy = policy;
    h->record_abi = (uint32_t)sizeof(void *);
    h->full_wait_ns = r->full_wait_ns;
    if (getrandom(&h->uid, sizeof h->uid, GRND_NONBLOCK) != (ssize_t)sizeof h->uid)
        h->uid = upti_mono_ns() ^ ((uint64_t)getpid() << 32);
    h->pid = getpid();
    h->ppid = getppid();
    h->proc_start_ticks = proc_start_ticks();
    h->clock_start = upti_now();
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    h->wall_start = (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec;
    gethostname(h->hostname, sizeof h->hostname - 1);
    read_command(h->command, sizeof h->command, first_of_pid);
    /* Each slot's data_offset is written when the slot is first claimed (reserve_slot):
     * writing all of them here touched every page of the slots' table, a page fault
     * each (25 at 256 slots: half a millisecond of a short process, on a virtual
     * machine), for slots most processes never use; slots_unused tells a collector
     * which it need not read (claim_slot lowers it). */
    atomic_store_explicit(&h->slots_unused, r->max_slots, memory_order_relaxed);
    atomic_store_explicit(&h->state, UPTI_RING_STATE_LIVE, memory_order_release);
    __atomic_store_n(&r->hdr, h, __ATOMIC_RELEASE); /* producers may claim slots from now */
    return 0;
}

/* Creates the ring file, smaller than asked where the folder or the address space
 * cannot give what was asked (ring_room.h), and says once what it chose. */
static int ring_file_create_sized(struct upti_shared_ring *r, uint32_t policy, bool exclusive)
{
    uint32_t asked_slots = r->max_slots;
    size_t asked_size = r->slot_size;
    char why[PATH_MAX];
    size_t budget = upti_ring_room_budget(r->dir, why, sizeof why);
    int e;
    for (;;) {
        if (budget != SIZE_MAX)
            upti_ring_room_fit(&r->max_slots, &r->slot_size, budget);
        e = ring_file_create(r, policy, exclusive);
        size_t bytes = upti_ring_file_bytes(r->max_slots, r->slot_size);
        if ((e != ENOMEM && e != ENOSPC) || bytes <= upti_ring_file_bytes(1, PAGE))
            break;
        /* The limits said more than could be had (another process took some): half. */
        budget = bytes / 2;
        snprintf(why, sizeof why, "%.1f MiB could not be %s", (double)bytes / (1 << 20),
                 e == ENOMEM ? "mapped" : "reserved");
    }
    if (e == 0 && (r->max_slots != asked_slots || r->slot_size != asked_size))
        upti_log_warning("rings of %zu KiB for %u threads (asked: %zu KiB for %u): %s",
                         r->slot_size >> 10, r->max_slots, asked_size >> 10, asked_slots, why);
    return e;
}

/* The name of automatically named ring file n in dir. */
static void auto_name(struct upti_shared_ring *r, uint32_t n)
{
    snprintf(r->path, sizeof r->path, "%s/upti-%d-%u" UPTI_RING_SUFFIX, r->dir, (int)getpid(), n);
}

UPTI_API upti_status_t upti_create_shared_buffer(upti_context_id_t context_id, size_t size,
                                                 upti_buffer_policy_t policy,
                                                 const char *path_or_dir, uint32_t max_threads,
                                                 upti_buffer_id_t *buffer_id)
{
    upti_status_t may = upti_buffer_may_create(context_id);
    if (may != UPTI_STATUS_SUCCESS)
        return may;
    if (buffer_id == NULL || policy <= UPTI_BUFFER_POLICY_NONE || policy >= UPTI_BUFFER_POLICY_LAST ||
        size > ((size_t)1 << 32) || max_threads == 0 || max_threads > 65536 ||
        (path_or_dir != NULL && strlen(path_or_dir) >= PATH_MAX - 128))
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    struct upti_shared_ring *r = calloc(1, sizeof *r);
    struct upti_buffer *b = calloc(1, sizeof *b);
    if (r == NULL || b == NULL) {
        free(r);
        free(b);
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    r->max_slots = max_threads;
    r->pending_fd = -1;
    r->claim_id = atomic_fetch_add(&g_claim_ids, 1);
    pthread_mutex_init(&r->create_lock, NULL);
    r->slot_size = PAGE;
    while (r->slot_size < size)
        r->slot_size <<= 1;
    r->full_wait_ns = upti_env_get(UPTI_ENV_RING_FULL_WAIT_MS) * 1000000u;

    struct stat st;
    const char *where = path_or_dir != NULL ? path_or_dir : DEFAULT_DIR;
    bool is_dir = stat(where, &st) == 0 && S_ISDIR(st.st_mode);
    if (is_dir) {
        snprintf(r->dir, sizeof r->dir, "%s", where);
        /* A forked child claims it may still record only in the folder of a
         * collector of upti's, which removes the claims: a run folder (upti run,
         * the record-only helper) or UPTI_TRACE_RING_DIR (a folder named by hand,
         * for upti recover). Elsewhere (/dev/shm, a tool's own folder) nobody
         * would, and every fork would leave one. */
        const char *run_dir = getenv("UPTI_TRACE_RING_DIR");
        const char *base = strrchr(where, '/');
        struct stat rs;
        r->claims = strncmp(base != NULL ? base + 1 : where, UPTI_RUN_FOLDER_PREFIX,
                            strlen(UPTI_RUN_FOLDER_PREFIX)) == 0 ||
                    (run_dir != NULL && stat(run_dir, &rs) == 0 && rs.st_dev == st.st_dev &&
                     rs.st_ino == st.st_ino);
    } else {
        snprintf(r->path, sizeof r->path, "%s", where);
        snprintf(r->dir, sizeof r->dir, "%s", where);
        char *slash = strrchr(r->dir, '/');
        if (slash == NULL)
            snprintf(r->dir, sizeof r->dir, ".");
        else if (slash == r->dir)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    r->version = r->claims ? UPTI_RING_VERSION : 1;
    /* A folder another user owns or may write: that user could remove the rings
     * or put forged ones beside them. Refused, said once. */
    char why[PATH_MAX + 256];
    if (upti_check_ring_folder(r->dir, why, sizeof why) != 0 && errno != ENOENT) {
        upti_log_error("cannot create the shared buffer %s: %s", r->path, why);
        free(r);
        free(b);
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    int e = ring_file_create_sized(r, policy, is_dir);
    if (e != 0) {
        upti_log_error("cannot create the shared buffer %s: %s", r->path, strerror(e));
        free(r);
        free(b);
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    b->tool = upti_current_tool();
    b->context = context_id;
    b->size = r->slot_size;
    /* Nobody in the process is woken: upti_buffer_wake() rings the file's doorbell. */
    b->watermark = UPTI_RING_DOORBELL_BYTES(r->slot_size);
    b->policy = policy;
    b->compact_api = r->version >= 2;
    b->shared = r;
    pthread_mutex_init(&b->lock, NULL);
    upti_status_t rc = upti_buffer_register(b, buffer_id); /* frees b on failure */
    if (rc != UPTI_STATUS_SUCCESS) {
        munmap(r->map, r->map_size);
        unlink(r->path);
        free(r);
    }
    return rc;
}

UPTI_API upti_status_t upti_get_shared_buffer_path(upti_buffer_id_t buffer_id, char *path,
                                                   size_t capacity)
{
    struct upti_buffer *b = upti_buffer_lookup(buffer_id);
    if (b == NULL || b->shared == NULL)
        return UPTI_STATUS_ERROR_BUFFER_NOT_FOUND;
    if (b->shared->path[0] == '\0')
        return UPTI_STATUS_ERROR_NOT_AVAILABLE; /* a forked child before its first record */
    if (path == NULL || strlen(b->shared->path) >= capacity)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    strcpy(path, b->shared->path);
    return UPTI_STATUS_SUCCESS;
}

/* No storage could be had in r's file (error e): from now on no unused slot is claimed
 * and no slot's storage grows; said once. */
static void no_room(struct upti_shared_ring *r, int e)
{
    if (!atomic_exchange(&r->room_exhausted, true))
        upti_log_warning("no room for more of the rings in %s (%s): threads without a ring "
                         "have their records dropped and counted, the others keep the rings "
                         "they have", r->path, strerror(e));
}

/* A slot used for the first time: its data gets storage before anything is written
 * there. Where there is none, the slot stays unused (owner 0), and so do all the
 * file's unused slots from then on: their threads' records are dropped, counted. */
static bool reserve_slot(struct upti_shared_ring *r, uint32_t i, upti_ring_slot_t *slot)
{
    uint64_t offset = upti_ring_data_start(r->max_slots) + (uint64_t)i * r->slot_size;
    /* A slot larger than the hot part is room for bursts, asked for as such: all of it
     * now (given in steps, 256 MiB slots cost 8 threads +1.4 instead of +0.9 us per
     * call in bench/run_overhead: the zeroing moved into the run). */
    size_t first = r->slot_size > HOT_BYTES ? r->slot_size : RESERVE_STEP;
    if (first > r->slot_size)
        first = r->slot_size;
    int e = upti_ring_room_reserve(r->path, r->dev, r->ino, (off_t)offset, first);
    if (e == 0) {
        slot->data_offset = offset; /* (the collector reads it after a head that covers data) */
        ((struct upti_producer *)slot)->reserved = first;
        return true;
    }
    atomic_store_explicit(&slot->owner, 0, memory_order_release);
    no_room(r, e);
    return false;
}

/* Takes slot i for tid if it is free, or held by an exited thread and fully drained. */
static bool claim_slot(struct upti_shared_ring *r, uint32_t i, upti_thread_id_t tid)
{
    upti_ring_slot_t *slot = upti_ring_slot(r->map, i);
    uint64_t owner = atomic_load_explicit(&slot->owner, memory_order_acquire);
    if (owner != 0) {
        /* A slot its thread left, once drained. Clearing the orphan flag is the claim:
         * a compare-exchange on the owner word alone let a second thread take the slot
         * from the first claimant before that one had cleared the flag, and both wrote
         * one ring. */
        struct upti_producer *old = (struct upti_producer *)slot;
        bool orphaned = true;
        if (!atomic_load(&old->orphaned) ||
            atomic_load_explicit(&slot->head, memory_order_relaxed) !=
                atomic_load_explicit(&slot->tail, memory_order_acquire) ||
            !atomic_compare_exchange_strong(&old->orphaned, &orphaned, false))
            return false;
        /* Empty when looked at, but another thread may have taken the slot since, written
         * and left it again (the flag set anew): it must be empty now, or it goes back. */
        if (atomic_load_explicit(&slot->head, memory_order_relaxed) !=
            atomic_load_explicit(&slot->tail, memory_order_acquire)) {
            atomic_store(&old->orphaned, true);
            return false;
        }
        atomic_store_explicit(&slot->owner, tid, memory_order_release);
        atomic_store_explicit(&r->left_wait_stalled, false, memory_order_relaxed);
        return true;
    } else if (atomic_load_explicit(&r->room_exhausted, memory_order_relaxed)) {
        return false;
    }
    /* A slot used for the first time: the owner word is the claim. */
    if (!atomic_compare_exchange_strong(&slot->owner, &owner, tid))
        return false;
    /* Slots from i + 1 on are still unused: the collector reads up to i from now. */
    upti_ring_header_t *h = r->hdr;
    uint32_t unused = atomic_load_explicit(&h->slots_unused, memory_order_relaxed);
    while (unused > r->max_slots - i - 1 &&
           !atomic_compare_exchange_weak_explicit(&h->slots_unused, &unused, r->max_slots - i - 1,
                                                  memory_order_release, memory_order_relaxed))
        ;
    return reserve_slot(r, i, slot);
}

/* The path of this process's claim in r->dir (UPTI_RING_PENDING_SUFFIX); tmp: the
 * name it is made under. */
static void pending_path(const struct upti_shared_ring *r, char *out, size_t cap, bool tmp)
{
    snprintf(out, cap, "%s/upti-%d-%u%s", r->dir, (int)getpid(), r->claim_id,
             tmp ? ".upti-pending-new" : UPTI_RING_PENDING_SUFFIX);
}

/* A forked child: claims, locked, that it may still record (upti/ring.h).
 * Only system calls: it runs in the child's fork handler. */
static void pending_claim(struct upti_shared_ring *r)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    pending_path(r, tmp, sizeof tmp, true);
    pending_path(r, path, sizeof path, false);
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0 && (flock(fd, LOCK_EX | LOCK_NB) != 0 || rename(tmp, path) != 0)) {
        unlink(tmp);
        close(fd);
        fd = -1;
    }
    r->pending_fd = fd;
}

/* The child's ring file exists (or never will): its claim goes. */
static void pending_release(struct upti_shared_ring *r)
{
    if (r->pending_fd < 0)
        return;
    char path[PATH_MAX];
    pending_path(r, path, sizeof path, false);
    unlink(path);
    close(r->pending_fd);
    r->pending_fd = -1;
}

/* A forked child's first record: its own file. */
static bool create_child_file(struct upti_buffer *b, struct upti_shared_ring *r)
{
    pthread_mutex_lock(&r->create_lock);
    if (r->file_pending) {
        r->file_pending = false;
        int e = ring_file_create(r, b->policy, true);
        if (e != 0) {
            upti_log_error("cannot create the shared buffer %s for a forked child: %s", r->path,
                           strerror(e));
            atomic_store(&b->destroyed, true);
        }
        pending_release(r); /* after the file is LIVE: a collector finds one or the other */
    }
    bool ok = __atomic_load_n(&r->hdr, __ATOMIC_ACQUIRE) != NULL;
    pthread_mutex_unlock(&r->create_lock);
    return ok;
}

/* Adds to the slot's counts, which the collector reports, a wait that began at `started`
 * (upti_mono_ns) and ends now, whose room the consumer made at room_at (0: it made none: all of
 * the wait was for room); relaxed: only the slot's thread writes them. */
static void count_wait(upti_ring_slot_t *slot, uint64_t started, uint64_t room_at)
{
    uint64_t now = upti_mono_ns(), took = now - started;
    /* Room made before the wait began was there all along (the consumer's stamp precedes
     * its tail store, by more where it was preempted between them). A stamp later than
     * now, or earlier than the wait by more than a second, is another clock's (the
     * consumer in another time namespace): all of the wait counts as for room. */
    uint64_t after = room_at == 0 || room_at > now || room_at + 1000000000u < started ? 0
                     : room_at > started ? now - room_at
                                         : took;
    upti_own_count_add(&slot->waits, 1);
    upti_own_count_add(&slot->wait_ns, took);
    upti_own_count_add(&slot->after_room_ns, after);
}

/* No slot was free. Where a slot that a thread left still holds records, the collector
 * frees it once it has drained them: a thread of a LOSSLESS buffer waits for that, as for
 * room in its full ring, rather than drop its record. Without the wait, a program whose
 * threads outnumber the slots lost the records its main thread writes at exit (the
 * bundled tool's "finalized": the run was then reported as not closed). True when a left
 * slot is drained (claim it; *waited says whether it slept); false when every slot is a
 * live thread's, the buffer was destroyed, or the collector moved no left slot's tail for
 * full_wait_ns (and then no thread waits again until a left slot is taken). The wait
 * polls (the slot's `starving` is its owner's, whom the collector wakes): a left slot is
 * drained at the collector's next pass. */
static bool wait_for_left_slot(struct upti_buffer *b, struct upti_shared_ring *r, bool *waited)
{
    if (atomic_load_explicit(&r->left_wait_stalled, memory_order_relaxed))
        return false;
    uint64_t deadline = upti_mono_ns() + r->full_wait_ns, progress = 0;
    for (bool first = true;; first = false) {
        upti_ring_slot_t *left = NULL;
        uint64_t tails = 0;
        for (uint32_t i = 0; i < r->max_slots; i++) {
            upti_ring_slot_t *slot = upti_ring_slot(r->map, i);
            if (atomic_load_explicit(&slot->owner, memory_order_acquire) == 0 ||
                !atomic_load(&((struct upti_producer *)slot)->orphaned))
                continue;
            uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_acquire);
            if (atomic_load_explicit(&slot->head, memory_order_relaxed) == tail)
                return true;
            left = slot;
            tails += tail;
        }
        uint64_t now = upti_mono_ns();
        if (left == NULL || atomic_load(&b->destroyed))
            return false;
        if (first || tails != progress) {
            progress = tails; /* the collector moves: as long as it does */
            deadline = now + r->full_wait_ns;
        } else if (now >= deadline) {
            atomic_store_explicit(&r->left_wait_stalled, true, memory_order_relaxed);
            return false;
        }
        if (first)
            upti_shared_ring_doorbell(b); /* a collector asleep drains left slots when woken */
        *waited = true;
        struct timespec pause = {0, 200 * 1000};
        nanosleep(&pause, NULL);
    }
}

struct upti_producer *upti_shared_producer_create(struct upti_buffer *b, upti_thread_state_t *s)
{
    struct upti_shared_ring *r = b->shared;
    if (__atomic_load_n(&r->hdr, __ATOMIC_ACQUIRE) == NULL && !create_child_file(b, r))
        return NULL;
    uint64_t waited_from = 0;
    bool waited = false;
    uint32_t i;
    for (;;) {
        i = 0;
        while (i < r->max_slots && !claim_slot(r, i, s->tid))
            i++;
        if (i < r->max_slots)
            break;
        if (b->policy != UPTI_BUFFER_POLICY_LOSSLESS || atomic_load(&b->destroyed)) {
            atomic_fetch_add_explicit(&r->hdr->no_slot_drops, 1, memory_order_relaxed);
            return NULL;
        }
        if (waited_from == 0)
            waited_from = upti_mono_ns();
        if (!wait_for_left_slot(b, r, &waited)) {
            atomic_fetch_add_explicit(&r->hdr->no_slot_drops, 1, memory_order_relaxed);
            return NULL;
        }
    }
    upti_ring_slot_t *slot = upti_ring_slot(r->map, i);
    struct upti_producer *p = (struct upti_producer *)slot;
    size_t head = atomic_load_explicit(&p->head, memory_order_relaxed);
    p->data = (uint8_t *)r->map + slot->data_offset;
    p->size = r->slot_size;
    p->limit = hot_limit(p);
    p->buffer = b;
    p->tid = s->tid;
    p->local_head = p->pending_head = p->cached_tail = head;
    p->watermark = b->watermark;
    atomic_store(&p->starving, false);
    /* (atomic: the slot's previous owner, another thread, wrote it last) */
    __atomic_store_n(&slot->stalled_at, 0, __ATOMIC_RELAXED);
    if (waited)
        count_wait(slot, waited_from, 0); /* (a slot's own tail says nothing of this wait) */
    s->producers[b->index] = p;
    /* The slot is empty (fresh, or drained before it was claimed): this fits. */
    upti_ring_thread_t *t = upti_buffer_reserve(b, s, UPTI_RING_KIND_THREAD, sizeof *t);
    if (t != NULL) {
        t->tid = s->tid;
        t->timestamp = upti_now();
        upti_buffer_commit(b, s);
    }
    upti_shared_agents_first_write(b, s); /* the agents this file lacks (shared_agents.c) */
    return p;
}

void upti_shared_ring_doorbell(struct upti_buffer *b)
{
    upti_ring_header_t *h = __atomic_load_n(&b->shared->hdr, __ATOMIC_ACQUIRE);
    if (h != NULL)
        upti_ring_doorbell_ring(&h->doorbell);
}

/* Moves p->limit on to pos + len or past it: RESERVE_STEP at a time within the hot part,
 * HOT_BYTES at a time beyond (as far as the collector lags, twice, no further), giving
 * storage first to what it did not have. False, p->limit unchanged, where the file's
 * folder has no room for it (ring_room.h): the slot stays the size it has storage for. */
static bool grow_limit(struct upti_producer *p, size_t want)
{
    size_t limit = p->limit;
    while (limit < want) {
        size_t step = limit < HOT_BYTES ? RESERVE_STEP : HOT_BYTES;
        limit = p->size - limit > step ? limit + step : p->size;
    }
    if (limit > p->reserved) {
        struct upti_shared_ring *r = p->buffer->shared;
        upti_ring_slot_t *slot = (upti_ring_slot_t *)p;
        /* At least twice what it had: a few asks per slot (each opens the file). */
        size_t to = (limit + RESERVE_STEP - 1) & ~(RESERVE_STEP - 1);
        if (to < 2 * p->reserved)
            to = 2 * p->reserved;
        if (to > p->size)
            to = p->size;
        if (atomic_load_explicit(&r->room_exhausted, memory_order_relaxed))
            return false; /* (not asked again at every record) */
        int e = upti_ring_room_reserve(r->path, r->dev, r->ino,
                                       (off_t)(slot->data_offset + p->reserved), to - p->reserved);
        if (e != 0) {
            no_room(r, e);
            return false;
        }
        p->reserved = to;
    }
    p->limit = limit;
    return true;
}

bool upti_shared_past_limit(struct upti_producer *p, size_t pos, size_t len)
{
    /* The collector is less than half of this lap behind (p->cached_tail was just
     * loaded): back to the start, whose pages are mapped and in cache, with at least
     * half of this lap's room there. Every page past HOT_BYTES written would be a page
     * fault and resident memory more for the program. */
    if (p->local_head - p->cached_tail + len <= pos / 2) {
        p->limit = hot_limit(p);
        return true;
    }
    if (grow_limit(p, pos + len))
        return false;
    /* No storage for more: back to the start, once the collector has taken this lap
     * (the caller waits for that room, or drops); a record longer than what has storage
     * is dropped (the caller sees it still past the limit). */
    return len <= p->reserved;
}

bool upti_shared_wait_for_room(struct upti_producer *p, size_t need)
{
    struct upti_shared_ring *r = p->buffer->shared;
    upti_ring_slot_t *slot = (upti_ring_slot_t *)p;
    uint64_t last_tail = atomic_load_explicit(&p->tail, memory_order_acquire);
    if (__atomic_load_n(&slot->stalled_at, __ATOMIC_RELAXED) == last_tail + 1)
        return false; /* gave up at this tail already: the collector has not moved since */
    uint64_t started = upti_mono_ns();
    uint64_t deadline = started + r->full_wait_ns;
    atomic_store(&p->starving, true);
    atomic_thread_fence(memory_order_seq_cst); /* starving before tail: see give_back() in the collector */
    upti_shared_ring_doorbell(p->buffer);      /* (after the fence: upti/ring.h, "Doorbell") */
    bool ok = false;
    for (;;) {
        uint64_t tail = atomic_load_explicit(&p->tail, memory_order_acquire);
        p->cached_tail = tail;
        if (p->local_head + need - tail <= p->size) {
            ok = true;
            break;
        }
        uint64_t now = upti_mono_ns();
        if (tail != last_tail) {
            last_tail = tail;
            deadline = now + r->full_wait_ns;
        } else if (now >= deadline || atomic_load(&p->buffer->destroyed)) {
            __atomic_store_n(&slot->stalled_at, tail + 1, __ATOMIC_RELAXED);
            break;
        }
        /* Until the collector moves tail (it wakes a starving slot), or 1 ms. */
        uint64_t left = deadline > now ? deadline - now : 0;
        upti_ring_futex_wait(&p->tail, tail, left < 1000000u ? left : 1000000u);
    }
    atomic_store(&p->starving, false);
    /* The room found came with a tail stored after room_at (acquired above). */
    count_wait(slot, started, ok ? atomic_load_explicit(&slot->room_at, memory_order_relaxed) : 0);
    return ok;
}

void upti_shared_fork_child(struct upti_buffer *b, upti_thread_state_t *self)
{
    struct upti_shared_ring *r = b->shared;
    /* Nothing of the parent's file may be written by the child. */
    if (self != NULL)
        self->producers[b->index] = NULL;
    if (r->map != NULL)
        munmap(r->map, r->map_size);
    r->map = NULL;
    r->hdr = NULL;
    r->path[0] = '\0';
    pthread_mutex_init(&r->create_lock, NULL);
    r->file_pending = !atomic_load(&b->destroyed);
    /* The parent's claim (a child forked before its first record) stays the
     * parent's: this child's own is made first, so that there is no moment
     * when neither is held. */
    int inherited = r->pending_fd;
    r->pending_fd = -1;
    if (r->file_pending && r->claims)
        pending_claim(r);
    if (inherited >= 0)
        close(inherited);
    upti_shared_agents_fork_child(b);
}

void upti_shared_close(struct upti_buffer *b)
{
    pthread_mutex_lock(&b->shared->create_lock);
    b->shared->file_pending = false; /* destroyed before its first record: nothing will come */
    pending_release(b->shared);
    pthread_mutex_unlock(&b->shared->create_lock);
    if (b->shared->hdr != NULL) {
        atomic_store_explicit(&b->shared->hdr->state, UPTI_RING_STATE_CLOSED, memory_order_release);
        /* Nothing more comes (the tool's end, before the program's exit): a collector
         * asleep drains the ring now rather than once the process is gone, whose
         * teardown (4 to 5 ms for an OpenCL program on this project's CI guest) it
         * would otherwise wait out before the trace can be finished. */
        upti_ring_doorbell_ring(&b->shared->hdr->doorbell);
    }
}
