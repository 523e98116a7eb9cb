/* SPDX-License-Identifier: MIT */
/* `upti-ring convert`: the names of a process's RUNTIME_API operations
 * (UPTI_TRACE_RECORD_OPERATION, trace_tool_records.h), kept per process: a
 * child forked without exec inherits its parent's operation ids, and calls
 * them, but its ring file never had their names; its database takes them
 * from its parent's (convert.c). */
#ifndef UPTI_COLLECTOR_OP_NAMES_H
#define UPTI_COLLECTOR_OP_NAMES_H

#include <upti/types.h>

#include <stddef.h>
#include <stdint.h>

typedef struct ur_op_name {
    uint32_t operation;
    char *domain; /**< the runtime's name */
    char *name;   /**< the function's */
} ur_op_name;

/** One process's names; zero-initialized is empty. */
typedef struct ur_op_names {
    ur_op_name *items;
    size_t count, cap;
    uint8_t known[UPTI_RUNTIME_API_MAX_OPERATIONS / 8]; /**< bit per operation: named */
} ur_op_names;

/** Keeps a copy of (operation, domain, name), which the newer replaces. 0, or -1 (memory). */
int ur_op_names_add(ur_op_names *names, uint32_t operation, const char *domain, const char *name);

/** The names of operation, or NULL. */
const ur_op_name *ur_op_names_find(const ur_op_names *names, uint32_t operation);

/** Whether operation has its names (operation < UPTI_RUNTIME_API_MAX_OPERATIONS). */
static inline int ur_op_names_known(const ur_op_names *names, uint32_t operation)
{
    return (names->known[operation / 8] >> (operation % 8)) & 1;
}

void ur_op_names_free(ur_op_names *names);

#endif
