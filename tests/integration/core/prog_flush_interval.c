/* SPDX-License-Identifier: MIT */
/* upti_set_buffer_flush_interval: a buffer whose watermark is its size
 * delivers a lone record only when flushed, or, with a flush interval, from
 * the callback thread on its own within the interval.
 *  - interval 10 ms: one mark is delivered without any flush;
 *  - interval 0 again: a second mark stays in the buffer (checked after
 *    300 ms, 30 of the former intervals) until upti_flush_buffer;
 *  - below 1 ms: UPTI_STATUS_ERROR_INVALID_ARGUMENT; an unknown buffer:
 *    UPTI_STATUS_ERROR_BUFFER_NOT_FOUND;
 *  - every delivery comes from UPTI's callback thread.
 */
#include <upti/upti.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <uptx/uptx.h>

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "test_tool.h"

static upti_context_id_t g_ctx;
static upti_buffer_id_t g_buffer;
static pthread_t g_main;
static int g_records, g_on_main;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_buffer(upti_context_id_t ctx, upti_buffer_id_t buffer, upti_record_header_t **headers,
                      size_t n, void *data, uint64_t drops)
{
    (void)ctx, (void)buffer, (void)headers, (void)data;
    CHECK_EQ_U64(drops, 0);
    pthread_mutex_lock(&g_lock);
    g_records += (int)n;
    g_on_main += pthread_equal(pthread_self(), g_main) ? (int)n : 0;
    pthread_mutex_unlock(&g_lock);
}

static int records(void)
{
    pthread_mutex_lock(&g_lock);
    int n = g_records;
    pthread_mutex_unlock(&g_lock);
    return n;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int tool_init(upti_client_finalize_t fini, void *data)
{
    (void)fini, (void)data;
    CHECK_STATUS(upti_create_context(&g_ctx), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_buffer(g_ctx, 65536, 65536, UPTI_BUFFER_POLICY_LOSSLESS, on_buffer, NULL,
                                    &g_buffer),
                 UPTI_STATUS_SUCCESS);
    test_trace_markers(g_ctx, g_buffer);
    return 0;
}

static upti_tool_configure_result_t *configure(uint32_t version, const char *runtime_version,
                                               uint32_t priority, upti_client_id_t *id)
{
    (void)version, (void)runtime_version, (void)priority;
    static upti_tool_configure_result_t r = {sizeof r, tool_init, NULL, NULL};
    id->name = "flush-interval";
    return &r;
}

int main(void)
{
    g_main = pthread_self();
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    upti_buffer_id_t unknown = {999};
    CHECK_STATUS(upti_set_buffer_flush_interval(unknown, 10000000), UPTI_STATUS_ERROR_BUFFER_NOT_FOUND);
    CHECK_STATUS(upti_set_buffer_flush_interval(g_buffer, 999999), UPTI_STATUS_ERROR_INVALID_ARGUMENT);

    CHECK_STATUS(upti_set_buffer_flush_interval(g_buffer, 10000000), UPTI_STATUS_SUCCESS);
    uptx_mark("one");
    for (int i = 0; i < 10000 && records() < 1; i++) /* up to 10 s on a loaded machine */
        sleep_ms(1);
    CHECK_EQ_U64(records(), 1);

    CHECK_STATUS(upti_set_buffer_flush_interval(g_buffer, 0), UPTI_STATUS_SUCCESS);
    sleep_ms(20); /* a delivery already under way ends */
    uptx_mark("two");
    sleep_ms(300);
    CHECK_EQ_U64(records(), 1);
    CHECK_STATUS(upti_flush_buffer(g_buffer), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(records(), 2);
    CHECK_EQ_U64(g_on_main, 0); /* flushed or not, UPTI's thread delivers */
    say("flush interval: %d records, %d delivered on the main thread", records(), g_on_main);
    return test_failures ? 1 : 0;
}
