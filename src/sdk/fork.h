/* fork() without exec: the handlers of thread.c, called in order by the one
 * pthread_atfork registration of buffer.c (whose child handler restarts the
 * callback threads, which need the thread-state lock usable first). */
#ifndef UPTI_SDK_FORK_H
#define UPTI_SDK_FORK_H

void upti_thread_fork_prepare(void);
void upti_thread_fork_parent(void);
void upti_thread_fork_child(void);

#endif
