/* SPDX-License-Identifier: MIT */
/* RUNTIME_API operations given out at run time (src/names/runtime_api_names.c):
 * ids from 1 in registration order, named and iterated once given out, not
 * before; OUT_OF_RESOURCES past UPTI_RUNTIME_API_MAX_OPERATIONS; arguments
 * printed from their descriptions. And the collector's side
 * (uo_db_set_operation_name): api rows of such an operation get its name and
 * its runtime's name as domain, rows before it "operation N" and the kind. */
#include "kind_info.h"
#include "output.h"

#include <upti/runtime_api.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "unit_db.h"
#include "unit_tests.h"

struct launch_args {
    const char *kernel;
    unsigned int count;
    double scale;
};
static const upti_runtime_api_arg_t k_launch_args[] = {
    {"kernel", "const char *", offsetof(struct launch_args, kernel), sizeof(const char *),
     UPTI_RUNTIME_ARG_STRING, 0},
    {"count", "unsigned int", offsetof(struct launch_args, count), sizeof(unsigned int),
     UPTI_RUNTIME_ARG_UNSIGNED, 0},
    {"scale", "double", offsetof(struct launch_args, scale), sizeof(double), UPTI_RUNTIME_ARG_FLOAT, 0},
};
static const upti_runtime_api_function_t k_functions[] = {
    {"rtInit", 8, (void *)1, NULL, 0, 0},
    {"rtLaunch", 16, (void *)1, k_launch_args, 3, 0},
};

static int count_op(upti_tracing_kind_t kind, uint32_t op, void *data)
{
    (void)kind, (void)op;
    ++*(int *)data;
    return 0;
}

static char g_args[256];

static int print_arg(upti_tracing_kind_t kind, uint32_t operation, uint32_t index, const void *addr,
                     int32_t indirection, const char *type, const char *name, const char *value,
                     int32_t deref, void *data)
{
    (void)kind, (void)operation, (void)addr, (void)data;
    size_t n = strlen(g_args);
    snprintf(g_args + n, sizeof g_args - n, "%u %s %s=%s (%d,%d);", index, type, name, value,
             indirection, deref);
    return 0;
}

static void test_operations(void)
{
    const char *name = NULL;
    int n = 0;
    /* This program's copy of the names library (through upti-output), not libupti's:
     * its kind table is the one the registry below fills. */
    CHECK(upti_kind_info(UPTI_TRACING_KIND_RUNTIME_API) == &upti_runtime_api_kind_info);
    CHECK_STATUS(upti_get_tracing_operation_name(UPTI_TRACING_KIND_RUNTIME_API, 1, &name),
                 UPTI_STATUS_ERROR_OPERATION_NOT_FOUND);
    uint32_t first = 0;
    CHECK_STATUS(upti_runtime_api_operations_add(k_functions, 2, &first), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(first, 1);
    CHECK_STATUS(upti_get_tracing_operation_name(UPTI_TRACING_KIND_RUNTIME_API, 2, &name),
                 UPTI_STATUS_SUCCESS);
    CHECK(name != NULL && strcmp(name, "rtLaunch") == 0);
    CHECK_STATUS(upti_get_tracing_operation_name(UPTI_TRACING_KIND_RUNTIME_API, 3, &name),
                 UPTI_STATUS_ERROR_OPERATION_NOT_FOUND);
    CHECK_STATUS(upti_iterate_tracing_kind_operations(UPTI_TRACING_KIND_RUNTIME_API, count_op, &n),
                 UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(n, 2);

    struct launch_args args = {"vadd", 7, 0.5};
    upti_callback_tracing_runtime_api_data_t payload = {sizeof payload, &args, NULL,
                                                        UPTI_API_RESULT_NONE};
    upti_callback_tracing_record_t record = {.size = sizeof record,
                                             .kind = UPTI_TRACING_KIND_RUNTIME_API,
                                             .operation = 2, .payload = &payload};
    CHECK_STATUS(upti_iterate_callback_tracing_operation_args(record, print_arg, 1, NULL),
                 UPTI_STATUS_SUCCESS);
    CHECK(strcmp(g_args, "0 const char * kernel=vadd (1,1);1 unsigned int count=7 (0,0);"
                         "2 double scale=0.5 (0,0);") == 0);
    if (strcmp(g_args, "0 const char * kernel=vadd (1,1);1 unsigned int count=7 (0,0);"
                       "2 double scale=0.5 (0,0);") != 0)
        fprintf(stderr, "args printed: %s\n", g_args);
    record.operation = 1; /* no arguments: nothing printed */
    g_args[0] = '\0';
    CHECK_STATUS(upti_iterate_callback_tracing_operation_args(record, print_arg, 1, NULL),
                 UPTI_STATUS_SUCCESS);
    CHECK(g_args[0] == '\0');

    /* 1021 ids are left (1024 less NONE and 2): 1022 do not fit, 1021 do, then none. */
    static upti_runtime_api_function_t many[UPTI_RUNTIME_API_MAX_OPERATIONS];
    for (size_t i = 0; i < UPTI_RUNTIME_API_MAX_OPERATIONS; i++)
        many[i] = (upti_runtime_api_function_t){"f", 8, (void *)1, NULL, 0, 0};
    CHECK_STATUS(upti_runtime_api_operations_add(many, UPTI_RUNTIME_API_MAX_OPERATIONS - 2, &first),
                 UPTI_STATUS_ERROR_OUT_OF_RESOURCES);
    CHECK_STATUS(upti_runtime_api_operations_add(many, UPTI_RUNTIME_API_MAX_OPERATIONS - 3, &first),
                 UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(first, 3);
    CHECK_STATUS(upti_runtime_api_operations_add(many, 1, &first), UPTI_STATUS_ERROR_OUT_OF_RESOURCES);
}

static void api_record(uo_db *db, uint32_t op, uint64_t corr)
{
    upti_buffer_tracing_api_record_t r = {.size = sizeof r, .kind = UPTI_TRACING_KIND_RUNTIME_API,
                                          .operation = op, .correlation_id = {corr, {0}},
                                          .thread_id = 1, .start_timestamp = 10 * corr,
                                          .end_timestamp = 10 * corr + 5, .result = -2};
    CHECK(uo_db_add_record(db, UPTI_TRACING_KIND_RUNTIME_API, &r) == 0);
}

static void test_database(void)
{
    char dir[] = "/tmp/upti-rtnames-XXXXXX", path[256];
    /* The collector's name table knows nothing of the runtime: what names it is the call. */
    uo_db *db = unit_temp_db(dir, path);
    CHECK(db != NULL);
    if (db == NULL)
        return;
    api_record(db, 5, 1);
    CHECK(uo_db_set_operation_name(db, UPTI_TRACING_KIND_RUNTIME_API, 5, "toyrt", "toyLaunch") == 0);
    api_record(db, 5, 2);
    api_record(db, 5, 3);
    CHECK(uo_db_close(db, 100) == 0);
    sqlite3 *s = NULL;
    CHECK(sqlite3_open(path, &s) == SQLITE_OK);
    sqlite3_stmt *st = NULL;
    char rows[256] = "";
    if (sqlite3_prepare_v2(s, "SELECT domain, name, correlation_id, result FROM apis ORDER BY correlation_id",
                           -1, &st, NULL) == SQLITE_OK)
        while (sqlite3_step(st) == SQLITE_ROW) {
            size_t n = strlen(rows);
            snprintf(rows + n, sizeof rows - n, "%s %s %lld %lld;", sqlite3_column_text(st, 0),
                     sqlite3_column_text(st, 1), (long long)sqlite3_column_int64(st, 2),
                     (long long)sqlite3_column_int64(st, 3));
        }
    sqlite3_finalize(st);
    sqlite3_close(s);
    const char *want = "RUNTIME_API operation 5 1 -2;toyrt toyLaunch 2 -2;toyrt toyLaunch 3 -2;";
    if (strcmp(rows, want) != 0) {
        fprintf(stderr, "FAIL: apis rows '%s', expected '%s'\n", rows, want);
        test_failures++;
    }
    unlink(path);
    rmdir(dir);
}

UNIT_TEST(runtime_api_names)
{
    test_operations();
    test_database();
    return test_result("runtime_api_names");
}
