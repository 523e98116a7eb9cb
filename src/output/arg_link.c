/* Arguments linked to their call's row as they are written (arg_link.h). */
#include "arg_link.h"

#include <stdlib.h>
#include <string.h>

static size_t call_slot(uint64_t correlation_id)
{
    return (size_t)((correlation_id * 0x9e3779b97f4a7c15ull) >> 32) & (UO_ARG_LINK_CALLS - 1);
}

int64_t uo_arg_link_add_call(uo_arg_link *l, uint64_t correlation_id)
{
    size_t i = call_slot(correlation_id);
    l->calls[i].correlation_id = correlation_id;
    l->calls[i].api_id = ++l->calls_added;
    return l->calls_added;
}

int64_t uo_arg_link_find_call(const uo_arg_link *l, uint64_t correlation_id)
{
    size_t i = call_slot(correlation_id);
    return l->calls[i].api_id != 0 && l->calls[i].correlation_id == correlation_id
               ? l->calls[i].api_id
               : 0;
}

int uo_arg_link_wait(uo_arg_link *l, uint64_t correlation_id, uint32_t position, int64_t type_id,
                     int64_t name_id, const char *value)
{
    if (l->num_waiting == l->cap_waiting) {
        size_t cap = l->cap_waiting ? l->cap_waiting * 2 : 16;
        uo_waiting_arg *w = realloc(l->waiting, cap * sizeof *w);
        if (w == NULL)
            return -1;
        l->waiting = w;
        l->cap_waiting = cap;
    }
    char *copy = NULL;
    if (value != NULL && (copy = strdup(value)) == NULL)
        return -1;
    l->waiting[l->num_waiting++] = (uo_waiting_arg){correlation_id, position, type_id, name_id, copy};
    return l->num_waiting >= UO_ARG_LINK_WAITING;
}

int uo_arg_link_release(uo_arg_link *l, uint64_t correlation_id, int all, int64_t api_id,
                        uo_arg_write_fn write, void *ctx)
{
    size_t kept = 0;
    int rc = 0;
    for (size_t i = 0; i < l->num_waiting; i++) {
        uo_waiting_arg *a = &l->waiting[i];
        if (all || a->correlation_id == correlation_id) {
            if (rc == 0 && write(ctx, a, api_id) != 0)
                rc = -1;
            free(a->value);
        } else {
            l->waiting[kept++] = *a;
        }
    }
    l->num_waiting = kept;
    return rc;
}

void uo_arg_link_free(uo_arg_link *l)
{
    for (size_t i = 0; i < l->num_waiting; i++)
        free(l->waiting[i].value);
    free(l->waiting);
    l->waiting = NULL;
    l->num_waiting = l->cap_waiting = 0;
}
