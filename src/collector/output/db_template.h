/* SPDX-License-Identifier: MIT */
/* Internal: how a bulk database is set up, and the empty small one that every
 * small trace starts from, made once when UPTI is built (db_template_gen.c). */
#ifndef UPTI_OUTPUT_DB_TEMPLATE_H
#define UPTI_OUTPUT_DB_TEMPLATE_H

#include "db_statements.h"
#include "out_files.h"
#include "schema.h"
#include "table_pages.h"

#include <stddef.h>

/* Written after the fact (uo_db_create_bulk): no journal at all, the file is
 * PATH.part until it is complete. Pages of 64 KiB, 4 KiB for a small trace
 * (uo_db_create_bulk_sized; set first, in create()). A small cache (2 MiB): pages are appended
 * and written out once; a bigger cache only adds fresh memory to fault in
 * (measured: 1.46 s of CPU for 3.58 M records at 2 MiB, 1.94 s at 32 MiB).
 * temp_store=FILE: a sorter (the join of unlinked arguments at the close)
 * keeps its keys in one growing block instead of one malloc per key. Only
 * page_size, application_id and the schema are kept in the file; the other
 * pragmas are set on each connection. */
#define UO_PRAGMAS_BULK                                                                           \
    UO_PRAGMAS_CONNECTION " PRAGMA application_id=" UO_APPLICATION_ID_SQL ";"                     \
    " PRAGMA locking_mode=EXCLUSIVE;"

/* The pragmas of a connection to a bulk database that only set the
 * connection (also for one opened again, uo_pages_attach). */
#define UO_PRAGMAS_CONNECTION                                                                     \
    " PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=FILE;"                  \
    " PRAGMA cache_size=-2048;"

/* The schema, in one transaction, on a database whose pragmas are set. */
#define UO_SCHEMA_SQL "BEGIN;" UO_SCHEMA_TABLES UO_SCHEMA_VIEWS UO_SCHEMA_INDEXES

/* What makes the empty small database: 4 KiB pages, the bulk pragmas, the schema. */
#define UO_TEMPLATE_SQL "PRAGMA page_size=4096;" UO_PRAGMAS_BULK UO_SCHEMA_SQL "; COMMIT"

/* The file that UO_TEMPLATE_SQL makes, byte for byte, as the build made it
 * (generated: db_template.c in the build folder). Creating the schema took a
 * short `upti run` about 3 ms of CPU per run; writing these bytes takes one
 * write(2). */
extern const unsigned char uo_db_template[];
extern const size_t uo_db_template_size;

/* Its page-written tables as uo_pages_table read them from it when the build
 * made it, per statement (db_statements.h): a database made from the template
 * sets them up with uo_pages_table_set, without a query. tcols 0: the
 * statement's rows are inserted (not batched, or not a table that pages can
 * hold). */
extern const uo_table_setup uo_db_template_tables[ST_COUNT];

#endif
