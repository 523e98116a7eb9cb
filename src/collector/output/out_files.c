/* SPDX-License-Identifier: MIT */
/* Which existing files an output of UPTI may replace (see out_files.h). */
#include "out_files.h"
#include "stats_reports.h"
#include "output.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int uo_force_overwrite(void)
{
    const char *v = getenv("UPTI_TRACE_FORCE_OVERWRITE");
    return v != NULL && strcmp(v, "1") == 0;
}

/* An older database (before application_id): its metadata names UPTI. */
static int metadata_says_upti(const char *path)
{
    sqlite3 *db = NULL;
    int upti = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "SELECT value FROM metadata WHERE key = 'writer'", -1, &st,
                               NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW) {
                const char *v = (const char *)sqlite3_column_text(st, 0);
                upti = v != NULL && strncmp(v, "upti", 4) == 0;
            }
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(db);
    return upti;
}

static int starts_with(const unsigned char *b, size_t n, const char *s)
{
    size_t k = strlen(s);
    return n >= k && memcmp(b, s, k) == 0;
}

/* UPTI's first Perfetto packet: Trace.packet (field 1, bytes), its length,
 * then trusted_packet_sequence_id = 1, sequence_flags = 1, interned_data. */
static int is_upti_pftrace(const unsigned char *b, size_t n)
{
    if (n < 8 || b[0] != 0x0a)
        return 0;
    size_t i = 1;
    while (i < n && (b[i] & 0x80))
        i++;
    i++;
    static const unsigned char k_seq[] = {0x50, 0x01, 0x68, 0x01, 0x62};
    return i + sizeof k_seq <= n && memcmp(b + i, k_seq, sizeof k_seq) == 0;
}

/* A JSON trace of an older UPTI: its last bytes name UPTI as the writer. */
static int json_tail_says_upti(int fd, off_t size)
{
    static const char k_tail[] = "\"otherData\":{\"writer\":\"upti\"}}\n";
    size_t k = sizeof k_tail - 1;
    char tail[sizeof k_tail];
    if (size < (off_t)k || pread(fd, tail, k, size - (off_t)k) != (ssize_t)k)
        return 0;
    return memcmp(tail, k_tail, k) == 0;
}

/* The summary of upti 0.2 and earlier (`upti stats` without --report, its
 * NAME_stats.csv and NAME_stats.txt), before the named reports replaced it:
 * its CSV header, or a table title followed by its column line. */
static int old_summary(const unsigned char *b, size_t n)
{
    static const char *const k_titles[] = {"API calls", "Marker ranges", "Kernels",
                                           "Memory copies by direction",
                                           "Synchronization operations"};
    if (starts_with(b, n, "Domain,Name,Calls,Total_ns,"))
        return 1;
    for (size_t i = 0; i < sizeof k_titles / sizeof k_titles[0]; i++) {
        size_t len = strlen(k_titles[i]);
        if (n > len + 7 && b[0] == '\n' && memcmp(b + 1, k_titles[i], len) == 0 &&
            memcmp(b + 1 + len, "\nNAME ", 6) == 0)
            return 1;
    }
    return 0;
}

int uo_file_is_replaceable(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 1; /* nothing there */
    if (!S_ISREG(st.st_mode))
        return 0;
    if (st.st_size == 0 || uo_force_overwrite())
        return 1;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    /* A report's CSV header can be 300 bytes long (stats_reports.h). */
    unsigned char b[1024];
    ssize_t got = pread(fd, b, sizeof b - 1, 0);
    size_t n = got > 0 ? (size_t)got : 0;
    b[n] = '\0';
    int ours = 0;
    if (starts_with(b, n, "SQLite format 3")) {
        uint32_t app = n >= 72 ? ((uint32_t)b[68] << 24 | (uint32_t)b[69] << 16 |
                                  (uint32_t)b[70] << 8 | b[71])
                               : 0;
        ours = app == UO_APPLICATION_ID || (app == 0 && metadata_says_upti(path));
    } else if (starts_with(b, n, UO_JSON_HEAD)) {
        ours = 1;
    } else if (starts_with(b, n, "{\"traceEvents\":[")) {
        ours = json_tail_says_upti(fd, st.st_size);
    } else if (starts_with(b, n, "Process_Id,Thread_Id,") ||
               report_output_is_ours((const char *)b) || old_summary(b, n)) {
        ours = 1;
    } else {
        ours = is_upti_pftrace(b, n);
    }
    close(fd);
    return ours;
}

int uo_outputs_replaceable(const char *base, unsigned formats, char *which, size_t len)
{
    size_t n = strlen(base) + 64;
    char *path = malloc(n);
    if (path == NULL)
        return 0;
    int ok = 1;
    if (ok && (formats & UO_FORMAT_PFTRACE)) {
        snprintf(path, n, "%s.pftrace", base);
        ok = uo_file_is_replaceable(path);
    }
    if (ok && (formats & UO_FORMAT_JSON)) {
        snprintf(path, n, "%s.json", base);
        ok = uo_file_is_replaceable(path);
    }
    if (formats & UO_FORMAT_CSV) {
        for (size_t i = 0; ok && uo_csv_suffix(i) != NULL; i++) {
            snprintf(path, n, "%s_%s.csv", base, uo_csv_suffix(i));
            ok = uo_file_is_replaceable(path);
        }
        if (ok) {
            snprintf(path, n, "%s_stats.csv", base);
            ok = uo_file_is_replaceable(path);
        }
    }
    if (!ok)
        snprintf(which, len, "%s", path);
    free(path);
    return ok;
}
