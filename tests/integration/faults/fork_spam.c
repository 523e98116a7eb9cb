/* SPDX-License-Identifier: MIT */
/* fork() without exec while 4 threads spam uptx: the child must not deadlock
 * (on a lock another thread held at the fork, or on buffers whose consumer
 * thread did not survive it) and keeps calling uptx; each child exits 0 and
 * the parent exits 7 after FORKS children. A child stuck for 20 s is killed
 * (SIGALRM) and fails the run. fork_spam [forks] [child_calls] */
#include <uptx/uptx.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int g_stop;

static void *spam(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_stop)) {
        uptx_range_push("spam");
        uptx_mark("spam mark");
        uptx_range_pop();
    }
    return NULL;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FORK_SPAM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FORK_SPAM_ASAN 1
#endif

int main(int argc, char **argv)
{
#ifdef FORK_SPAM_ASAN
    /* LLVM 14's ASan allocator is not fork-safe: a thread started in a child
     * forked while other threads allocate waits forever on an allocator lock
     * (glibc's malloc resets its locks at fork; ASan's does not here). */
    printf("SKIP: fork while threads allocate is not supported by this AddressSanitizer\n");
    return 77;
#endif
    int forks = argc > 1 ? atoi(argv[1]) : 20;
    long calls = argc > 2 ? atol(argv[2]) : 200000;
    uptx_range_push("parent");
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, spam, NULL);
    int bad = 0;
    for (int f = 0; f < forks; f++) {
        usleep(2000);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(20);
            for (long i = 0; i < calls; i++) {
                uptx_range_push("child");
                uptx_range_pop();
            }
            exit(0); /* runs the atexit finalization: the child writes its trace */
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "fork_spam: child %d of %d failed (status 0x%x)\n", f, forks, status);
            bad = 1;
        }
    }
    atomic_store(&g_stop, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    uptx_range_pop();
    printf("app: %d forks %s\n", forks, bad ? "FAILED" : "ok");
    return bad ? 1 : 7;
}
