/* SPDX-License-Identifier: MIT */
/* upti merge: several trace databases (processes, MPI ranks) into one, each process its own group. */
#include "out_files.h"
#include "safe_open.h"
#include "output.h"
#include "schema.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Column kinds: I copied, P process row id (offset), S string id (remapped), A api row id (offset),
 * N copied where the input has it, else NULL (a column added since: api.result). */
typedef struct merge_table {
    const char *name;
    const char *columns; /* "kind:name kind:name ..." */
} merge_table;

static const merge_table k_tables[] = {
    {"info_process", "P:id I:pid I:ppid I:hostname I:rank I:command I:start I:end I:wall_start"},
    {"info_thread", "P:process_id I:tid S:name_id I:start I:end"},
    {"info_agent", "P:process_id I:handle I:type I:runtime I:name I:vendor I:driver_version"
                   " I:compute_units I:global_memory_bytes I:runtime_handle I:node_id"},
    {"info_queue", "P:process_id I:handle I:agent_handle I:runtime_context"},
    {"info_category", "P:process_id I:domain I:category S:name_id"},
    {"info_code_object", "P:process_id I:code_object_id I:runtime_context S:name_id I:load I:unload"},
    {"info_kernel_symbol", "P:process_id I:kernel_id I:code_object_id I:runtime_context S:name_id"
                           " I:load I:unload"},
    {"api", "A:id P:process_id I:tid S:domain_id S:name_id I:correlation_id I:external_id I:start"
            " I:end N:result"},
    {"arg", "A:api_id I:correlation_id I:position S:type_id S:name_id I:value"},
    {"kernel_dispatch", "P:process_id I:tid I:agent_handle I:queue_handle I:runtime_context"
                        " I:kernel_id S:name_id S:operation_id I:correlation_id I:external_id"
                        " I:work_dim I:grid_x I:grid_y I:grid_z I:workgroup_x I:workgroup_y"
                        " I:workgroup_z I:offset_x I:offset_y I:offset_z I:queued I:submit I:start"
                        " I:end I:status"},
    {"memory_copy", "P:process_id I:tid I:agent_handle I:queue_handle I:runtime_context"
                    " S:operation_id S:direction_id I:src_agent I:dst_agent I:bytes"
                    " I:correlation_id I:external_id I:queued I:submit I:start I:end I:status"},
    {"memory_allocate", "P:process_id I:tid S:operation_id I:agent_handle I:runtime_context"
                        " S:type_id I:handle I:size I:flags I:correlation_id I:external_id"
                        " I:timestamp"},
    {"marker", "P:process_id I:tid I:operation S:operation_id I:correlation_id I:external_id"
               " I:timestamp I:range_id I:domain I:category I:color I:payload_type I:payload"
               " S:message_id"},
    {"region", "P:process_id I:tid I:end_tid I:kind S:name_id I:depth I:domain I:category I:color"
               " I:payload_type I:payload I:correlation_id I:start I:end"},
};

static int copy_table(sqlite3 *db, const merge_table *t, int64_t poff, int64_t aoff, char *err,
                      size_t errlen)
{
    uo_buf cols, exprs;
    uo_buf_init(&cols, NULL);
    uo_buf_init(&exprs, NULL);
    char spec[1024];
    snprintf(spec, sizeof spec, "%s", t->columns);
    int first = 1;
    for (char *save = NULL, *tok = strtok_r(spec, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        char kind = tok[0];
        const char *col = tok + 2;
        if (!first) {
            uo_buf_putc(&cols, ',');
            uo_buf_putc(&exprs, ',');
        }
        first = 0;
        uo_buf_printf(&cols, "\"%s\"", col);
        switch (kind) {
        case 'P': uo_buf_printf(&exprs, "t.\"%s\" + %lld", col, (long long)poff); break;
        case 'A': uo_buf_printf(&exprs, "t.\"%s\" + %lld", col, (long long)aoff); break;
        case 'S':
            uo_buf_printf(&exprs, "(SELECT new FROM temp.smap WHERE old = t.\"%s\")", col);
            break;
        case 'N': {
            char q[256];
            snprintf(q, sizeof q, "SELECT count(*) FROM pragma_table_info('%s', 'src') WHERE name = '%s'",
                     t->name, col);
            uo_buf_printf(&exprs, uo_sql_int(db, q, 0) > 0 ? "t.\"%s\"" : "NULL /* %s */", col);
            break;
        }
        default: uo_buf_printf(&exprs, "t.\"%s\"", col);
        }
    }
    uo_buf_putc(&cols, '\0');
    uo_buf_putc(&exprs, '\0');
    uo_buf sql;
    uo_buf_init(&sql, NULL);
    uo_buf_printf(&sql, "INSERT INTO main.\"%s\"(%s) SELECT %s FROM src.\"%s\" t ORDER BY t.rowid",
                  t->name, cols.data, exprs.data, t->name);
    uo_buf_putc(&sql, '\0');
    int rc = (cols.error || exprs.error || sql.error) ? -1 : uo_sql_exec(db, sql.data, err, errlen);
    uo_buf_free(&cols);
    uo_buf_free(&exprs);
    uo_buf_free(&sql);
    return rc;
}

int uo_merge(const char *out_path, const char *const *inputs, int n, char *err, size_t errlen)
{
    /* Check every input first: a bad one must not leave a half-merged output. */
    for (int i = 0; i < n; i++) {
        sqlite3 *in = uo_open(inputs[i], 0, err, errlen);
        if (in == NULL)
            return -1;
        sqlite3_close(in);
        if (strcmp(inputs[i], out_path) == 0) {
            snprintf(err, errlen, "the output %s is also an input", out_path);
            return -1;
        }
    }
    pid_t writer = uo_writer_pid(out_path);
    if (writer > 0) {
        snprintf(err, errlen,
                 "%s is in use by pid %d (its trace is still being written): not replaced"
                 " (choose another -o)", out_path, (int)writer);
        return -1;
    }
    if (!uo_file_is_replaceable(out_path)) {
        snprintf(err, errlen, "%s exists and was not written by upti: not replaced", out_path);
        return -1;
    }
    /* Written as OUTPUT.part, renamed over OUTPUT only once complete. The
     * part is created empty here and its flock held to the rename: another
     * merge of that name at once leaves it alone (safe_open.h). */
    char *part = uo_part_path(out_path);
    int part_fd = part != NULL ? uo_open_new(part) : -1;
    if (part_fd < 0) {
        snprintf(err, errlen, "cannot create %s.part: %s", out_path,
                 part != NULL ? uo_open_new_reason(errno) : strerror(errno));
        free(part);
        return -1;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(part, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        snprintf(err, errlen, "cannot create %s: %s", part, db ? sqlite3_errmsg(db) : "?");
        sqlite3_close(db);
        unlink(part);
        close(part_fd);
        free(part);
        return -1;
    }
    int rc = -1;
    if (uo_sql_exec(db, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                 " PRAGMA temp_store=MEMORY; PRAGMA application_id=" UO_APPLICATION_ID_SQL "; BEGIN;" UO_SCHEMA_TABLES UO_SCHEMA_VIEWS
                 "CREATE UNIQUE INDEX IF NOT EXISTS string_text ON string(string);"
                 "INSERT INTO metadata(key, value) VALUES('schema_version', '" UO_SCHEMA_VERSION
                 "'), ('writer', 'upti merge " UPTI_VERSION_STRING "'),"
                 " ('clock', 'CLOCK_MONOTONIC_RAW ns'); COMMIT;",
             err, errlen))
        goto out;
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS src", -1, &st, NULL) != SQLITE_OK)
            goto out_err;
        sqlite3_bind_text(st, 1, inputs[i], -1, SQLITE_STATIC);
        int r = sqlite3_step(st);
        sqlite3_finalize(st);
        if (r != SQLITE_DONE)
            goto out_err;
        if (uo_sql_exec(db, "BEGIN; INSERT OR IGNORE INTO main.string(string) SELECT string FROM"
                     " src.string ORDER BY id;"
                     "CREATE TEMP TABLE smap(old INTEGER PRIMARY KEY, new INTEGER);"
                     "INSERT INTO temp.smap SELECT s.id, m.id FROM src.string s"
                     " JOIN main.string m ON m.string = s.string;",
                 err, errlen))
            goto out;
        int64_t poff = uo_sql_int(db, "SELECT coalesce(max(id), 0) FROM main.info_process", 0);
        int64_t aoff = uo_sql_int(db, "SELECT coalesce(max(id), 0) FROM main.api", 0);
        for (size_t t = 0; t < sizeof k_tables / sizeof k_tables[0]; t++)
            if (copy_table(db, &k_tables[t], poff, aoff, err, errlen) != 0)
                goto out;
        /* The clock snapshots of the first input that has them (timeline.c). */
        if (uo_sql_exec(db, "INSERT OR IGNORE INTO main.metadata(key, value) SELECT key, value"
                            " FROM src.metadata WHERE key IN ('clock_snapshot', 'clock_snapshot_end');"
                            "DROP TABLE temp.smap; COMMIT; DETACH DATABASE src;",
                        err, errlen))
            goto out;
    }
    /* One machine's snapshot ties only its own processes' clocks to the others. */
    if (uo_sql_exec(db, "BEGIN;" UO_SCHEMA_INDEXES
                        "DELETE FROM metadata WHERE key IN ('clock_snapshot', 'clock_snapshot_end')"
                        " AND (SELECT count(DISTINCT coalesce(hostname, '')) FROM info_process) > 1;"
                        "COMMIT;",
                    err, errlen))
        goto out;
    rc = 0;
    goto out;
out_err:
    snprintf(err, errlen, "%s", sqlite3_errmsg(db));
out:
    if (sqlite3_close(db) != SQLITE_OK)
        rc = -1;
    if (uo_part_finish(part, out_path, rc == 0, err, errlen) != 0)
        rc = -1;
    close(part_fd);
    free(part);
    return rc;
}
