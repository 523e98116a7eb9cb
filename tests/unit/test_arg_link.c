/* SPDX-License-Identifier: MIT */
/* src/collector/output/arg_link.c: arguments that wait for their call keep their values
 * (copied into one buffer) and come out with the call's api id, in the order
 * they came; an argument whose call never comes keeps its value while
 * thousands of others wait and leave around it, in a buffer that stays small
 * (those written are compacted away); uo_arg_link_release(all) writes the
 * rest. */
#include "arg_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "unit_tests.h"

enum { WRITTEN_MAX = 8, CALLS = 20000 };

typedef struct written {
    int n;
    uint64_t correlation_id[WRITTEN_MAX];
    uint32_t position[WRITTEN_MAX];
    int64_t type_id[WRITTEN_MAX], api_id[WRITTEN_MAX];
    char value[WRITTEN_MAX][160]; /* "(null)" for NULL */
} written;

static int record(void *ctx, const uo_waiting_arg *a, int64_t api_id)
{
    written *w = ctx;
    if (w->n >= WRITTEN_MAX)
        return -1;
    w->correlation_id[w->n] = a->correlation_id;
    w->position[w->n] = a->position;
    w->type_id[w->n] = a->type_id;
    w->api_id[w->n] = api_id;
    snprintf(w->value[w->n], sizeof w->value[0], "%s", a->value ? a->value : "(null)");
    w->n++;
    return 0;
}

static void long_value(char *buf, size_t size, int i)
{
    snprintf(buf, size, "value of call %d: %0100d", i, i);
}

UNIT_TEST(arg_link)
{
    uo_arg_link l;
    memset(&l, 0, sizeof l);
    written w = {0};

    /* Three arguments of call 7 and one whose call never comes (99). */
    CHECK(uo_arg_link_wait(&l, 7, 0, 11, 21, "first") == 0);
    CHECK(uo_arg_link_wait(&l, 99, 0, 12, 22, "orphan") == 0);
    CHECK(uo_arg_link_wait(&l, 7, 1, 13, 23, NULL) == 0);
    CHECK(uo_arg_link_wait(&l, 7, 2, 14, 24, "third") == 0);
    CHECK(uo_arg_link_release(&l, 7, 0, 5, record, &w) == 0);
    CHECK(w.n == 3);
    CHECK(w.correlation_id[0] == 7 && w.position[0] == 0 && w.type_id[0] == 11 &&
          w.api_id[0] == 5 && strcmp(w.value[0], "first") == 0);
    CHECK(w.position[1] == 1 && w.type_id[1] == 13 && strcmp(w.value[1], "(null)") == 0);
    CHECK(w.position[2] == 2 && w.type_id[2] == 14 && strcmp(w.value[2], "third") == 0);
    CHECK(l.num_waiting == 1);

    /* Calls come and go, two arguments each (~120 bytes a value), while 99 waits. */
    size_t most = 0;
    for (int i = 0; i < CALLS; i++) {
        char v0[160], v1[160];
        long_value(v0, sizeof v0, i);
        long_value(v1, sizeof v1, -i);
        CHECK(uo_arg_link_wait(&l, 1000 + (uint64_t)i, 0, 1, 2, v0) == 0);
        CHECK(uo_arg_link_wait(&l, 1000 + (uint64_t)i, 1, 3, 4, v1) == 0);
        w.n = 0;
        CHECK(uo_arg_link_release(&l, 1000 + (uint64_t)i, 0, 100 + i, record, &w) == 0);
        CHECK(w.n == 2);
        CHECK(strcmp(w.value[0], v0) == 0 && strcmp(w.value[1], v1) == 0);
        CHECK(w.api_id[0] == 100 + i && w.api_id[1] == 100 + i);
        CHECK(l.num_waiting == 1);
        if (l.text_len > most)
            most = l.text_len;
    }
    /* 20,000 calls wrote 4.8 MB of values: what is kept stays under 64 KiB + one call's. */
    CHECK(most < 65536 + 512);

    /* The orphan comes out unlinked with its value intact, and nothing waits. */
    w.n = 0;
    CHECK(uo_arg_link_release(&l, 0, 1, 0, record, &w) == 0);
    CHECK(w.n == 1);
    CHECK(w.correlation_id[0] == 99 && w.api_id[0] == 0 && strcmp(w.value[0], "orphan") == 0);
    CHECK(l.num_waiting == 0 && l.text_len == 0);

    /* A failing writer: release says so, and the arguments are gone all the same. */
    CHECK(uo_arg_link_wait(&l, 5, 0, 1, 2, "x") == 0);
    w.n = WRITTEN_MAX;
    CHECK(uo_arg_link_release(&l, 5, 0, 1, record, &w) == -1);
    CHECK(l.num_waiting == 0);

    uo_arg_link_free(&l);

    /* The table of recent calls is zeroed a chunk at a time, as calls land
     * there: a short process's 1,000 calls (one thread's blocks of 1,024
     * ids, 16 bytes a slot) zero 4 of its 16 chunks of 4 KiB, not the whole table,
     * and the call just added is always found. */
    memset(&l, 0, sizeof l);
    CHECK(uo_arg_link_find_call(&l, 1) == 0 && l.calls == NULL);
    for (uint64_t c = 1; c <= 1000; c++) {
        CHECK(uo_arg_link_add_call(&l, c) == (int64_t)c);
        CHECK(uo_arg_link_find_call(&l, c) == (int64_t)c);
    }
    CHECK(__builtin_popcount(l.calls_zeroed) == 4);
    CHECK(uo_arg_link_find_call(&l, 500) == 500); /* 1,000 calls fit without a collision */
    uo_arg_link_free(&l);

    /* Eight threads calling in step, each from its own blocks of 1,024 ids:
     * each one's latest call is found after each round (the ids' low bits
     * alone would put threads 4,096 ids apart on the same slots every time). */
    memset(&l, 0, sizeof l);
    int lost = 0;
    for (uint64_t i = 0; i < 1000; i++)
        for (uint64_t t = 0; t < 8; t++)
            uo_arg_link_add_call(&l, 1 + t * 1024 + i);
    for (uint64_t t = 0; t < 8; t++)
        lost += uo_arg_link_find_call(&l, 1 + t * 1024 + 999) == 0;
    CHECK(lost == 0);
    uo_arg_link_free(&l);
    return test_result("arg_link");
}
