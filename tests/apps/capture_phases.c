/* SPDX-License-Identifier: MIT */
/* A uptx program that stamps its own phases, for the capture-window tests of
 * `upti run` (tests/integration/cli/test_capture.py). Every record it makes
 * is a uptx call whose text says where it was made, so a test counts exactly
 * what a window kept.
 *
 *   capture_phases ranges N M     N times: uptx_mark("out:<i>"), then the range
 *                                 "window" (push; M marks "in:<i>:<j>"; pop);
 *                                 then uptx_mark("out:end")
 *   capture_phases started N M    the same with uptx_range_start/stop, ending
 *                                 the range from another thread
 *   capture_phases phases MS      marks "A" x10, "B" x10, "C" x10, "D" x10, phase
 *                                 k at (k + 1/2) x MS ms after `upti run` started
 *                                 (UPTI_TRACE_SESSION_START, else the program's
 *                                 start; a phase already late is made at once):
 *                                 a window whose edges are multiples of MS keeps
 *                                 whole phases, MS/2 away from its edges
 *   capture_phases pause          "p0" x5, resume, "p1" x7, pause, "p2" x3,
 *                                 resume, "p3" x4 (pause/resume: the uptx profiler calls)
 *   capture_phases fork           range "window": "parent" x2, fork(); the child
 *                                 makes "child" x3, pops and exits; the parent
 *                                 waits, makes "parent" x2 and pops, then "out" x1
 *   capture_phases nothing [STATUS]  "p0" x5 (no range, no resume), then exits with STATUS
 */
#include <uptx/uptx.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void marks(const char *prefix, int n)
{
    char text[64];
    for (int i = 0; i < n; i++) {
        snprintf(text, sizeof text, "%.40s:%d", prefix, i);
        uptx_mark(text);
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static long long realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *stop_range(void *arg)
{
    uptx_range_stop(*(uint64_t *)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "ranges") == 0 || strcmp(mode, "started") == 0) {
        int n = argc > 2 ? atoi(argv[2]) : 5, m = argc > 3 ? atoi(argv[3]) : 4;
        int started = strcmp(mode, "started") == 0;
        for (int i = 0; i < n; i++) {
            char text[64];
            snprintf(text, sizeof text, "out:%d", i);
            uptx_mark(text);
            uint64_t id = 0;
            if (started)
                id = uptx_range_start("window");
            else
                uptx_range_push("window");
            snprintf(text, sizeof text, "in:%d", i);
            marks(text, m);
            if (started) {
                pthread_t t;
                pthread_create(&t, NULL, stop_range, &id);
                pthread_join(t, NULL);
            } else {
                uptx_range_pop();
            }
        }
        uptx_mark("out:end");
    } else if (strcmp(mode, "phases") == 0) {
        long long ms = argc > 2 ? atoll(argv[2]) : 1000;
        const char *session = getenv("UPTI_TRACE_SESSION_START");
        long long t0 = session != NULL ? atoll(session) : realtime_ns();
        static const char *const names[] = {"A", "B", "C", "D"};
        for (int k = 0; k < 4; k++) {
            long long at = t0 + (2 * k + 1) * ms * 500000LL, now = realtime_ns();
            if (at > now)
                sleep_ms((long)((at - now) / 1000000));
            marks(names[k], 10);
        }
    } else if (strcmp(mode, "pause") == 0) {
        marks("p0", 5);
        uptx_profiler_resume();
        marks("p1", 7);
        uptx_profiler_pause();
        marks("p2", 3);
        uptx_profiler_resume();
        marks("p3", 4);
    } else if (strcmp(mode, "fork") == 0) {
        uptx_range_push("window");
        marks("parent", 2);
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) {
            marks("child", 3);
            uptx_range_pop();
            exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        marks("parent", 2);
        uptx_range_pop();
        uptx_mark("out");
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    } else if (strcmp(mode, "nothing") == 0) {
        marks("p0", 5);
        return argc > 2 ? atoi(argv[2]) : 0;
    } else {
        fprintf(stderr, "usage: capture_phases ranges|started N M | phases MS | pause | nothing\n");
        return 2;
    }
    return 0;
}
