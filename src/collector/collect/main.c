/* SPDX-License-Identifier: MIT */
/* upti-ring: the collector of shared rings (docs/shared-rings.md).
 *
 *   upti-ring collect SPOOL [--dir DIR] [--wait-pid PID] [--keep] [--say-closed] [RING_FILE...]
 *                     (--say-closed: prints "closed spool=BYTES" on stdout each time
 *                     every ring found was closed by its producer and drained)
 *   upti-ring convert [--stats] SPOOL PREFIX
 *   upti-ring convert --follow BYTES SPOOL PREFIX   (converts BYTES more at a time,
 *                     as `upti run` follows the spool while the program runs)
 *   upti-ring convert --follow-closed BYTES SPOOL PREFIX   (the same, as it follows
 *                     once the producers closed their rings: a small spool too)
 *   upti-ring recover PREFIX RING_FILE|DIR...   (collect what is left, then convert)
 */
#include "collector.h"
#include "output.h"
#include "private_dir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int usage(void)
{
    fprintf(stderr,
            "usage: upti-ring collect SPOOL [--dir DIR] [--wait-pid PID] [--keep] [--say-closed]\n"
            "                         [RING_FILE...]\n"
            "       upti-ring convert [--stats] SPOOL PREFIX  (writes PREFIX-<pid>.db per process)\n"
            "       upti-ring convert --follow BYTES SPOOL PREFIX  (BYTES of the spool at a time)\n"
            "       upti-ring convert --follow-closed BYTES SPOOL PREFIX  (the same, producers closed)\n"
            "       upti-ring recover PREFIX DIR|RING_FILE  (collect what is left, then convert)\n");
    return 2;
}

/* A folder given to collect from: the caller's, writable by nobody else
 * (private_dir.h). 0, or 2 after one line. */
static int check_folder(const char *dir)
{
    char why[8192];
    int fd = upti_open_private_dir(dir, why, sizeof why);
    if (fd < 0) {
        fprintf(stderr, "upti: %s\n", why);
        return 2;
    }
    close(fd);
    return 0;
}

/* --say-closed: every ring closed and drained (ur_collect_opts.closed). */
static void say_closed(void *arg)
{
    const char *spool = arg;
    struct stat st;
    printf("closed spool=%lld\n", stat(spool, &st) == 0 ? (long long)st.st_size : -1LL);
    fflush(stdout);
}

static int collect(int argc, char **argv)
{
    if (argc < 1)
        return usage();
    ur_collect_opts o = {.spool = argv[0], .poll_ns = 500 * 1000};
    const char **files = calloc((size_t)argc, sizeof *files);
    if (files == NULL)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            o.dir = argv[++i];
        } else if (strcmp(argv[i], "--wait-pid") == 0 && i + 1 < argc) {
            o.wait_pid = strtoll(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--keep") == 0) {
            o.keep = 1;
        } else if (strcmp(argv[i], "--say-closed") == 0) {
            o.closed = say_closed;
            o.closed_arg = argv[0];
        } else if (argv[i][0] == '-') {
            free(files);
            return usage();
        } else {
            files[o.num_files++] = argv[i];
        }
    }
    o.files = files;
    int rc = o.dir != NULL ? check_folder(o.dir) : 0;
    if (rc == 0)
        rc = ur_collect(&o);
    free(files);
    return rc;
}

/* The spool converted as a converter that follows it reads it: up to BYTES, 2 * BYTES, ...
 * of the file (a chunk that passes one waits for the next), then the rest; closed: as
 * it follows once the producers closed their rings (ur_converter_follow_closed). */
static int convert_following(const char *bytes, const char *spool, const char *prefix, int closed)
{
    char *end;
    unsigned long long step = strtoull(bytes, &end, 10);
    struct stat st;
    if (*bytes == '\0' || *end != '\0' || step == 0)
        return usage();
    ur_convert_opts o = {.spool = spool, .prefix = prefix};
    ur_converter *c = ur_converter_open(&o);
    if (c == NULL)
        return 1;
    if (stat(spool, &st) == 0)
        for (uint64_t at = step; at < (uint64_t)st.st_size; at += step)
            (closed ? ur_converter_follow_closed : ur_converter_follow)(c, at);
    return ur_converter_finish(c, NULL, 0);
}

static int recover(int argc, char **argv)
{
    if (argc != 2)
        return usage();
    char spool[4096];
    snprintf(spool, sizeof spool, "%s.spool", argv[0]);
    struct stat st;
    const char *files[1] = {argv[1]};
    ur_collect_opts o = {.spool = spool, .poll_ns = 500 * 1000};
    if (stat(argv[1], &st) == 0 && S_ISDIR(st.st_mode)) {
        if (check_folder(argv[1]) != 0)
            return 2;
        o.dir = argv[1];
    } else {
        o.files = files;
        o.num_files = 1;
    }
    int rc = ur_collect(&o);
    if (rc == 0)
        rc = ur_convert(spool, argv[0], 0);
    if (rc == 0)
        unlink(spool);
    return rc;
}

int main(int argc, char **argv)
{
    /* The database writer's problems are said here, on stderr. */
    uo_set_reporter(uo_report_to_stderr, NULL);
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "collect") == 0)
        return collect(argc - 2, argv + 2);
    if (strcmp(argv[1], "convert") == 0 && argc == 6 && strcmp(argv[2], "--follow") == 0)
        return convert_following(argv[3], argv[4], argv[5], 0);
    if (strcmp(argv[1], "convert") == 0 && argc == 6 && strcmp(argv[2], "--follow-closed") == 0)
        return convert_following(argv[3], argv[4], argv[5], 1);
    if (strcmp(argv[1], "convert") == 0 && argc == 5 && strcmp(argv[2], "--stats") == 0)
        return ur_convert(argv[3], argv[4], 1);
    if (strcmp(argv[1], "convert") == 0)
        return argc == 4 ? ur_convert(argv[2], argv[3], 0) : usage();
    if (strcmp(argv[1], "recover") == 0)
        return recover(argc - 2, argv + 2);
    return usage();
}
