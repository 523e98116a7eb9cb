/* SPDX-License-Identifier: MIT */
/* src/collector/output's one error channel: a database keeps its first error
 * (uo_db_error) and reports it once, through the reporter its program set
 * (uo_set_reporter), however many calls fail after it; uo_db_close then
 * fails without a second report. An error of uo_db_create is its err only. */
#include "output.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

static int g_reports;
static char g_last_report[1024];

static void count_report(void *data, const char *message)
{
    CHECK(data == &g_reports);
    g_reports++;
    snprintf(g_last_report, sizeof g_last_report, "%s", message);
}

UNIT_TEST(db_errors)
{
    uo_set_reporter(count_report, &g_reports);
    char dir[] = "/tmp/upti-db-errors-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], missing[256], prefix[300];
    snprintf(path, sizeof path, "%s/trace.db", dir);
    snprintf(missing, sizeof missing, "%s/no-such-folder/trace.db", dir);
    uo_process_info proc = {.pid = 1, .ppid = 0, .rank = -1, .hostname = "h", .command = "c"};

    /* uo_db_create: the message is err's, nothing is reported. */
    char err[512] = "";
    CHECK(uo_db_create(missing, &proc, NULL, err, sizeof err) == NULL);
    CHECK(strstr(err, missing) != NULL);
    CHECK_EQ_U64(g_reports, 0);

    uo_db *db = uo_db_create(path, &proc, NULL, err, sizeof err);
    CHECK(db != NULL);
    if (db == NULL)
        return test_result("db_errors");
    CHECK(uo_db_error(db) == NULL);
    CHECK_EQ_U64(g_reports, 0);

    /* The first commit writes the schema (pages of 64 KiB): past a file size
     * limit of 64 KiB it fails (EFBIG instead of SIGXFSZ). */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, small;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    small = old;
    small.rlim_cur = 64 * 1024;
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    uo_db_checkpoint(db, 1000, 0);
    const char *first = uo_db_error(db);
    CHECK(first != NULL);
    snprintf(prefix, sizeof prefix, "database %s: ", path);
    CHECK(first != NULL && strncmp(first, prefix, strlen(prefix)) == 0 &&
          strlen(first) > strlen(prefix));
    CHECK_EQ_U64(g_reports, 1);
    CHECK(first != NULL && strcmp(g_last_report, first) == 0);
    char kept[512];
    snprintf(kept, sizeof kept, "%s", first ? first : "");

    /* Later calls fail too, without a second report; the first error stays. */
    upti_buffer_tracing_marker_api_record_t m = {0};
    m.size = sizeof m;
    m.kind = UPTI_TRACING_KIND_MARKER_API;
    m.thread_id = 7;
    m.start_timestamp = m.end_timestamp = 2000;
    CHECK(uo_db_add_record(db, m.kind, &m) == -1);
    uo_db_checkpoint(db, 3000, 0);
    CHECK_EQ_U64(g_reports, 1);
    CHECK(uo_db_error(db) != NULL && strcmp(uo_db_error(db), kept) == 0);
    CHECK(uo_db_close(db, 4000) == -1);
    CHECK_EQ_U64(g_reports, 1);

    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    unlink(path);
    char journal[300];
    snprintf(journal, sizeof journal, "%s-journal", path);
    unlink(journal);
    rmdir(dir);
    return test_result("db_errors");
}
