/* SPDX-License-Identifier: MIT */
/* fork() without exec: the handlers of libupti's one pthread_atfork
 * registration (fork.c), one set per file that owns a lock.
 *
 * prepare takes every lock below in this order, so that no other thread
 * holds one at the moment of fork and the child inherits them consistent:
 *   1. buffer.c     the buffer list lock, then every buffer's lock (waits for
 *                   a delivery under way: a tool's buffer callback may take
 *                   the locks after it, never one before it)
 *   2. context.c    the context lock (services, plans)
 *   3. agent.c      the agent list lock
 *   4. thread.c     the thread-state list lock
 *   5. registration.c  the discovery lock
 * parent releases them in the reverse order. child releases them, then
 * makes the state the child's: one thread, empty rings, callback threads
 * started again (buffer.c last, as it starts threads).
 * Not taken: subscriber.c's lock, held by an unsubscribe while it waits for
 * running subscriber callbacks (which may wait on a runtime's lock that the
 * runtime's own prepare holds); the child initializes it afresh.
 * Runtimes' layers (libupti-opencl) register their own handlers later, so
 * their prepare runs before this one: their locks come before all of these.
 */
#ifndef UPTI_SDK_FORK_H
#define UPTI_SDK_FORK_H

void upti_buffer_fork_prepare(void);
void upti_buffer_fork_parent(void);
void upti_buffer_fork_child(void);

void upti_context_fork_prepare(void);
void upti_context_fork_parent(void);
void upti_context_fork_child(void);

void upti_agent_fork_prepare(void);
void upti_agent_fork_parent(void);
void upti_agent_fork_child(void);

void upti_thread_fork_prepare(void);
void upti_thread_fork_parent(void);
void upti_thread_fork_child(void);

void upti_registration_fork_prepare(void);
void upti_registration_fork_parent(void);
void upti_registration_fork_child(void);

void upti_subscriber_fork_child(void);
void upti_marker_fork_child(void);

#endif
