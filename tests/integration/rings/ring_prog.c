/* SPDX-License-Identifier: MIT */
/* A traced program whose tool (in the executable, upti_force_configure)
 * writes its marker records into a shared buffer; check_rings.py kills it,
 * crashes it or lets it end, then counts what the collector got.
 *
 *   ring_prog MODE DIR COUNTER N [THREADS [SIZE [POLICY [SLOTS]]]]
 *
 * Each of THREADS threads (default 1) makes N uptx_mark("<thread>:<i>")
 * calls; after each call returns it stores i + 1 in its counter, word
 * <thread> of the file COUNTER (a shared mapping the killer reads after the
 * kill: a call counted there had returned, so its record was committed).
 * MODE: return (main returns, having printed UPTI's threads (named upti-*)
 * and the signals with a handler, before UPTI started and after its own
 * threads ended), closed (its buffer destroyed after the marks, as a tool's
 * end does before the program's exit; prints "closed", then returns once its
 * standard input ends), exit (_exit(0)), segv (SIGSEGV, default
 * action), segv_caught (a handler swallows a SIGSEGV halfway; the program
 * goes on), kill (return, but the test kills it before), fork (thread 0
 * makes N/2 marks, forks a child that execs /bin/true (it records nothing:
 * it must leave no ring file), then one that makes N marks "c:<i>" and _exits; the
 * parent waits for it, then makes N marks "p:<i>"). SIZE: bytes per ring
 * (default 1 MiB). POLICY: lossless (default) or discard. SLOTS: rings
 * (default THREADS + 1). Prints the ring file's path on stdout. MODE api:
 * prints name=STATUS for the calls of the API's contract (errors included),
 * then makes N marks. MODE tool: each thread's mark i is followed by a tool
 * record (upti_write_buffer_record) of the bundled tool's ARG kind,
 * correlation (thread + 1) << 32 | i, position thread, type "int", name
 * "t<thread>", value "<thread>:<i>"; then thread 0 writes METADATA
 * output_base=/ring/prog, METADATA source=evil (a key the converter owns),
 * a record of kind 77 (not the bundled tool's), an ARG whose type_len lies
 * and a METADATA without its value's NUL (both malformed). MODE tool_inproc:
 * the same into an in-process buffer; its callback checks each thread's
 * order (mark i, then tool record i), the payload (size, reserved, 8-byte
 * aligned data) and prints per thread "inproc thread=T marks=M tools=K
 * order_errors=E", then "inproc metadata=M other=O misaligned=A drops=D".
 * MODE tool_api: prints name=STATUS for upti_write_buffer_record's error
 * returns (ring_prog's tool_api_checks), then makes N marks. MODE agents:
 * like return, and each thread also registers 10 agents while it marks
 * (upti_runtime_add_agent, runtime "race", name "<thread>:<i>"), racing the
 * other threads' first records; then prints "agents=<what
 * upti_query_available_agents lists>". MODE doorbell (no collector): maps its
 * ring file, sets the header's doorbell as a sleeping collector would, and a
 * thread sleeps on it (FUTEX_WAIT); marks one at a time until the doorbell is
 * 0 and prints "rang before=B head=H mark=M" (the slot's head before and after
 * that mark, the doorbell's bytes) and "waiter woken=W doorbell=D"; sets it
 * again and prints "again after=K" (marks until it rang again); sets it again,
 * destroys its buffer (the tool's end) and prints "closed status=S woken=W
 * doorbell=D state=T" (the header's state). MODE storage:
 * one mark, then its ring file is renamed away (PATH.away: no more storage can be
 * had for it, which libupti asks by the file's path), N - 1 marks, and back.
 */
#include <upti/runtime.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <upti/upti.h>
#include <upti/ring.h>
#include <uptx/uptx.h>

#include "trace_tool_records.h"
#include "test_tool.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 64

static const char *g_dir;
static size_t g_size = 1u << 20;
static upti_buffer_policy_t g_policy = UPTI_BUFFER_POLICY_LOSSLESS;
static uint32_t g_slots;
static long g_n;
static _Atomic uint64_t *g_counter;
static upti_buffer_id_t g_buffer;
static int g_api; /* MODE api: the API's contract, printed as name=STATUS lines */
static int g_tool; /* MODE tool, tool_inproc: tool records after the marks */
static int g_inproc; /* MODE tool_inproc: an in-process buffer instead of a shared one */
static int g_tool_api; /* MODE tool_api: upti_write_buffer_record's errors */
static int g_agents; /* MODE agents: threads register agents while they mark */

static void on_buffer(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **h, size_t n,
                      void *data, uint64_t drops)
{
    (void)c, (void)b, (void)h, (void)n, (void)data, (void)drops;
}

/* MODE tool_inproc: what the callback saw, per thread. state[t] = 2 * i expects mark i,
 * 2 * i + 1 expects tool record i. Only the callback thread writes these. */
static struct {
    long state, marks, tools, order_errors;
} g_seen[MAX_THREADS];
static long g_seen_metadata, g_seen_other, g_misaligned;
static uint64_t g_seen_drops;

static void saw(int t, long i, int is_tool)
{
    if (t < 0 || t >= MAX_THREADS)
        return;
    if (g_seen[t].state != 2 * i + is_tool)
        g_seen[t].order_errors++;
    g_seen[t].state = 2 * i + is_tool + 1;
    if (is_tool)
        g_seen[t].tools++;
    else
        g_seen[t].marks++;
}

static void on_inproc_buffer(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **h,
                             size_t n, void *data, uint64_t drops)
{
    (void)c, (void)b, (void)data;
    g_seen_drops += drops;
    for (size_t k = 0; k < n; k++) {
        if (h[k]->category == UPTI_BUFFER_CATEGORY_TRACING &&
            h[k]->kind == UPTI_TRACING_KIND_MARKER_API) {
            const upti_buffer_tracing_marker_api_record_t *m = h[k]->payload;
            int t;
            long i;
            if (m->message != NULL && sscanf(m->message, "%d:%ld", &t, &i) == 2)
                saw(t, i, 0);
            continue;
        }
        if (h[k]->category != UPTI_BUFFER_CATEGORY_TOOL)
            continue;
        const upti_tool_record_t *r = h[k]->payload;
        if (((uintptr_t)r->data & 7) != 0 || r->reserved != 0)
            g_misaligned++;
        if (h[k]->kind == UPTI_TRACE_RECORD_ARG && r->size >= sizeof(trace_tool_arg_t)) {
            trace_tool_arg_t a;
            memcpy(&a, r->data, sizeof a);
            const char *value = (const char *)r->data + sizeof a + a.type_len + a.name_len;
            int t;
            long i;
            if (sizeof a + a.type_len + a.name_len + a.value_len == r->size &&
                sscanf(value, "%d:%ld", &t, &i) == 2 && a.correlation_id == ((uint64_t)(t + 1) << 32 | (uint64_t)i))
                saw(t, i, 1);
            else
                g_seen_other++; /* the malformed ARG */
        } else if (h[k]->kind == UPTI_TRACE_RECORD_METADATA) {
            g_seen_metadata++;
        } else {
            g_seen_other++;
        }
    }
}

static upti_status_t count_agents(const upti_agent_t **agents, size_t n, void *data)
{
    (void)agents;
    *(size_t *)data = n;
    return UPTI_STATUS_SUCCESS;
}

/* A tool record of the bundled tool's ARG kind: arg, then type, name and value with their NULs. */
static upti_status_t write_arg(uint64_t corr, uint32_t position, const char *type, const char *name,
                               const char *value, uint32_t lie)
{
    unsigned char buf[512];
    trace_tool_arg_t a = {corr, position, (uint32_t)strlen(type) + 1, (uint32_t)strlen(name) + 1,
                          (uint32_t)strlen(value) + 1};
    size_t size = sizeof a + a.type_len + a.name_len + a.value_len;
    if (size > sizeof buf)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    unsigned char *p = buf + sizeof a;
    memcpy(p, type, a.type_len);
    memcpy(p += a.type_len, name, a.name_len);
    memcpy(p + a.name_len, value, a.value_len);
    a.type_len += lie;
    memcpy(buf, &a, sizeof a);
    return upti_write_buffer_record(g_buffer, UPTI_TRACE_RECORD_ARG, buf, size);
}

/* A METADATA tool record: key, then value (drop_nul: without the value's NUL). */
static upti_status_t write_metadata(const char *key, const char *value, int drop_nul)
{
    char buf[256];
    size_t k = strlen(key) + 1, v = strlen(value) + 1 - (drop_nul != 0);
    memcpy(buf, key, k);
    memcpy(buf + k, value, v);
    return upti_write_buffer_record(g_buffer, UPTI_TRACE_RECORD_METADATA, buf, k + v);
}

/* MODE tool: the records after the threads' marks (thread 0), malformed ones included. */
static void tool_records_at_end(void)
{
    upti_status_t st[5] = {
        write_metadata("output_base", "/ring/prog", 0),
        write_metadata("source", "evil", 0),
        upti_write_buffer_record(g_buffer, 77, "zzz", 3),
        write_arg(1, 0, "int", "bad", "0:0", 1000),
        write_metadata("broken", "novalue", 1),
    };
    for (int i = 0; i < 5; i++)
        if (st[i] != UPTI_STATUS_SUCCESS)
            fprintf(stderr, "ring_prog: tool record %d: %s\n", i, upti_get_status_name(st[i]));
}

static void show(const char *name, upti_status_t st)
{
    printf("%s=%s\n", name, upti_get_status_name(st));
}

/* Inside initialize: the arguments upti_create_shared_buffer refuses, and the path query. */
static void api_checks(upti_context_id_t ctx)
{
    upti_buffer_id_t b;
    char path[4096];
    show("zero_threads", upti_create_shared_buffer(ctx, 4096, g_policy, g_dir, 0, &b));
    show("no_policy", upti_create_shared_buffer(ctx, 4096, UPTI_BUFFER_POLICY_NONE, g_dir, 1, &b));
    show("null_id", upti_create_shared_buffer(ctx, 4096, g_policy, g_dir, 1, NULL));
    show("bad_context", upti_create_shared_buffer((upti_context_id_t){999}, 4096, g_policy, g_dir, 1, &b));
    show("missing_dir", upti_create_shared_buffer(ctx, 4096, g_policy, "/nonexistent-upti-dir/x.upti-ring", 1, &b));
    snprintf(path, sizeof path, "%s/named.upti-ring", g_dir);
    show("named_file", upti_create_shared_buffer(ctx, 4096, g_policy, path, 1, &b));
    char got[4096];
    show("path_short", upti_get_shared_buffer_path(b, got, strlen(path)));
    upti_status_t st = upti_get_shared_buffer_path(b, got, strlen(path) + 1);
    show("path_exact", st);
    printf("path_same=%d\n", st == UPTI_STATUS_SUCCESS && strcmp(got, path) == 0);
    upti_buffer_id_t plain;
    upti_create_buffer(ctx, 4096, 0, g_policy, on_buffer, NULL, &plain);
    show("path_of_plain_buffer", upti_get_shared_buffer_path(plain, got, sizeof got));
    show("flush_shared", upti_flush_buffer(b));
    show("destroy_shared", upti_destroy_buffer(b));
}

static upti_buffer_id_t g_doomed, g_small, g_one_slot, g_small_inproc, g_self;

/* g_self (in-process, LOSSLESS, 4 KiB): its callback, at its first record, writes 100
 * records of 48 bytes into the same buffer (its own region): those that do not fit
 * are dropped, not waited for (it would wait for itself). */
static int g_self_ok, g_self_dropped, g_self_delivered;
static uint64_t g_self_drops;

static void on_self(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **h, size_t n,
                    void *data, uint64_t drops)
{
    (void)c, (void)h, (void)data;
    g_self_drops += drops;
    g_self_delivered += (int)n;
    static int written;
    if (n > 0 && !written) {
        written = 1;
        static const unsigned char zeros[48];
        for (int i = 0; i < 100; i++) {
            upti_status_t st = upti_write_buffer_record(b, 3, zeros, sizeof zeros);
            g_self_ok += st == UPTI_STATUS_SUCCESS;
            g_self_dropped += st == UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
        }
    }
}

/* Inside initialize: the buffers tool_api_checks writes to. */
static void tool_api_buffers(upti_context_id_t ctx)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/doomed.upti-ring", g_dir);
    upti_create_shared_buffer(ctx, 4096, g_policy, path, 1, &g_doomed);
    snprintf(path, sizeof path, "%s/small.upti-ring", g_dir);
    upti_create_shared_buffer(ctx, 4096, UPTI_BUFFER_POLICY_DISCARD, path, 1, &g_small);
    snprintf(path, sizeof path, "%s/one_slot.upti-ring", g_dir);
    upti_create_shared_buffer(ctx, 4096, g_policy, path, 1, &g_one_slot);
    upti_create_buffer(ctx, 4096, 0, UPTI_BUFFER_POLICY_DISCARD, on_inproc_buffer, NULL,
                       &g_small_inproc);
    upti_create_buffer(ctx, 4096, 4096, UPTI_BUFFER_POLICY_LOSSLESS, on_self, NULL, &g_self);
}

static void *write_from_other_thread(void *arg)
{
    upti_status_t *st = arg;
    *st = upti_write_buffer_record(g_one_slot, 5, "x", 1);
    return NULL;
}

/* After initialize: upti_write_buffer_record's error returns. */
static void tool_api_checks(void)
{
    static unsigned char big[UPTI_TOOL_RECORD_MAX_BYTES + 1];
    show("write_unknown_buffer", upti_write_buffer_record((upti_buffer_id_t){999}, 1000, "x", 1));
    show("write_buffer_zero", upti_write_buffer_record((upti_buffer_id_t){0}, 1000, "x", 1));
    show("write_null_data", upti_write_buffer_record(g_buffer, 1000, NULL, 8));
    show("write_null_empty", upti_write_buffer_record(g_buffer, 1000, NULL, 0));
    show("write_too_large", upti_write_buffer_record(g_buffer, 1000, big, sizeof big));
    show("write_largest", upti_write_buffer_record(g_buffer, 1000, big, sizeof big - 1));
    show("write_larger_than_ring", upti_write_buffer_record(g_small, 1000, big, 8192));
    show("write_larger_than_region", upti_write_buffer_record(g_small_inproc, 1000, big, 8192));
    upti_destroy_buffer(g_doomed);
    show("write_destroyed", upti_write_buffer_record(g_doomed, 1000, "x", 1));
    show("write_one_slot_mine", upti_write_buffer_record(g_one_slot, 5, "x", 1));
    upti_status_t other = UPTI_STATUS_SUCCESS;
    pthread_t th;
    pthread_create(&th, NULL, write_from_other_thread, &other);
    pthread_join(th, NULL);
    show("write_no_slot", other);
    /* A 4 KiB DISCARD ring that nobody drains: 64-byte records fit, then are dropped. */
    int ok = 0, dropped = 0, other_errors = 0;
    for (int i = 0; i < 100; i++) {
        upti_status_t st = upti_write_buffer_record(g_small, 9, big, 48);
        ok += st == UPTI_STATUS_SUCCESS;
        dropped += st == UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
        other_errors += st != UPTI_STATUS_SUCCESS && st != UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    printf("small_ring ok=%d dropped=%d other=%d\n", ok, dropped, other_errors);
    upti_flush_buffer(g_small_inproc);
    printf("inproc_drops=%llu\n", (unsigned long long)g_seen_drops);
    upti_write_buffer_record(g_self, 3, "x", 1);
    upti_flush_buffer(g_self); /* delivers it: the callback writes its 100 */
    upti_flush_buffer(g_self); /* delivers those */
    printf("self ok=%d dropped=%d delivered=%d drops=%llu\n", g_self_ok, g_self_dropped,
           g_self_delivered, (unsigned long long)g_self_drops);
}

static void die(const char *what, upti_status_t st)
{
    fprintf(stderr, "ring_prog: %s: %d\n", what, (int)st);
    _exit(3);
}

static int tool_init(upti_client_finalize_t fini, void *data)
{
    (void)fini;
    (void)data;
    upti_context_id_t ctx;
    upti_status_t st = upti_create_context(&ctx);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_create_context", st);
    if (g_inproc)
        st = upti_create_buffer(ctx, g_size, 0, g_policy, on_inproc_buffer, NULL, &g_buffer);
    else
        st = upti_create_shared_buffer(ctx, g_size, g_policy, g_dir, g_slots, &g_buffer);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_create_shared_buffer", st);
    if (g_api)
        api_checks(ctx);
    if (g_tool_api)
        tool_api_buffers(ctx);
    st = upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, g_buffer);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_configure_buffer_tracing_service", st);
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

static void tool_fini(void *data)
{
    (void)data;
}

TEST_CONFIGURE(configure, tool_init, tool_fini)

static sigjmp_buf g_jump;
/* Address 8, through a volatile pointer the compiler cannot see through. */
static volatile int *volatile g_bad = (volatile int *)(uintptr_t)8;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(g_jump, 1);
}

static void marks(const char *who, int word, long from, long to, int crash_at_half)
{
    char msg[64];
    volatile long failed = 0; /* volatile: marks() may siglongjmp (segv_caught) */
    for (long i = from; i < to; i++) {
        snprintf(msg, sizeof msg, "%s:%ld", who, i);
        uptx_mark(msg);
        if (g_tool) {
            char name[16];
            snprintf(name, sizeof name, "t%s", who);
            upti_status_t st = write_arg((uint64_t)(word + 1) << 32 | (uint64_t)i, (uint32_t)word,
                                         "int", name, msg, 0);
            if (st != UPTI_STATUS_SUCCESS && failed++ == 0) /* said once per thread */
                fprintf(stderr, "ring_prog: tool record %s: %s\n", msg, upti_get_status_name(st));
        }
        if (g_agents && i % (to / 10 > 0 ? to / 10 : 1) == 0) {
            upti_agent_t a = {.size = sizeof a, .type = UPTI_AGENT_TYPE_ACCELERATOR,
                              .runtime = "race", .name = msg, .vendor = "ring_prog",
                              .driver_version = "1", .node_id = (uint32_t)i};
            upti_agent_id_t id;
            if (upti_runtime_add_agent(&a, &id) != UPTI_STATUS_SUCCESS)
                fprintf(stderr, "ring_prog: upti_runtime_add_agent failed\n");
        }
        atomic_store_explicit(&g_counter[word], (uint64_t)(i + 1), memory_order_release);
        if (crash_at_half && i == to / 2 && sigsetjmp(g_jump, 1) == 0)
            *g_bad = 1; /* SIGSEGV, swallowed by on_segv */
    }
}

/* All threads are alive from before the first mark to after the last: the
 * rings they hold are never given back meanwhile. */
static pthread_barrier_t g_alive;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    char who[16];
    snprintf(who, sizeof who, "%d", t);
    pthread_barrier_wait(&g_alive);
    marks(who, t, 0, g_n, 0);
    pthread_barrier_wait(&g_alive);
    return NULL;
}

/* UPTI's threads in the process, and the signals with a handler. */
static void process_state(int *tasks, int *handlers)
{
    *handlers = 0;
    for (int sig = 1; sig < 32; sig++) {
        struct sigaction old;
        if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &old) == 0 &&
            old.sa_handler != SIG_DFL)
            (*handlers)++;
    }
    /* UPTI names its threads upti-* (a sanitizer may have threads of its own). */
    *tasks = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(comm, sizeof comm, f) != NULL && strncmp(comm, "upti", 4) == 0)
            (*tasks)++;
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
}

static int g_tasks0, g_handlers0;

/* MODE doorbell: a collector's sleep on the doorbell, in a thread. */
static void *doorbell_waiter(void *arg)
{
    _Atomic uint32_t *bell = arg;
    struct timespec limit = {60, 0};
    syscall(SYS_futex, (uint32_t *)(void *)bell, FUTEX_WAIT, 1u, &limit, NULL, 0);
    return (void *)(intptr_t)(atomic_load(bell) == 0);
}

/* MODE doorbell: the head of the calling thread's slot. */
static uint64_t own_head(void *map)
{
    const upti_ring_header_t *h = map;
    for (uint32_t i = 0; i < h->max_slots; i++) {
        upti_ring_slot_t *slot = upti_ring_slot(map, i);
        if (atomic_load(&slot->owner) == (uint64_t)syscall(SYS_gettid))
            return atomic_load(&slot->head);
    }
    return 0;
}

static int doorbell_mode(const char *path)
{
    int fd = open(path, O_RDWR);
    struct stat st;
    void *map = fd >= 0 && fstat(fd, &st) == 0
                    ? mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                    : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    if (map == MAP_FAILED)
        return 2;
    upti_ring_header_t *h = map;
    uint64_t mark = UPTI_RING_DOORBELL_BYTES(h->slot_size);
    uptx_mark("first"); /* claims the slot */
    atomic_store(&h->doorbell, 1);
    pthread_t waiter;
    if (pthread_create(&waiter, NULL, doorbell_waiter, &h->doorbell) != 0)
        return 2;
    uint64_t before = own_head(map), head = before;
    char msg[32];
    for (long i = 0; i < 1000000 && atomic_load(&h->doorbell) != 0; i++) {
        before = head;
        snprintf(msg, sizeof msg, "d:%ld", i);
        uptx_mark(msg);
        head = own_head(map);
    }
    printf("rang before=%llu head=%llu mark=%llu\n", (unsigned long long)before,
           (unsigned long long)head, (unsigned long long)mark);
    void *woken;
    pthread_join(waiter, &woken);
    printf("waiter woken=%d doorbell=%u\n", (int)(intptr_t)woken, atomic_load(&h->doorbell));
    atomic_store(&h->doorbell, 1);
    long k = 0;
    while (k < 1000 && atomic_load(&h->doorbell) != 0) {
        uptx_mark("again");
        k++;
    }
    printf("again after=%ld\n", k);
    /* The tool's end (upti_destroy_buffer: CLOSED) rings too, wherever the slots stand. */
    atomic_store(&h->doorbell, 1);
    if (pthread_create(&waiter, NULL, doorbell_waiter, &h->doorbell) != 0)
        return 2;
    upti_status_t destroyed = upti_destroy_buffer(g_buffer);
    pthread_join(waiter, &woken);
    printf("closed status=%d woken=%d doorbell=%u state=%u\n", (int)destroyed, (int)(intptr_t)woken,
           atomic_load(&h->doorbell), atomic_load(&h->state));
    return 0;
}

int main(int argc, char **argv)
{
    process_state(&g_tasks0, &g_handlers0); /* before UPTI (a sanitizer has its own) */
    if (argc < 5) {
        fprintf(stderr, "usage: ring_prog MODE DIR COUNTER N [THREADS [SIZE [POLICY [SLOTS]]]]\n");
        return 2;
    }
    const char *mode = argv[1];
    g_api = strcmp(mode, "api") == 0;
    g_inproc = strcmp(mode, "tool_inproc") == 0;
    g_tool = g_inproc || strcmp(mode, "tool") == 0;
    g_tool_api = strcmp(mode, "tool_api") == 0;
    g_agents = strcmp(mode, "agents") == 0;
    g_dir = argv[2];
    g_n = atol(argv[4]);
    int threads = argc > 5 ? atoi(argv[5]) : 1;
    if (threads < 1 || threads > MAX_THREADS)
        return 2;
    if (argc > 6)
        g_size = (size_t)atol(argv[6]);
    if (argc > 7 && strcmp(argv[7], "discard") == 0)
        g_policy = UPTI_BUFFER_POLICY_DISCARD;
    g_slots = argc > 8 ? (uint32_t)atoi(argv[8]) : (uint32_t)threads + 1;
    int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, MAX_THREADS * 8) != 0)
        return 2;
    g_counter = mmap(NULL, MAX_THREADS * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (g_counter == MAP_FAILED)
        return 2;
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);

    upti_status_t st = upti_force_configure(configure);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_force_configure", st);
    char path[4096] = "(in-process)";
    st = g_inproc ? UPTI_STATUS_SUCCESS : upti_get_shared_buffer_path(g_buffer, path, sizeof path);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_get_shared_buffer_path", st);
    if (g_tool_api) {
        tool_api_checks();
        marks("0", 0, 0, g_n, 0);
        return 0;
    }
    if (g_api) {
        upti_buffer_id_t late;
        upti_context_id_t none = {1};
        show("after_initialize", upti_create_shared_buffer(none, 4096, g_policy, g_dir, 1, &late));
        marks("0", 0, 0, g_n, 0);
        return 0;
    }
    printf("%s\n", path);
    fflush(stdout);
    if (strcmp(mode, "doorbell") == 0)
        return doorbell_mode(path);
    if (strcmp(mode, "storage") == 0) {
        char away[4200];
        snprintf(away, sizeof away, "%s.away", path);
        marks("0", 0, 0, 1, 0);
        if (rename(path, away) != 0)
            return 2;
        marks("0", 0, 1, g_n, 0);
        return rename(away, path) != 0 ? 2 : 0;
    }

    if (strcmp(mode, "fork") == 0) {
        marks("0", 0, 0, g_n / 2, 0);
        fflush(stdout);
        pid_t exec_child = fork(); /* execs at once: it records nothing, so no ring file */
        if (exec_child == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        int exec_status = 0;
        waitpid(exec_child, &exec_status, 0);
        if (!WIFEXITED(exec_status) || WEXITSTATUS(exec_status) != 0)
            return 1;
        pid_t child = fork();
        if (child == 0) {
            marks("c", 1, 0, g_n, 0);
            char mine[4096];
            if (upti_get_shared_buffer_path(g_buffer, mine, sizeof mine) == UPTI_STATUS_SUCCESS)
                printf("%s\n", mine);
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        marks("p", 2, 0, g_n, 0);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    }
    if (strcmp(mode, "segv_caught") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_segv;
        sigaction(SIGSEGV, &sa, NULL);
        marks("0", 0, 0, g_n, 1);
        return 0;
    }
    pthread_t th[MAX_THREADS];
    pthread_barrier_init(&g_alive, NULL, (unsigned)threads);
    for (int t = 1; t < threads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0)
            return 2;
    worker((void *)(intptr_t)0);
    for (int t = 1; t < threads; t++)
        pthread_join(th[t], NULL);
    if (g_tool)
        tool_records_at_end();
    if (g_agents) {
        size_t listed = 0;
        upti_query_available_agents(count_agents, &listed);
        printf("agents=%zu\n", listed);
    }
    if (g_inproc) {
        upti_flush_buffer(g_buffer);
        for (int t = 0; t < threads; t++)
            printf("inproc thread=%d marks=%ld tools=%ld order_errors=%ld\n", t, g_seen[t].marks,
                   g_seen[t].tools, g_seen[t].order_errors);
        printf("inproc metadata=%ld other=%ld misaligned=%ld drops=%llu\n", g_seen_metadata,
               g_seen_other, g_misaligned, (unsigned long long)g_seen_drops);
    }
    if (strcmp(mode, "return") == 0) {
        /* What the shared buffer left in the process: no thread, no signal handler. */
        int tasks, handlers;
        process_state(&tasks, &handlers);
        printf("before: upti_threads=%d handlers=%d\nafter: upti_threads=%d handlers=%d\n", g_tasks0,
               g_handlers0, tasks, handlers);
    }
    if (strcmp(mode, "closed") == 0) {
        upti_destroy_buffer(g_buffer);
        printf("closed\n");
        fflush(stdout);
        char c;
        while (read(0, &c, 1) > 0)
            continue;
    }
    if (strcmp(mode, "exit") == 0)
        _exit(0);
    if (strcmp(mode, "segv") == 0) {
        signal(SIGSEGV, SIG_DFL);
        *g_bad = 1;
    }
    return 0;
}
