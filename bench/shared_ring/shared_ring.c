/* SPDX-License-Identifier: MIT */
/* bench/shared_ring — what a record costs the program when it goes into a
 * shared ring (a collector in another process drains it), next to the
 * untraced program and to an in-process buffer; then how fast the collector
 * converts the spool into SQLite.
 *
 *   bench_shared_ring [RECORDS [THREADS...]]   (default 2000000 per thread; 1 and 2 threads)
 *
 * Each mode runs in its own process (this program again, with --mode): THREADS
 * threads each make RECORDS uptx_mark("m") calls; the best of 3 loops is
 * kept. none: no tool. buffer: an in-process buffer (4 MiB per thread,
 * LOSSLESS, a callback that only counts). shared: a shared buffer (4 MiB per
 * thread, LOSSLESS) in a fresh folder, with `upti-ring collect` running
 * beside it: the program waits whenever the collector falls behind.
 * shared_big: the same with rings that hold a whole loop: the program's own
 * cost of recording, whatever the collector's pace. Printed per mode: ns per record (wall time of the loop / records
 * of one thread), the cost added to none, the ratio to none, and cpu: the
 * thread's CPU time per record (CLOCK_THREAD_CPUTIME_ID; on a loaded machine
 * the steadier figure: it leaves out the time the thread was not running,
 * waits for the collector included). Then
 * `upti-ring convert --stats` of the last shared run's spool: records per
 * second, and the records dropped (a collector that fell 50 ms behind). Rings,
 * spool and databases go to a fresh folder in $TMPDIR (default /tmp).
 * No assertion: bench.shared_ring_smoke runs it small.
 */
#include <upti/upti.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <uptx/uptx.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define REPEATS 3

static const char *g_mode;
static const char *g_dir;
static long g_records;
static int g_threads;
static _Atomic uint64_t g_delivered;
static pthread_barrier_t g_start, g_end;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void on_buffer(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **h, size_t n,
                      void *data, uint64_t drops)
{
    (void)c, (void)b, (void)h, (void)data, (void)drops;
    atomic_fetch_add(&g_delivered, n);
}

static int tool_init(upti_client_finalize_t fini, void *data)
{
    (void)fini, (void)data;
    upti_context_id_t ctx;
    upti_buffer_id_t buf;
    if (upti_create_context(&ctx) != UPTI_STATUS_SUCCESS)
        return 1;
    upti_status_t st;
    size_t whole_loop = (size_t)g_records * 64 + (1u << 20); /* > 56 bytes per record */
    if (strcmp(g_mode, "shared") == 0)
        st = upti_create_shared_buffer(ctx, 4u << 20, UPTI_BUFFER_POLICY_LOSSLESS, g_dir,
                                       (uint32_t)g_threads + 1, &buf);
    else if (strcmp(g_mode, "shared_big") == 0)
        st = upti_create_shared_buffer(ctx, whole_loop, UPTI_BUFFER_POLICY_LOSSLESS, g_dir,
                                       (uint32_t)g_threads + 1, &buf);
    else
        st = upti_create_buffer(ctx, 4u << 20, 1u << 20, UPTI_BUFFER_POLICY_LOSSLESS, on_buffer,
                                NULL, &buf);
    if (st != UPTI_STATUS_SUCCESS ||
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, buf) !=
            UPTI_STATUS_SUCCESS)
        return 1;
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

static void tool_fini(void *data)
{
    (void)data;
}

static upti_tool_configure_result_t g_result = {sizeof g_result, tool_init, tool_fini, NULL};
static upti_tool_configure_result_t *configure(uint32_t v, const char *rv, uint32_t p,
                                               upti_client_id_t *id)
{
    (void)v, (void)rv, (void)p, (void)id;
    return &g_result;
}

static double g_elapsed[MAX_THREADS], g_cpu[MAX_THREADS];

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *loop(void *arg)
{
    int t = (int)(intptr_t)arg;
    uptx_mark("m"); /* the thread's first record (its ring) is not timed */
    double best = 0, best_cpu = 0;
    for (int r = 0; r < REPEATS; r++) {
        pthread_barrier_wait(&g_start);
        double t0 = now_ns(), c0 = cpu_ns();
        for (long i = 0; i < g_records; i++)
            uptx_mark("m");
        double dt = now_ns() - t0, dc = cpu_ns() - c0;
        pthread_barrier_wait(&g_end);
        if (r == 0 || dt < best)
            best = dt;
        if (r == 0 || dc < best_cpu)
            best_cpu = dc;
    }
    g_elapsed[t] = best;
    g_cpu[t] = best_cpu;
    return NULL;
}

/* One mode in this process: prints the ns per record (the slowest thread's best loop). */
static int run_mode(void)
{
    if (strcmp(g_mode, "none") != 0 && upti_force_configure(configure) != UPTI_STATUS_SUCCESS) {
        fprintf(stderr, "bench: the tool did not start\n");
        return 1;
    }
    pthread_barrier_init(&g_start, NULL, (unsigned)g_threads);
    pthread_barrier_init(&g_end, NULL, (unsigned)g_threads);
    pthread_t th[MAX_THREADS];
    for (int t = 1; t < g_threads; t++)
        pthread_create(&th[t], NULL, loop, (void *)(intptr_t)t);
    loop((void *)(intptr_t)0);
    for (int t = 1; t < g_threads; t++)
        pthread_join(th[t], NULL);
    double worst = 0, worst_cpu = 0;
    for (int t = 0; t < g_threads; t++) {
        if (g_elapsed[t] > worst)
            worst = g_elapsed[t];
        if (g_cpu[t] > worst_cpu)
            worst_cpu = g_cpu[t];
    }
    printf("%.3f %.3f\n", worst / (double)g_records, worst_cpu / (double)g_records);
    return 0;
}

static char g_self[PATH_MAX], g_bindir[PATH_MAX];

/* Starts argv[0] with its stdout into a pipe; returns its pid (-1 without a
 * pipe) and the pipe's end to read in *out_fd. */
static pid_t spawn(char *const argv[], int *out_fd)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    *out_fd = fds[0];
    return pid;
}

/* Reads fd to its end into out (cap bytes, NUL-terminated), closes it; returns the length. */
static size_t read_all(int fd, char *out, size_t cap)
{
    size_t len = 0;
    ssize_t n;
    while (len + 1 < cap && (n = read(fd, out + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(fd);
    return len;
}

/* Runs a command; returns its exit status, its stdout in out. */
static int run(char *const argv[], char *out, size_t cap, pid_t *child_pid, int wait_now)
{
    int fd;
    pid_t pid = spawn(argv, &fd);
    if (pid < 0)
        return -1;
    if (child_pid != NULL)
        *child_pid = pid;
    read_all(fd, out, cap);
    int status = 0;
    if (wait_now)
        waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* One mode, in a child process; with the collector beside it for shared. */
static double measure(const char *mode, int threads, const char *dir, const char *spool, double *cpu)
{
    char records[32], nthreads[32], out[256];
    snprintf(records, sizeof records, "%ld", g_records);
    snprintf(nthreads, sizeof nthreads, "%d", threads);
    char *argv[] = {g_self, "--mode", (char *)mode, records, nthreads, (char *)dir, NULL};
    int fd;
    pid_t pid = spawn(argv, &fd);
    if (pid < 0)
        return -1;
    pid_t collector = 0;
    if (strncmp(mode, "shared", 6) == 0) {
        char ring[PATH_MAX + 16], pidtext[32];
        snprintf(ring, sizeof ring, "%s/upti-ring", g_bindir);
        snprintf(pidtext, sizeof pidtext, "%d", (int)pid);
        collector = fork();
        if (collector == 0) {
            execl(ring, ring, "collect", spool, "--dir", dir, "--wait-pid", pidtext, (char *)NULL);
            _exit(127);
        }
    }
    size_t len = read_all(fd, out, sizeof out);
    int status = 0, cstatus = 0;
    waitpid(pid, &status, 0);
    if (collector > 0)
        waitpid(collector, &cstatus, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || len == 0 ||
        (collector > 0 && (!WIFEXITED(cstatus) || WEXITSTATUS(cstatus) != 0))) {
        fprintf(stderr, "bench: mode %s failed\n", mode);
        return -1;
    }
    char *rest = NULL;
    double wall = strtod(out, &rest);
    *cpu = strtod(rest, NULL);
    return wall;
}

int main(int argc, char **argv)
{
    if (argc >= 6 && strcmp(argv[1], "--mode") == 0) {
        g_mode = argv[2];
        g_records = atol(argv[3]);
        g_threads = atoi(argv[4]);
        g_dir = argv[5];
        return g_threads >= 1 && g_threads <= MAX_THREADS ? run_mode() : 2;
    }
    g_records = argc > 1 ? atol(argv[1]) : 2000000;
    ssize_t n = readlink("/proc/self/exe", g_self, sizeof g_self - 1);
    if (n <= 0 || g_records <= 0)
        return 2;
    g_self[n] = '\0';
    snprintf(g_bindir, sizeof g_bindir, "%s", g_self);
    *strrchr(g_bindir, '/') = '\0';
    int threads[8] = {1, 2}, num = 2;
    if (argc > 2) {
        num = 0;
        for (int i = 2; i < argc && num < 8; i++)
            threads[num++] = atoi(argv[i]);
    }
    const char *tmp = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/upti-bench-ring-XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
    char *dir = mkdtemp(tmpl);
    if (dir == NULL)
        return 1;
    char spool[PATH_MAX], prefix[PATH_MAX], cmd[3 * PATH_MAX];
    int rc = 0;
    for (int i = 0; i < num; i++) {
        snprintf(spool, sizeof spool, "%s/t%d.spool", dir, threads[i]);
        double cn, cb, cg, cs;
        double none = measure("none", threads[i], dir, spool, &cn);
        double buffer = measure("buffer", threads[i], dir, spool, &cb);
        double big = measure("shared_big", threads[i], dir, spool, &cg);
        unlink(spool);
        double shared = measure("shared", threads[i], dir, spool, &cs);
        if (none < 0 || buffer < 0 || shared < 0 || big < 0) {
            rc = 1;
            break;
        }
        printf("threads=%d mode=none ns/record=%.2f cpu=%.2f\n", threads[i], none, cn);
        printf("threads=%d mode=buffer ns/record=%.2f added=%.2f ratio=%.2f cpu=%.2f\n",
               threads[i], buffer, buffer - none, buffer / none, cb);
        printf("threads=%d mode=shared_big ns/record=%.2f added=%.2f ratio=%.2f cpu=%.2f\n",
               threads[i], big, big - none, big / none, cg);
        printf("threads=%d mode=shared ns/record=%.2f added=%.2f ratio=%.2f cpu=%.2f\n",
               threads[i], shared, shared - none, shared / none, cs);
    }
    if (rc == 0) {
        /* Conversion of the last shared run's spool. */
        char ring[PATH_MAX + 16], out[4096];
        snprintf(ring, sizeof ring, "%s/upti-ring", g_bindir);
        snprintf(prefix, sizeof prefix, "%s/out", dir);
        char *args[] = {ring, "convert", "--stats", spool, prefix, NULL};
        struct rusage u0, u1;
        getrusage(RUSAGE_CHILDREN, &u0);
        double t0 = now_ns();
        int crc = run(args, out, sizeof out, NULL, 1);
        double dt = (now_ns() - t0) / 1e9;
        getrusage(RUSAGE_CHILDREN, &u1);
        double cpu = (double)(u1.ru_utime.tv_sec - u0.ru_utime.tv_sec + u1.ru_stime.tv_sec -
                              u0.ru_stime.tv_sec) +
                     (double)(u1.ru_utime.tv_usec - u0.ru_utime.tv_usec + u1.ru_stime.tv_usec -
                              u0.ru_stime.tv_usec) / 1e6;
        const char *stats = strstr(out, "converted ");
        unsigned long long records = 0, dropped = 0;
        if (crc != 0 || stats == NULL ||
            sscanf(stats, "converted %llu records, %llu dropped", &records, &dropped) != 2) {
            fprintf(stderr, "bench: upti-ring convert failed\n");
            rc = 1;
        } else {
            printf("convert records=%llu dropped=%llu seconds=%.3f rate=%.2f M records/s "
                   "cpu_seconds=%.3f cpu_rate=%.2f M records/s\n",
                   records, dropped, dt, (double)records / dt / 1e6, cpu,
                   cpu > 0 ? (double)records / cpu / 1e6 : 0.0);
        }
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
