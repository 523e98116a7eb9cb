/* SPDX-License-Identifier: MIT */
/* fork() without exec while other threads use OpenCL: the layer's one
 * pthread_atfork registration.
 *
 * prepare takes every lock of the layer, so that the child, which has only
 * the forking thread, inherits none held by a thread it does not have:
 *   1. commands.c   the emit lock (held while records are emitted, and so
 *                   while subscriber callbacks run), then the 16 pending-list
 *                   shards, the command pool, the completion thread's wake lock
 *   2. subscriber_hooks.c  the table of operations in flight
 *   3. tables.c     the queue/kernel table writers, then the interned strings
 *   4. app_refs.c   the program's own reference counts
 * No code holds a later one while it takes an earlier one. libupti is a
 * dependency of this library: its handlers were registered first, so its
 * prepare runs after this one and its locks (sdk/fork.h) come after all of
 * these (a record emitted under the emit lock goes into libupti's buffers).
 * parent releases them in the reverse order; child releases them and
 * forgets the parent's commands in flight: their records are the parent's,
 * and the child never asks the runtime about the parent's events (a runtime
 * such as PoCL does not work in a forked child). The child has no completion
 * thread: what it enqueues itself is reported at its synchronisation points
 * and at exit.
 */
#include "fork.h"

#include <pthread.h>

static void fork_prepare(void)
{
    uocl_commands_fork_prepare();
    uocl_sub_fork_prepare();
    uocl_tables_fork_prepare();
    uocl_appref_fork_prepare();
}

static void fork_parent(void)
{
    uocl_appref_fork_parent();
    uocl_tables_fork_parent();
    uocl_sub_fork_parent();
    uocl_commands_fork_parent();
}

static void fork_child(void)
{
    uocl_appref_fork_child();
    uocl_tables_fork_child();
    uocl_sub_fork_child();
    uocl_commands_fork_child();
}

__attribute__((constructor)) static void uocl_fork_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
