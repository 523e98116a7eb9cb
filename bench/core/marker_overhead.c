/* SPDX-License-Identifier: MIT */
/* bench/core/marker_overhead — cost of one uptx_range_push + uptx_range_pop
 * pair with no tool, with a tool whose callback does nothing, and with
 * buffer tracing; each also as a ratio to the cost of two
 * upti_get_timestamp() calls measured in the same process.
 *
 *   bench_marker_overhead [PAIRS]          runs the three modes, one process each
 *   bench_marker_overhead --mode MODE N    one mode (none | callback | buffer)
 *
 * The program does not link libupti: in "none" mode nothing but libuptx and
 * libupti-register is loaded while the loop runs (libupti is dlopen'ed only
 * afterwards, to time upti_get_timestamp). In the other modes it dlopen's
 * libupti first and configures its tool with upti_force_configure().
 * Targets (issue 2): no tool <= 2 ns per pair; buffer <= two timestamps + 20 ns.
 */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include "test_tool.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPEATS 5

/* The libupti functions the bench uses, looked up with dlsym. */
static struct {
    upti_status_t (*force_configure)(upti_configure_func_t);
    upti_status_t (*create_context)(upti_context_id_t *);
    upti_status_t (*start_context)(upti_context_id_t);
    upti_status_t (*configure_callback)(upti_context_id_t, upti_tracing_kind_t, const uint32_t *,
                                        size_t, upti_callback_tracing_cb_t, void *);
    upti_status_t (*create_buffer)(upti_context_id_t, size_t, size_t, upti_buffer_policy_t,
                                   upti_buffer_tracing_cb_t, void *, upti_buffer_id_t *);
    upti_status_t (*configure_buffer)(upti_context_id_t, upti_tracing_kind_t, const uint32_t *,
                                      size_t, upti_buffer_id_t);
    upti_status_t (*flush_buffer)(upti_buffer_id_t);
    upti_status_t (*get_timestamp)(upti_timestamp_t *);
} sdk;

static const char *g_mode;
static upti_buffer_id_t g_buffer;
static _Atomic uint64_t g_records;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* libupti's soname: the major version only. */
#define UPTI_SONAME "libupti.so." UPTI_VERSION_XSTR_(UPTI_VERSION_MAJOR)

/* Loads libupti.so from the directory libuptx.so was loaded from. */
static void load_sdk(void)
{
    Dl_info info;
    char path[PATH_MAX] = UPTI_SONAME;
    /* libuptx's exported uptx_range_push (the one this program calls is inline). */
    void *uptx_fn = dlsym(RTLD_DEFAULT, "uptx_range_push");
    if (uptx_fn != NULL && dladdr(uptx_fn, &info) != 0 && info.dli_fname != NULL) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash != NULL)
            snprintf(path, sizeof path, "%.*s/" UPTI_SONAME, (int)(slash - info.dli_fname),
                     info.dli_fname);
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        fprintf(stderr, "bench: cannot load %s: %s\n", path, dlerror());
        exit(2);
    }
#define LOOKUP(field, name)                                                                        \
    do {                                                                                           \
        *(void **)&sdk.field = dlsym(h, name);                                                     \
        if (sdk.field == NULL) {                                                                   \
            fprintf(stderr, "bench: %s not found\n", name);                                        \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)
    LOOKUP(force_configure, "upti_force_configure");
    LOOKUP(create_context, "upti_create_context");
    LOOKUP(start_context, "upti_start_context");
    LOOKUP(configure_callback, "upti_configure_callback_tracing_service");
    LOOKUP(create_buffer, "upti_create_buffer");
    LOOKUP(configure_buffer, "upti_configure_buffer_tracing_service");
    LOOKUP(flush_buffer, "upti_flush_buffer");
    LOOKUP(get_timestamp, "upti_get_timestamp");
}

static void empty_callback(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                           void *data)
{
    (void)record;
    (void)user_data;
    (void)data;
}

static void count_records(upti_context_id_t ctx, upti_buffer_id_t buffer,
                          upti_record_header_t **headers, size_t n, void *data, uint64_t drops)
{
    (void)ctx;
    (void)buffer;
    (void)headers;
    (void)data;
    (void)drops;
    atomic_fetch_add_explicit(&g_records, n, memory_order_relaxed);
}

static int tool_init(upti_client_finalize_t fini, void *data)
{
    (void)fini;
    (void)data;
    upti_context_id_t ctx;
    if (sdk.create_context(&ctx) != UPTI_STATUS_SUCCESS)
        return 1;
    if (strcmp(g_mode, "callback") == 0) {
        if (sdk.configure_callback(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, empty_callback,
                                   NULL) != UPTI_STATUS_SUCCESS)
            return 1;
    } else {
        if (sdk.create_buffer(ctx, 1 << 20, 1 << 19, UPTI_BUFFER_POLICY_LOSSLESS, count_records,
                              NULL, &g_buffer) != UPTI_STATUS_SUCCESS ||
            sdk.configure_buffer(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, g_buffer) !=
                UPTI_STATUS_SUCCESS)
            return 1;
    }
    return sdk.start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

TEST_CONFIGURE(configure, tool_init, NULL)

/* Best of REPEATS: ns per push+pop pair. */
static double time_pairs(long pairs)
{
    double best = 1e30;
    for (int r = 0; r < REPEATS; r++) {
        double t0 = now_ns();
        for (long i = 0; i < pairs; i++) {
            uptx_range_push("bench");
            uptx_range_pop();
        }
        double ns = (now_ns() - t0) / (double)pairs;
        if (ns < best)
            best = ns;
    }
    return best;
}

/* Best of REPEATS: ns per two upti_get_timestamp() calls. */
static double time_two_timestamps(long pairs)
{
    double best = 1e30;
    volatile upti_timestamp_t sink = 0;
    for (int r = 0; r < REPEATS; r++) {
        double t0 = now_ns();
        for (long i = 0; i < pairs; i++) {
            upti_timestamp_t a, b;
            sdk.get_timestamp(&a);
            sdk.get_timestamp(&b);
            sink += b - a;
        }
        double ns = (now_ns() - t0) / (double)pairs;
        if (ns < best)
            best = ns;
    }
    (void)sink;
    return best;
}

static int run_mode(const char *mode, long pairs)
{
    g_mode = mode;
    if (strcmp(mode, "none") != 0) {
        load_sdk();
        if (sdk.force_configure(configure) != UPTI_STATUS_SUCCESS) {
            fprintf(stderr, "bench: upti_force_configure failed\n");
            return 2;
        }
    }
    uptx_range_push("warm-up"); /* libuptx registers here */
    uptx_range_pop();
    double pair = time_pairs(pairs);
    if (strcmp(mode, "none") == 0)
        load_sdk();
    double two_ts = time_two_timestamps(pairs);
    uint64_t records = 0;
    if (strcmp(mode, "buffer") == 0) {
        sdk.flush_buffer(g_buffer);
        records = atomic_load(&g_records);
        if (records != 2ull * (uint64_t)(pairs * REPEATS + 1)) {
            fprintf(stderr, "bench: buffer delivered %llu records, expected %llu\n",
                    (unsigned long long)records,
                    2ull * (unsigned long long)(pairs * REPEATS + 1));
            return 1;
        }
    }
    printf("marker_overhead: mode=%-8s pairs=%ld ns_per_pair=%.2f two_timestamps_ns=%.2f "
           "ratio=%.2f\n",
           mode, pairs, pair, two_ts, pair / two_ts);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--mode") == 0)
        return run_mode(argv[2], atol(argv[3]));
    long pairs = argc > 1 ? atol(argv[1]) : 5000000;
    if (pairs <= 0) {
        fprintf(stderr, "usage: %s [PAIRS] | --mode none|callback|buffer PAIRS\n", argv[0]);
        return 2;
    }
    unsetenv("UPTI_TOOL_LIBRARIES");
    unsetenv("LD_PRELOAD");
    printf("marker_overhead: one uptx_range_push + uptx_range_pop pair, best of %d runs of %ld "
           "pairs\n", REPEATS, pairs);
    fflush(stdout);
    int failed = 0;
    const char *modes[] = {"none", "callback", "buffer"};
    for (int m = 0; m < 3; m++) {
        char n[32];
        snprintf(n, sizeof n, "%ld", pairs);
        pid_t pid = fork();
        if (pid == 0) {
            execl("/proc/self/exe", argv[0], "--mode", modes[m], n, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench: mode %s failed (status %d)\n", modes[m], status);
            failed = 1;
        }
    }
    printf("marker_overhead: targets: none <= 2 ns per pair; buffer <= two_timestamps_ns + 20 ns\n");
    return failed;
}
