/* libuptx: UPTI's marker runtime, built on seed 000's pattern:
 * public C function → dispatch table → implementation.
 *
 * Public functions call through the active table: stubs until the first
 * call registers the implementation's table with UPTI through
 * libupti-register, which (if a tool is present) installs UPTI's tracing
 * wrappers in it and lets tools chain their own; then that table. With no
 * tool, each call is two loads and one indirect call.
 */
#include <uptx/uptx.h>
#include <uptx/uptx_table.h>
#include <upti/register.h>

#include "compiler.h"

#include <sched.h>
#include <stdatomic.h>

/* ---- implementation ---- */

static UPTI_TLS int t_depth;
static _Atomic uint64_t g_next_range_id = 1;

static int impl_range_push(const char *message)
{
    (void)message;
    return t_depth++;
}

static int impl_range_pop(void)
{
    if (t_depth == 0)
        return -1;
    return --t_depth;
}

static uint64_t impl_range_start(const char *message)
{
    (void)message;
    return atomic_fetch_add_explicit(&g_next_range_id, 1, memory_order_relaxed);
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

/* ---- dispatch table ---- */

static int stub_range_push(const char *message);
static int stub_range_pop(void);
static uint64_t stub_range_start(const char *message);
static void stub_range_stop(uint64_t id);
static void stub_mark(const char *message);
static void stub_name_thread(const char *name);
static void stub_name_category(uint32_t category, const char *name);

/* The table UPTI receives: the implementation, wrapped by UPTI and tools in place. */
static uptx_dispatch_table_t g_table = {
    sizeof(uptx_dispatch_table_t), impl_range_push, impl_range_pop,   impl_range_start,
    impl_range_stop,               impl_mark,       impl_name_thread, impl_name_category,
};

/* Until registration completes, public functions go through these stubs. */
static const uptx_dispatch_table_t g_stub_table = {
    sizeof(uptx_dispatch_table_t), stub_range_push, stub_range_pop,   stub_range_start,
    stub_range_stop,               stub_mark,       stub_name_thread, stub_name_category,
};

/* The table public functions call through: the stubs, then g_table. */
static const uptx_dispatch_table_t *_Atomic g_active = &g_stub_table;

enum { FRESH, STARTED, COMPLETE };
static _Atomic int g_state = FRESH;
static UPTI_TLS int t_initializing;

/*
 * Registers g_table with UPTI once. The registering thread's own calls made
 * meanwhile (a tool's initialize using uptx) reach the implementation
 * untraced; other threads wait, so that no call is lost to tracing. If the
 * registration would deadlock (another runtime's registration is in progress
 * on this thread), the state goes back to FRESH and a later call registers.
 * Returns the table to call through for this call.
 */
static const uptx_dispatch_table_t *initialize(void)
{
    static const uptx_dispatch_table_t impl_table = {
        sizeof(uptx_dispatch_table_t), impl_range_push, impl_range_pop,   impl_range_start,
        impl_range_stop,               impl_mark,       impl_name_thread, impl_name_category,
    };
    if (t_initializing)
        return &impl_table;
    for (;;) {
        int state = atomic_load(&g_state);
        if (state == COMPLETE)
            return atomic_load(&g_active);
        if (state == STARTED) {
            sched_yield();
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
            atomic_store(&g_state, FRESH);
            return &impl_table;
        }
        atomic_store(&g_active, &g_table);
        atomic_store(&g_state, COMPLETE);
        return &g_table;
    }
}

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

/* ---- public C API ---- */

/* One load of the active table, one of its entry (UPTI and tools write entries atomically). */
#define CALL(field) __atomic_load_n(&atomic_load_explicit(&g_active, memory_order_acquire)->field, __ATOMIC_RELAXED)

UPTX_API int uptx_range_push(const char *message)
{
    return CALL(range_push_fn)(message);
}

UPTX_API int uptx_range_pop(void)
{
    return CALL(range_pop_fn)();
}

UPTX_API uint64_t uptx_range_start(const char *message)
{
    return CALL(range_start_fn)(message);
}

UPTX_API void uptx_range_stop(uint64_t id)
{
    CALL(range_stop_fn)(id);
}

UPTX_API void uptx_mark(const char *message)
{
    CALL(mark_fn)(message);
}

UPTX_API void uptx_name_thread(const char *name)
{
    CALL(name_thread_fn)(name);
}

UPTX_API void uptx_name_category(uint32_t category, const char *name)
{
    CALL(name_category_fn)(category, name);
}
