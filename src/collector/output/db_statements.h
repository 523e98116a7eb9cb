/* SPDX-License-Identifier: MIT */
/* Internal: the statements that write the rows of a database's tables, shared
 * by the writer (db.c) and the build step that makes the empty small database
 * and what its page-written tables need to know (db_template_gen.c). */
#ifndef UPTI_OUTPUT_DB_STATEMENTS_H
#define UPTI_OUTPUT_DB_STATEMENTS_H

enum {
    ST_STRING,
    ST_API,
    ST_KERNEL,
    ST_COPY,
    ST_ALLOC,
    ST_MARKER,
    ST_REGION,
    ST_QUEUE,
    ST_CATEGORY,
    ST_CODE_OBJECT,
    ST_SYMBOL,
    ST_UNLOAD_OBJECT,
    ST_UNLOAD_SYMBOL,
    ST_AGENT,
    ST_ARG,
    ST_COUNT
};

/* The INSERT (or UPDATE) of each table. */
extern const char *const uo_db_statements[ST_COUNT];

/* 1 for the tables written row by row as records arrive: batched (db_rows.h),
 * and in a bulk database written as pages where they can be (table_pages.h). */
int uo_db_batched(int st);

/* The parameters of statement st, and its text one (0-based), or -1. */
int uo_db_params(int st);
int uo_db_text_param(int st);

#endif
