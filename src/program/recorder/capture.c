/* SPDX-License-Identifier: MIT */
/* See capture.h. */
#include "capture.h"

#include "capture_spec.h"
#include "log.h"
#include "ring_mode.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GATED 4
#define STACK_BITS 256 /* push depths of a thread whose matching is remembered */

static struct {
    pthread_mutex_t lock; /* guards this struct; a leaf (the tool's lock order: tool.c) */
    upti_context_id_t gated[MAX_GATED];
    size_t num_gated;
    upti_context_id_t control;
    upti_buffer_id_t buffer;
    int gating;          /* some option gates recording */
    int on;              /* the gated contexts are started */
    uint64_t windows;    /* times they were started */
    int finalized;
    /* --capture-range=marker */
    int marker;
    char *name_copy;
    const char *name, *domain; /* domain: NULL the default one, "*" any */
    uint64_t max_windows; /* 0: every entry of the range (repeat) */
    uint64_t entered;     /* entries of the range (open count went 0 -> 1) */
    uint64_t open;        /* matching ranges open now, all threads */
    uint32_t *domains;    /* NVTX domain indexes named `domain` */
    size_t num_domains, cap_domains;
    uint64_t *ids;        /* matching start/stop ranges open: id, bit 63 for NVTX's */
    size_t num_ids, cap_ids;
    /* pause/resume */
    int paused;
    /* timed windows */
    int timed, timed_open;
    upti_collection_period period;
    uint64_t t0; /* CLOCK_REALTIME ns the periods count from */
} g_cap = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Per thread and per API (0 uptx, 1 NVTX: each has its own stack): push
 * depth and which open pushes matched. */
static __thread uint32_t t_depth[2];
static __thread uint64_t t_matched[2][STACK_BITS / 64];

/* Switches the gated contexts to what the conditions say (g_cap.lock held).
 * The status of starting them, when it did. */
static upti_status_t update(void)
{
    int want = !g_cap.finalized && !g_cap.paused && (!g_cap.timed || g_cap.timed_open) &&
               (!g_cap.marker || g_cap.open > 0);
    upti_status_t st = UPTI_STATUS_SUCCESS;
    if (want == g_cap.on)
        return st;
    g_cap.on = want;
    for (size_t i = 0; i < g_cap.num_gated; i++) {
        upti_status_t s = want ? upti_start_context(g_cap.gated[i])
                               : upti_stop_context(g_cap.gated[i]);
        if (st == UPTI_STATUS_SUCCESS)
            st = s;
    }
    if (want) {
        g_cap.windows++;
        char n[24];
        snprintf(n, sizeof n, "%llu", (unsigned long long)g_cap.windows);
        if (g_cap.gating)
            ut_ring_set_metadata(g_cap.buffer, "capture_windows", n);
    }
    return st;
}

static int grow(void *items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 16;
    void *p = realloc(*(void **)items, n * size);
    if (p == NULL)
        return -1;
    *(void **)items = p;
    *cap = n;
    return 0;
}

static int domain_named(uint64_t index)
{
    for (size_t i = 0; i < g_cap.num_domains; i++)
        if (g_cap.domains[i] == index)
            return 1;
    return 0;
}

/* 1 if a range with this text in this domain (0: the default) is the capture range. */
static int matches(const char *text, uint64_t domain)
{
    if (text == NULL || strcmp(text, g_cap.name) != 0)
        return 0;
    if (g_cap.domain == NULL)
        return domain == 0;
    if (strcmp(g_cap.domain, "*") == 0)
        return 1;
    return domain != 0 && domain_named(domain);
}

/* A matching range entered / left (g_cap.lock held). */
static void range_entered(void)
{
    if (g_cap.open++ == 0)
        g_cap.entered++;
    update();
}

static void range_left(void)
{
    if (g_cap.open > 0)
        g_cap.open--;
    update();
}

static int counted(void)
{
    return g_cap.max_windows == 0 || g_cap.entered < g_cap.max_windows;
}

static void on_push(int api, const char *text, uint64_t domain)
{
    uint32_t d = t_depth[api]++;
    int match = 0;
    if (g_cap.marker) {
        pthread_mutex_lock(&g_cap.lock);
        match = matches(text, domain) && (g_cap.open > 0 || counted());
        if (match)
            range_entered();
        pthread_mutex_unlock(&g_cap.lock);
    }
    if (d < STACK_BITS) {
        if (match)
            t_matched[api][d / 64] |= 1ull << (d % 64);
        else
            t_matched[api][d / 64] &= ~(1ull << (d % 64));
    }
}

static void on_pop(int api)
{
    if (t_depth[api] == 0)
        return;
    uint32_t d = --t_depth[api];
    if (d < STACK_BITS && (t_matched[api][d / 64] >> (d % 64)) & 1) {
        t_matched[api][d / 64] &= ~(1ull << (d % 64));
        pthread_mutex_lock(&g_cap.lock);
        range_left();
        pthread_mutex_unlock(&g_cap.lock);
    }
}

static void on_start(const char *text, uint64_t domain, uint64_t key)
{
    pthread_mutex_lock(&g_cap.lock);
    if (matches(text, domain) && (g_cap.open > 0 || counted()) &&
        grow(&g_cap.ids, &g_cap.cap_ids, g_cap.num_ids + 1, sizeof *g_cap.ids) == 0) {
        g_cap.ids[g_cap.num_ids++] = key;
        range_entered();
    }
    pthread_mutex_unlock(&g_cap.lock);
}

static void on_stop(uint64_t key)
{
    pthread_mutex_lock(&g_cap.lock);
    for (size_t i = 0; i < g_cap.num_ids; i++) {
        if (g_cap.ids[i] == key) {
            g_cap.ids[i] = g_cap.ids[--g_cap.num_ids];
            range_left();
            break;
        }
    }
    pthread_mutex_unlock(&g_cap.lock);
}

static void set_paused(int paused)
{
    pthread_mutex_lock(&g_cap.lock);
    g_cap.paused = paused;
    update();
    pthread_mutex_unlock(&g_cap.lock);
}

/* NVTX names a domain with NAME_CATEGORY of (index << 32 | 0). */
static void on_domain_name(uint64_t index, const char *name)
{
    if (index == 0 || name == NULL || g_cap.domain == NULL || strcmp(name, g_cap.domain) != 0)
        return;
    pthread_mutex_lock(&g_cap.lock);
    if (!domain_named(index) &&
        grow(&g_cap.domains, &g_cap.cap_domains, g_cap.num_domains + 1, sizeof *g_cap.domains) == 0)
        g_cap.domains[g_cap.num_domains++] = (uint32_t)index;
    pthread_mutex_unlock(&g_cap.lock);
}

/*
 * Marker calls: uptx's come at ENTER and EXIT with its callback data (acted
 * on at EXIT, where results are set); NVTX's once, phase NONE, with the
 * buffer record as payload.
 */
static void on_marker(upti_callback_tracing_record_t r, upti_user_data_t *user_data, void *data)
{
    (void)user_data;
    (void)data;
    int nvtx = r.phase == UPTI_CALLBACK_PHASE_NONE;
    if (!nvtx && r.phase != UPTI_CALLBACK_PHASE_EXIT)
        return;
    const upti_buffer_tracing_marker_api_record_t *m = nvtx ? r.payload : NULL;
    const upti_callback_tracing_marker_api_data_t *u = nvtx ? NULL : r.payload;
    uint64_t domain = m != NULL ? m->domain >> 32 : 0;
    switch (r.operation) {
    case UPTI_MARKER_API_PROFILER_PAUSE:
        set_paused(1);
        break;
    case UPTI_MARKER_API_PROFILER_RESUME:
        set_paused(0);
        break;
    case UPTI_MARKER_API_RANGE_PUSH:
        on_push(nvtx, m != NULL ? m->message : u->args.range_push.message, domain);
        break;
    case UPTI_MARKER_API_RANGE_POP:
        if (m != NULL || u->retval.int_retval >= 0) /* uptx: -1 when none was open */
            on_pop(nvtx);
        break;
    case UPTI_MARKER_API_RANGE_START:
        if (m != NULL)
            on_start(m->message, domain, m->range_id | 1ull << 63);
        else
            on_start(u->args.range_start.message, 0, u->retval.uint64_retval);
        break;
    case UPTI_MARKER_API_RANGE_STOP:
        on_stop(m != NULL ? m->range_id | 1ull << 63 : u->args.range_stop.id);
        break;
    case UPTI_MARKER_API_NAME_CATEGORY:
        if (m != NULL && (uint32_t)m->domain == 0)
            on_domain_name(domain, m->message);
        break;
    default:
        break;
    }
}

/* ---- timed windows ---- */

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void set_timed_open(int open)
{
    pthread_mutex_lock(&g_cap.lock);
    g_cap.timed_open = open;
    update();
    pthread_mutex_unlock(&g_cap.lock);
}

/*
 * Whether the periods are open t ns after t0, and in *next when that changes
 * (UINT64_MAX: never). Each cycle: START not recorded, then DURATION recorded
 * (0: to the end); REPEAT cycles (0: for ever).
 */
static int period_open(uint64_t t, uint64_t *next)
{
    const upti_collection_period *p = &g_cap.period;
    if (p->duration_ns == 0) {
        *next = t < p->start_ns ? p->start_ns : UINT64_MAX;
        return t >= p->start_ns;
    }
    uint64_t cycle = p->start_ns + p->duration_ns;
    uint64_t k = t / cycle, in = t % cycle;
    if (p->repeat != 0 && k >= p->repeat) {
        *next = UINT64_MAX;
        return 0;
    }
    if (in < p->start_ns) {
        *next = k * cycle + p->start_ns;
        return 0;
    }
    *next = (k + 1) * cycle;
    return 1;
}

static uint64_t since_t0(void)
{
    uint64_t now = realtime_ns();
    return now > g_cap.t0 ? now - g_cap.t0 : 0;
}

/* The timer's thread: the periods' state at each change. */
static void *timer_main(void *arg)
{
    (void)arg;
    for (;;) {
        uint64_t next;
        set_timed_open(period_open(since_t0(), &next));
        if (next == UINT64_MAX)
            return NULL;
        sleep_until(g_cap.t0 + next);
    }
}

static void start_timer(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are not this thread's */
    pthread_t t;
    int rc = pthread_create(&t, NULL, timer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        upti_log_warning("cannot start the thread of --delay/--duration/--collection-period "
                         "(%s): recording stays off", strerror(rc));
        return;
    }
    pthread_detach(t);
}

static void fork_prepare(void)
{
    pthread_mutex_lock(&g_cap.lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&g_cap.lock);
}

static void fork_child(void)
{
    pthread_mutex_unlock(&g_cap.lock);
    if (g_cap.timed && !g_cap.finalized)
        start_timer(); /* the parent's is not in the child */
}

/* ---- set-up ---- */

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* Reads the options; 0, or -1 after one line (the CLI checked them: set by hand). */
static int read_options(void)
{
    const char *range = env("UPTI_TRACE_CAPTURE_RANGE");
    if (range != NULL) {
        if (upti_parse_capture_name(range, &g_cap.name_copy, &g_cap.name, &g_cap.domain) != 0) {
            upti_log_warning("UPTI_TRACE_CAPTURE_RANGE='%s' is not NAME[@DOMAIN]: "
                             "recording everything", range);
            return -1;
        }
        g_cap.marker = 1;
        g_cap.max_windows = 1;
        const char *end = env("UPTI_TRACE_CAPTURE_END");
        if (end != NULL && upti_parse_capture_end(end, &g_cap.max_windows) != 0)
            upti_log_warning("UPTI_TRACE_CAPTURE_END='%s' is not stop, repeat or repeat:N: "
                             "using stop", end);
    }
    const char *paused = env("UPTI_TRACE_START_PAUSED");
    g_cap.paused = paused != NULL && strcmp(paused, "0") != 0;
    const char *period = env("UPTI_TRACE_COLLECTION_PERIOD");
    if (period != NULL) {
        if (upti_parse_collection_period(period, &g_cap.period) != 0) {
            upti_log_warning("UPTI_TRACE_COLLECTION_PERIOD='%s' is not START:DURATION:REPEAT "
                             "(seconds, seconds, count): ignored", period);
        } else {
            g_cap.timed = 1;
            const char *session = env("UPTI_TRACE_SESSION_START");
            g_cap.t0 = session != NULL ? strtoull(session, NULL, 10) : 0;
            if (g_cap.t0 == 0)
                g_cap.t0 = realtime_ns();
        }
    }
    g_cap.gating = g_cap.marker || g_cap.paused || g_cap.timed;
    return 0;
}

upti_status_t ut_capture_start(const upti_context_id_t *contexts, size_t n, upti_buffer_id_t buffer)
{
    if (n > MAX_GATED)
        n = MAX_GATED;
    memcpy(g_cap.gated, contexts, n * sizeof *contexts);
    g_cap.num_gated = n;
    g_cap.buffer = buffer;
    read_options();
    /* The control context: pause/resume always; the ranges only for a capture range. */
    static const uint32_t k_ops[] = {UPTI_MARKER_API_PROFILER_PAUSE, UPTI_MARKER_API_PROFILER_RESUME,
                                     UPTI_MARKER_API_RANGE_PUSH,     UPTI_MARKER_API_RANGE_POP,
                                     UPTI_MARKER_API_RANGE_START,    UPTI_MARKER_API_RANGE_STOP,
                                     UPTI_MARKER_API_NAME_CATEGORY};
    size_t num_ops = g_cap.marker ? sizeof k_ops / sizeof k_ops[0] : 2;
    upti_status_t st = upti_create_context(&g_cap.control);
    if (st == UPTI_STATUS_SUCCESS)
        st = upti_configure_callback_tracing_service(g_cap.control, UPTI_TRACING_KIND_MARKER_API,
                                                     k_ops, num_ops, on_marker, NULL);
    if (st == UPTI_STATUS_SUCCESS)
        st = upti_start_context(g_cap.control);
    if (st != UPTI_STATUS_SUCCESS && st != UPTI_STATUS_ERROR_KIND_NOT_FOUND) {
        if (g_cap.gating) {
            upti_log_warning("cannot watch marker ranges nor pause/resume (%s): "
                             "recording everything", upti_get_status_name(st));
            g_cap.gating = g_cap.marker = g_cap.paused = g_cap.timed = 0;
        }
    }
    if (g_cap.gating)
        ut_ring_set_metadata(buffer, "capture", "1");
    /* The state now, before any traced call of the program's: the timer only
     * follows the changes. */
    pthread_mutex_lock(&g_cap.lock);
    if (g_cap.timed) {
        uint64_t next;
        g_cap.timed_open = period_open(since_t0(), &next);
    }
    st = update();
    pthread_mutex_unlock(&g_cap.lock);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    if (g_cap.timed)
        start_timer();
    return st;
}

void ut_capture_finalize(void)
{
    pthread_mutex_lock(&g_cap.lock);
    g_cap.finalized = 1;
    pthread_mutex_unlock(&g_cap.lock);
}
