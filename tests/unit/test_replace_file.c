/* SPDX-License-Identifier: MIT */
/* src/common/dirs.c, upti_replace_file: a finished output put in the place of
 * the file at its name as rename would, by an exchange where that is a
 * regular file (no ext4 writeback in the caller), else by rename:
 *   - a regular file: to then holds from's content, from is gone, and the
 *     file that was at to is removed (its descriptor sees no link);
 *   - a folder: left where it is, the rename's EISDIR, from kept;
 *   - nothing: renamed;
 *   - a symbolic link: replaced as rename replaces it, its target untouched. */
#include "dirs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* The text in path ("" if none). */
static const char *got(const char *path)
{
    static char buf[64];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        if (fgets(buf, sizeof buf, f) == NULL)
            buf[0] = '\0';
        fclose(f);
    }
    return buf;
}

UNIT_TEST(replace_file)
{
    (void)sub;
    char dir[] = "/tmp/upti-replace-XXXXXX", from[64], to[64], other[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(from, sizeof from, "%s/from", dir);
    snprintf(to, sizeof to, "%s/to", dir);
    snprintf(other, sizeof other, "%s/other", dir);

    put(from, "trace");
    put(to, "");
    int fd = open(to, O_RDONLY);
    CHECK(fd >= 0);
    CHECK(upti_replace_file(from, to) == 0);
    CHECK(strcmp(got(to), "trace") == 0);
    CHECK(access(from, F_OK) != 0 && errno == ENOENT);
    struct stat sb;
    CHECK(fstat(fd, &sb) == 0 && sb.st_nlink == 0);
    close(fd);

    put(from, "trace 2");
    CHECK(unlink(to) == 0 && mkdir(to, 0700) == 0);
    CHECK(upti_replace_file(from, to) == -1 && errno == EISDIR);
    CHECK(strcmp(got(from), "trace 2") == 0);
    CHECK(stat(to, &sb) == 0 && S_ISDIR(sb.st_mode));
    CHECK(rmdir(to) == 0);

    CHECK(upti_replace_file(from, to) == 0); /* to missing */
    CHECK(strcmp(got(to), "trace 2") == 0);

    put(from, "trace 3");
    put(other, "another");
    CHECK(unlink(to) == 0 && symlink(other, to) == 0);
    CHECK(upti_replace_file(from, to) == 0);
    CHECK(lstat(to, &sb) == 0 && S_ISREG(sb.st_mode) && strcmp(got(to), "trace 3") == 0);
    CHECK(strcmp(got(other), "another") == 0);
    CHECK(unlink(to) == 0 && unlink(other) == 0 && rmdir(dir) == 0);
    return test_result("replace_file");
}
