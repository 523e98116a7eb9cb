/* SPDX-License-Identifier: MIT */
/* A test tool whose behaviour is chosen at compile time. It prints every step
 * of its life on stdout (one line each), so a test compares the whole output
 * with a golden file:
 *
 *   configure NAME priority=P        from upti_configure
 *   initialize NAME is_initialized=0 from its initialize
 *   finalize NAME enters=N           from its finalize (N: ENTER callbacks seen)
 *   NAME: ...                        anything unexpected (never in a golden file)
 *
 * TOOL_NAME          "a", "b", …: the name it prints
 * TOOL_RETURN_NULL   upti_configure returns NULL
 * TOOL_INIT_FAIL     initialize starts its context, then returns 1
 * TOOL_UPTX_IN_INIT  initialize calls uptx_range_push/pop after starting its context
 * TOOL_EXPLICIT_FINI exports TOOL_SYMBOL(finalize_now), which calls the finalizer twice
 * TOOL_NO_EXPORT     do not define upti_configure (the program passes
 *                    TOOL_SYMBOL(configure) to upti_force_configure)
 */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <stdatomic.h>
#include <string.h>

#include "check.h"

#ifndef TOOL_NAME
#error "TOOL_NAME must be defined"
#endif
#ifndef TOOL_ID
#define TOOL_ID a
#endif

#define TOOL_CAT2(x, y) x##y
#define TOOL_CAT(x, y) TOOL_CAT2(x, y)
/* tool_<id>_<what>: the functions a test program may call. */
#define TOOL_SYMBOL(what) TOOL_CAT(TOOL_CAT(TOOL_CAT(tool_, TOOL_ID), _), what)

#define TOOL_EXPORT __attribute__((visibility("default")))

static _Atomic int g_finalized;
static _Atomic int g_initialized;
static _Atomic int g_finalize_calls;
static _Atomic unsigned long g_enters;
static _Atomic unsigned long g_enters_after_init;
static upti_client_id_t g_client;
static upti_client_finalize_t g_finalizer;
static upti_context_id_t g_context;

static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    (void)user_data, (void)data;
    if (atomic_load(&g_finalized))
        say("%s: callback after finalize (operation %u phase %d)", TOOL_NAME, record.operation,
            (int)record.phase);
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER) {
        atomic_fetch_add(&g_enters, 1);
        if (atomic_load(&g_initialized))
            atomic_fetch_add(&g_enters_after_init, 1);
    }
}

static int tool_initialize(upti_client_finalize_t finalize, void *tool_data)
{
    int is_init = -1;
    upti_is_initialized(&is_init);
    say("initialize %s is_initialized=%d", TOOL_NAME, is_init);
    if (tool_data != &g_client)
        say("%s: initialize got tool_data %p, expected %p", TOOL_NAME, tool_data,
            (void *)&g_client);
    if (finalize == NULL)
        say("%s: initialize got no finalizer", TOOL_NAME);
    g_finalizer = finalize;

    upti_context_id_t ctx = {0};
    upti_status_t s = upti_create_context(&ctx);
    g_context = ctx;
    if (s != UPTI_STATUS_SUCCESS)
        say("%s: upti_create_context: %s", TOOL_NAME, upti_get_status_name(s));
    s = upti_configure_callback_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                                on_marker, NULL);
    if (s != UPTI_STATUS_SUCCESS)
        say("%s: configure_callback_tracing_service: %s", TOOL_NAME, upti_get_status_name(s));
    s = upti_start_context(ctx);
    if (s != UPTI_STATUS_SUCCESS)
        say("%s: upti_start_context: %s", TOOL_NAME, upti_get_status_name(s));

#ifdef TOOL_UPTX_IN_INIT
    int push = uptx_range_push("from initialize");
    int pop = uptx_range_pop();
    say("%s: uptx in initialize push=%d pop=%d", TOOL_NAME, push, pop);
#endif
#ifdef TOOL_INIT_FAIL
    return 1;
#else
    atomic_store(&g_initialized, 1);
    return 0;
#endif
}

static void tool_finalize(void *tool_data)
{
    if (tool_data != &g_client)
        say("%s: finalize got tool_data %p", TOOL_NAME, tool_data);
    atomic_fetch_add(&g_finalize_calls, 1);
#ifdef TOOL_UPTX_IN_INIT
    say("finalize %s enters_after_init=%lu", TOOL_NAME, atomic_load(&g_enters_after_init));
#else
    say("finalize %s enters=%lu", TOOL_NAME, atomic_load(&g_enters));
#endif
    atomic_store(&g_finalized, 1);
}

static upti_tool_configure_result_t g_result __attribute__((unused)) = {
    sizeof(upti_tool_configure_result_t), tool_initialize, tool_finalize, &g_client};

TOOL_EXPORT upti_tool_configure_result_t *TOOL_SYMBOL(configure)(uint32_t version,
                                                                 const char *runtime_version,
                                                                 uint32_t priority,
                                                                 upti_client_id_t *client_id)
{
    say("configure %s priority=%u", TOOL_NAME, priority);
    if (version != UPTI_VERSION)
        say("%s: version %u, expected %u", TOOL_NAME, version, (unsigned)UPTI_VERSION);
    if (runtime_version == NULL || strcmp(runtime_version, UPTI_VERSION_STRING) != 0)
        say("%s: runtime_version %s", TOOL_NAME, runtime_version ? runtime_version : "(null)");
    if (client_id == NULL) {
        say("%s: client_id is NULL", TOOL_NAME);
        return NULL;
    }
    if (client_id->handle != priority)
        say("%s: client_id->handle %u != priority %u", TOOL_NAME, client_id->handle, priority);
    client_id->name = TOOL_NAME;
    g_client = *client_id;
#ifdef TOOL_RETURN_NULL
    return NULL;
#else
    return &g_result;
#endif
}

#ifndef TOOL_NO_EXPORT
upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    return TOOL_SYMBOL(configure)(version, runtime_version, priority, client_id);
}
#endif

/* The context the tool created in initialize. */
TOOL_EXPORT upti_context_id_t TOOL_SYMBOL(context)(void)
{
    return g_context;
}

/* How many times this tool's finalize ran. */
TOOL_EXPORT int TOOL_SYMBOL(finalize_calls)(void)
{
    return atomic_load(&g_finalize_calls);
}

/* Calls the finalizer UPTI passed to initialize, twice: finalize must run once. */
TOOL_EXPORT void TOOL_SYMBOL(finalize_now)(void)
{
    if (g_finalizer == NULL) {
        say("%s: no finalizer saved", TOOL_NAME);
        return;
    }
    g_finalizer(g_client);
    g_finalizer(g_client);
}
