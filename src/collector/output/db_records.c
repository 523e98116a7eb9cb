/* SPDX-License-Identifier: MIT */
/* The database writer's records (db_internal.h): each buffer record becomes a
 * row; threads, push/pop and start/stop ranges (regions), queues, the kernel
 * filter, agents and API arguments. */
#include "db_internal.h"

#include "compact_records.h"

#include <stdlib.h>
#include <string.h>

/* Widens t's span of time to ts (0: none). */
static inline thread_state *seen_at(thread_state *t, uint64_t ts)
{
    if (ts != 0) {
        if (t->first == 0 || ts < t->first)
            t->first = ts;
        if (ts > t->last)
            t->last = ts;
    }
    return t;
}

/* thread_of for a thread other than the last one found. */
static thread_state *thread_found(uo_db *db, uint64_t tid, uint64_t ts)
{
    int inserted;
    uint64_t *v = upti_map_insert(&db->threads, tid, &inserted);
    if (v == NULL)
        return NULL;
    if (inserted) {
        if (uo_grow(&db->thr, &db->thrcap, db->nthr + 1, sizeof *db->thr, 16) != 0) {
            upti_map_remove(&db->threads, tid);
            return NULL;
        }
        thread_state *t = &db->thr[db->nthr++];
        memset(t, 0, sizeof *t);
        t->tid = tid;
        t->first = t->last = ts;
        *v = db->nthr;
        /* Best effort: the kernel's name of the thread, if it still runs, where
         * the writer runs in the traced process. Not in a bulk database: its
         * writer (upti run, upti recover) is another process, whose own
         * threads' names a thread id of the program may name. */
        char path[64], comm[64];
        snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)tid);
        FILE *f = db->part == NULL ? fopen(path, "r") : NULL;
        if (f != NULL) {
            if (fgets(comm, sizeof comm, f) != NULL) {
                comm[strcspn(comm, "\n")] = '\0';
                t->name_id = uo_db_intern(db, comm);
            }
            fclose(f);
        }
    }
    db->last_thread = (size_t)*v;
    return seen_at(&db->thr[*v - 1], ts);
}

/* The state of thread tid (made at its first record), its span widened to ts. */
static inline thread_state *thread_of(uo_db *db, uint64_t tid, uint64_t ts)
{
    /* Records come in runs of one thread's: the last one found, first. */
    if (db->last_thread != 0 && db->thr[db->last_thread - 1].tid == tid)
        return seen_at(&db->thr[db->last_thread - 1], ts);
    return thread_found(db, tid, ts);
}

void uo_db_name_thread(uo_db *db, uint64_t tid, const char *name)
{
    thread_state *t = thread_of(db, tid, 0);
    if (t != NULL)
        t->name_id = uo_db_intern(db, name);
}


int db_add_region(uo_db *db, const open_range *r, uint64_t end_tid, int kind, size_t depth,
                      uint64_t end)
{
    int64_t *v = db_row_new(db, ST_REGION);
    if (v == NULL)
        return -1;
    v[0] = db->process_id;
    v[1] = (int64_t)r->tid;
    v[2] = (int64_t)end_tid;
    v[3] = kind;
    v[4] = r->name_id;
    v[5] = (int64_t)depth;
    v[6] = r->domain;
    v[7] = r->category;
    v[8] = r->color;
    v[9] = r->payload_type;
    v[10] = (int64_t)r->payload;
    v[11] = (int64_t)r->correlation;
    v[12] = (int64_t)r->start;
    v[13] = (int64_t)(end < r->start ? r->start : end);
    return db_row_done(db, ST_REGION);
}

static int add_marker(uo_db *db, const upti_buffer_tracing_marker_api_record_t *m)
{
    uint32_t domain = (uint32_t)(m->domain >> 32), category = (uint32_t)m->domain;
    int64_t msg = db_intern_again(db, &db->last_message_id, m->message);
    int64_t op = db_op_id(db, UPTI_TRACING_KIND_MARKER_API, m->operation);
    int64_t *v = db_row_new(db, ST_MARKER);
    if (v == NULL)
        return -1;
    v[0] = db->process_id;
    v[1] = (int64_t)m->thread_id;
    v[2] = m->operation;
    v[3] = op;
    v[4] = (int64_t)m->correlation_id.internal;
    v[5] = (int64_t)m->correlation_id.external.value;
    v[6] = (int64_t)m->start_timestamp;
    v[7] = (int64_t)m->range_id;
    v[8] = domain;
    v[9] = category;
    v[10] = m->color;
    v[11] = m->payload_type;
    v[12] = (int64_t)m->payload;
    v[13] = msg;
    if (db_row_done(db, ST_MARKER) != 0)
        return -1;

    thread_state *t = thread_of(db, m->thread_id, m->start_timestamp);
    if (t == NULL)
        return -1;
    open_range r = {m->start_timestamp, m->correlation_id.internal, m->payload, m->range_id,
                    m->thread_id, msg, domain, category, m->color, m->payload_type};
    switch (m->operation) {
    case UPTI_MARKER_API_RANGE_PUSH:
        if (uo_grow(&t->stack, &t->cap, t->depth + 1, sizeof *t->stack, 8) != 0)
            return -1;
        t->stack[t->depth++] = r;
        break;
    case UPTI_MARKER_API_RANGE_POP:
        if (t->depth > 0) {
            t->depth--;
            return db_add_region(db, &t->stack[t->depth], m->thread_id, 0, t->depth,
                              m->start_timestamp);
        }
        break;
    case UPTI_MARKER_API_RANGE_START: {
        uint64_t *stop = upti_map_find(&db->stops, m->range_id);
        if (stop != NULL) { /* the stop was delivered first (another thread) */
            uint64_t end = *stop, *etid = upti_map_find(&db->stop_tids, m->range_id);
            uint64_t end_tid = etid ? *etid : m->thread_id;
            upti_map_remove(&db->stops, m->range_id);
            upti_map_remove(&db->stop_tids, m->range_id);
            return db_add_region(db, &r, end_tid, 1, 0, end);
        }
        if (uo_grow(&db->pending, &db->pendcap, db->npending + 1, sizeof *db->pending, 16) != 0)
            return -1;
        db->pending[db->npending] = r;
        uint64_t *v = upti_map_insert(&db->ranges, m->range_id, NULL);
        if (v != NULL)
            *v = ++db->npending;
        break;
    }
    case UPTI_MARKER_API_RANGE_STOP: {
        uint64_t *v = upti_map_find(&db->ranges, m->range_id);
        if (v == NULL) {
            uint64_t *s = upti_map_insert(&db->stops, m->range_id, NULL);
            uint64_t *e = upti_map_insert(&db->stop_tids, m->range_id, NULL);
            if (s)
                *s = m->start_timestamp;
            if (e)
                *e = m->thread_id;
            break;
        }
        size_t idx = *v - 1;
        upti_map_remove(&db->ranges, m->range_id);
        open_range done = db->pending[idx];
        /* Keep pending dense: move the last entry into the hole. */
        db->npending--;
        if (idx != db->npending) {
            db->pending[idx] = db->pending[db->npending];
            uint64_t *mv = upti_map_find(&db->ranges, db->pending[idx].range_id);
            if (mv)
                *mv = idx + 1;
        }
        return db_add_region(db, &done, m->thread_id, 1, 0, m->start_timestamp);
    }
    case UPTI_MARKER_API_NAME_THREAD:
        t->name_id = msg;
        break;
    case UPTI_MARKER_API_NAME_CATEGORY: {
        sqlite3_stmt *c = db->st[ST_CATEGORY];
        sqlite3_bind_int64(c, 1, db->process_id);
        sqlite3_bind_int64(c, 2, domain);
        sqlite3_bind_int64(c, 3, category);
        sqlite3_bind_int64(c, 4, msg);
        return db_step(db, c);
    }
    default:
        break;
    }
    return 0;
}

static void note_queue(uo_db *db, uint64_t queue, uint64_t agent, uint64_t context)
{
    int inserted;
    if (upti_map_insert(&db->queues, queue, &inserted) == NULL || !inserted)
        return;
    sqlite3_stmt *st = db->st[ST_QUEUE];
    sqlite3_bind_int64(st, 1, db->process_id);
    db_bind_u64(st, 2, queue);
    db_bind_u64(st, 3, agent);
    db_bind_u64(st, 4, context);
    db_step(db, st);
}

static int keep_kernel(uo_db *db, int64_t name_id)
{
    if (db->filter_fn == NULL && db->iterations == NULL)
        return 1;
    int inserted;
    uint64_t *v = upti_map_insert(&db->filter, (uint64_t)name_id, &inserted);
    if (v == NULL)
        return 1;
    if (inserted)
        *v = db->filter_fn == NULL ||
                     db->filter_fn(db->filter_data, name_id, uo_db_string(db, name_id)) ? 1 : 2;
    int keep = (*v & 3) == 1;
    if (keep && db->iterations != NULL) {
        *v += 4; /* this name's executions that passed the name filter, from 1 */
        keep = upti_iteration_in_range(db->iterations, *v >> 2);
    }
    if (!keep)
        db->filtered++;
    return keep;
}

static int add_record(uo_db *db, uint32_t kind, const void *record);

/* An API call's row, and its arguments' that came before it (db open, in its transaction). */
static int add_api_call(uo_db *db, const uo_api_call *c)
{
    thread_of(db, c->thread_id, c->start);
    int64_t domain = db_domain_id(db, c->kind, c->operation);
    int64_t op = db_op_id(db, c->kind, c->operation);
    int64_t *v = db_row_new(db, ST_API);
    if (v == NULL)
        return -1;
    v[0] = db->process_id;
    v[1] = (int64_t)c->thread_id;
    v[2] = domain;
    v[3] = op;
    v[4] = (int64_t)c->correlation_id;
    v[5] = (int64_t)c->external_id;
    v[6] = (int64_t)c->start;
    v[7] = (int64_t)c->end;
    v[8] = c->result;
    int64_t api_id = uo_arg_link_add_call(&db->args, c->correlation_id);
    if (db_row_done(db, ST_API) != 0)
        return -1;
    /* Its arguments came first (the SDK writes them in its EXIT callbacks). */
    if (db->args.num_waiting > 0 &&
        uo_arg_link_release(&db->args, c->correlation_id, 0, api_id, db_write_arg, db) != 0)
        return -1;
    return 0;
}

int uo_db_add_api_call(uo_db *db, const uo_api_call *c)
{
    if (!upti_api_kind(c->kind) || db == NULL || db->failed || db_begin(db) != 0)
        return -1;
    if (add_api_call(db, c) != 0)
        return -1;
    db->txn_records++;
    return 0;
}

/* One arg row (uo_arg_write_fn); api_id 0: its call is joined at the close. */
int db_write_arg(void *ctx, const uo_waiting_arg *a, int64_t api_id)
{
    uo_db *db = ctx;
    int64_t *v = db_row_new(db, ST_ARG);
    if (v == NULL)
        return -1;
    v[0] = api_id;
    v[1] = (int64_t)a->correlation_id;
    v[2] = a->position;
    v[3] = a->type_id;
    v[4] = a->name_id;
    int owned = 0;
    const char *text = a->value != NULL ? uo_utf8_sanitize(a->value, &owned) : NULL;
    if (uo_rows_set_text(&db->batch[ST_ARG], text) != 0)
        db_rows_failed(db);
    if (owned)
        free((void *)text);
    return db_row_done(db, ST_ARG);
}

int uo_db_add_record(uo_db *db, uint32_t kind, const void *record)
{
    uint64_t filtered = db != NULL ? db->filtered : 0;
    int rc = add_record(db, kind, record);
    if (rc == 0 && db->filtered == filtered)
        db->txn_records++;
    return rc;
}

static int add_record(uo_db *db, uint32_t kind, const void *record)
{
    if (db == NULL || db->failed)
        return -1;
    if (db_begin(db) != 0)
        return -1;
    const upti_record_prefix_t *p = record;
    switch (kind) {
    case UPTI_TRACING_KIND_OPENCL_API:
    case UPTI_TRACING_KIND_VULKAN_API:
    case UPTI_TRACING_KIND_RUNTIME_API: {
        uo_api_call c = uo_api_call_of(kind, record);
        return add_api_call(db, &c);
    }
    case UPTI_TRACING_KIND_MARKER_API:
        return add_marker(db, record);
    case UPTI_TRACING_KIND_KERNEL_DISPATCH: {
        const upti_buffer_tracing_kernel_dispatch_record_t *k = record;
        int64_t name = uo_db_intern(db, k->kernel_name ? k->kernel_name : "<unknown kernel>");
        if (!keep_kernel(db, name))
            return 0;
        note_queue(db, k->queue_id, k->agent_id.handle, k->runtime_context);
        int64_t op = db_op_id(db, kind, k->operation);
        int64_t *v = db_row_new(db, ST_KERNEL);
        if (v == NULL)
            return -1;
        v[0] = db->process_id;
        v[1] = (int64_t)k->thread_id;
        v[2] = (int64_t)k->agent_id.handle;
        v[3] = (int64_t)k->queue_id;
        v[4] = (int64_t)k->runtime_context;
        v[5] = (int64_t)k->kernel_id;
        v[6] = name;
        v[7] = op;
        v[8] = (int64_t)k->correlation_id.internal;
        v[9] = (int64_t)k->correlation_id.external.value;
        v[10] = k->work_dim;
        for (int i = 0; i < 3; i++) {
            v[11 + i] = (int64_t)k->global_size[i];
            v[14 + i] = (int64_t)k->local_size[i];
            v[17 + i] = (int64_t)k->global_offset[i];
        }
        v[20] = (int64_t)k->queued_timestamp;
        v[21] = (int64_t)k->submit_timestamp;
        v[22] = (int64_t)k->start_timestamp;
        v[23] = (int64_t)k->end_timestamp;
        v[24] = k->status;
        return db_row_done(db, ST_KERNEL);
    }
    case UPTI_TRACING_KIND_MEMORY_COPY: {
        const upti_buffer_tracing_memory_copy_record_t *m = record;
        note_queue(db, m->queue_id, m->agent_id.handle, m->runtime_context);
        int64_t op = db_op_id(db, kind, m->operation);
        int64_t direction = db_table_id(db, uo_db_directions, db->direction_ids, 5, m->direction);
        int64_t *v = db_row_new(db, ST_COPY);
        if (v == NULL)
            return -1;
        v[0] = db->process_id;
        v[1] = (int64_t)m->thread_id;
        v[2] = (int64_t)m->agent_id.handle;
        v[3] = (int64_t)m->queue_id;
        v[4] = (int64_t)m->runtime_context;
        v[5] = op;
        v[6] = direction;
        v[7] = (int64_t)m->src_agent_id.handle;
        v[8] = (int64_t)m->dst_agent_id.handle;
        v[9] = (int64_t)m->bytes;
        v[10] = (int64_t)m->correlation_id.internal;
        v[11] = (int64_t)m->correlation_id.external.value;
        v[12] = (int64_t)m->queued_timestamp;
        v[13] = (int64_t)m->submit_timestamp;
        v[14] = (int64_t)m->start_timestamp;
        v[15] = (int64_t)m->end_timestamp;
        v[16] = m->status;
        return db_row_done(db, ST_COPY);
    }
    case UPTI_TRACING_KIND_MEMORY_ALLOCATION: {
        const upti_buffer_tracing_memory_allocation_record_t *m = record;
        thread_of(db, m->thread_id, m->timestamp);
        int64_t op = db_op_id(db, kind, m->operation);
        int64_t type = db_table_id(db, uo_db_alloc_types, db->alloc_type_ids, 10, m->type);
        int64_t *v = db_row_new(db, ST_ALLOC);
        if (v == NULL)
            return -1;
        v[0] = db->process_id;
        v[1] = (int64_t)m->thread_id;
        v[2] = op;
        v[3] = (int64_t)m->agent_id.handle;
        v[4] = (int64_t)m->runtime_context;
        v[5] = type;
        v[6] = (int64_t)m->handle;
        v[7] = (int64_t)m->bytes; /* m->size is the record's own size */
        v[8] = (int64_t)m->flags;
        v[9] = (int64_t)m->correlation_id.internal;
        v[10] = (int64_t)m->correlation_id.external.value;
        v[11] = (int64_t)m->timestamp;
        return db_row_done(db, ST_ALLOC);
    }
    case UPTI_TRACING_KIND_CODE_OBJECT: {
        const upti_buffer_tracing_code_object_record_t *c = record;
        int symbol = c->operation == UPTI_CODE_OBJECT_KERNEL_SYMBOL;
        upti_map *rows = symbol ? &db->symbols : &db->objects;
        uint64_t key = symbol ? c->kernel_id : c->code_object_id;
        if (c->phase == UPTI_CALLBACK_PHASE_UNLOAD) {
            uint64_t *row = upti_map_find(rows, key);
            if (row == NULL)
                return 0;
            sqlite3_stmt *st = db->st[symbol ? ST_UNLOAD_SYMBOL : ST_UNLOAD_OBJECT];
            db_bind_u64(st, 1, c->timestamp);
            db_bind_u64(st, 2, *row);
            upti_map_remove(rows, key);
            return db_step(db, st);
        }
        int64_t name = uo_db_intern(db, c->name);
        sqlite3_stmt *st = db->st[symbol ? ST_SYMBOL : ST_CODE_OBJECT];
        int i = 1;
        sqlite3_bind_int64(st, i++, db->process_id);
        if (symbol)
            db_bind_u64(st, i++, c->kernel_id);
        db_bind_u64(st, i++, c->code_object_id);
        db_bind_u64(st, i++, c->runtime_context);
        sqlite3_bind_int64(st, i++, name);
        db_bind_u64(st, i++, c->timestamp);
        if (db_step(db, st) != 0)
            return -1;
        uint64_t *row = upti_map_insert(rows, key, NULL);
        if (row)
            *row = (uint64_t)sqlite3_last_insert_rowid(db->db);
        return 0;
    }
    default:
        (void)p;
        return 0;
    }
}

int uo_db_add_agent(uo_db *db, const upti_agent_t *a)
{
    if (db == NULL || db->failed)
        return -1;
    if (db_begin(db) != 0)
        return -1;
    sqlite3_stmt *st = db->st[ST_AGENT];
    const char *texts[4] = {a->runtime, a->name, a->vendor, a->driver_version};
    char *clean[4];
    for (int i = 0; i < 4; i++) {
        int owned;
        const char *c = uo_utf8_sanitize(texts[i], &owned);
        clean[i] = owned ? (char *)c : NULL;
        sqlite3_bind_text(st, 4 + i, c, -1, SQLITE_TRANSIENT);
        if (owned)
            free(clean[i]);
    }
    sqlite3_bind_int64(st, 1, db->process_id);
    db_bind_u64(st, 2, a->id.handle);
    sqlite3_bind_text(st, 3, a->type < 4 ? uo_db_agent_types[a->type] : "UNKNOWN", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, a->compute_units);
    db_bind_u64(st, 9, a->global_memory_bytes);
    db_bind_u64(st, 10, a->runtime_handle);
    sqlite3_bind_int64(st, 11, a->node_id);
    return db_step(db, st);
}

int uo_db_add_arg(uo_db *db, uint64_t correlation_id, uint32_t position, const char *type,
                  const char *name, const char *value)
{
    if (db == NULL || db->failed || db_begin(db) != 0)
        return -1;
    int64_t type_id = db_intern_again(db, &db->arg_type_ids[position % ARG_POSITIONS], type);
    int64_t name_id = db_intern_again(db, &db->arg_name_ids[position % ARG_POSITIONS], name);
    int64_t api_id = uo_arg_link_find_call(&db->args, correlation_id);
    if (api_id != 0) {
        uo_waiting_arg a = {correlation_id, position, type_id, name_id, value, 0};
        return db_write_arg(db, &a, api_id);
    }
    int rc = uo_arg_link_wait(&db->args, correlation_id, position, type_id, name_id, value);
    if (rc < 0)
        db_keep_error(db, "out of memory");
    else if (rc > 0 && uo_arg_link_release(&db->args, 0, 1, 0, db_write_arg, db) != 0)
        return -1;
    return db->failed ? -1 : 0;
}
