/* SPDX-License-Identifier: MIT */
/* The parent that bench/run_overhead puts between `upti run` (or nothing) and
 * the probe, to see the probe end as its parent does:
 *
 *   bench_run_overhead_wait PROGRAM [ARGS...]
 *
 * Prints `wait_start_ns=T0` (CLOCK_MONOTONIC as it starts: after upti's own
 * start, under upti run), forks and execs PROGRAM, waits for it with wait4, and prints
 * `child_exited_ns=T maxrss_kb=K child_cpu_ns=C status=S`: T is
 * CLOCK_MONOTONIC when wait4 returned, K the peak RSS and C the CPU time
 * (user + system) of PROGRAM alone (its rusage, not upti's nor this
 * process's). It links no OpenCL and no UPTI, so under `upti run` it records
 * nothing itself. Exits with PROGRAM's status. */
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PROGRAM [ARGS...]\n", argv[0]);
        return 2;
    }
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    printf("wait_start_ns=%lld\n", (long long)started.tv_sec * 1000000000LL + started.tv_nsec);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench: fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("bench: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("bench: wait4");
            return 1;
        }
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long cpu_ns = ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                       ((long long)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
    printf("child_exited_ns=%lld maxrss_kb=%ld child_cpu_ns=%lld status=%d\n",
           (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, ru.ru_maxrss, cpu_ns, status);
    fflush(stdout);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
