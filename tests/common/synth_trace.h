/* SPDX-License-Identifier: MIT */
/* upti-synth's mix of records (tests/integration/cli/synth.c), also what
 * bench/output/bench_db writes as its "trace" mix. Needs output.h (upti-output).
 * Per iteration: an API call, a kernel or a copy with the same correlation
 * id, and every 8th iteration a push/pop pair and a mark (messages and
 * kernels named from names); two threads, two queues. */
#ifndef UPTI_TEST_SYNTH_TRACE_H
#define UPTI_TEST_SYNTH_TRACE_H

#include "output.h"

#include <stddef.h>
#include <stdint.h>

static void synth_marker(uo_db *db, uint32_t op, uint64_t tid, uint64_t corr, uint64_t ts,
                         const char *message, uint32_t color)
{
    upti_buffer_tracing_marker_api_record_t m = {0};
    m.size = sizeof m;
    m.kind = UPTI_TRACING_KIND_MARKER_API;
    m.operation = op;
    m.thread_id = tid;
    m.correlation_id.internal = corr;
    m.start_timestamp = m.end_timestamp = ts;
    m.message = message;
    m.color = color;
    uo_db_add_record(db, m.kind, &m);
}

/* The fields a kernel and a copy record of synth_device_op share: the record's
 * size, kind and operation, its API call, thread, device and queue. */
#define SYNTH_DEVICE_FIELDS(r, record_kind, op)                                               \
    do {                                                                                      \
        (r).size = sizeof(r);                                                                 \
        (r).kind = (record_kind);                                                             \
        (r).operation = (op);                                                                 \
        (r).correlation_id.internal = corr;                                                   \
        (r).thread_id = tid;                                                                  \
        (r).agent_id.handle = 2;                                                              \
        (r).queue_id = 0x1000 + (it & 1);                                                     \
    } while (0)

static void synth_device_op(uo_db *db, uint64_t it, uint64_t tid, uint64_t corr, uint64_t ts,
                            const char *const *names, size_t nnames)
{
    if (it % 4 != 0) {
        upti_buffer_tracing_kernel_dispatch_record_t k = {0};
        SYNTH_DEVICE_FIELDS(k, UPTI_TRACING_KIND_KERNEL_DISPATCH, UPTI_KERNEL_DISPATCH_NDRANGE);
        k.kernel_id = 7 + it % nnames;
        k.kernel_name = names[it % nnames];
        k.work_dim = 1;
        k.global_size[0] = 1024;
        k.local_size[0] = 64;
        k.queued_timestamp = ts + 10;
        k.submit_timestamp = ts + 20;
        k.start_timestamp = ts + 100;
        k.end_timestamp = ts + 180;
        uo_db_add_record(db, k.kind, &k);
    } else {
        upti_buffer_tracing_memory_copy_record_t c = {0};
        SYNTH_DEVICE_FIELDS(c, UPTI_TRACING_KIND_MEMORY_COPY, UPTI_MEMORY_COPY_READ_BUFFER);
        c.direction = UPTI_MEMORY_DIRECTION_DEVICE_TO_HOST;
        c.src_agent_id.handle = 2;
        c.bytes = 4096;
        c.start_timestamp = ts + 100;
        c.end_timestamp = ts + 150;
        uo_db_add_record(db, c.kind, &c);
    }
}

/* Writes at least n records (API operations 1, clEnqueueNDRangeKernel, and 2,
 * clEnqueueReadBuffer); returns how many, and in *end a time after the last. */
static uint64_t synth_trace(uo_db *db, uint64_t n, const char *const *names, size_t nnames,
                            uint64_t *end)
{
    uint64_t ts = 10000, corr = 0, written = 0, it = 0;
    while (written < n) {
        uint64_t tid = 1234 + (it & 1);
        it++;
        corr++;
        const char *name = names[it % nnames];
        if (it % 8 == 1) {
            synth_marker(db, UPTI_MARKER_API_RANGE_PUSH, tid, corr++, ts++, name, 0xFF00FF00u);
            synth_marker(db, UPTI_MARKER_API_MARK, tid, corr++, ts++, name, 0xFF00FF00u);
            written += 2;
        }
        upti_buffer_tracing_api_record_t a = {0};
        a.size = sizeof a;
        a.kind = UPTI_TRACING_KIND_OPENCL_API;
        a.operation = (it % 4 == 0) ? 2 : 1;
        a.correlation_id.internal = corr;
        a.thread_id = tid;
        a.start_timestamp = ts;
        a.end_timestamp = ts + 50;
        uo_db_add_record(db, a.kind, &a);
        synth_device_op(db, it, tid, corr, ts, names, nnames);
        written += 2;
        ts += 200;
        if (it % 8 == 1) {
            synth_marker(db, UPTI_MARKER_API_RANGE_POP, tid, ++corr, ts++, NULL, 0);
            written++;
        }
    }
    *end = ts + 1000;
    return written;
}

#endif
