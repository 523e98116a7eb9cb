/* SPDX-License-Identifier: MIT */
/* uptx — UPTI's marker API for applications: ranges, marks, thread and category names.
 *
 * Link -luptx. With a UPTI tool present, calls are traced as kind
 * UPTI_TRACING_KIND_MARKER_API. All functions are thread-safe, and each
 * returns the same values whether a tool is present or not.
 *
 * How a call is made. By default the functions below are `static inline`:
 * each loads the pointer uptx_active, exported by libuptx.so, and
 *  - when it is NULL — libuptx has registered with UPTI and nothing wraps its
 *    dispatch table: no tool, the normal state of an untraced program — does
 *    the work inline, without any call: a per-thread counter for
 *    uptx_range_push/uptx_range_pop (uptx_thread_depth), an atomic counter for
 *    uptx_range_start (uptx_next_range_id), nothing for the others;
 *  - otherwise calls the entry of the dispatch table it points to
 *    (uptx/uptx_table.h): before the first call, libuptx's init stubs, which
 *    register the table with UPTI (tool discovery; calls from other threads
 *    meanwhile wait, then are traced); after it, with a tool, the table UPTI's
 *    tracing wrappers and the tools' own entries were installed in.
 *
 * libuptx.so also exports every function below as a real function of the same
 * name and behaviour, for dlsym() and foreign-function interfaces, for
 * binaries built against earlier versions of this header, and for compilers
 * that cannot use the inline definitions: define UPTX_NO_INLINE before
 * including this header to declare and call those instead. (With the inline
 * definitions, &uptx_range_push is the address of the including file's own
 * copy; dlsym(RTLD_DEFAULT, "uptx_range_push") gives libuptx's.) The header needs
 * the GNU C extensions GCC and Clang provide (`__atomic` builtins, `__thread`,
 * attributes) and is valid C (C99 and later) and C++.
 */
#ifndef UPTX_H
#define UPTX_H

#include <stdint.h>
#include <uptx/uptx_table.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks what libuptx.so exports (default visibility). */
#define UPTX_API __attribute__((visibility("default")))

/*
 * UPTX_FN: how the functions below are declared and defined. `static inline`
 * by default; with UPTX_NO_INLINE, declarations of libuptx.so's exported
 * functions; with UPTX_EXPORT_DEFINITIONS (libuptx's own source only), the
 * definitions of those exported functions, from the same bodies.
 */
#if defined(UPTX_EXPORT_DEFINITIONS)
#define UPTX_FN UPTX_API
#define UPTX_DEFINE_BODIES 1
#elif defined(UPTX_NO_INLINE)
#define UPTX_FN UPTX_API
#define UPTX_DEFINE_BODIES 0
#else
#define UPTX_FN static inline
#define UPTX_DEFINE_BODIES 1
#endif

/* ---- the functions ---- */

/** Opens a nested range on the calling thread. Returns the new depth - 1 (0 for the outermost). */
UPTX_FN int uptx_range_push(const char *message);
/** Closes the innermost range of the calling thread. Returns the remaining depth, or -1 if none was open. */
UPTX_FN int uptx_range_pop(void);
/** Starts a range that may end on any thread. Returns its id (never 0). */
UPTX_FN uint64_t uptx_range_start(const char *message);
/** Ends the range started with id. */
UPTX_FN void uptx_range_stop(uint64_t id);
/** An instant event. */
UPTX_FN void uptx_mark(const char *message);
/** Names the calling thread in traces. */
UPTX_FN void uptx_name_thread(const char *name);
/** Names a category id in traces. */
UPTX_FN void uptx_name_category(uint32_t category, const char *name);
/**
 * Asks the profiler to stop recording until uptx_profiler_resume(), as
 * roctxProfilerPause() and cudaProfilerStop() do. Process-wide: what any
 * thread does meanwhile is not recorded; pauses do not nest (a second pause
 * is a pause). Under `upti run` it switches UPTI's contexts off, which is
 * cheap; the runtimes keep running. The call itself is the last record
 * before the pause. Without a tool, it does nothing.
 *
 *     uptx_profiler_pause();   // warm-up, not recorded
 *     warm_up();
 *     uptx_profiler_resume();  // recorded from here
 *
 * With `upti run --start-paused`, nothing is recorded until the first
 * uptx_profiler_resume() (docs/cli.md).
 */
UPTX_FN void uptx_profiler_pause(void);
/** Resumes recording after uptx_profiler_pause() (or `upti run --start-paused`); the call is
 *  the first record of the resumed recording. Without a tool, or when not paused, it does nothing. */
UPTX_FN void uptx_profiler_resume(void);

/* ---- libuptx.so's state read by the inline functions ----
 * Part of libuptx's ABI so that the inline functions can reach them; an
 * application reads or writes them only through the functions above. */

/**
 * The dispatch table the functions call through: libuptx's init stubs until
 * the first call has registered with UPTI, then NULL if nothing wrapped the
 * table (no tool: the work is done inline), else the wrapped table. Read with
 * an acquire load; written only by libuptx.
 */
UPTX_API extern const uptx_dispatch_table_t *uptx_active;
/** The calling thread's range depth: the number of uptx_range_push not yet popped. */
UPTX_API extern __thread int uptx_thread_depth __attribute__((tls_model("initial-exec")));
/** The id the next uptx_range_start returns (starts at 1; incremented atomically). */
UPTX_API extern uint64_t uptx_next_range_id;

#if UPTX_DEFINE_BODIES
/* Loads entry FIELD of table T (entries are written atomically by UPTI and tools). */
#define UPTX_ENTRY_(t, field) __atomic_load_n(&(t)->field, __ATOMIC_RELAXED)
/* The active table, or NULL when there is no tool (the expected case). */
#define UPTX_ACTIVE_() __atomic_load_n(&uptx_active, __ATOMIC_ACQUIRE)
#define UPTX_TRACED_(t) __builtin_expect((t) != NULL, 0)

/* What the functions with a result do without a tool, written once: the inline
 * bodies below and libuptx's own implementation (src/program/marker/uptx.c, the table a
 * tool's wrappers call into) both use these. Not part of the API. The others
 * do nothing without a tool. */
static inline int uptx_untraced_range_push_(const char *message)
{
    (void)message;
    return uptx_thread_depth++;
}

static inline int uptx_untraced_range_pop_(void)
{
    if (uptx_thread_depth == 0)
        return -1;
    return --uptx_thread_depth;
}

static inline uint64_t uptx_untraced_range_start_(const char *message)
{
    (void)message;
    return __atomic_fetch_add(&uptx_next_range_id, 1, __ATOMIC_RELAXED);
}

UPTX_FN int uptx_range_push(const char *message)
{
    const uptx_dispatch_table_t *t = UPTX_ACTIVE_();
    if (UPTX_TRACED_(t))
        return UPTX_ENTRY_(t, range_push_fn)(message);
    return uptx_untraced_range_push_(message);
}

UPTX_FN int uptx_range_pop(void)
{
    const uptx_dispatch_table_t *t = UPTX_ACTIVE_();
    if (UPTX_TRACED_(t))
        return UPTX_ENTRY_(t, range_pop_fn)();
    return uptx_untraced_range_pop_();
}

UPTX_FN uint64_t uptx_range_start(const char *message)
{
    const uptx_dispatch_table_t *t = UPTX_ACTIVE_();
    if (UPTX_TRACED_(t))
        return UPTX_ENTRY_(t, range_start_fn)(message);
    return uptx_untraced_range_start_(message);
}

UPTX_FN void uptx_range_stop(uint64_t id)
{
    const uptx_dispatch_table_t *t = UPTX_ACTIVE_();
    if (UPTX_TRACED_(t))
        UPTX_ENTRY_(t, range_stop_fn)(id);
}

UPTX_FN void uptx_mark(const char *message)
{
    const uptx_dispatch_table_t *t = UPTX_ACTIVE_();
    if (UPTX_TRACED_(t))
        UPTX_ENTRY_(t, mark_fn)(message);
}

UPTX_FN void uptx_name_thread(const char *name)
{
    const uptx_dispatch_table_t *t = UPTX_ACTIVE_();
    if (UPTX_TRACED_(t))
        UPTX_ENTRY_(t, name_thread_fn)(name);
}

UPTX_FN void uptx_name_category(uint32_t category, const char *name)
{
    const uptx_dispatch_table_t *t = UPTX_ACTIVE_();
    if (UPTX_TRACED_(t))
        UPTX_ENTRY_(t, name_category_fn)(category, name);
}

/* 1 if table T, of T->size bytes, holds entry FIELD. Checked per entry, not
 * against sizeof(uptx_dispatch_table_t): a table built by an older libuptx.so
 * (version 1 has no profiler entries) is used for the entries it has, and a
 * later header may append entries without refusing this release's tables.
 * Calls to an entry a table lacks take the no-tool path. */
#define UPTX_HAS_ENTRY_(t, field) \
    ((t)->size >= offsetof(uptx_dispatch_table_t, field) + sizeof((t)->field))

UPTX_FN void uptx_profiler_pause(void)
{
    const uptx_dispatch_table_t *t = UPTX_ACTIVE_();
    if (UPTX_TRACED_(t) && UPTX_HAS_ENTRY_(t, profiler_pause_fn))
        UPTX_ENTRY_(t, profiler_pause_fn)();
}

UPTX_FN void uptx_profiler_resume(void)
{
    const uptx_dispatch_table_t *t = UPTX_ACTIVE_();
    if (UPTX_TRACED_(t) && UPTX_HAS_ENTRY_(t, profiler_resume_fn))
        UPTX_ENTRY_(t, profiler_resume_fn)();
}

#undef UPTX_HAS_ENTRY_
#undef UPTX_ENTRY_
#undef UPTX_ACTIVE_
#undef UPTX_TRACED_
#endif /* UPTX_DEFINE_BODIES */

#ifdef __cplusplus
}
#endif

#endif
