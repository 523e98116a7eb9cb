/* SPDX-License-Identifier: MIT */
/* fork() without exec: libupti's one pthread_atfork registration. The lock
 * order and what each handler does are in fork.h. */
#include "fork.h"

#include <pthread.h>

static void fork_prepare(void)
{
    upti_buffer_fork_prepare();
    upti_context_fork_prepare();
    upti_agent_fork_prepare();
    upti_thread_fork_prepare();
    upti_registration_fork_prepare();
}

static void fork_parent(void)
{
    upti_registration_fork_parent();
    upti_thread_fork_parent();
    upti_agent_fork_parent();
    upti_context_fork_parent();
    upti_buffer_fork_parent();
}

static void fork_child(void)
{
    upti_thread_fork_child(); /* first: the states of the vanished threads go */
    upti_agent_fork_child();
    upti_context_fork_child();
    upti_subscriber_fork_child();
    upti_marker_fork_child();
    upti_registration_fork_child(); /* may stop the contexts: after context.c's */
    upti_buffer_fork_child();       /* last: restarts the callback threads */
}

__attribute__((constructor)) static void upti_fork_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
