/* SPDX-License-Identifier: MIT */
/* See cpu_quota.h. */
#include "cpu_quota.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of file path in buf (cap bytes), or NULL. */
static const char *first_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return NULL;
    const char *line = fgets(buf, (int)cap, f);
    fclose(f);
    return line;
}

/* CPUs (rounded up) of quota us in period us; 0 for no quota or nonsense. */
static int quota_cpus(long long quota, long long period)
{
    if (quota <= 0 || period <= 0)
        return 0;
    long long cpus = quota / period + (quota % period != 0);
    return cpus > 4096 ? 4096 : (int)cpus;
}

/* The smaller of two quotas in CPUs, 0 standing for none. */
static int tighter(int a, int b) { return a == 0 || (b != 0 && b < a) ? b : a; }

/* The quota set on cgroup dir (v2 when v2, else v1), in CPUs; 0: none. */
static int quota_of(const char *dir, int v2)
{
    char path[4096], buf[128];
    long long quota = 0, period = 0;
    if (v2) {
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        const char *line = first_line(path, buf, sizeof buf);
        char word[32];
        if (line == NULL || sscanf(line, "%31s %lld", word, &period) != 2 ||
            strcmp(word, "max") == 0)
            return 0;
        quota = strtoll(word, NULL, 10);
    } else {
        snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
        const char *line = first_line(path, buf, sizeof buf);
        if (line == NULL || sscanf(line, "%lld", &quota) != 1)
            return 0;
        snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
        line = first_line(path, buf, sizeof buf);
        if (line == NULL || sscanf(line, "%lld", &period) != 1)
            return 0;
    }
    return quota_cpus(quota, period);
}

/* The least quota over cgroup path (relative to mount) and its ancestors; 0: none.
 * The path is taken as /proc/self/cgroup gives it, from the mount's root: right
 * where the cgroup file system is mounted at its root or a cgroup namespace
 * makes it so (containers as Docker and Kubernetes run them); a container
 * that mounts a cgroup of the host's without a namespace is read from the
 * mount's root up, as far as the path names folders that are there. */
static int least_quota(const char *mount, const char *cgroup, int v2)
{
    char dir[4096];
    int n = snprintf(dir, sizeof dir, "%s%s", mount, cgroup);
    if (n < 0 || (size_t)n >= sizeof dir)
        return 0;
    size_t base = strlen(mount);
    int least = 0;
    for (;;) {
        size_t len = strlen(dir);
        while (len > base && dir[len - 1] == '/') /* ("/" itself: the mount's root) */
            dir[--len] = '\0';
        least = tighter(least, quota_of(dir, v2));
        char *slash = strrchr(dir + base, '/');
        if (len <= base || slash == NULL)
            return least;
        *slash = '\0';
    }
}

/* least_quota under the mount at root/first, or where that has none under root/second
 * ("" for root itself). */
static int quota_under(const char *root, const char *first, const char *second,
                       const char *cgroup, int v2)
{
    char mount[4096];
    snprintf(mount, sizeof mount, "%s%s%s", root, *first ? "/" : "", first);
    int q = least_quota(mount, cgroup, v2);
    if (q != 0)
        return q;
    snprintf(mount, sizeof mount, "%s%s%s", root, *second ? "/" : "", second);
    return least_quota(mount, cgroup, v2);
}

/* Whether a v1 line's comma-separated controllers list cpu itself. */
static int lists_cpu(const char *controllers)
{
    for (const char *c = controllers; *c != '\0';) {
        size_t n = strcspn(c, ",");
        if (n == 3 && strncmp(c, "cpu", 3) == 0)
            return 1;
        c += n + (c[n] == ',');
    }
    return 0;
}

int upti_cpu_quota_cpus(const char *root, const char *proc_cgroup)
{
    int least = 0;
    const char *line = proc_cgroup;
    while (line != NULL && *line != '\0') {
        const char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
        char entry[4096];
        if (len < sizeof entry) {
            memcpy(entry, line, len);
            entry[len] = '\0';
            /* "ID:CONTROLLERS:PATH": v2 is "0::PATH", mounted at root (or at
             * unified, on a hybrid system); v1's cpu controller is listed alone
             * or with others ("cpu,cpuacct"), mounted under either name. */
            char *c1 = strchr(entry, ':'), *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
            if (c2 != NULL && c2[1] == '/') {
                *c2 = '\0';
                const char *controllers = c1 + 1, *path = c2 + 1;
                if (*controllers == '\0')
                    least = tighter(least, quota_under(root, "", "unified", path, 1));
                else if (lists_cpu(controllers))
                    least = tighter(least, quota_under(root, controllers, "cpu", path, 0));
            }
        }
        line = end != NULL ? end + 1 : NULL;
    }
    return least;
}

int upti_usable_cpus(void)
{
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    char text[8192];
    FILE *f = fopen("/proc/self/cgroup", "re");
    size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    text[n] = '\0';
    if (n == sizeof text - 1) { /* cut short: its last line could name another cgroup */
        char *last = strrchr(text, '\n');
        *(last != NULL ? last + 1 : text) = '\0';
    }
    cpus = tighter(cpus, upti_cpu_quota_cpus("/sys/fs/cgroup", text));
    return cpus > 0 ? cpus : 1;
}

void upti_move_off_cpu(int cpu)
{
    cpu_set_t allowed, one;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getcpu() != cpu ||
        sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2)
        return;
    int next = cpu;
    do
        next = (next + 1) % CPU_SETSIZE;
    while (!CPU_ISSET(next, &allowed));
    CPU_ZERO(&one);
    CPU_SET(next, &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0)
        (void)sched_setaffinity(0, sizeof allowed, &allowed);
}
