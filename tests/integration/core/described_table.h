/* SPDX-License-Identifier: MIT */
/* The dispatch table of prog_described_runtime.c's runtime. */
#ifndef DESCRIBED_TABLE_H
#define DESCRIBED_TABLE_H

#include <stddef.h>

typedef struct described_table_t {
    size_t size;
    int (*descAdd)(int a, int b);
    void (*descTick)(void);
} described_table_t;

#endif
