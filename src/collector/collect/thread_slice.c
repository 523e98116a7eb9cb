/* SPDX-License-Identifier: MIT */
/* A thread's time slice (thread_slice.h). */
#include "thread_slice.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's struct sched_attr as of its first version (48 bytes), which
 * every kernel with sched_setattr takes. */
struct sched_attr_v0 {
    uint32_t size;
    uint32_t policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};
_Static_assert(sizeof(struct sched_attr_v0) == 48, "sched_attr: SCHED_ATTR_SIZE_VER0");

int ur_thread_slice_get(pid_t tid, int *policy, int *nice, uint64_t *ns)
{
#ifdef SYS_sched_getattr
    struct sched_attr_v0 a;
    memset(&a, 0, sizeof a);
    if (syscall(SYS_sched_getattr, tid, &a, (unsigned)sizeof a, 0u) != 0)
        return -1;
    *policy = (int)a.policy;
    *nice = a.nice;
    *ns = a.runtime;
    return 0;
#else
    (void)tid, (void)policy, (void)nice, (void)ns;
    errno = ENOSYS;
    return -1;
#endif
}

int ur_thread_slice_set(pid_t tid, uint64_t ns)
{
#ifdef SYS_sched_setattr
    int policy, nice;
    uint64_t now;
    if (ur_thread_slice_get(tid, &policy, &nice, &now) != 0)
        return -1;
    if (policy != SCHED_OTHER) {
        errno = EINVAL; /* SCHED_BATCH, SCHED_IDLE or real time: the user's choice stays */
        return -1;
    }
    /* The same nice value: never a raise of priority, which needs a privilege. */
    struct sched_attr_v0 a = {.size = sizeof a, .policy = SCHED_OTHER, .nice = nice, .runtime = ns};
    return syscall(SYS_sched_setattr, tid, &a, 0u) == 0 ? 0 : -1;
#else
    (void)tid, (void)ns;
    errno = ENOSYS;
    return -1;
#endif
}
