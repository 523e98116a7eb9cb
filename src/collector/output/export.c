/* SPDX-License-Identifier: MIT */
/* CSV per record kind (RFC 4180), written from the database's views. */
#include "manifest.h"
#include "out_files.h"
#include "output.h"
#include "safe_open.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

typedef struct csv_file {
    const char *suffix;
    const char *sql;
} csv_file;

static const csv_file k_csv[] = {
    {"api_trace",
     "SELECT pid AS Process_Id, tid AS Thread_Id, domain AS Domain, name AS Function,"
     " correlation_id AS Correlation_Id, external_id AS External_Id, start AS Start_Timestamp,"
     " end AS End_Timestamp, result AS Result FROM apis ORDER BY start"},
    {"kernel_trace",
     "SELECT pid AS Process_Id, tid AS Thread_Id, agent_handle AS Agent_Id,"
     " queue_handle AS Queue_Id, kernel_id AS Kernel_Id, name AS Kernel_Name,"
     " correlation_id AS Correlation_Id, external_id AS External_Id, work_dim AS Work_Dim,"
     " grid_x AS Grid_Size_X, grid_y AS Grid_Size_Y, grid_z AS Grid_Size_Z,"
     " workgroup_x AS Workgroup_Size_X, workgroup_y AS Workgroup_Size_Y,"
     " workgroup_z AS Workgroup_Size_Z, queued AS Queued_Timestamp,"
     " submit AS Submit_Timestamp, start AS Start_Timestamp, end AS End_Timestamp,"
     " status AS Status FROM kernels ORDER BY start"},
    {"memory_copy_trace",
     "SELECT pid AS Process_Id, tid AS Thread_Id, agent_handle AS Agent_Id,"
     " queue_handle AS Queue_Id, operation AS Operation, direction AS Direction,"
     " src_agent AS Source_Agent_Id, dst_agent AS Destination_Agent_Id, bytes AS Bytes,"
     " correlation_id AS Correlation_Id, external_id AS External_Id,"
     " start AS Start_Timestamp, end AS End_Timestamp, status AS Status FROM memory_copies"
     " ORDER BY start"},
    {"memory_allocation_trace",
     "SELECT pid AS Process_Id, tid AS Thread_Id, operation AS Operation, type AS Type,"
     " agent_handle AS Agent_Id, handle AS Handle, size AS Size, flags AS Flags,"
     " correlation_id AS Correlation_Id, timestamp AS Timestamp FROM memory_allocations"
     " ORDER BY timestamp"},
    {"marker_api_trace",
     "SELECT pid AS Process_Id, tid AS Thread_Id, operation AS Function, message AS Message,"
     " correlation_id AS Correlation_Id, timestamp AS Timestamp, range_id AS Range_Id,"
     " domain AS Domain, category AS Category, color AS Color, payload_type AS Payload_Type,"
     " payload AS Payload FROM markers ORDER BY timestamp"},
    {"region_trace",
     "SELECT pid AS Process_Id, tid AS Thread_Id, end_tid AS End_Thread_Id, kind AS Kind,"
     " name AS Name, depth AS Depth, domain AS Domain, category AS Category, color AS Color,"
     " payload_type AS Payload_Type, payload AS Payload, start AS Start_Timestamp,"
     " end AS End_Timestamp FROM regions ORDER BY start"},
};

static int csv_one(sqlite3 *db, const char *path, const char *sql, int all, int *written,
                   char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -1;
    }
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && !all) {
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 0 : -1;
    }
    char *part;
    FILE *f = uo_part_open(path, "wb", &part, err, errlen);
    if (f == NULL) {
        sqlite3_finalize(st);
        return -1;
    }
    uo_buf b;
    uo_buf_init(&b, f);
    int ncol = sqlite3_column_count(st);
    for (int i = 0; i < ncol; i++) {
        if (i)
            uo_buf_putc(&b, ',');
        uo_csv_field(&b, sqlite3_column_name(st, i));
    }
    uo_buf_puts(&b, "\r\n");
    for (; rc == SQLITE_ROW; rc = sqlite3_step(st)) {
        for (int i = 0; i < ncol; i++) {
            if (i)
                uo_buf_putc(&b, ',');
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_INTEGER:
                uo_buf_put_i64(&b, sqlite3_column_int64(st, i));
                break;
            case SQLITE_NULL:
                break;
            default:
                uo_csv_field(&b, (const char *)sqlite3_column_text(st, i));
            }
        }
        uo_buf_puts(&b, "\r\n");
        uo_buf_flush(&b, 1 << 20);
    }
    uo_buf_flush(&b, 0);
    int failed = b.error || rc != SQLITE_DONE;
    if (rc != SQLITE_DONE)
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
    uo_buf_free(&b);
    sqlite3_finalize(st);
    if (fclose(f) != 0 || failed) {
        if (rc == SQLITE_DONE)
            snprintf(err, errlen, "cannot write %s", part);
        uo_part_finish(part, path, 0, err, errlen);
        free(part);
        return -1;
    }
    int done = uo_part_finish(part, path, 1, err, errlen);
    free(part);
    if (done != 0)
        return -1;
    uo_note_written(path);
    (*written)++;
    return 0;
}

int uo_export_csv(sqlite3 *db, const char *prefix, int all_files, int *files, char *err,
                  size_t errlen)
{
    int written = 0;
    for (size_t i = 0; i < sizeof k_csv / sizeof k_csv[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s_%s.csv", prefix, k_csv[i].suffix);
        if (csv_one(db, path, k_csv[i].sql, all_files, &written, err, errlen) != 0)
            return -1;
    }
    if (files)
        *files = written;
    return 0;
}

const char *uo_csv_suffix(size_t i)
{
    return i < sizeof k_csv / sizeof k_csv[0] ? k_csv[i].suffix : NULL;
}
