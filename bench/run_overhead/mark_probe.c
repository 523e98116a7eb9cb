/* SPDX-License-Identifier: MIT */
/* The marker probe of bench/run_overhead: THREADS threads each make MARKS
 * uptx_mark calls, started together; no OpenCL.
 *
 *   bench_run_overhead_marks MARKS THREADS
 *
 * Prints `marks=M threads=T wall_ns=W wall_ns_per_call=P cpu_ns_per_call=C`
 * (W: from the first thread's start to the last one's end; P: what one thread
 * sees per call; C: the threads' CPU per call), then `exit_start_ns=T` just
 * before main returns, as the OpenCL probe does. */
#include <uptx/uptx.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timed_threads.h"

struct worker {
    timed_thread timed; /* (first) */
    long marks;
};

static pthread_barrier_t start_line;

static void *mark(void *arg)
{
    struct worker *w = arg;
    pthread_barrier_wait(&start_line);
    timed_begin(&w->timed);
    for (long i = 0; i < w->marks; i++)
        uptx_mark("tick");
    timed_end(&w->timed);
    return NULL;
}

int main(int argc, char **argv)
{
    long marks = argc > 1 ? atol(argv[1]) : 1000000;
    int threads = argc > 2 ? atoi(argv[2]) : 16;
    if (argc != 3 || marks < 1 || threads < 1 || threads > 256) {
        fprintf(stderr, "usage: %s MARKS THREADS\n", argv[0]);
        return 2;
    }
    struct worker *w = calloc((size_t)threads, sizeof *w);
    if (w == NULL)
        return 1;
    pthread_barrier_init(&start_line, NULL, (unsigned)threads);
    for (int t = 0; t < threads; t++) {
        w[t].marks = marks;
        if (pthread_create(&w[t].timed.thread, NULL, mark, &w[t]) != 0) {
            fprintf(stderr, "bench: pthread_create failed\n");
            return 1;
        }
    }
    double span, cpu;
    timed_join(w, sizeof *w, threads, &span, &cpu);
    free(w);
    pthread_barrier_destroy(&start_line);
    printf("marks=%ld threads=%d wall_ns=%.0f wall_ns_per_call=%.2f cpu_ns_per_call=%.2f\n", marks,
           threads, span, span / (double)marks, cpu / ((double)marks * threads));
    printf("exit_start_ns=%.0f\n", clock_ns(CLOCK_MONOTONIC));
    fflush(stdout);
    return 0;
}
