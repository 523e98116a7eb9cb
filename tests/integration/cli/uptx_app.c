/* SPDX-License-Identifier: MIT */
/* A small traced program for the CLI tests (uptx markers only; no OpenCL needed).
 *
 *   uptx_app [--iterations N] [--threads T] [--nasty] [--exit N]
 *            [--exit-from-thread N] [--fork-exec PROGRAM ARGS...]
 *
 * Each thread does N iterations of: push "outer", push "inner i", mark, pop,
 * pop; plus one start/stop range per thread. Thread names are "worker-K".
 * --nasty uses marker texts with quotes, commas, newlines, control bytes and
 * invalid UTF-8. --exit N returns N from main; --exit-from-thread N calls
 * exit(N) from a worker while main is blocked; --fork-exec runs PROGRAM in a
 * child (fork + execv) and waits for it.
 */
#include <uptx/uptx.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int g_iterations = 10;
static int g_nasty;
static int g_exit_from_thread = -1;

static const char *const k_nasty[] = {
    "quote \" comma , newline \n cr \r tab \t",
    "ctl \x01\x02\x1b[31m red \x7f",
    "bad \xff\xfe utf8 \xc3\x28 \xe2\x82",
    "emoji \xf0\x9f\x98\x80 \xc3\xbc",
};

static void *worker(void *arg)
{
    long k = (long)arg;
    char name[32];
    snprintf(name, sizeof name, "worker-%ld", k);
    uptx_name_thread(name);
    uint64_t range = uptx_range_start(g_nasty ? k_nasty[k % 4] : "thread range");
    for (int i = 0; i < g_iterations; i++) {
        uptx_range_push("outer");
        char inner[64];
        snprintf(inner, sizeof inner, "inner %d", i);
        uptx_range_push(g_nasty ? k_nasty[i % 4] : inner);
        uptx_mark(g_nasty ? k_nasty[(i + 1) % 4] : "tick");
        uptx_range_pop();
        uptx_range_pop();
    }
    uptx_range_stop(range);
    if (k == 0 && g_exit_from_thread >= 0) {
        uptx_mark("exiting from a worker");
        exit(g_exit_from_thread);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = 2, exit_code = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
            g_iterations = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--nasty") == 0)
            g_nasty = 1;
        else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc)
            exit_code = atoi(argv[++i]);
        else if (strcmp(argv[i], "--exit-from-thread") == 0 && i + 1 < argc)
            g_exit_from_thread = atoi(argv[++i]);
        else if (strcmp(argv[i], "--fork-exec") == 0 && i + 1 < argc) {
            uptx_range_push("parent before fork");
            pid_t pid = fork();
            if (pid == 0) {
                execv(argv[i + 1], argv + i + 1);
                _exit(127);
            }
            int status = 0;
            waitpid(pid, &status, 0);
            uptx_range_pop();
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "uptx_app: child failed\n");
                return 1;
            }
            break;
        }
    }
    uptx_name_thread("main");
    uptx_name_category(7, "category seven");
    uptx_range_push("main");
    pthread_t t[64];
    if (threads > 64)
        threads = 64;
    for (long k = 0; k < threads; k++)
        pthread_create(&t[k], NULL, worker, (void *)k);
    if (g_exit_from_thread >= 0)
        for (;;)
            pause(); /* the worker exits the process */
    for (int k = 0; k < threads; k++)
        pthread_join(t[k], NULL);
    uptx_range_pop();
    return exit_code;
}
