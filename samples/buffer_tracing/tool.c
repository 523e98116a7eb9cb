/* SPDX-License-Identifier: MIT */
/* samples/buffer_tracing — records of marker calls written into a buffer and
 * delivered in batches on UPTI's callback thread; prints per-operation counts.
 *
 * Each producing thread writes into its own region of the buffer without a
 * lock. When a region holds `watermark` bytes (or on flush, or at exit) the
 * callback thread hands its records to buffer_callback(). Records of one
 * thread arrive in order. A LOSSLESS buffer makes a producer wait when its
 * region is full; a DISCARD buffer drops the record and reports the count.
 */
#include <upti/upti.h>

#include <stdio.h>

static uint64_t counts[UPTI_MARKER_API_LAST]; /* written by the callback thread only */
static uint64_t records, dropped, batches;

static void buffer_callback(upti_context_id_t context, upti_buffer_id_t buffer,
                            upti_record_header_t **headers, size_t num_headers, void *data,
                            uint64_t drop_count)
{
    (void)context;
    (void)buffer;
    (void)data;
    batches++;
    dropped += drop_count;
    for (size_t i = 0; i < num_headers; i++) {
        const upti_record_header_t *h = headers[i];
        if (h->category != UPTI_BUFFER_CATEGORY_TRACING || h->kind != UPTI_TRACING_KIND_MARKER_API)
            continue;
        /* The payload is valid only during this call: copy what you keep. */
        const upti_buffer_tracing_marker_api_record_t *r = h->payload;
        if (r->operation < UPTI_MARKER_API_LAST)
            counts[r->operation]++;
        records++;
    }
}

static int tool_init(upti_client_finalize_t finalize, void *tool_data)
{
    (void)finalize;
    (void)tool_data;
    upti_context_id_t ctx;
    upti_buffer_id_t buffer;
    if (upti_create_context(&ctx) != UPTI_STATUS_SUCCESS)
        return 1;
    /* 64 KiB per producing thread; wake the callback thread at half full. */
    upti_buffer_options_t options = UPTI_OPTIONS(upti_buffer_options_t,
                                                 .region_size = 64 * 1024,
                                                 .watermark = 32 * 1024,
                                                 .policy = UPTI_BUFFER_POLICY_LOSSLESS,
                                                 .callback = buffer_callback);
    if (upti_create_buffer_with_options(ctx, &options, &buffer) != UPTI_STATUS_SUCCESS)
        return 1;
    if (upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, buffer) !=
        UPTI_STATUS_SUCCESS)
        return 1;
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

/* Buffers are flushed before finalize: every record has been delivered. */
static void tool_fini(void *tool_data)
{
    (void)tool_data;
    for (uint32_t op = 1; op < UPTI_MARKER_API_LAST; op++) {
        const char *name = "?";
        upti_get_tracing_operation_name(UPTI_TRACING_KIND_MARKER_API, op, &name);
        if (counts[op] != 0)
            printf("buffer_tracing: %-20s %8llu\n", name, (unsigned long long)counts[op]);
    }
    printf("buffer_tracing: total %llu records, %llu dropped\n", (unsigned long long)records,
           (unsigned long long)dropped);
    fflush(stdout);
}

upti_tool_configure_result_t *upti_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, upti_client_id_t *client_id)
{
    (void)version;
    (void)runtime_version;
    (void)priority;
    client_id->name = "buffer_tracing";
    static upti_tool_configure_result_t result = {sizeof(upti_tool_configure_result_t), tool_init,
                                                  tool_fini, NULL};
    return &result;
}
