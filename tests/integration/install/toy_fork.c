/* SPDX-License-Identifier: MIT */
/* toyrt (samples/out_of_tree_runtime) registered by the parent, then called by
 * a child forked without exec: toyInit 1 and toyLaunch 1 in the parent,
 * toyLaunch 2 in the child. Built by oot_runtime_test.sh against the
 * sample's libtoyrt. */
#include "toyrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    int failed = toyInit(0) != 0; /* the first call registers toyrt, in the parent */
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        for (int i = 0; i < 2; i++)
            failed += toyLaunch("child", 4) != 0;
        exit(failed);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    failed += toyLaunch("parent", 1) != 0;
    printf("toy_fork: child %d, parent %d unexpected results\n",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1, failed);
    return failed != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
