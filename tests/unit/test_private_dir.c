/* SPDX-License-Identifier: MIT */
/* src/common/private_dir.c and proc_stat.c: the folders and files no other user
 * can forge or redirect (docs/reliability.md, "Shared machines"), and the start
 * time that tells a ring's producer from another process of the same pid.
 *   private_dir: a folder writable by its group or others, or another user's
 *     (root only), is refused with its reason; a symbolic link, a FIFO, a file
 *     with two links planted where UPTI opens a file are never followed or
 *     used, and nothing is created at the link's target.
 *   proc_stat: the start time read is field 22 of /proc/PID/stat (it read
 *     field 21, always 0: every ring said its producer started at 0). */
#include "private_dir.h"
#include "proc_stat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

/* Field 22 of /proc/PID/stat, read here another way: the 20th word after ") ". */
static unsigned long long field22(const char *path)
{
    char buf[1024];
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')') + 2, *save = NULL;
    char *word = strtok_r(p, " ", &save); /* field 3 */
    for (int field = 3; field < 22 && word != NULL; field++)
        word = strtok_r(NULL, " ", &save);
    return word != NULL ? strtoull(word, NULL, 10) : 0;
}

static int proc_stat_case(void)
{
    char state = 0;
    uint64_t ticks = 0;
    CHECK(upti_proc_stat(0, &state, &ticks) == 0);
    CHECK(state == 'R');
    CHECK(ticks != 0);
    CHECK_EQ_U64(ticks, field22("/proc/self/stat"));
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)getppid());
    CHECK(upti_proc_stat(getppid(), &state, &ticks) == 0);
    CHECK_EQ_U64(ticks, field22(path));
    return test_result("proc_stat");
}

UNIT_TEST(private_dir)
{
    if (strcmp(sub, "proc_stat") == 0)
        return proc_stat_case();
    char dir[] = "/tmp/upti-private-XXXXXX", why[512], path[256];
    CHECK(mkdtemp(dir) != NULL);
    int fd = upti_open_private_dir(dir, why, sizeof why);
    CHECK(fd >= 0);
    close(fd);

    chmod(dir, 0770);
    CHECK(upti_open_private_dir(dir, why, sizeof why) == -1 && errno == EPERM);
    CHECK(strstr(why, "may be written by its group: not used") != NULL);
    chmod(dir, 0703);
    CHECK(upti_open_private_dir(dir, why, sizeof why) == -1 && errno == EPERM);
    CHECK(strstr(why, "may be written by others: not used") != NULL);
    chmod(dir, 01777);
    CHECK(upti_open_private_dir(dir, why, sizeof why) == -1);
    /* sticky: accepted for ring files only if root's (this one is root's when we are) */
    CHECK(upti_check_ring_folder(dir, why, sizeof why) == (geteuid() == 0 ? 0 : -1));
    chmod(dir, 0700);
    if (geteuid() == 0) {
        CHECK(chown(dir, 65534, 65534) == 0);
        CHECK(upti_open_private_dir(dir, why, sizeof why) == -1 && errno == EPERM);
        CHECK(strstr(why, "uid 65534), not by you: not used") != NULL ||
              strstr(why, "uid 65534, not by you: not used") != NULL);
        CHECK(chown(dir, 0, 0) == 0);
    }
    CHECK(upti_check_ring_folder("/tmp", why, sizeof why) == 0); /* root's, sticky */

    int dfd = upti_open_private_dir(dir, why, sizeof why);
    CHECK(dfd >= 0);
    /* A link planted where a file is created: neither followed nor its target created. */
    char target[300];
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(path, sizeof path, "%s/link", dir);
    CHECK(symlink(target, path) == 0);
    errno = 0;
    CHECK(upti_open_in_dir(dfd, "link", O_RDWR | O_CREAT, 0600, 0) == -1 && errno == ELOOP);
    CHECK(access(target, F_OK) != 0);
    CHECK(upti_open_file(path, O_RDWR | O_CREAT, 0600, 0) == -1 && errno == ELOOP);
    CHECK(access(target, F_OK) != 0);
    /* A FIFO is not opened (no wait), a file with two links is not used. */
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK(upti_open_in_dir(dfd, "fifo", O_RDWR, 0, 0) == -1 && errno == EPERM);
    CHECK(upti_open_in_dir(dfd, "fifo", O_RDONLY, 0, 0) == -1 && errno == EPERM);
    fd = upti_open_in_dir(dfd, "file", O_RDWR | O_CREAT, 0600, 1);
    CHECK(fd >= 0);
    close(fd);
    CHECK(upti_open_in_dir(dfd, "file", O_RDWR | O_CREAT, 0600, 1) == -1 && errno == EEXIST);
    fd = upti_open_in_dir(dfd, "file", O_RDWR | O_CREAT, 0600, 0); /* resumed: its own */
    CHECK(fd >= 0);
    close(fd);
    char linked[300];
    snprintf(path, sizeof path, "%s/file", dir);
    snprintf(linked, sizeof linked, "%s/second", dir);
    CHECK(link(path, linked) == 0);
    CHECK(upti_open_in_dir(dfd, "file", O_RDWR, 0, 0) == -1 && errno == EPERM);
    CHECK(upti_open_in_dir(dfd, "../file", O_RDWR, 0, 0) == -1 && errno == EINVAL);
    close(dfd);

    static const char *const names[] = {"link", "fifo", "file", "second"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    CHECK(rmdir(dir) == 0);
    return test_result("private_dir");
}
