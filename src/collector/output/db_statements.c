/* SPDX-License-Identifier: MIT */
/* The statements that write the rows of a database's tables (db_statements.h). */
#include "db_statements.h"

const char *const uo_db_statements[ST_COUNT] = {
    [ST_STRING] = "INSERT INTO string(id, string) VALUES(?,?)",
    [ST_API] = "INSERT INTO api(process_id, tid, domain_id, name_id, correlation_id, external_id,"
               " start, end, result) VALUES(?,?,?,?,?,?,?,?,?)",
    [ST_KERNEL] = "INSERT INTO kernel_dispatch(process_id, tid, agent_handle, queue_handle,"
                  " runtime_context, kernel_id, name_id, operation_id, correlation_id,"
                  " external_id, work_dim, grid_x, grid_y, grid_z, workgroup_x, workgroup_y,"
                  " workgroup_z, offset_x, offset_y, offset_z, queued, submit, start, end, status)"
                  " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_COPY] = "INSERT INTO memory_copy(process_id, tid, agent_handle, queue_handle,"
                " runtime_context, operation_id, direction_id, src_agent, dst_agent, bytes,"
                " correlation_id, external_id, queued, submit, start, end, status)"
                " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_ALLOC] = "INSERT INTO memory_allocate(process_id, tid, operation_id, agent_handle,"
                 " runtime_context, type_id, handle, size, flags, correlation_id, external_id,"
                 " timestamp) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_MARKER] = "INSERT INTO marker(process_id, tid, operation, operation_id, correlation_id,"
                  " external_id, timestamp, range_id, domain, category, color, payload_type,"
                  " payload, message_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_REGION] = "INSERT INTO region(process_id, tid, end_tid, kind, name_id, depth, domain,"
                  " category, color, payload_type, payload, correlation_id, start, end)"
                  " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_QUEUE] = "INSERT INTO info_queue(process_id, handle, agent_handle, runtime_context)"
                 " VALUES(?,?,?,?)",
    [ST_CATEGORY] = "INSERT INTO info_category(process_id, domain, category, name_id)"
                    " VALUES(?,?,?,?)",
    [ST_CODE_OBJECT] = "INSERT INTO info_code_object(process_id, code_object_id, runtime_context,"
                       " name_id, load) VALUES(?,?,?,?,?)",
    [ST_SYMBOL] = "INSERT INTO info_kernel_symbol(process_id, kernel_id, code_object_id,"
                  " runtime_context, name_id, load) VALUES(?,?,?,?,?,?)",
    [ST_UNLOAD_OBJECT] = "UPDATE info_code_object SET unload = ? WHERE id = ?",
    [ST_UNLOAD_SYMBOL] = "UPDATE info_kernel_symbol SET unload = ? WHERE id = ?",
    [ST_AGENT] = "INSERT INTO info_agent(process_id, handle, type, runtime, name, vendor,"
                 " driver_version, compute_units, global_memory_bytes, runtime_handle, node_id)"
                 " VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    [ST_ARG] = "INSERT INTO arg(api_id, correlation_id, position, type_id, name_id, value)"
               " VALUES(?,?,?,?,?,?)",
};

int uo_db_batched(int st)
{
    return st == ST_STRING || st == ST_API || st == ST_KERNEL || st == ST_COPY || st == ST_ALLOC ||
           st == ST_MARKER || st == ST_REGION || st == ST_ARG;
}

int uo_db_params(int st)
{
    int n = 0;
    for (const char *sql = uo_db_statements[st]; *sql; sql++)
        n += *sql == '?';
    return n;
}

int uo_db_text_param(int st) { return st == ST_STRING ? 1 : st == ST_ARG ? 5 : -1; }
