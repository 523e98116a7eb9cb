/* SPDX-License-Identifier: MIT */
/* Internal: a thread that writes page-written rows (table_pages.h) while the
 * converting thread goes on decoding the next ones (db_rows.c, db.c).
 *
 * Why: converting a spool is two halves of about equal cost: reading records
 * and turning them into rows of values (the converting thread), and encoding
 * each row into its table's leaf pages, with its index entries, and writing
 * the full leaves (uo_tree_add). After a traced program has ended, what its
 * run left unconverted is what `upti run` makes its user wait for, while the
 * program's CPUs stand idle: with this thread the two halves run at once.
 *
 * How: a full batch of rows (uo_rows, UO_ROWS_BATCH rows) is copied into one
 * of a ring of jobs, which the writer takes in order and adds to its table's
 * tree, exactly as uo_rows_flush would have. Every tree and index of every
 * database given to one writer is the writer's alone until
 * uo_page_writer_sync() returns: the converting thread syncs before it
 * touches them itself (a close, an attach, a free). A job whose rows a tree
 * could not take sets its database's pages_failed (which its later jobs
 * then skip); the next flush of any of the database's tables, or its close,
 * fails it with uo_pages_error's message, where without a writer the flush
 * that failed did. One thread hands jobs over, syncs and stops a writer.
 */
#ifndef UPTI_OUTPUT_PAGE_WRITER_H
#define UPTI_OUTPUT_PAGE_WRITER_H

#include <stdint.h>

typedef struct uo_page_writer uo_page_writer;
struct uo_rows;

/**
 * Starts a writer thread, or returns NULL where it would not help (one CPU
 * to run on: upti_usable_cpus, the cgroup's quota included) or cannot be
 * made (no memory, no thread): rows are then written by the caller, as
 * without one.
 */
uo_page_writer *uo_page_writer_start(void);

/**
 * Hands r's pending rows (r->direct's) to the writer, waiting for a free job
 * first if all are taken, and empties r. 0, or -1 (out of memory: nothing
 * was handed over, r is as it was).
 */
int uo_page_writer_submit(uo_page_writer *w, struct uo_rows *r);

/** The jobs (batches) written so far (0 for NULL): for tests. */
uint64_t uo_page_writer_jobs(uo_page_writer *w);

/** Returns once every row handed over has been written (or has failed). */
void uo_page_writer_sync(uo_page_writer *w);

/** Syncs, ends the thread and frees w (NULL: nothing). */
void uo_page_writer_stop(uo_page_writer *w);

#endif
