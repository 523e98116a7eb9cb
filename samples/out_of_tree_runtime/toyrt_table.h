/* SPDX-License-Identifier: MIT */
/* toyrt's dispatch table: what UPTI and tools wrap. Grows only at its end. */
#ifndef TOYRT_TABLE_H
#define TOYRT_TABLE_H

#include <stddef.h>

#define TOYRT_TABLE_VERSION 1

typedef struct toyrt_table_t {
    size_t size; /**< sizeof the table the runtime was built with */
    int (*toyInit)(int flags);
    int (*toyAlloc)(size_t bytes, void **out);
    void (*toyFree)(void *ptr);
    int (*toyLaunch)(const char *kernel, unsigned int count);
} toyrt_table_t;

#endif
