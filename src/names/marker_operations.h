/* SPDX-License-Identifier: MIT */
/* The marker API's operations (uptx), one line each: libupti makes its wrappers
 * from it (src/program/sdk/marker_tracing.c), the names library its names and
 * argument printer (marker_names.c). */
#ifndef UPTI_NAMES_MARKER_OPERATIONS_H
#define UPTI_NAMES_MARKER_OPERATIONS_H

/*
 * The marker operations, one line each; every wrapper below is made from it.
 *
 *   X(name, OP, RET, PARAMS, ARGS, MESSAGE, VALUE, SET_ARGS, TO_BUFFERS)
 *
 * name        the uptx function without its prefix; the dispatch table's name##_fn
 * OP          its operation, UPTI_MARKER_API_##OP
 * RET         its result: INT, U64 or VOID (RET_* below say how each is declared,
 *             kept and returned)
 * PARAMS      its parameters in parentheses, () if none; ARGS their names
 * MESSAGE     the text its record carries (NULL if none)
 * VALUE       the record's value: a range id, or NAME_CATEGORY's category
 * SET_ARGS    fills the callback payload's arguments ((void)0 if none)
 * TO_BUFFERS  FAST: the record is written before the call (marker_fast()), the
 *             call is then a tail call; AFTER_CALL: the record carries the result
 *             (`ret`, in VALUE), so it is written after the call.
 *
 * uptx_profiler_pause and uptx_profiler_resume (no argument, no result) share one
 * wrapper below the table.
 */
#define MARKER_OPERATIONS(X)                                                                    \
    X(range_push, RANGE_PUSH, INT, (const char *message), (message), message, 0,                \
      payload.args.range_push.message = message, FAST)                                          \
    X(range_pop, RANGE_POP, INT, (), (), NULL, 0, (void)0, FAST)                                \
    X(range_start, RANGE_START, U64, (const char *message), (message), message, ret,            \
      payload.args.range_start.message = message, AFTER_CALL)                                   \
    X(range_stop, RANGE_STOP, VOID, (uint64_t id), (id), NULL, id,                              \
      payload.args.range_stop.id = id, FAST)                                                    \
    X(mark, MARK, VOID, (const char *message), (message), message, 0,                           \
      payload.args.mark.message = message, FAST)                                                \
    X(name_thread, NAME_THREAD, VOID, (const char *name), (name), name, 0,                      \
      payload.args.name_thread.name = name, FAST)                                               \
    X(name_category, NAME_CATEGORY, VOID, (uint32_t category, const char *name),                \
      (category, name), name, category,                                                         \
      (payload.args.name_category.category = category, payload.args.name_category.name = name), \
      FAST)

#endif
