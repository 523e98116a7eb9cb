/* SPDX-License-Identifier: MIT */
/* A program of many marking threads, for the tests of UPTI under small limits
 * (check_shm_limits.py).
 *
 *   many_marks THREADS N [ROUNDS]
 *
 * Each of THREADS threads makes N uptx_mark("<thread>:<i>") calls; all
 * threads run at once (each starts marking once all were created). ROUNDS
 * (default 1): that many times, one after the other, with new threads each
 * round, numbered on: round r's threads are r * THREADS to r * THREADS +
 * THREADS - 1 (they take the rings the last round's threads left, all at
 * once). It prints one line, the same traced or not, and exits 0: the test
 * compares both with the untraced run's.
 */
#include <uptx/uptx.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long g_n;
static pthread_barrier_t g_all_created;

static void *work(void *arg)
{
    long t = (long)arg;
    char text[48];
    pthread_barrier_wait(&g_all_created);
    for (long i = 0; i < g_n; i++) {
        snprintf(text, sizeof text, "%ld:%ld", t, i);
        uptx_mark(text);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: many_marks THREADS N [ROUNDS]\n");
        return 2;
    }
    int threads = atoi(argv[1]);
    g_n = atol(argv[2]);
    long rounds = argc == 4 ? atol(argv[3]) : 1;
    if (threads < 1 || threads > 1024 || g_n < 0 || rounds < 1 || rounds > 100000)
        return 2;
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    if (t == NULL || pthread_barrier_init(&g_all_created, NULL, (unsigned)threads) != 0)
        return 2;
    /* Small stacks: many threads fit under a low address-space limit (ulimit -v). */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (long r = 0; r < rounds; r++) {
        for (long k = 0; k < threads; k++)
            if (pthread_create(&t[k], &attr, work, (void *)(r * threads + k)) != 0) {
                fprintf(stderr, "many_marks: cannot create thread %ld\n", r * threads + k);
                return 3;
            }
        for (int k = 0; k < threads; k++)
            pthread_join(t[k], NULL);
    }
    if (rounds == 1)
        printf("many_marks: %d threads made %ld marks each\n", threads, g_n);
    else
        printf("many_marks: %ld rounds of %d threads made %ld marks each\n", rounds, threads, g_n);
    free(t);
    return 0;
}
