/* SPDX-License-Identifier: MIT */
/* A program whose every completed call is known to its killer, for the exact
 * crash tests of `upti run` (tests/integration/crash, run_* cases).
 *
 *   counted_marks MODE COUNTER N [THREADS]
 *
 * Each of THREADS threads (default 2) makes N uptx_mark("<thread>:<i>")
 * calls, and after each call returns stores i + 1 in word <thread> of the
 * file COUNTER (a shared mapping the test reads after the program ended: a
 * call counted there had returned). It prints "counted: started" once every
 * thread made its first call. MODE:
 *   run          return from main (status 0)
 *   exit         thread 0 calls _exit(3) halfway
 *   segv         thread 0 faults halfway (SIGSEGV, default action)
 *   segv_caught  thread 0 faults halfway; a handler swallows it (siglongjmp)
 *                and the program goes on to its end (status 0)
 *   drain        a SIGTERM handler sets a flag; the threads stop at the next
 *                call, then main makes 1000 marks "drain:<i>" (counted in word
 *                THREADS) and returns 0. The test sends SIGTERM.
 *   burst        each thread makes its first call, then waits until a collector
 *                attached to the program's ring file (the header's collector_pid,
 *                in $UPTI_TRACE_RING_DIR; 30 s at most; main prints "counted:
 *                collector attached" or "counted: no collector"), then makes the
 *                rest at full speed, as run (crash.run_doorbell)
 * With N = 0 the threads mark until the program is killed or signalled.
 */
#include <upti/ring.h>
#include <uptx/uptx.h>

#include <dirent.h>

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static const char *g_mode;
static long g_n;
static int g_threads = 2;
static _Atomic uint64_t *g_counter;
static _Atomic int g_started;
static volatile sig_atomic_t g_stop;
static sigjmp_buf g_jump;
static volatile int *g_null;
static _Atomic int g_go = 1; /* burst: 0 until the collector attached */

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(g_jump, 1);
}

static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void *work(void *arg)
{
    long t = (long)arg;
    char text[64];
    long i = 0;
    for (; g_n == 0 || i < g_n; i++) {
        if (g_stop)
            break;
        snprintf(text, sizeof text, "%ld:%ld", t, i);
        uptx_mark(text);
        atomic_store(&g_counter[t], (uint64_t)(i + 1));
        if (i == 0 && atomic_fetch_add(&g_started, 1) + 1 == g_threads) {
            printf("counted: started\n");
            fflush(stdout);
        }
        while (!atomic_load(&g_go))
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        if (t == 0 && g_n > 0 && i == g_n / 2) {
            if (strcmp(g_mode, "exit") == 0)
                _exit(3);
            if (strcmp(g_mode, "segv") == 0)
                *g_null = 1;
            if (strcmp(g_mode, "segv_caught") == 0 && sigsetjmp(g_jump, 1) == 0)
                *g_null = 1;
        }
    }
    /* The other threads of a program that thread 0 ends halfway are still
     * running when it ends (never finished and unjoined: a thread leak to
     * ThreadSanitizer). */
    if (t != 0 && (strcmp(g_mode, "exit") == 0 || strcmp(g_mode, "segv") == 0))
        for (;;)
            pause();
    return NULL;
}

/* burst: whether a collector attached to one of this process's ring files in
 * $UPTI_TRACE_RING_DIR within 30 s. */
static int collector_attached(void)
{
    const char *dir = getenv("UPTI_TRACE_RING_DIR");
    char prefix[64];
    snprintf(prefix, sizeof prefix, "upti-%ld-", (long)getpid());
    for (int tries = 0; dir != NULL && tries < 30000; tries++) {
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            size_t n = strlen(e->d_name), k = strlen(UPTI_RING_SUFFIX);
            if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || n < k ||
                strcmp(e->d_name + n - k, UPTI_RING_SUFFIX) != 0)
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            int fd = open(path, O_RDONLY);
            void *map = fd >= 0 ? mmap(NULL, UPTI_RING_HEADER_BYTES, PROT_READ, MAP_SHARED, fd, 0)
                                : MAP_FAILED;
            if (fd >= 0)
                close(fd);
            int attached = map != MAP_FAILED &&
                           atomic_load(&((upti_ring_header_t *)map)->collector_pid) != 0;
            if (map != MAP_FAILED)
                munmap(map, UPTI_RING_HEADER_BYTES);
            if (attached) {
                closedir(d);
                return 1;
            }
        }
        if (d != NULL)
            closedir(d);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: counted_marks run|exit|segv|segv_caught|drain|burst COUNTER N [THREADS]\n");
        return 2;
    }
    g_mode = argv[1];
    g_n = atol(argv[3]);
    if (argc > 4)
        g_threads = atoi(argv[4]);
    if (g_threads < 1 || g_threads > 64)
        return 2;
    int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
    size_t bytes = 65 * sizeof(uint64_t);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0)
        return 2;
    g_counter = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (g_counter == MAP_FAILED)
        return 2;
    if (strcmp(g_mode, "segv_caught") == 0)
        signal(SIGSEGV, on_segv);
    if (strcmp(g_mode, "drain") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
    }
    /* drain: SIGTERM goes to the main thread (the workers block it), which
     * waits in pthread_join: delivered at once, also under ThreadSanitizer,
     * which holds a signal for a thread until it calls into libc. */
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, &old);
    int burst = strcmp(g_mode, "burst") == 0;
    if (burst)
        atomic_store(&g_go, 0);
    pthread_t t[64];
    for (long k = 0; k < g_threads; k++)
        pthread_create(&t[k], NULL, work, (void *)k);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (burst) {
        while (atomic_load(&g_started) < g_threads)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        printf(collector_attached() ? "counted: collector attached\n" : "counted: no collector\n");
        fflush(stdout);
        atomic_store(&g_go, 1);
    }
    for (int k = 0; k < g_threads; k++)
        pthread_join(t[k], NULL);
    if (strcmp(g_mode, "drain") == 0) {
        char text[32];
        for (int i = 0; i < 1000; i++) {
            snprintf(text, sizeof text, "drain:%d", i);
            uptx_mark(text);
            atomic_store(&g_counter[g_threads], (uint64_t)(i + 1));
        }
    }
    return 0;
}
