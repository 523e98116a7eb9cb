/* SPDX-License-Identifier: MIT */
/* See ring_mode.h. */
#include "ring_mode.h"

#include "capture.h"

#include "env.h"
#include "log.h"
#include "private_dir.h"
#include "proc_stat.h"
#include "trace_tool_records.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static struct {
    upti_context_id_t context, args_context;
    upti_buffer_id_t buffer;
    int started;
} g_ring;

const char *ut_ring_dir(void)
{
    const char *dir = getenv("UPTI_TRACE_RING_DIR");
    return dir != NULL && dir[0] != '\0' ? dir : NULL;
}

void ut_ring_set_metadata(upti_buffer_id_t buffer, const char *key, const char *value)
{
    size_t kl = strlen(key) + 1, vl = strlen(value) + 1;
    char buf[4096];
    if (kl + vl > sizeof buf)
        vl = sizeof buf - kl; /* a value longer than a page is cut (NUL kept below) */
    memcpy(buf, key, kl);
    memcpy(buf + kl, value, vl);
    buf[kl + vl - 1] = '\0';
    upti_write_buffer_record(buffer, UPTI_TRACE_RECORD_METADATA, buf, kl + vl);
}

/* What the collector needs to name this process's outputs as the program
 * would have (the placeholders of UPTI_TRACE_OUTPUT): the values it cannot
 * see from outside. A child forked without exec shares them with its parent. */
static void write_naming_metadata(const char *output)
{
    if (output != NULL)
        ut_ring_set_metadata(g_ring.buffer, "output", output);
    char argv0[1024];
    upti_proc_argv0(argv0, sizeof argv0);
    ut_ring_set_metadata(g_ring.buffer, "argv0", argv0);
    const char *rank = upti_proc_mpi_rank();
    if (rank != NULL) /* only under an MPI launcher (else NULL in info_process) */
        ut_ring_set_metadata(g_ring.buffer, "rank", rank);
    const char *session = getenv("UPTI_TRACE_SESSION_START");
    if (session != NULL)
        ut_ring_set_metadata(g_ring.buffer, "session", session);
    const char *pattern = getenv("UPTI_TRACE_OUTPUT");
    for (const char *p = pattern; p != NULL && (p = strstr(p, "%env{")) != NULL;) {
        const char *end = strstr(p + 5, "}%");
        if (end == NULL)
            break;
        char key[300];
        snprintf(key, sizeof key, "env:%.*s", (int)(end - (p + 5)), p + 5);
        const char *v = getenv(key + 4);
        if (v != NULL)
            ut_ring_set_metadata(g_ring.buffer, key, v);
        p = end + 2;
    }
}

typedef struct arg_ctx {
    uint64_t correlation;
} arg_ctx;

/* One ARG record per argument, in the calling thread's ring. */
static int write_arg(upti_tracing_kind_t kind, uint32_t operation, uint32_t arg_index,
                     const void *arg_value_addr, int32_t indirection_count, const char *arg_type,
                     const char *arg_name, const char *arg_value_string, int32_t dereference_count,
                     void *data)
{
    (void)kind;
    (void)operation;
    (void)arg_value_addr;
    (void)indirection_count;
    (void)dereference_count;
    const arg_ctx *c = data;
    const char *s[3] = {arg_type ? arg_type : "", arg_name ? arg_name : "",
                        arg_value_string ? arg_value_string : ""};
    size_t len[3];
    char buf[4096];
    size_t room = sizeof buf - sizeof(trace_tool_arg_t);
    for (int i = 0; i < 3; i++) {
        len[i] = strlen(s[i]) + 1;
        size_t cap = i == 2 ? room : room / 4; /* a long value keeps most of the room */
        if (len[i] > cap)
            len[i] = cap;
        room -= len[i];
    }
    trace_tool_arg_t h = {c->correlation, arg_index, (uint32_t)len[0], (uint32_t)len[1],
                          (uint32_t)len[2]};
    char *p = buf;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    for (int i = 0; i < 3; i++) {
        memcpy(p, s[i], len[i]);
        p[len[i] - 1] = '\0';
        p += len[i];
    }
    upti_write_buffer_record(g_ring.buffer, UPTI_TRACE_RECORD_ARG, buf, (size_t)(p - buf));
    return 0;
}

static void args_callback(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                          void *callback_data)
{
    (void)user_data;
    (void)callback_data;
    if (record.phase != UPTI_CALLBACK_PHASE_EXIT)
        return;
    arg_ctx c = {record.correlation_id.internal};
    upti_iterate_callback_tracing_operation_args(record, write_arg, 1, &c);
}

/* A runtime that described its API registered: the names of its operations, in the
 * registering thread's ring, before any call of them is recorded (the collector
 * knows nothing of that runtime: the api rows get their names and domain from these). */
static void write_operation_names(const upti_intercept_table_info_t *info, void **tables,
                                  uint64_t num_tables, void *data)
{
    (void)tables;
    (void)num_tables;
    (void)data;
    if (!g_ring.started || info->kind != UPTI_TRACING_KIND_RUNTIME_API)
        return;
    for (uint32_t i = 0; i < info->num_operations; i++) {
        uint32_t op = info->first_operation + i;
        const char *name = NULL;
        if (upti_get_tracing_operation_name(info->kind, op, &name) != UPTI_STATUS_SUCCESS)
            continue;
        char buf[sizeof(trace_tool_operation_t) + 512];
        size_t domain_len = strnlen(info->name, 255) + 1, name_len = strnlen(name, 255) + 1;
        trace_tool_operation_t h = {(uint32_t)info->kind, op, (uint32_t)domain_len,
                                    (uint32_t)name_len};
        memcpy(buf, &h, sizeof h);
        memcpy(buf + sizeof h, info->name, domain_len - 1);
        buf[sizeof h + domain_len - 1] = '\0';
        memcpy(buf + sizeof h + domain_len, name, name_len - 1);
        buf[sizeof h + domain_len + name_len - 1] = '\0';
        upti_write_buffer_record(g_ring.buffer, UPTI_TRACE_RECORD_OPERATION, buf,
                                 sizeof h + domain_len + name_len);
    }
}

int ut_ring_start(const char *dir, unsigned kinds, int args, const char *output)
{
    /* Per thread, 1 MiB by default: the collector drains it while the program runs,
     * and every page of it the program touches costs it a page fault and resident
     * memory (docs/cli.md, UPTI_TRACE_BUFFER_SIZE). */
    size_t ring = (size_t)upti_env_get(UPTI_ENV_TRACE_BUFFER_SIZE);
    uint32_t slots = (uint32_t)upti_env_get(UPTI_ENV_TRACE_RING_SLOTS);
    /* A folder named by hand that does not exist yet is made (else the SDK would take
     * the name for the ring file itself, and a forked child's file would go beside it). */
    if (mkdir(dir, 0700) == 0) {
        if (output == NULL && getenv("UPTI_TRACE_SESSION_START") != NULL) {
            /* upti run's folder (it made it and removes it at its end) is gone:
             * this process started after the run ended, and nobody would ever
             * drain a ring here. */
            rmdir(dir);
            upti_log_warning("pid %d started after its upti run ended (the ring folder %s is "
                             "gone): not traced", (int)getpid(), dir);
            return 0; /* initialized, recording nothing: no second line from libupti */
        }
    } else if (errno != EEXIST) {
        upti_log_error("cannot create the ring folder %s: %s", dir, strerror(errno));
    }
    /* A folder another user made first, or may write (UPTI_TRACE_RING_DIR=/dev/shm/r
     * taken by someone else): nothing is recorded there; said once. */
    char why[8192];
    if (upti_check_ring_folder(dir, why, sizeof why) != 0 && errno != ENOENT) {
        upti_log_error("%s: pid %d not traced", why, (int)getpid());
        return 0; /* initialized, recording nothing: no second line from libupti */
    }
    upti_status_t st = upti_create_context(&g_ring.context);
    if (st == UPTI_STATUS_SUCCESS)
        st = upti_create_shared_buffer(g_ring.context, ring, UPTI_BUFFER_POLICY_LOSSLESS, dir,
                                       slots, &g_ring.buffer);
    for (int kind = 1; st == UPTI_STATUS_SUCCESS && kind < 32; kind++) {
        int want = (kinds >> kind) & 1;
        /* Kernel names of symbols come with kernel tracing. */
        if (kind == UPTI_TRACING_KIND_CODE_OBJECT &&
            ((kinds >> UPTI_TRACING_KIND_KERNEL_DISPATCH) & 1))
            want = 1;
        if (!want)
            continue;
        upti_status_t s = upti_configure_buffer_tracing_service(
            g_ring.context, (upti_tracing_kind_t)kind, NULL, 0, g_ring.buffer);
        if (s != UPTI_STATUS_SUCCESS && s != UPTI_STATUS_ERROR_KIND_NOT_FOUND) {
            const char *name = "?";
            upti_get_tracing_kind_name((upti_tracing_kind_t)kind, &name);
            upti_log_error("cannot trace %s: %s", name, upti_get_status_name(s));
        }
    }
    if (st == UPTI_STATUS_SUCCESS && ((kinds >> UPTI_TRACING_KIND_RUNTIME_API) & 1)) {
        upti_status_t s = upti_at_named_intercept_table_registration(NULL, 0, write_operation_names,
                                                                     NULL);
        if (s != UPTI_STATUS_SUCCESS)
            upti_log_error("cannot name the operations of described runtimes: %s",
                           upti_get_status_name(s));
    }
    int args_ok = 0;
    if (st == UPTI_STATUS_SUCCESS && args) {
        /* Arguments come from a callback service, on a context of their own. */
        upti_status_t s = upti_create_context(&g_ring.args_context);
        /* Of the kinds recorded whose arguments UPTI describes: OpenCL, described runtimes. */
        if (s == UPTI_STATUS_SUCCESS && ((kinds >> UPTI_TRACING_KIND_OPENCL_API) & 1))
            s = upti_configure_callback_tracing_service(g_ring.args_context,
                                                        UPTI_TRACING_KIND_OPENCL_API, NULL, 0,
                                                        args_callback, NULL);
        if (s == UPTI_STATUS_SUCCESS && ((kinds >> UPTI_TRACING_KIND_RUNTIME_API) & 1))
            s = upti_configure_callback_tracing_service(g_ring.args_context,
                                                        UPTI_TRACING_KIND_RUNTIME_API, NULL, 0,
                                                        args_callback, NULL);
        if (s == UPTI_STATUS_SUCCESS)
            args_ok = 1;
        else if (s != UPTI_STATUS_ERROR_KIND_NOT_FOUND)
            upti_log_error("cannot record API arguments: %s", upti_get_status_name(s));
    }
    /* Started now, or when the first capture window opens (capture.h). */
    if (st == UPTI_STATUS_SUCCESS) {
        upti_context_id_t gated[2] = {g_ring.context, g_ring.args_context};
        st = ut_capture_start(gated, args_ok ? 2 : 1, g_ring.buffer);
    }
    if (st != UPTI_STATUS_SUCCESS) {
        upti_log_error("tracing not started: %s", upti_get_status_name(st));
        return 1;
    }
    g_ring.started = 1;
    write_naming_metadata(output);
    char bits[24];
    snprintf(bits, sizeof bits, "%x", kinds);
    ut_ring_set_metadata(g_ring.buffer, "kinds", bits);
    return 0;
}

static void write_runtime_metadata(const char *key, const char *value, void *data)
{
    (void)data;
    ut_ring_set_metadata(g_ring.buffer, key, value);
}

void ut_ring_finalize(void)
{
    if (!g_ring.started)
        return;
    ut_capture_finalize();
    upti_query_runtime_metadata(write_runtime_metadata, NULL);
    uint64_t cut = 0;
    upti_get_marker_texts_truncated(&cut);
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)cut);
    ut_ring_set_metadata(g_ring.buffer, "marker_texts_truncated", text);
    ut_ring_set_metadata(g_ring.buffer, "finalized", "1");
    upti_destroy_buffer(g_ring.buffer);
    g_ring.started = 0;
}
