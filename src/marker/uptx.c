/* libuptx: UPTI's marker runtime, built on seed 000's pattern:
 * public C function → dispatch table → implementation.
 *
 * The table's entries start as stubs. The first call through any stub fills
 * the table with the implementation and registers it with UPTI through
 * libupti-register, which (if a tool is present) installs UPTI's tracing
 * wrappers and lets tools chain their own. With no tool, each call is one
 * load of a table entry and one indirect call.
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

static uptx_dispatch_table_t g_table = {
    sizeof(uptx_dispatch_table_t), stub_range_push, stub_range_pop,   stub_range_start,
    stub_range_stop,               stub_mark,       stub_name_thread, stub_name_category,
};

enum { FRESH, STARTED, COMPLETE };
static _Atomic int g_state = FRESH;

#define SET(field, fn) __atomic_store_n(&g_table.field, fn, __ATOMIC_RELEASE)

/*
 * Runs once: points every entry at the implementation (so calls made while
 * UPTI initializes, e.g. from a tool's initialize, reach it untraced), then
 * hands the table to UPTI. If the registration would deadlock (another
 * runtime's registration is in progress on this thread) the stubs are put
 * back so that a later call registers again.
 */
static void initialize(void)
{
    int expected = FRESH;
    if (!atomic_compare_exchange_strong(&g_state, &expected, STARTED))
        return;
    SET(range_push_fn, impl_range_push);
    SET(range_pop_fn, impl_range_pop);
    SET(range_start_fn, impl_range_start);
    SET(range_stop_fn, impl_range_stop);
    SET(mark_fn, impl_mark);
    SET(name_thread_fn, impl_name_thread);
    SET(name_category_fn, impl_name_category);
    void *tables[] = {&g_table};
    upti_register_library_id_t id;
    upti_status_t st = upti_register_library_api_table("uptx", UPTX_TABLE_VERSION, tables, 1, &id);
    if (st == UPTI_STATUS_ERROR_DEADLOCK) {
        SET(range_push_fn, stub_range_push);
        SET(range_pop_fn, stub_range_pop);
        SET(range_start_fn, stub_range_start);
        SET(range_stop_fn, stub_range_stop);
        SET(mark_fn, stub_mark);
        SET(name_thread_fn, stub_name_thread);
        SET(name_category_fn, stub_name_category);
        atomic_store(&g_state, FRESH);
        return;
    }
    atomic_store(&g_state, COMPLETE);
}

/* The entry after initialization; the implementation itself while it is in progress. */
#define ENTRY(field, stub, impl)                                                                  \
    ({                                                                                            \
        initialize();                                                                             \
        __typeof__(g_table.field) fn = __atomic_load_n(&g_table.field, __ATOMIC_ACQUIRE);         \
        fn == stub ? impl : fn;                                                                   \
    })

static int stub_range_push(const char *message)
{
    return ENTRY(range_push_fn, stub_range_push, impl_range_push)(message);
}

static int stub_range_pop(void)
{
    return ENTRY(range_pop_fn, stub_range_pop, impl_range_pop)();
}

static uint64_t stub_range_start(const char *message)
{
    return ENTRY(range_start_fn, stub_range_start, impl_range_start)(message);
}

static void stub_range_stop(uint64_t id)
{
    ENTRY(range_stop_fn, stub_range_stop, impl_range_stop)(id);
}

static void stub_mark(const char *message)
{
    ENTRY(mark_fn, stub_mark, impl_mark)(message);
}

static void stub_name_thread(const char *name)
{
    ENTRY(name_thread_fn, stub_name_thread, impl_name_thread)(name);
}

static void stub_name_category(uint32_t category, const char *name)
{
    ENTRY(name_category_fn, stub_name_category, impl_name_category)(category, name);
}

/* ---- public C API ---- */

#define CALL(field) __atomic_load_n(&g_table.field, __ATOMIC_RELAXED)

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
