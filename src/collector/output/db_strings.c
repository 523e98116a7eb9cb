/* SPDX-License-Identifier: MIT */
/* The database writer's interned strings (db_internal.h): one id per text,
 * found by hash; the names of kinds, operations and other small tables. */
#include "db_internal.h"

#include <upti/names.h>

#include "fnv1a.h"

#include <stdlib.h>
#include <string.h>

int64_t uo_db_intern(uo_db *db, const char *raw)
{
    if (raw == NULL)
        return 0;
    uint64_t h = upti_fnv1a64(UPTI_FNV1A64_BASIS, raw);
    uint64_t *slot;
    for (size_t pos = 0; (slot = upti_map_next(&db->str_ids, h, &pos)) != NULL;)
        if (strcmp(db->text[*slot], raw) == 0)
            return (int64_t)*slot;
    if (uo_grow(&db->text, &db->strcap, db->nstr + 2, sizeof *db->text, 1024) != 0)
        return 0;
    size_t len = strlen(raw);
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return 0;
    slot = upti_map_add(&db->str_ids, h);
    if (slot == NULL) {
        free(copy);
        return 0;
    }
    memcpy(copy, raw, len + 1);
    int64_t id = (int64_t)++db->nstr;
    db->text[id] = copy; /* the raw bytes are the key; the database gets valid UTF-8 */
    *slot = (uint64_t)id;

    int owned;
    const char *clean = uo_utf8_sanitize(copy, &owned);
    int64_t *v = db_row_new(db, ST_STRING);
    if (v != NULL) {
        v[0] = id;
        if (uo_rows_set_text(&db->batch[ST_STRING], clean) != 0)
            db_rows_failed(db);
        db_row_done(db, ST_STRING);
    }
    if (owned)
        free((void *)clean);
    return id;
}

/* uo_db_intern(raw), tried first against the string of *last (the id it
 * returned last time at this place), which is then raw's id: the same id as
 * uo_db_intern's (a string has one id), without hashing raw. For what
 * repeats from one record to the next: an argument's type and name at its
 * position, a marker's message. Callgrind, converting a
 * --args spool (103k calls, 427k arguments): 2,751 M -> 2,664 M instructions. */
int64_t db_intern_again(uo_db *db, int64_t *last, const char *raw)
{
    if (raw != NULL && *last != 0 && strcmp(db->text[*last], raw) == 0)
        return *last;
    return *last = uo_db_intern(db, raw);
}

const char *uo_db_string(uo_db *db, int64_t id)
{
    return (id > 0 && (size_t)id <= db->nstr) ? db->text[id] : NULL;
}

static int64_t op_id_slow(uo_db *db, uint32_t kind, uint32_t op)
{
    int inserted;
    uint64_t *v = upti_map_insert(&db->op_ids, ((uint64_t)kind << 32) | op, &inserted);
    if (v == NULL)
        return 0;
    if (inserted) {
        const char *name = db->op_name ? db->op_name(kind, op) : NULL;
        char tmp[32];
        if (name == NULL) {
            snprintf(tmp, sizeof tmp, "operation %u", op);
            name = tmp;
        }
        *v = (uint64_t)uo_db_intern(db, name);
    }
    return (int64_t)*v;
}

int uo_db_set_operation_name(uo_db *db, uint32_t kind, uint32_t op, const char *domain,
                             const char *name)
{
    int inserted;
    uint64_t key = ((uint64_t)kind << 32) | op;
    uint64_t *v = upti_map_insert(&db->op_ids, key, &inserted);
    uint64_t *d = v != NULL ? upti_map_insert(&db->op_domains, key, &inserted) : NULL;
    if (d == NULL)
        return -1;
    *v = (uint64_t)uo_db_intern(db, name);
    *d = (uint64_t)uo_db_intern(db, domain);
    return *v != 0 && *d != 0 ? 0 : -1;
}

/* The string id of the api domain of RUNTIME_API operation op: its runtime's name where
 * one was set (uo_db_set_operation_name), else the kind's name. */
int64_t db_runtime_domain_id(uo_db *db, uint32_t op)
{
    const uint64_t *d =
        upti_map_find(&db->op_domains, ((uint64_t)UPTI_TRACING_KIND_RUNTIME_API << 32) | op);
    return d != NULL ? (int64_t)*d : db_kind_id(db, UPTI_TRACING_KIND_RUNTIME_API);
}

int64_t db_op_id_lookup(uo_db *db, uint32_t kind, uint32_t op)
{
    int64_t id = op_id_slow(db, kind, op);
    if (kind < OP_KINDS && op < OP_OPS)
        db->op_small[kind][op] = id;
    return id;
}

/* The string id of names[v] (or of v in decimal); ids[v] keeps it. */
int64_t db_table_id(uo_db *db, const char *const *names, int64_t *ids, size_t n, uint32_t v)
{
    if (v < n && ids[v] != 0)
        return ids[v];
    char tmp[32];
    const char *name = tmp;
    if (v < n)
        name = names[v];
    else
        snprintf(tmp, sizeof tmp, "%u", v);
    int64_t id = uo_db_intern(db, name);
    if (v < n)
        ids[v] = id;
    return id;
}

const char *uo_upti_operation_name(uint32_t kind, uint32_t operation)
{
    const char *name = NULL;
    if (upti_get_tracing_operation_name((upti_tracing_kind_t)kind, operation, &name) !=
        UPTI_STATUS_SUCCESS)
        return NULL;
    return name;
}

/* The string id of a kind's name, from the names library (src/names/names.c: the one
 * table of kind names, which the CLI and the tool use too); an unknown kind in decimal. */
int64_t db_kind_id_lookup(uo_db *db, uint32_t kind)
{
    size_t n = sizeof db->kind_ids / sizeof db->kind_ids[0];
    const char *name = NULL;
    char tmp[32];
    if (upti_get_tracing_kind_name((upti_tracing_kind_t)kind, &name) != UPTI_STATUS_SUCCESS ||
        name == NULL) {
        snprintf(tmp, sizeof tmp, "%u", kind);
        name = tmp;
    }
    int64_t id = uo_db_intern(db, name);
    if (kind < n)
        db->kind_ids[kind] = id;
    return id;
}
