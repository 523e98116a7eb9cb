/* SPDX-License-Identifier: MIT */
/* fork() without exec in the OpenCL layer: the handlers of its one
 * pthread_atfork registration (fork.c), one set per file that owns a lock.
 * The order in which prepare takes them is in fork.c. */
#ifndef UPTI_OPENCL_FORK_H
#define UPTI_OPENCL_FORK_H

void uocl_commands_fork_prepare(void);
void uocl_commands_fork_parent(void);
void uocl_commands_fork_child(void);

void uocl_sub_fork_prepare(void);
void uocl_sub_fork_parent(void);
void uocl_sub_fork_child(void);

void uocl_tables_fork_prepare(void);
void uocl_tables_fork_parent(void);
void uocl_tables_fork_child(void);

void uocl_appref_fork_prepare(void);
void uocl_appref_fork_parent(void);
void uocl_appref_fork_child(void);

#endif
