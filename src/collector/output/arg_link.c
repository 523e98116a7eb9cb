/* SPDX-License-Identifier: MIT */
/* Arguments linked to their call's row as they are written (arg_link.h). */
#include "arg_link.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(UO_ARG_LINK_CALLS / UO_ARG_LINK_CHUNK <= 32, "calls_zeroed has a bit per chunk");

int64_t uo_arg_link_add_call_first(uo_arg_link *l, uint64_t correlation_id, size_t i)
{
    /* The slot's chunk is zeroed first. Without memory the call is not
     * remembered: its arguments are joined to it at the close. */
    if (l->calls != NULL || (l->calls = malloc(UO_ARG_LINK_CALLS * sizeof *l->calls)) != NULL) {
        memset(&l->calls[i & ~(size_t)(UO_ARG_LINK_CHUNK - 1)], 0,
               UO_ARG_LINK_CHUNK * sizeof *l->calls);
        l->calls_zeroed |= uo_arg_link_chunk_bit(i);
    }
    l->calls_added++;
    if (l->calls_zeroed & uo_arg_link_chunk_bit(i))
        l->calls[i] = (struct uo_arg_link_call){correlation_id, l->calls_added};
    return l->calls_added;
}

int64_t uo_arg_link_find_call(const uo_arg_link *l, uint64_t correlation_id)
{
    size_t i = uo_arg_link_slot(correlation_id);
    if (!(l->calls_zeroed & uo_arg_link_chunk_bit(i))) /* no call landed in that chunk */
        return 0;
    return l->calls[i].api_id != 0 && l->calls[i].correlation_id == correlation_id
               ? l->calls[i].api_id
               : 0;
}

/* Copies len bytes to the end of l->text; their offset + 1, or 0 on ENOMEM. */
static size_t text_put(uo_arg_link *l, const char *bytes, size_t len)
{
    if (l->text_len + len > l->text_cap) {
        size_t cap = l->text_cap ? l->text_cap : 4096;
        while (cap < l->text_len + len)
            cap *= 2;
        char *t = realloc(l->text, cap);
        if (t == NULL)
            return 0;
        l->text = t;
        l->text_cap = cap;
    }
    memcpy(l->text + l->text_len, bytes, len);
    l->text_len += len;
    return l->text_len - len + 1;
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
    size_t at = 0, len = value != NULL ? strlen(value) + 1 : 0;
    if (value != NULL && (at = text_put(l, value, len)) == 0)
        return -1;
    l->text_live += len;
    l->waiting[l->num_waiting++] =
        (uo_waiting_arg){correlation_id, position, type_id, name_id, NULL, at};
    return l->num_waiting >= UO_ARG_LINK_WAITING;
}

/* Moves the copies of the arguments still waiting to the start of l->text
 * when those written left more than half of it and 64 KiB behind. */
static void compact_text(uo_arg_link *l)
{
    size_t dead = l->text_len - l->text_live;
    if (dead < 65536 || dead < l->text_live)
        return;
    /* The copies are in the order of the waiting arguments: moved down in place. */
    size_t len = 0;
    for (size_t i = 0; i < l->num_waiting; i++) {
        uo_waiting_arg *a = &l->waiting[i];
        if (a->value_at == 0)
            continue;
        size_t n = strlen(l->text + a->value_at - 1) + 1;
        memmove(l->text + len, l->text + a->value_at - 1, n);
        a->value_at = len + 1;
        len += n;
    }
    l->text_len = len;
}

int uo_arg_link_release(uo_arg_link *l, uint64_t correlation_id, int all, int64_t api_id,
                        uo_arg_write_fn write, void *ctx)
{
    size_t kept = 0;
    int rc = 0;
    for (size_t i = 0; i < l->num_waiting; i++) {
        uo_waiting_arg *a = &l->waiting[i];
        if (all || a->correlation_id == correlation_id) {
            uo_waiting_arg w = *a;
            w.value = w.value_at != 0 ? l->text + w.value_at - 1 : NULL;
            if (w.value != NULL)
                l->text_live -= strlen(w.value) + 1;
            if (rc == 0 && write(ctx, &w, api_id) != 0)
                rc = -1;
        } else {
            l->waiting[kept++] = *a;
        }
    }
    l->num_waiting = kept;
    if (kept == 0)
        l->text_len = l->text_live = 0;
    else
        compact_text(l);
    return rc;
}

void uo_arg_link_free(uo_arg_link *l)
{
    free(l->calls);
    free(l->waiting);
    free(l->text);
    memset(l, 0, sizeof *l);
}
