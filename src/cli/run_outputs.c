/* SPDX-License-Identifier: MIT */
/* See run_outputs.h. The manifest's records are described in src/collector/output/manifest.h. */
#include "run_outputs.h"

#include "manifest.h"
#include "out_files.h"
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int g_manifest_fd = -1;

int run_outputs_begin(void)
{
    /* Only upti writes it (the program only records): in memory where the
     * kernel allows, else an unlinked file (a file system's create and unlink
     * cost a short run 0.1 to 0.2 ms). */
    int mem = memfd_create("upti-run-manifest", MFD_CLOEXEC);
    if (mem >= 0) {
        fcntl(mem, F_SETFL, O_APPEND);
        g_manifest_fd = mem;
        uo_manifest_set_fd(mem);
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    char name[PATH_MAX];
    snprintf(name, sizeof name, "%s/upti-run-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    int fd = mkstemp(name);
    if (fd < 0) {
        snprintf(name, sizeof name, "/tmp/upti-run-XXXXXX");
        fd = mkstemp(name);
    }
    if (fd < 0) {
        fprintf(stderr, "upti: cannot create a run manifest (%s): the files written will not "
                        "be listed\n", strerror(errno));
        return -1;
    }
    /* Only upti writes it (the program only records): open, it needs no name, and
     * an upti killed leaves no file behind. */
    unlink(name);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, O_APPEND);
    g_manifest_fd = fd;
    uo_manifest_set_fd(fd);
    return 0;
}

void run_outputs_discard(void)
{
    uo_manifest_set_fd(-1);
    if (g_manifest_fd >= 0)
        close(g_manifest_fd);
    g_manifest_fd = -1;
}

/* The manifest's fields: NUL-terminated strings, one after the other. */
typedef struct fields {
    char *data;
    const char **f;
    size_t n;
} fields;

static void read_fields(fields *m)
{
    memset(m, 0, sizeof *m);
    int fd = g_manifest_fd;
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0 ||
        (m->data = malloc((size_t)st.st_size + 1)) == NULL)
        return;
    size_t len = 0;
    ssize_t got;
    while (len < (size_t)st.st_size &&
           (got = pread(fd, m->data + len, (size_t)st.st_size - len, (off_t)len)) > 0)
        len += (size_t)got;
    m->data[len] = '\0';
    size_t count = 0;
    for (size_t i = 0; i < len; i++)
        count += m->data[i] == '\0';
    m->f = calloc(count + 1, sizeof *m->f);
    if (m->f == NULL)
        return;
    for (size_t i = 0; i < len && m->n < count; i += strlen(m->data + i) + 1)
        m->f[m->n++] = m->data + i;
}

static void free_fields(fields *m)
{
    free(m->data);
    free(m->f);
}

/* Fields per record, the tag included. */
static size_t record_len(const char *tag)
{
    if (strcmp(tag, "db") == 0)
        return 5;
    if (strcmp(tag, "wrote") == 0 || strcmp(tag, "done") == 0)
        return 2;
    if (strcmp(tag, "tally") == 0)
        return 6;
    return 1; /* unknown: skip the tag alone */
}

void run_describe_end(char *out, size_t len, pid_t pid, pid_t top, int status)
{
    if (pid == top && WIFSIGNALED(status))
        snprintf(out, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (pid == top && WIFEXITED(status))
        snprintf(out, len, "exited with status %d without closing its trace", WEXITSTATUS(status));
    else
        snprintf(out, len, "ended without closing its trace");
}

/* run_outputs_quiet(): no closing lines. */
static int g_quiet;

void run_outputs_quiet(void)
{
    g_quiet = 1;
}

int run_outputs_end(int traced)
{
    if (g_manifest_fd < 0)
        return 0;
    /* What the collector wrote, once per path, in order. */
    fields m;
    read_fields(&m);
    int said = 0;
    for (size_t i = 0; i < m.n; i += record_len(m.f[i])) {
        if (strcmp(m.f[i], "wrote") != 0 || i + 1 >= m.n)
            continue;
        int again = 0;
        for (size_t j = 0; j < i && !again; j += record_len(m.f[j]))
            again = strcmp(m.f[j], "wrote") == 0 && j + 1 < m.n && strcmp(m.f[j + 1], m.f[i + 1]) == 0;
        struct stat st;
        if (again || stat(m.f[i + 1], &st) != 0)
            continue;
        if (!g_quiet)
            uo_say_path("upti: wrote ", m.f[i + 1]);
        said++;
    }
    free_fields(&m);
    if (g_quiet)
        ;
    else if (traced == 0)
        fprintf(stderr, "upti: no OpenCL, Vulkan, uptx or NVTX use seen: no trace written\n");
    else if (said == 0 && traced > 0)
        fprintf(stderr, "upti: nothing was recorded: no trace written\n");
    run_outputs_discard();
    return g_quiet ? 0 : said;
}
