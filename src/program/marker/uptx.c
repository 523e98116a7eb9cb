/* SPDX-License-Identifier: MIT */
/* libuptx: UPTI's marker runtime, built on seed 000's pattern:
 * public C function → dispatch table → implementation.
 *
 * The public functions are defined in <uptx/uptx.h>, inline by default (this
 * file compiles the same bodies as libuptx's exported functions, for dlsym
 * and UPTX_NO_INLINE users). Each loads uptx_active:
 *  - &g_stub_table at first: the stubs register g_table with UPTI through
 *    libupti-register, which (if a tool is present) installs UPTI's tracing
 *    wrappers in it and lets tools chain their own; then re-call;
 *  - NULL after registration if g_table still holds the implementation (no
 *    tool): the inline code does what the implementation would, with no call
 *    (impl_* below call the header's uptx_untraced_*_, the same code);
 *  - &g_table otherwise: one more load and an indirect call into the wrappers.
 */
#define UPTX_EXPORT_DEFINITIONS
#include <uptx/uptx.h>
#include <uptx/uptx_table.h>
#include <upti/register.h>

#include "compiler.h"

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- state shared with the inline functions (see uptx.h) ---- */

UPTX_API __thread int uptx_thread_depth __attribute__((tls_model("initial-exec")));
UPTX_API uint64_t uptx_next_range_id __attribute__((aligned(UPTI_CACHELINE))) = 1;

/* ---- implementation ---- */

/* The no-tool behaviour is <uptx/uptx.h>'s (uptx_untraced_*_), shared with the
 * inline bodies. */
static int impl_range_push(const char *message)
{
    return uptx_untraced_range_push_(message);
}

static int impl_range_pop(void)
{
    return uptx_untraced_range_pop_();
}

static uint64_t impl_range_start(const char *message)
{
    return uptx_untraced_range_start_(message);
}

static void impl_range_stop(uint64_t id)
{
    (void)id;
}

static void impl_mark(const char *message)
{
    (void)message;
}

static void impl_name_thread(const char *name)
{
    (void)name;
}

static void impl_name_category(uint32_t category, const char *name)
{
    (void)category;
    (void)name;
}

static void impl_profiler_pause(void)
{
}

static void impl_profiler_resume(void)
{
}

/* ---- dispatch table ---- */

/* Sets the library up (defined below, with its state). */
static const uptx_dispatch_table_t *initialize(void);

/* The stubs: entries of g_stub_table (what a call reaches before libuptx.so is
 * set up), not the public functions, which <uptx/uptx.h> declares. Each sets
 * the library up, then makes the call through the table it found. */
static int stub_range_push(const char *message)
{
    return initialize()->range_push_fn(message);
}

static int stub_range_pop(void)
{
    return initialize()->range_pop_fn();
}

static uint64_t stub_range_start(const char *message)
{
    return initialize()->range_start_fn(message);
}

static void stub_range_stop(uint64_t id)
{
    initialize()->range_stop_fn(id);
}

static void stub_mark(const char *message)
{
    initialize()->mark_fn(message);
}

static void stub_name_thread(const char *name)
{
    initialize()->name_thread_fn(name);
}

static void stub_name_category(uint32_t category, const char *name)
{
    initialize()->name_category_fn(category, name);
}

static void stub_profiler_pause(void)
{
    initialize()->profiler_pause_fn();
}

static void stub_profiler_resume(void)
{
    initialize()->profiler_resume_fn();
}

/* The implementation, unwrapped: what calls reach when no tool is present. */
static const uptx_dispatch_table_t g_impl_table = {
    sizeof(uptx_dispatch_table_t), impl_range_push, impl_range_pop,   impl_range_start,
    impl_range_stop,               impl_mark,       impl_name_thread, impl_name_category,
    impl_profiler_pause,           impl_profiler_resume,
};

/* The table UPTI receives: the implementation, wrapped by UPTI and tools in place. */
static uptx_dispatch_table_t g_table = {
    sizeof(uptx_dispatch_table_t), impl_range_push, impl_range_pop,   impl_range_start,
    impl_range_stop,               impl_mark,       impl_name_thread, impl_name_category,
    impl_profiler_pause,           impl_profiler_resume,
};

/* Until registration completes, public functions go through these stubs. */
static const uptx_dispatch_table_t g_stub_table = {
    sizeof(uptx_dispatch_table_t), stub_range_push, stub_range_pop,   stub_range_start,
    stub_range_stop,               stub_mark,       stub_name_thread, stub_name_category,
    stub_profiler_pause,           stub_profiler_resume,
};

/* The table public functions call through: the stubs, then NULL (no tool) or g_table.
 * Accessed with __atomic builtins only (the header reads it from C and C++). */
UPTX_API const uptx_dispatch_table_t *uptx_active = &g_stub_table;

enum { FRESH, STARTED, COMPLETE };
static _Atomic int g_state = FRESH;
static UPTI_TLS int t_initializing;

/* The registering thread leaves STARTED: the threads waiting for it go on. */
static void set_state(int state)
{
    atomic_store(&g_state, state);
    (void)syscall(SYS_futex, (void *)&g_state, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Sleeps while another thread registers (STARTED), 1 ms at most: whether this
 * thread may wait changes over time (upti_register_wait_allowed). Waiting
 * threads called sched_yield() in a loop before, and took the CPU the
 * registering thread needed (tool discovery takes milliseconds): 7% of the
 * CPU time of a short 4-thread program that marks from its start. */
static void wait_while_started(void)
{
    struct timespec most = {0, 1000000};
    (void)syscall(SYS_futex, (void *)&g_state, FUTEX_WAIT_PRIVATE, STARTED, &most, NULL, 0);
}

/* 1 if UPTI and tools left every entry of g_table as the implementation. */
static int table_unwrapped(void)
{
#define SAME(field) (__atomic_load_n(&g_table.field, __ATOMIC_RELAXED) == g_impl_table.field)
    return SAME(range_push_fn) && SAME(range_pop_fn) && SAME(range_start_fn) &&
           SAME(range_stop_fn) && SAME(mark_fn) && SAME(name_thread_fn) && SAME(name_category_fn) &&
           SAME(profiler_pause_fn) && SAME(profiler_resume_fn);
#undef SAME
}

/*
 * Registers g_table with UPTI once. The registering thread's own calls made
 * meanwhile (a tool's initialize using uptx) reach the implementation
 * untraced; other threads wait, so that no call is lost to tracing, except
 * those that tool discovery may be waiting for (started during a tool's
 * configure or initialize, or running it: upti_register_wait_allowed), which
 * go on untraced too. If the registration would deadlock (another runtime's
 * registration is in progress on this thread, or this thread was started
 * during tool discovery), the state goes back to FRESH and a later call
 * registers.
 * Then publishes the table later calls go through: NULL when nothing wrapped
 * g_table (the inline functions then make no call), else g_table.
 * Returns the table to call through for this call (never NULL).
 */
static const uptx_dispatch_table_t *initialize(void)
{
    if (t_initializing)
        return &g_impl_table;
    for (;;) {
        int state = atomic_load(&g_state);
        if (state == COMPLETE) {
            const uptx_dispatch_table_t *t = __atomic_load_n(&uptx_active, __ATOMIC_ACQUIRE);
            return t != NULL ? t : &g_impl_table;
        }
        if (state == STARTED) {
            /* A thread of a tool's initialize (started by it, or running it)
               waiting here could wait for ever: it goes on untraced. */
            int allowed = 1;
            if (upti_register_wait_allowed(&allowed) == UPTI_STATUS_SUCCESS && !allowed)
                return &g_impl_table;
            wait_while_started();
            continue;
        }
        if (!atomic_compare_exchange_strong(&g_state, &state, STARTED))
            continue;
        t_initializing = 1;
        void *tables[] = {&g_table};
        upti_register_library_id_t id;
        upti_status_t st =
            upti_register_library_api_table("uptx", UPTX_TABLE_VERSION, tables, 1, &id);
        t_initializing = 0;
        if (st == UPTI_STATUS_ERROR_DEADLOCK) {
            set_state(FRESH);
            return &g_impl_table;
        }
        const uptx_dispatch_table_t *t = table_unwrapped() ? NULL : &g_table;
        __atomic_store_n(&uptx_active, t, __ATOMIC_RELEASE);
        set_state(COMPLETE);
        return t != NULL ? t : &g_impl_table;
    }
}

/* The exported uptx_* functions are the header's bodies (UPTX_EXPORT_DEFINITIONS). */
