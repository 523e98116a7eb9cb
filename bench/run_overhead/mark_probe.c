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

struct worker {
    pthread_t thread;
    long marks;
    double start_ns, end_ns, cpu_ns;
};

static pthread_barrier_t start_line;

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *mark(void *arg)
{
    struct worker *w = arg;
    pthread_barrier_wait(&start_line);
    double cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    w->start_ns = clock_ns(CLOCK_MONOTONIC);
    for (long i = 0; i < w->marks; i++)
        uptx_mark("tick");
    w->end_ns = clock_ns(CLOCK_MONOTONIC);
    w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
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
        if (pthread_create(&w[t].thread, NULL, mark, &w[t]) != 0) {
            fprintf(stderr, "bench: pthread_create failed\n");
            return 1;
        }
    }
    double start = 0, end = 0, cpu = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(w[t].thread, NULL);
        start = t == 0 || w[t].start_ns < start ? w[t].start_ns : start;
        end = w[t].end_ns > end ? w[t].end_ns : end;
        cpu += w[t].cpu_ns;
    }
    free(w);
    pthread_barrier_destroy(&start_line);
    printf("marks=%ld threads=%d wall_ns=%.0f wall_ns_per_call=%.2f cpu_ns_per_call=%.2f\n", marks,
           threads, end - start, (end - start) / (double)marks, cpu / ((double)marks * threads));
    printf("exit_start_ns=%.0f\n", clock_ns(CLOCK_MONOTONIC));
    fflush(stdout);
    return 0;
}
