/* SPDX-License-Identifier: MIT */
/* src/common/kv_pairs.c: key\0value\0 pairs as run.conf holds them: written and
 * read back, NULL values skipped, and a list cut anywhere never read past. */
#include "kv_pairs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "unit_tests.h"

UNIT_TEST(kv_pairs)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    CHECK(f != NULL);
    CHECK(upti_kv_put(f, "rings", "/dev/shm/r") == 0);
    CHECK(upti_kv_put(f, "include", NULL) == 0); /* nothing written */
    CHECK(upti_kv_put(f, "pattern", "out/%pid%") == 0);
    CHECK(upti_kv_put(f, "empty", "") == 0);
    fclose(f);
    CHECK_EQ_U64(len, sizeof "rings" + sizeof "/dev/shm/r" + sizeof "pattern" + sizeof "out/%pid%" +
                          sizeof "empty" + sizeof "");
    const char *v = upti_kv_get(data, len, "pattern");
    CHECK(v != NULL && strcmp(v, "out/%pid%") == 0);
    v = upti_kv_get(data, len, "rings");
    CHECK(v != NULL && strcmp(v, "/dev/shm/r") == 0);
    v = upti_kv_get(data, len, "empty");
    CHECK(v != NULL && v[0] == '\0');
    CHECK(upti_kv_get(data, len, "include") == NULL);
    CHECK(upti_kv_get(data, len, "/dev/shm/r") == NULL); /* a value is not a key */
    /* Cut anywhere: the pairs wholly before the cut are found, the cut one is not,
     * and nothing past the cut is read (a copy of exactly cut bytes, no NUL after it). */
    size_t whole = sizeof "rings" + sizeof "/dev/shm/r";
    for (size_t cut = 0; cut < len; cut++) {
        char *part = malloc(cut ? cut : 1);
        memcpy(part, data, cut);
        const char *r = upti_kv_get(part, cut, "rings");
        CHECK((r != NULL) == (cut >= whole));
        CHECK(upti_kv_get(part, cut, "empty") == NULL);
        free(part);
    }
    free(data);
    return test_result("kv_pairs");
}
