/* SPDX-License-Identifier: MIT */
/* upti_runtime_set_metadata / upti_query_runtime_metadata: keys need a '.'
 * and fit their limits, a key set again keeps its place with the new value,
 * at most 32 keys. */
#include <upti/upti.h>
#include <upti/runtime.h>

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "unit_tests.h"

static char g_seen[4096];
static int g_count;

static void collect(const char *key, const char *value, void *data)
{
    (void)data;
    size_t n = strlen(g_seen);
    snprintf(g_seen + n, sizeof g_seen - n, "%s=%s;", key, value);
    g_count++;
}

static void query(void)
{
    g_seen[0] = '\0';
    g_count = 0;
    CHECK(upti_query_runtime_metadata(collect, NULL) == UPTI_STATUS_SUCCESS);
}

UNIT_TEST(runtime_metadata)
{
    char long_key[80], long_value[300];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    long_key[1] = '.';
    memset(long_value, 'v', sizeof long_value - 1);
    long_value[sizeof long_value - 1] = '\0';
    CHECK(upti_runtime_set_metadata("committed", "1") == UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(upti_runtime_set_metadata(".x", "1") == UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(upti_runtime_set_metadata(NULL, "1") == UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(upti_runtime_set_metadata("a.b", NULL) == UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(upti_runtime_set_metadata(long_key, "1") == UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(upti_runtime_set_metadata("a.b", long_value) == UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK(upti_query_runtime_metadata(NULL, NULL) == UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    query();
    CHECK(g_count == 0);

    CHECK(upti_runtime_set_metadata("vulkan.x", "1") == UPTI_STATUS_SUCCESS);
    CHECK(upti_runtime_set_metadata("vulkan.y", "2") == UPTI_STATUS_SUCCESS);
    CHECK(upti_runtime_set_metadata("vulkan.x", "3") == UPTI_STATUS_SUCCESS);
    query();
    CHECK(strcmp(g_seen, "vulkan.x=3;vulkan.y=2;") == 0);

    char key[32];
    for (int i = 2; i < 32; i++) {
        snprintf(key, sizeof key, "r.k%d", i);
        CHECK(upti_runtime_set_metadata(key, "v") == UPTI_STATUS_SUCCESS);
    }
    CHECK(upti_runtime_set_metadata("r.one_too_many", "v") == UPTI_STATUS_ERROR_OUT_OF_RESOURCES);
    CHECK(upti_runtime_set_metadata("vulkan.y", "4") == UPTI_STATUS_SUCCESS); /* replacing still works */
    query();
    CHECK(g_count == 32 && strstr(g_seen, "vulkan.y=4;") != NULL && strstr(g_seen, "one_too_many") == NULL);
    return test_result("runtime_metadata");
}
