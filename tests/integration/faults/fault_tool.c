/* SPDX-License-Identifier: MIT */
/* A tool library that misbehaves in one way chosen at compile time:
 *   FAULT_NULL         upti_configure returns NULL (the tool declines)
 *   FAULT_INIT_FAIL    initialize returns 1
 *   FAULT_NO_CONFIGURE exports no upti_configure
 *   FAULT_UPTX_IN_INIT initialize calls uptx (the runtime being registered)
 *   FAULT_OCL_IN_INIT  initialize calls clGetPlatformIDs (under the OpenCL layer)
 *   FAULT_UPTX_IN_THREAD  initialize starts a thread that calls uptx, and joins it
 *   FAULT_OCL_IN_THREAD   initialize starts a thread that calls clGetPlatformIDs,
 *                         and joins it; the tool also counts OPENCL_API ENTERs
 *   FAULT_SLOW_INIT    initialize takes 400 ms (threads the program starts
 *                      meanwhile must wait for it, and be traced)
 * With none: a well-behaved tool that counts marker ENTER callbacks. Every
 * tool prints "tool: ..." lines on stdout. */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#if defined(FAULT_OCL_IN_INIT) || defined(FAULT_OCL_IN_THREAD)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

/* Calls clGetPlatformIDs and says what it returned, called from where. */
static void ask_opencl(const char *where)
{
    cl_uint n = 0;
    cl_int rc = clGetPlatformIDs(0, NULL, &n);
    printf("tool: clGetPlatformIDs in %s returned %d\n", where, (int)rc);
}
#endif

static _Atomic unsigned long g_enters;
static _Atomic unsigned long g_ocl_enters;
static upti_context_id_t g_ctx;

static __attribute__((unused)) void on_opencl(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    (void)user_data, (void)data;
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER)
        atomic_fetch_add(&g_ocl_enters, 1);
}

#if defined(FAULT_UPTX_IN_THREAD) || defined(FAULT_OCL_IN_THREAD)
/* Runs in a thread that initialize starts and joins: its calls must return
 * (untraced) although discovery, which runs initialize, has not finished. */
static void *thread_in_initialize(void *arg)
{
    (void)arg;
#ifdef FAULT_UPTX_IN_THREAD
    for (int i = 0; i < 10; i++) {
        uptx_range_push("from initialize's thread");
        uptx_mark("mark from initialize's thread");
        uptx_range_pop();
    }
    printf("tool: uptx calls in initialize's thread returned\n");
#endif
#ifdef FAULT_OCL_IN_THREAD
    ask_opencl("initialize's thread");
#endif
    return NULL;
}
#endif

static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    (void)user_data, (void)data;
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER)
        atomic_fetch_add(&g_enters, 1);
}

static int initialize(upti_client_finalize_t finalize, void *data)
{
    (void)finalize, (void)data;
    upti_create_context(&g_ctx);
    upti_configure_callback_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                            on_marker, NULL);
#ifdef FAULT_OCL_IN_THREAD
    upti_configure_callback_tracing_service(g_ctx, UPTI_TRACING_KIND_OPENCL_API, NULL, 0,
                                            on_opencl, NULL);
#endif
    upti_start_context(g_ctx);
#ifdef FAULT_SLOW_INIT
    struct timespec slow = {0, 400 * 1000 * 1000};
    nanosleep(&slow, NULL);
#endif
#if defined(FAULT_UPTX_IN_THREAD) || defined(FAULT_OCL_IN_THREAD)
    pthread_t t;
    if (pthread_create(&t, NULL, thread_in_initialize, NULL) == 0)
        pthread_join(t, NULL);
#endif
#ifdef FAULT_UPTX_IN_INIT
    uptx_range_push("from initialize");
    uptx_range_pop();
#endif
#ifdef FAULT_OCL_IN_INIT
    ask_opencl("initialize");
#endif
#ifdef FAULT_INIT_FAIL
    return 1;
#else
    return 0;
#endif
}

static void finalize(void *data)
{
    (void)data;
    printf("tool: finalize enters=%lu opencl=%lu\n", atomic_load(&g_enters),
           atomic_load(&g_ocl_enters));
    fflush(stdout);
}

#ifndef FAULT_NO_CONFIGURE
__attribute__((visibility("default"))) upti_tool_configure_result_t *
upti_configure(uint32_t version, const char *runtime_version, uint32_t priority,
               upti_client_id_t *client_id)
{
    (void)version, (void)runtime_version, (void)priority;
    static upti_tool_configure_result_t result = {sizeof result, initialize, finalize, NULL};
    client_id->name = "fault-tool";
#ifdef FAULT_NULL
    return NULL;
#else
    return &result;
#endif
}
#else
__attribute__((visibility("default"))) int fault_tool_not_a_configure(void) { return 0; }
void *fault_tool_keep = (void *)initialize;
void *fault_tool_keep2 = (void *)finalize;
#endif
