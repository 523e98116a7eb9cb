/* SPDX-License-Identifier: MIT */
/* src/common/cpu_quota.c: the CPUs a cgroup's quota allows, from a cgroup
 * tree made in a temporary folder: v2's cpu.max and v1's cfs files, on the
 * process's cgroup and on its ancestors (the least wins, rounded up), on a
 * namespace's mount root, none set, files that say nothing sensible, other
 * controllers, and a line too long to read; and upti_move_off_cpu. */
#include "cpu_quota.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

/* Writes text into root/rel (its folders made). */
static void put(const char *root, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

/* A v1 cgroup's quota and period (µs) under root/rel. */
static void put_v1(const char *root, const char *rel, const char *quota, const char *period)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", rel);
    put(root, path, quota);
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", rel);
    put(root, path, period);
}

/* upti_move_off_cpu, with the mask made two CPUs a and b: from a, the thread runs on b
 * with the mask {a, b} given back; from b asked off a, and with the mask {a}, it stays.
 * (Once back on its whole mask the scheduler may move the thread at any time: a move
 * seen to fail is tried again, twice.) Nothing to check with one CPU. */
static void check_move_off_cpu(void)
{
    cpu_set_t whole, two, one;
    CHECK(sched_getaffinity(0, sizeof whole, &whole) == 0);
    int a = -1, b = -1;
    for (int c = 0; c < CPU_SETSIZE && b < 0; c++)
        if (CPU_ISSET(c, &whole))
            *(a < 0 ? &a : &b) = c;
    if (b < 0) {
        printf("cpu_quota: one CPU: upti_move_off_cpu not checked\n");
        return;
    }
    CPU_ZERO(&two);
    CPU_SET(a, &two);
    CPU_SET(b, &two);
    CPU_ZERO(&one);
    CPU_SET(a, &one);
    int moved = 0, stayed = 0;
    cpu_set_t now;
    for (int tries = 0; tries < 3 && !(moved && stayed); tries++) {
        CHECK(sched_setaffinity(0, sizeof one, &one) == 0 && sched_getcpu() == a);
        CHECK(sched_setaffinity(0, sizeof two, &two) == 0);
        upti_move_off_cpu(a);
        moved = sched_getcpu() == b;
        CHECK(sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, &two));
        upti_move_off_cpu(a); /* (from b: nothing to do) */
        stayed = sched_getcpu() == b;
    }
    CHECK(moved && stayed);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    upti_move_off_cpu(a);
    CHECK(sched_getcpu() == a);
    CHECK(sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, &one));
    CHECK(sched_setaffinity(0, sizeof whole, &whole) == 0);
}

UNIT_TEST(cpu_quota)
{
    char root[] = "/tmp/upti-cpu-quota-XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    if (strstr(root, "XXXXXX") != NULL)
        return test_result("cpu_quota");
    /* v2: none on the leaf, 1.5 CPUs on its parent, 3 on the grandparent. */
    put(root, "job/a/b/cpu.max", "max 100000\n");
    put(root, "job/a/cpu.max", "150000 100000\n");
    put(root, "job/cpu.max", "300000 100000\n");
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "0::/job/a/b\n"), 2);
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "0::/job\n"), 3);
    /* No file, "max", nonsense: none. */
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "0::/elsewhere\n"), 0);
    put(root, "free/cpu.max", "max 100000\n");
    put(root, "odd/cpu.max", "fast\n");
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "0::/free\n"), 0);
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "0::/odd\n"), 0);
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, ""), 0);
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "garbage without colons"), 0);
    /* v1, cpu mounted with cpuacct: half a CPU on the cgroup, none (-1) above. */
    put_v1(root, "cpu,cpuacct/docker/c1", "50000\n", "100000\n");
    put_v1(root, "cpu,cpuacct/docker", "-1\n", "100000\n");
    const char *v1 = "11:memory:/docker/c1\n4:cpu,cpuacct:/docker/c1\n0::/\n";
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, v1), 1);
    /* v1 mounted as "cpu" alone; the cpuset controller is not cpu's. */
    put_v1(root, "cpu/k8s/pod", "400000\n", "100000\n");
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "3:cpuset:/k8s/pod\n2:cpu:/k8s/pod\n"), 4);
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "3:cpuset:/k8s/pod\n"), 0);
    /* Both: the least. */
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "2:cpu:/k8s/pod\n0::/job/a\n"), 2);
    /* The least over the ancestors, not the nearest: 4 on the leaf, 1 above. */
    put(root, "tight/loose/cpu.max", "400000 100000\n");
    put(root, "tight/cpu.max", "100000 100000");
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "0::/tight/loose\n"), 1);
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "0::/tight/loose/\n"), 1); /* (a trailing slash) */
    /* A cgroup namespace: "/" and the limits on the mount's root (v2 there, or
     * at unified on a hybrid system); v1 with a path the mount does not have. */
    char ns[600];
    snprintf(ns, sizeof ns, "%s/ns", root);
    mkdir(ns, 0700);
    put(ns, "unified/cpu.max", "250000 100000\n");
    CHECK_EQ_U64(upti_cpu_quota_cpus(ns, "0::/"), 3); /* (no newline at the end) */
    put(ns, "cpu.max", "200000 100000\n");
    CHECK_EQ_U64(upti_cpu_quota_cpus(ns, "0::/\n"), 2);
    put_v1(ns, "cpu", "100000\n", "100000\n");
    CHECK_EQ_U64(upti_cpu_quota_cpus(ns, "2:cpu:/docker/not-here\n"), 1);
    /* Not cpu's controllers; a v1 quota without its period. */
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "5:cpuacct:/docker/c1\n1:name=systemd:/job\n"), 0);
    put(root, "cpu/half/cpu.cfs_quota_us", "50000\n");
    CHECK_EQ_U64(upti_cpu_quota_cpus(root, "2:cpu:/half\n"), 0);
    /* A line too long to read is skipped; the next one counts. */
    char *text = malloc(6000);
    CHECK(text != NULL);
    if (text != NULL) {
        memset(text, 'x', 5000);
        snprintf(text + 5000, 1000, "\n0::/job/a\n");
        CHECK_EQ_U64(upti_cpu_quota_cpus(root, text), 2);
        free(text);
    }
    /* This process: at least one, at most its mask. */
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
    CHECK(upti_usable_cpus() >= 1 && upti_usable_cpus() <= CPU_COUNT(&set));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
    check_move_off_cpu();
    return test_result("cpu_quota");
}
