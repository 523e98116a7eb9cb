/* SPDX-License-Identifier: MIT */
/* Calls that race with libuptx's first registration are traced too.
 *
 * A tool is initialized (upti_force_configure) before any uptx call; then
 * THREADS threads, released together by a barrier, each make PAIRS
 * push+pop pairs. The first of those calls registers libuptx with UPTI; the
 * others arrive while that registration is in progress. The tool's lossless
 * buffer must receive every call: 2 * THREADS * PAIRS records, PAIRS pushes
 * per thread. The race is different in each process, so the program runs
 * itself ROUNDS times (child mode: argument "child") and fails if any round
 * lost a record. */
#include <upti/upti.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <uptx/uptx.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "test_tool.h"

#define THREADS 8
#define PAIRS 50
#define ROUNDS 20

static upti_context_id_t g_ctx;
static upti_buffer_id_t g_buffer;
static _Atomic uint64_t g_records;
static _Atomic uint64_t g_callbacks;
static pthread_barrier_t g_barrier;

static void on_buffer(upti_context_id_t ctx, upti_buffer_id_t buffer, upti_record_header_t **headers,
                      size_t n, void *data, uint64_t drops)
{
    (void)ctx, (void)buffer, (void)headers, (void)data, (void)drops;
    atomic_fetch_add(&g_records, n);
}

static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    (void)record, (void)user_data, (void)data;
    atomic_fetch_add(&g_callbacks, 1);
}

static int tool_init(upti_client_finalize_t fini, void *tool_data)
{
    (void)fini, (void)tool_data;
    upti_create_context(&g_ctx);
    upti_create_buffer(g_ctx, 65536, 65536, UPTI_BUFFER_POLICY_LOSSLESS, on_buffer, NULL,
                       &g_buffer);
    upti_configure_buffer_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, g_buffer);
    upti_configure_callback_tracing_service(g_ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0,
                                            on_marker, NULL);
    upti_start_context(g_ctx);
    return 0;
}

TEST_CONFIGURE(configure, tool_init, NULL)

static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&g_barrier);
    for (int i = 0; i < PAIRS; i++) {
        uptx_range_push("r");
        uptx_range_pop();
    }
    return NULL;
}

static int child(void)
{
    if (upti_force_configure(configure) != UPTI_STATUS_SUCCESS)
        return 3;
    pthread_barrier_init(&g_barrier, NULL, THREADS);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    upti_flush_buffer(g_buffer);
    uint64_t want = 2ull * THREADS * PAIRS;
    uint64_t got = atomic_load(&g_records), cbs = atomic_load(&g_callbacks);
    if (got != want || cbs != 2 * want) {
        fprintf(stderr, "records %llu (expected %llu), callbacks %llu (expected %llu)\n",
                (unsigned long long)got, (unsigned long long)want, (unsigned long long)cbs,
                (unsigned long long)(2 * want));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    int failed = 0;
    for (int round = 0; round < ROUNDS; round++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            execl("/proc/self/exe", argv[0], "child", (char *)NULL);
            _exit(4);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "FAIL: round %d lost calls (status %d)\n", round, status);
            failed++;
        }
    }
    if (failed != 0) {
        fprintf(stderr, "first_call_race: %d of %d rounds lost calls made while libuptx was "
                        "registering\n", failed, ROUNDS);
        return 1;
    }
    fprintf(stderr, "first_call_race: PASS (%d rounds)\n", ROUNDS);
    return 0;
}
