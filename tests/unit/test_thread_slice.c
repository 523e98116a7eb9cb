/* SPDX-License-Identifier: MIT */
/* src/collector/collect/thread_slice.c and its use by ur_collect: the
 * collecting thread asks for a 100 us time slice as it starts (a producer's
 * doorbell then gets it the CPU at once), keeping its nice value and its
 * policy; a thread of another policy is left as it is. Skipped (77) where the
 * kernel keeps no slice of a thread's own (before Linux 6.12). */
#include "collector.h"
#include "thread_slice.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

typedef struct collecting {
    ur_collect_opts opts;
    int stop;
    uint32_t wake;
    _Atomic pid_t tid;
} collecting;

/* ur_collect, from a thread at nice 3 (a nice value of its own to keep). */
static void *collect(void *arg)
{
    collecting *c = arg;
    CHECK(setpriority(PRIO_PROCESS, (id_t)gettid(), 3) == 0);
    c->tid = gettid();
    ur_collect(&c->opts);
    return NULL;
}

/* Whether this kernel keeps a slice asked for (read on the calling thread, then put back). */
static int slices_kept(void)
{
    int policy, nice;
    uint64_t before, after;
    if (ur_thread_slice_get(0, &policy, &nice, &before) != 0 ||
        ur_thread_slice_set(0, 300000) != 0 || ur_thread_slice_get(0, &policy, &nice, &after) != 0)
        return 0;
    (void)ur_thread_slice_set(0, 0); /* 0: the default slice again */
    return after == 300000;
}

UNIT_TEST(thread_slice)
{
    if (!slices_kept()) {
        fprintf(stderr,
                "thread_slice: skipped (this kernel keeps no time slice of a thread's own: "
                "%s)\n",
                strerror(errno));
        return 77;
    }
    char dir[] = "/tmp/upti-slice-XXXXXX", spool[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(spool, sizeof spool, "%s/spool", dir);
    /* A process to wait for, which keeps the collector in its passes until stopped: this
     * one's parent (ctest, a shell), alive for as long as the test runs. A child forked
     * here would outlive a test that a sanitizer ends early, holding ctest's pipes. */
    pid_t program = getppid();
    collecting c = {
        .opts = {.spool = spool, .dir = dir, .wait_pid = program, .poll_ns = 500 * 1000}};
    c.opts.stop = &c.stop;
    c.opts.wake = &c.wake;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, collect, &c) == 0);
    int policy = -1, nice = 0;
    uint64_t ns = 0;
    for (int i = 0; i < 2000 && ns != 100000; i++) {
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
        if (c.tid != 0)
            CHECK(ur_thread_slice_get(c.tid, &policy, &nice, &ns) == 0);
    }
    CHECK_EQ_U64(ns, 100000);
    CHECK(policy == SCHED_OTHER);
    CHECK(nice == 3);
    __atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE); /* (read so by ur_collect) */
    ur_collect_wake(&c.wake);
    CHECK(pthread_join(thread, NULL) == 0);

    /* A thread of another policy keeps it, and its slice. */
    struct sched_param sp = {0};
    CHECK(sched_setscheduler(0, SCHED_BATCH, &sp) == 0);
    uint64_t before = 0;
    CHECK(ur_thread_slice_get(0, &policy, &nice, &before) == 0);
    errno = 0;
    CHECK(ur_thread_slice_set(0, 100000) == -1 && errno == EINVAL);
    CHECK(ur_thread_slice_get(0, &policy, &nice, &ns) == 0);
    CHECK(policy == SCHED_BATCH);
    CHECK_EQ_U64(ns, before);

    unlink(spool);
    rmdir(dir);
    return test_result("thread_slice");
}
