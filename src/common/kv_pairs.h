/* SPDX-License-Identifier: MIT */
/* Internal: key\0value\0 pairs, in any order: the format of a run folder's
 * run.conf (written by `upti run` and by the tool for its helper collector,
 * src/program/recorder/collector_helper.c; read by `upti recover`, src/cli/run_collect.h
 * names the keys) and of the metadata `upti run` reads back from a database. */
#ifndef UPTI_COMMON_KV_PAIRS_H
#define UPTI_COMMON_KV_PAIRS_H

#include <stddef.h>
#include <stdio.h>

/** Appends the pair key, value to f (nothing when value is NULL). 0, or -1 on a write error. */
int upti_kv_put(FILE *f, const char *key, const char *value);

/** The value of key in the pairs data[0..len), or NULL (also for a pair cut short). */
const char *upti_kv_get(const char *data, size_t len, const char *key);

#endif
