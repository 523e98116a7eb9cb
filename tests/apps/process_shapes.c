/* SPDX-License-Identifier: MIT */
/* Programs of the shapes users launch under `upti run` (tests/integration/shapes).
 *
 *   process_shapes exec N M [K]   image K (default 0) of N: M uptx_mark("img<K>:<i>"),
 *                                 then exec of itself as image K + 1 (same pid);
 *                                 the last image returns 0
 *   process_shapes daemon M       one mark "top", then a daemon (fork, setsid, fork;
 *                                 the middle process exits at once) that waits until
 *                                 this program has ended and makes M marks
 *                                 "daemon:<i>"; the program exits 3
 *   process_shapes idle_daemon    one mark "top", then a daemon (the same double fork)
 *                                 that prints "shapes: daemon PID", closes its standard
 *                                 streams and waits for a signal, recording nothing;
 *                                 the program exits 3
 *   process_shapes forks N        one mark "top", then N children that record nothing
 *                                 and wait (each holds its claim) until the program
 *                                 has slept 1 s; it waits for them and returns 0
 *   process_shapes forever        marks until killed; prints "shapes: started PID" after
 *                                 the first
 *   process_shapes argv A=B       cuts its argument at '=' in place (as option parsers
 *                                 do: /proc/self/cmdline then reads "A B"), then one mark
 */
#include <uptx/uptx.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void marks(const char *prefix, long m)
{
    char text[64];
    for (long i = 0; i < m; i++) {
        snprintf(text, sizeof text, "%s:%ld", prefix, i);
        uptx_mark(text);
    }
}

static int exec_images(long n, long m, long k)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "img%ld", k);
    marks(prefix, m);
    if (k + 1 >= n)
        return 0;
    char sn[24], sm[24], sk[24];
    snprintf(sn, sizeof sn, "%ld", n);
    snprintf(sm, sizeof sm, "%ld", m);
    snprintf(sk, sizeof sk, "%ld", k + 1);
    char *args[] = {"process_shapes", "exec", sn, sm, sk, NULL};
    execv("/proc/self/exe", args);
    perror("execv");
    return 1;
}

/* m < 0: the daemon records nothing and waits for a signal (idle_daemon). */
static int daemon_marks(long m)
{
    uptx_mark("top"); /* the program records before it forks: the daemon inherits its tracing */
    int ended[2];
    if (pipe(ended) != 0)
        return 1;
    pid_t middle = fork();
    if (middle < 0)
        return 1;
    if (middle == 0) {
        setsid();
        pid_t daemon = fork();
        if (daemon != 0)
            _exit(daemon < 0);
        /* The daemon: until every writer of the pipe is gone (the program and
         * the middle process have ended), then it records. */
        close(ended[1]);
        if (m < 0) {
            printf("shapes: daemon %d\n", (int)getpid());
            fflush(stdout);
            for (int fd = 0; fd < 3; fd++)
                close(fd);
            for (;;)
                pause();
        }
        char c;
        while (read(ended[0], &c, 1) > 0)
            ;
        marks("daemon", m);
        _exit(0);
    }
    close(ended[0]);
    waitpid(middle, NULL, 0);
    printf("shapes: daemon started\n");
    return 3;
}

static int idle_children(long n)
{
    uptx_mark("top");
    int go[2];
    if (pipe(go) != 0)
        return 1;
    for (long i = 0; i < n; i++) {
        pid_t c = fork();
        if (c < 0)
            return 1;
        if (c == 0) {
            close(go[1]);
            char b;
            while (read(go[0], &b, 1) > 0)
                ;
            _exit(0);
        }
    }
    close(go[0]);
    sleep(1); /* (a collector polling claims while the program runs would poll now) */
    close(go[1]);
    while (wait(NULL) > 0)
        ;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "exec") == 0)
        return exec_images(atol(argv[2]), atol(argv[3]), argc > 4 ? atol(argv[4]) : 0);
    if (argc == 3 && strcmp(argv[1], "daemon") == 0)
        return daemon_marks(atol(argv[2]));
    if (argc == 3 && strcmp(argv[1], "forks") == 0)
        return idle_children(atol(argv[2]));
    if (argc == 2 && strcmp(argv[1], "idle_daemon") == 0)
        return daemon_marks(-1);
    if (argc == 3 && strcmp(argv[1], "argv") == 0) {
        char *eq = strchr(argv[2], '=');
        if (eq != NULL)
            *eq = '\0';
        uptx_mark("after the edit");
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "forever") == 0) {
        uptx_mark("first");
        printf("shapes: started %d\n", (int)getpid());
        fflush(stdout);
        for (;;)
            marks("forever", 1000);
    }
    fprintf(stderr, "usage: process_shapes exec N M [K] | daemon M | idle_daemon | forks N | forever | argv A=B\n");
    return 2;
}
