/* SPDX-License-Identifier: MIT */
/* Internal: the trace database's schema (documented in docs/database.md). */
#ifndef UPTI_OUTPUT_SCHEMA_H
#define UPTI_OUTPUT_SCHEMA_H

#define UO_SCHEMA_VERSION "1"

/* api.result of a call that returns no status: UPTI_API_RESULT_NONE (INT64_MIN), as
 * SQL; the apis view shows NULL there. */
#define UO_RESULT_NONE_SQL "(-9223372036854775807 - 1)"

/* Tables. Times are ns on UPTI's clock (CLOCK_MONOTONIC_RAW); *_id columns
 * ending in name_id/message_id/operation_id/... reference string(id). */
#define UO_SCHEMA_TABLES                                                                      \
    "CREATE TABLE IF NOT EXISTS metadata(key TEXT PRIMARY KEY, value TEXT);"                 \
    "CREATE TABLE IF NOT EXISTS string(id INTEGER PRIMARY KEY, string TEXT NOT NULL);"       \
    "CREATE TABLE IF NOT EXISTS info_process(id INTEGER PRIMARY KEY, pid INTEGER,"           \
    " ppid INTEGER, hostname TEXT, rank INTEGER, command TEXT, start INTEGER, end INTEGER,"   \
    " wall_start INTEGER);"                                                                   \
    "CREATE TABLE IF NOT EXISTS info_thread(id INTEGER PRIMARY KEY, process_id INTEGER,"     \
    " tid INTEGER, name_id INTEGER, start INTEGER, end INTEGER);"                            \
    "CREATE TABLE IF NOT EXISTS info_agent(id INTEGER PRIMARY KEY, process_id INTEGER,"      \
    " handle INTEGER, type TEXT, runtime TEXT, name TEXT, vendor TEXT, driver_version TEXT," \
    " compute_units INTEGER, global_memory_bytes INTEGER, runtime_handle INTEGER,"           \
    " node_id INTEGER);"                                                                      \
    "CREATE TABLE IF NOT EXISTS info_queue(id INTEGER PRIMARY KEY, process_id INTEGER,"      \
    " handle INTEGER, agent_handle INTEGER, runtime_context INTEGER);"                       \
    "CREATE TABLE IF NOT EXISTS info_category(id INTEGER PRIMARY KEY, process_id INTEGER,"   \
    " domain INTEGER, category INTEGER, name_id INTEGER);"                                   \
    "CREATE TABLE IF NOT EXISTS info_code_object(id INTEGER PRIMARY KEY, process_id INTEGER," \
    " code_object_id INTEGER, runtime_context INTEGER, name_id INTEGER, load INTEGER,"       \
    " unload INTEGER);"                                                                       \
    "CREATE TABLE IF NOT EXISTS info_kernel_symbol(id INTEGER PRIMARY KEY,"                  \
    " process_id INTEGER, kernel_id INTEGER, code_object_id INTEGER,"                        \
    " runtime_context INTEGER, name_id INTEGER, load INTEGER, unload INTEGER);"              \
    "CREATE TABLE IF NOT EXISTS api(id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER," \
    " domain_id INTEGER, name_id INTEGER, correlation_id INTEGER, external_id INTEGER,"       \
    " start INTEGER, end INTEGER, result INTEGER);"                                           \
    "CREATE TABLE IF NOT EXISTS arg(id INTEGER PRIMARY KEY, api_id INTEGER,"                 \
    " correlation_id INTEGER, position INTEGER, type_id INTEGER, name_id INTEGER,"           \
    " value TEXT);"                                                                           \
    "CREATE TABLE IF NOT EXISTS kernel_dispatch(id INTEGER PRIMARY KEY, process_id INTEGER," \
    " tid INTEGER, agent_handle INTEGER, queue_handle INTEGER, runtime_context INTEGER,"     \
    " kernel_id INTEGER, name_id INTEGER, operation_id INTEGER, correlation_id INTEGER,"     \
    " external_id INTEGER, work_dim INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER," \
    " workgroup_x INTEGER, workgroup_y INTEGER, workgroup_z INTEGER, offset_x INTEGER,"      \
    " offset_y INTEGER, offset_z INTEGER, queued INTEGER, submit INTEGER, start INTEGER,"    \
    " end INTEGER, status INTEGER);"                                                         \
    "CREATE TABLE IF NOT EXISTS memory_copy(id INTEGER PRIMARY KEY, process_id INTEGER,"     \
    " tid INTEGER, agent_handle INTEGER, queue_handle INTEGER, runtime_context INTEGER,"     \
    " operation_id INTEGER, direction_id INTEGER, src_agent INTEGER, dst_agent INTEGER,"     \
    " bytes INTEGER, correlation_id INTEGER, external_id INTEGER, queued INTEGER,"           \
    " submit INTEGER, start INTEGER, end INTEGER, status INTEGER);"                          \
    "CREATE TABLE IF NOT EXISTS memory_allocate(id INTEGER PRIMARY KEY, process_id INTEGER," \
    " tid INTEGER, operation_id INTEGER, agent_handle INTEGER, runtime_context INTEGER,"     \
    " type_id INTEGER, handle INTEGER, size INTEGER, flags INTEGER, correlation_id INTEGER," \
    " external_id INTEGER, timestamp INTEGER);"                                              \
    "CREATE TABLE IF NOT EXISTS marker(id INTEGER PRIMARY KEY, process_id INTEGER,"          \
    " tid INTEGER, operation INTEGER, operation_id INTEGER, correlation_id INTEGER, external_id INTEGER,"       \
    " timestamp INTEGER, range_id INTEGER, domain INTEGER, category INTEGER, color INTEGER," \
    " payload_type INTEGER, payload INTEGER, message_id INTEGER);"                           \
    "CREATE TABLE IF NOT EXISTS region(id INTEGER PRIMARY KEY, process_id INTEGER,"          \
    " tid INTEGER, end_tid INTEGER, kind INTEGER, name_id INTEGER, depth INTEGER,"           \
    " domain INTEGER, category INTEGER, color INTEGER, payload_type INTEGER, payload INTEGER," \
    " correlation_id INTEGER, start INTEGER, end INTEGER);"

/* Friendly views with names resolved; durations in ns. */
#define UO_SCHEMA_VIEWS                                                                       \
    "CREATE VIEW IF NOT EXISTS apis AS SELECT a.id, p.pid, a.tid, d.string AS domain,"       \
    " n.string AS name, a.correlation_id, a.external_id, a.start, a.end,"                    \
    " a.end - a.start AS duration,"                                                          \
    " CASE WHEN a.result = " UO_RESULT_NONE_SQL " THEN NULL ELSE a.result END AS result"     \
    " FROM api a JOIN info_process p ON p.id = a.process_id"     \
    " LEFT JOIN string d ON d.id = a.domain_id LEFT JOIN string n ON n.id = a.name_id;"      \
    "CREATE VIEW IF NOT EXISTS args AS SELECT g.id, g.api_id, p.pid, g.correlation_id,"     \
    " f.string AS function, g.position, t.string AS type, n.string AS name, g.value"         \
    " FROM arg g LEFT JOIN api a ON a.id = g.api_id"                                          \
    " LEFT JOIN info_process p ON p.id = a.process_id LEFT JOIN string f ON f.id = a.name_id" \
    " LEFT JOIN string t ON t.id = g.type_id LEFT JOIN string n ON n.id = g.name_id;"        \
    "CREATE VIEW IF NOT EXISTS kernels AS SELECT k.id, p.pid, k.tid, k.agent_handle,"        \
    " k.queue_handle, k.kernel_id, n.string AS name, o.string AS operation,"                 \
    " k.correlation_id, k.external_id, k.work_dim, k.grid_x, k.grid_y, k.grid_z,"            \
    " k.workgroup_x, k.workgroup_y, k.workgroup_z, k.queued, k.submit, k.start, k.end,"      \
    " k.end - k.start AS duration, k.status FROM kernel_dispatch k"                          \
    " JOIN info_process p ON p.id = k.process_id LEFT JOIN string n ON n.id = k.name_id"     \
    " LEFT JOIN string o ON o.id = k.operation_id;"                                           \
    "CREATE VIEW IF NOT EXISTS memory_copies AS SELECT m.id, p.pid, m.tid, m.agent_handle,"  \
    " m.queue_handle, o.string AS operation, d.string AS direction, m.src_agent,"            \
    " m.dst_agent, m.bytes, m.correlation_id, m.external_id, m.queued, m.submit, m.start,"   \
    " m.end, m.end - m.start AS duration, m.status FROM memory_copy m"                       \
    " JOIN info_process p ON p.id = m.process_id LEFT JOIN string o ON o.id = m.operation_id" \
    " LEFT JOIN string d ON d.id = m.direction_id;"                                           \
    "CREATE VIEW IF NOT EXISTS memory_allocations AS SELECT m.id, p.pid, m.tid,"             \
    " o.string AS operation, t.string AS type, m.agent_handle, m.handle, m.size, m.flags,"   \
    " m.correlation_id, m.timestamp FROM memory_allocate m"                                  \
    " JOIN info_process p ON p.id = m.process_id LEFT JOIN string o ON o.id = m.operation_id" \
    " LEFT JOIN string t ON t.id = m.type_id;"                                                \
    "CREATE VIEW IF NOT EXISTS markers AS SELECT m.id, p.pid, m.tid, o.string AS operation," \
    " s.string AS message, m.correlation_id, m.timestamp, m.range_id, m.domain, m.category," \
    " m.color, m.payload_type, m.payload FROM marker m"                                      \
    " JOIN info_process p ON p.id = m.process_id LEFT JOIN string o ON o.id = m.operation_id" \
    " LEFT JOIN string s ON s.id = m.message_id;"                                             \
    "CREATE VIEW IF NOT EXISTS regions AS SELECT r.id, p.pid, r.tid, r.end_tid,"             \
    " CASE r.kind WHEN 0 THEN 'push' ELSE 'range' END AS kind, s.string AS name, r.depth,"   \
    " r.domain, r.category, r.color, r.payload_type, r.payload, r.correlation_id, r.start,"  \
    " r.end, r.end - r.start AS duration FROM region r"                                      \
    " JOIN info_process p ON p.id = r.process_id LEFT JOIN string s ON s.id = r.name_id;"    \
    "CREATE VIEW IF NOT EXISTS threads AS SELECT t.id, p.pid, t.tid, s.string AS name,"      \
    " t.start, t.end FROM info_thread t JOIN info_process p ON p.id = t.process_id"          \
    " LEFT JOIN string s ON s.id = t.name_id;"                                                \
    "CREATE VIEW IF NOT EXISTS top_kernels AS SELECT name, count(*) AS calls,"               \
    " sum(duration) AS total, avg(duration) AS average FROM kernels GROUP BY name"           \
    " ORDER BY total DESC;"

/* Built when a database is closed (bulk index creation is faster than per-row upkeep). */
#define UO_SCHEMA_INDEXES                                                                     \
    "CREATE INDEX IF NOT EXISTS api_correlation ON api(correlation_id);"                     \
    "CREATE INDEX IF NOT EXISTS kernel_correlation ON kernel_dispatch(correlation_id);"      \
    "CREATE INDEX IF NOT EXISTS copy_correlation ON memory_copy(correlation_id);"            \
    "CREATE INDEX IF NOT EXISTS arg_api ON arg(api_id);"

#endif
