/* SPDX-License-Identifier: MIT */
/* See op_names.h. */
#include "op_names.h"

#include <stdlib.h>
#include <string.h>

const ur_op_name *ur_op_names_find(const ur_op_names *names, uint32_t operation)
{
    if (operation >= UPTI_RUNTIME_API_MAX_OPERATIONS || !ur_op_names_known(names, operation))
        return NULL;
    for (size_t i = 0; i < names->count; i++)
        if (names->items[i].operation == operation)
            return &names->items[i];
    return NULL;
}

int ur_op_names_add(ur_op_names *names, uint32_t operation, const char *domain, const char *name)
{
    if (operation >= UPTI_RUNTIME_API_MAX_OPERATIONS)
        return -1;
    ur_op_name *item = (ur_op_name *)ur_op_names_find(names, operation);
    if (item == NULL && names->count == names->cap) {
        size_t cap = names->cap ? 2 * names->cap : 16;
        ur_op_name *grown = realloc(names->items, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        names->items = grown;
        names->cap = cap;
    }
    char *d = strdup(domain), *n = strdup(name);
    if (d == NULL || n == NULL) {
        free(d);
        free(n);
        return -1;
    }
    if (item == NULL) {
        item = &names->items[names->count++];
        item->operation = operation;
    } else {
        free(item->domain);
        free(item->name);
    }
    item->domain = d;
    item->name = n;
    names->known[operation / 8] |= (uint8_t)(1u << (operation % 8));
    return 0;
}

void ur_op_names_free(ur_op_names *names)
{
    for (size_t i = 0; i < names->count; i++) {
        free(names->items[i].domain);
        free(names->items[i].name);
    }
    free(names->items);
    memset(names, 0, sizeof *names);
}
