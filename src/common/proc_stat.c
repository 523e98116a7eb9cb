/* SPDX-License-Identifier: MIT */
/* /proc/<pid>/stat and /proc/self/cmdline, read one way for the SDK, the tool and the
 * collector (proc_stat.h). */
#include "proc_stat.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int upti_proc_stat(int64_t pid, char *state, uint64_t *start_ticks)
{
    char path[64], buf[1024];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/stat");
    else
        snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
    if (p == NULL || p[1] != ' ' || p[2] == '\0')
        return -1;
    *state = p[2];
    /* p is at ')', the end of field 2; each step finds the space before the next
     * field: 20 steps reach the one before field 22 (field 21, itrealvalue, is
     * always 0: one step fewer read it, and every ring said it started at 0). */
    for (int field = 2; field < 22 && p != NULL; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL)
        return -1;
    *start_ticks = strtoull(p + 1, NULL, 10);
    return 0;
}

/* /proc/self/cmdline into out[0..cap): its NUL-separated arguments, NUL-terminated;
 * returns their length without trailing NULs, -1 when it cannot be read (out ""). */
static ssize_t read_cmdline(char *out, size_t cap)
{
    out[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0)
        return -1;
    while (n > 0 && out[n - 1] == '\0')
        n--;
    out[n] = '\0';
    return n;
}

int upti_proc_command_line(char *out, size_t cap)
{
    ssize_t n = read_cmdline(out, cap);
    if (n < 0)
        return -1;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    return 0;
}

void upti_proc_argv0(char *out, size_t n)
{
    char buf[4096];
    out[0] = '\0';
    if (read_cmdline(buf, sizeof buf) < 0)
        return;
    const char *slash = strrchr(buf, '/'); /* within the first argument: it ends at a NUL */
    const char *base = slash ? slash + 1 : buf;
    size_t len = strlen(base);
    if (len >= n)
        len = n - 1;
    memcpy(out, base, len);
    out[len] = '\0';
}

const char *upti_proc_mpi_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "SLURM_PROCID", "MPI_LOCALRANKID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && v[0] != '\0')
            return v;
    }
    return NULL;
}
