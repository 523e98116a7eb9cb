/* SPDX-License-Identifier: MIT */
/* The paths of libupti that hold two locks at once (the order is written in
 * src/program/sdk/internal.h), run at the same time from several threads. Under
 * ThreadSanitizer (scripts/ci-sanitizers.sh tsan, detect_deadlocks=1) a lock
 * taken against that order anywhere is reported even if this run does not
 * deadlock; in any build the test asserts that nothing was lost:
 *
 *   subscribers -> contexts   a subscriber enables/disables a domain: the
 *                             provider's domains_changed() sets its service up
 *   buffers -> buffer         fork() (atfork handlers), callback-thread changes
 *   buffer -> contexts        the buffer callback starts and stops a context
 *   contexts alone            the main thread starts and stops contexts
 *   agents, then buffers      an agent is added while buffers are flushed
 */
#include <upti/runtime.h>
#include <upti/runtime_callback.h>
#include <upti/upti.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "test_tool.h"
#include "unit_tests.h"

enum { ROUNDS = 200, RECORDS = 2000, FORKS = 4, AGENTS = 8 };

static upti_context_id_t g_ctx, g_ctx_toggled;
static upti_buffer_id_t g_buffer;
static upti_callback_thread_t g_thread1, g_thread2;
static _Atomic uint64_t g_delivered, g_dropped, g_domain_calls;
static _Atomic int g_checked; /* main has checked: the deliveries at exit toggle nothing */

static void on_records(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **headers,
                       size_t n, void *data, uint64_t drops)
{
    (void)c, (void)b, (void)headers, (void)data;
    g_delivered += n;
    g_dropped += drops;
    /* buffer -> contexts: a context started and stopped under the buffer's lock. */
    if (n > 0 && !g_checked) {
        CHECK_STATUS(upti_start_context(g_ctx_toggled), UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_stop_context(g_ctx_toggled), UPTI_STATUS_SUCCESS);
    }
}

static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    (void)record, (void)user_data, (void)data;
}

/* A runtime's subscriber provider: called under the subscribers' lock, it sets its
 * service up, which takes the contexts' lock. */
static void domains_changed(uint32_t domains, void *data)
{
    (void)data;
    g_domain_calls++;
    static const uint8_t all[UPTI_MARKER_API_LAST] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    upti_runtime_subscriber_service(UPTI_TRACING_KIND_MARKER_API, domains ? all : NULL,
                                    on_marker, NULL);
}

static int init_tool(upti_client_finalize_t fin, void *tool_data)
{
    (void)fin, (void)tool_data;
    CHECK_STATUS(upti_create_context(&g_ctx), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_context(&g_ctx_toggled), UPTI_STATUS_SUCCESS);
    upti_buffer_options_t o = UPTI_OPTIONS(upti_buffer_options_t, .region_size = 1 << 16,
                                           .watermark = 1 << 10,
                                           .policy = UPTI_BUFFER_POLICY_LOSSLESS,
                                           .callback = on_records);
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &o, &g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_callback_thread(&g_thread1), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_callback_thread(&g_thread2), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(g_ctx), UPTI_STATUS_SUCCESS);
    return 0;
}

TEST_CONFIGURE(configure, init_tool, NULL)

static void on_callback(upti_callback_domain_t domain, uint32_t api_group, uint32_t api_id,
                        void *backend_context, const void *cb_data, void *user_data,
                        void **instance_user_data)
{
    (void)domain, (void)api_group, (void)api_id, (void)backend_context, (void)cb_data;
    (void)user_data, (void)instance_user_data;
}

static void *subscriber_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        upti_callback_subscriber_t sub;
        CHECK_STATUS(upti_callback_subscribe(&sub, on_callback, NULL), UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_callback_enable_domain(sub, UPTI_CB_DOMAIN_DRIVER_MODULE_LOADED, 1, 1),
                     UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_callback_disable_domain(sub, UPTI_CB_DOMAIN_DRIVER_MODULE_LOADED),
                     UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_callback_unsubscribe(sub), UPTI_STATUS_SUCCESS);
    }
    return NULL;
}

static void *writer_thread(void *arg)
{
    (void)arg;
    char data[64];
    memset(data, 'x', sizeof data);
    for (int i = 0; i < RECORDS; i++) {
        CHECK_STATUS(upti_write_buffer_record(g_buffer, 1, data, sizeof data), UPTI_STATUS_SUCCESS);
        if (i % 100 == 99)
            CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    }
    return NULL;
}

static void *fork_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        CHECK(pid > 0);
        int status = -1;
        CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    return NULL;
}

static void *reassign_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS / 10; i++) /* buffers, a flush of the old thread, buffers */
        CHECK_STATUS(upti_assign_callback_thread(g_buffer, i % 2 ? g_thread1 : g_thread2),
                     UPTI_STATUS_SUCCESS);
    return NULL;
}

static void *agent_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < AGENTS; i++) {
        char name[32];
        snprintf(name, sizeof name, "lock-order-%d", i);
        upti_agent_t a = {.size = sizeof a, .type = UPTI_AGENT_TYPE_GPU, .runtime = "test",
                          .name = name};
        upti_agent_id_t id;
        CHECK_STATUS(upti_runtime_add_agent(&a, &id), UPTI_STATUS_SUCCESS);
    }
    return NULL;
}

UNIT_TEST(lock_order)
{
    upti_runtime_subscriber_provider_t p = {sizeof p, "lock-order", domains_changed, NULL};
    CHECK_STATUS(upti_runtime_register_subscriber_provider(&p), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    /* upti_force_configure initialized the tool. */
    int present = 0;
    CHECK_STATUS(upti_runtime_tools_present(&present), UPTI_STATUS_SUCCESS);
    CHECK(present == 1);

    void *(*bodies[])(void *) = {subscriber_thread, writer_thread, fork_thread, reassign_thread,
                                 agent_thread};
    enum { N = sizeof bodies / sizeof bodies[0] };
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        CHECK(pthread_create(&t[i], NULL, bodies[i], NULL) == 0);
    /* contexts alone, meanwhile */
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_STATUS(upti_stop_context(g_ctx), UPTI_STATUS_SUCCESS);
        CHECK_STATUS(upti_start_context(g_ctx), UPTI_STATUS_SUCCESS);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_delivered, RECORDS);
    CHECK_EQ_U64(g_dropped, 0);
    /* Each subscribe round turned the domain word on and off. */
    CHECK_EQ_U64(g_domain_calls, 1 + 2 * ROUNDS);
    g_checked = 1;
    return test_result("lock_order");
}
