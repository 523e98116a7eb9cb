/* SPDX-License-Identifier: MIT */
/* Names and basics of libupti that need no tool: status strings, kind and
 * operation names (by id and by iteration), phase names, timestamps, thread
 * ids, the version, and the host agents. */
#include <upti/upti.h>
#include <upti/compat.h> /* the UPTI 0.1 names, checked against the new ones */

#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

static void test_status_strings(void)
{
    static const char *const names[UPTI_STATUS_LAST] = {
        "UPTI_STATUS_SUCCESS",
        "UPTI_STATUS_ERROR",
        "UPTI_STATUS_ERROR_INVALID_ARGUMENT",
        "UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND",
        "UPTI_STATUS_ERROR_BUFFER_NOT_FOUND",
        "UPTI_STATUS_ERROR_KIND_NOT_FOUND",
        "UPTI_STATUS_ERROR_OPERATION_NOT_FOUND",
        "UPTI_STATUS_ERROR_THREAD_NOT_FOUND",
        "UPTI_STATUS_ERROR_AGENT_NOT_FOUND",
        "UPTI_STATUS_ERROR_CONFIGURATION_LOCKED",
        "UPTI_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED",
        "UPTI_STATUS_ERROR_OUT_OF_RESOURCES",
        "UPTI_STATUS_ERROR_DEADLOCK",
        "UPTI_STATUS_ERROR_NOT_INITIALIZED",
        "UPTI_STATUS_ERROR_FINALIZED",
        "UPTI_STATUS_ERROR_INCOMPATIBLE_ABI",
        "UPTI_STATUS_ERROR_NOT_AVAILABLE",
        "UPTI_STATUS_ERROR_NOT_IMPLEMENTED",
        "UPTI_STATUS_ERROR_CALLBACK_CONTEXT",
    };
    for (int s = 0; s < UPTI_STATUS_LAST; s++) {
        const char *got = upti_get_status_string((upti_status_t)s);
        if (got == NULL || strcmp(got, names[s]) != 0) {
            fprintf(stderr, "FAIL: upti_get_status_string(%d) = %s, expected %s\n", s,
                    got ? got : "NULL", names[s]);
            test_failures++;
        }
    }
    CHECK(upti_get_status_string(UPTI_STATUS_LAST) == NULL);
    CHECK(upti_get_status_string((upti_status_t)-1) == NULL);
    CHECK(upti_get_status_string((upti_status_t)1000) == NULL);
}

typedef struct seen_t {
    int n;
    uint32_t ids[4096];
    int stop_after; /* return nonzero after this many (0: never) */
} seen_t;

static int on_kind(upti_tracing_kind_t kind, void *data)
{
    seen_t *s = data;
    if (s->n < 4096)
        s->ids[s->n] = (uint32_t)kind;
    s->n++;
    return s->stop_after != 0 && s->n >= s->stop_after;
}

static int on_operation(upti_tracing_kind_t kind, uint32_t op, void *data)
{
    (void)kind;
    seen_t *s = data;
    if (s->n < 4096)
        s->ids[s->n] = op;
    s->n++;
    return s->stop_after != 0 && s->n >= s->stop_after;
}

static void test_kind_and_operation_names(void)
{
    static const char *const kind_names[UPTI_TRACING_KIND_LAST] = {
        NULL, "MARKER_API", "OPENCL_API", "KERNEL_DISPATCH", "MEMORY_COPY",
        "MEMORY_ALLOCATION", "CODE_OBJECT", "VULKAN_API", "RUNTIME_API",
    };
    /* Operations each kind must have (enum LAST - 1); OPENCL_API: see below. */
    static const uint32_t op_counts[UPTI_TRACING_KIND_LAST] = {
        0,
        UPTI_MARKER_API_LAST - 1,
        0,
        UPTI_KERNEL_DISPATCH_LAST - 1,
        UPTI_MEMORY_COPY_LAST - 1,
        UPTI_MEMORY_ALLOCATION_LAST - 1,
        UPTI_CODE_OBJECT_LAST - 1,
        0,
        0, /* RUNTIME_API: none until a runtime describes its API (test_runtime_api_names.c) */
    };

    static seen_t kinds;
    CHECK_STATUS(upti_iterate_tracing_kinds(on_kind, &kinds), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(kinds.n, UPTI_TRACING_KIND_LAST - 1);
    for (int i = 0; i < kinds.n && i < UPTI_TRACING_KIND_LAST - 1; i++)
        CHECK_EQ_U64(kinds.ids[i], i + 1);

    static seen_t stopped;
    stopped.stop_after = 2;
    CHECK_STATUS(upti_iterate_tracing_kinds(on_kind, &stopped), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(stopped.n, 2);

    for (int k = 1; k < UPTI_TRACING_KIND_LAST; k++) {
        const char *name = NULL;
        CHECK_STATUS(upti_get_tracing_kind_name((upti_tracing_kind_t)k, &name), UPTI_STATUS_SUCCESS);
        if (name == NULL || strcmp(name, kind_names[k]) != 0) {
            fprintf(stderr, "FAIL: kind %d is named %s, expected %s\n", k, name ? name : "NULL",
                    kind_names[k]);
            test_failures++;
        }

        static seen_t ops;
        memset(&ops, 0, sizeof ops);
        CHECK_STATUS(upti_iterate_tracing_kind_operations((upti_tracing_kind_t)k, on_operation, &ops),
                     UPTI_STATUS_SUCCESS);
        if (k == UPTI_TRACING_KIND_OPENCL_API) {
            /* Named from src/names/opencl/opencl_operations.def, with or without OpenCL
             * headers on the build machine: all 149 entries of the ICD table. */
            CHECK_EQ_U64(ops.n, 149);
        } else if (k == UPTI_TRACING_KIND_VULKAN_API) {
            /* Their operations come from the Vulkan registry; whatever they are, they
             * are numbered 1..n in order and named. */
        } else if ((uint32_t)ops.n != op_counts[k]) {
            fprintf(stderr, "FAIL: kind %s iterates %d operations, expected %u\n", kind_names[k],
                    ops.n, op_counts[k]);
            test_failures++;
        }
        const char *names[4096];
        for (int i = 0; i < ops.n && i < 4096; i++) {
            CHECK_EQ_U64(ops.ids[i], i + 1);
            const char *op_name = NULL;
            CHECK_STATUS(upti_get_tracing_operation_name((upti_tracing_kind_t)k, ops.ids[i], &op_name),
                         UPTI_STATUS_SUCCESS);
            names[i] = op_name;
            if (op_name == NULL || op_name[0] == '\0') {
                fprintf(stderr, "FAIL: kind %s operation %u has no name\n", kind_names[k],
                        ops.ids[i]);
                test_failures++;
                continue;
            }
            for (int j = 0; j < i; j++)
                if (names[j] != NULL && strcmp(names[j], op_name) == 0) {
                    fprintf(stderr, "FAIL: kind %s operations %d and %d are both named %s\n",
                            kind_names[k], j + 1, i + 1, op_name);
                    test_failures++;
                }
        }
        const char *none = NULL;
        CHECK_STATUS(upti_get_tracing_operation_name((upti_tracing_kind_t)k, (uint32_t)ops.n + 1,
                                                     &none),
                     UPTI_STATUS_ERROR_OPERATION_NOT_FOUND);
    }
    const char *name = NULL;
    CHECK_STATUS(upti_get_tracing_kind_name(UPTI_TRACING_KIND_LAST, &name),
                 UPTI_STATUS_ERROR_KIND_NOT_FOUND);
    CHECK_STATUS(upti_get_tracing_kind_name(UPTI_TRACING_KIND_NONE, &name),
                 UPTI_STATUS_ERROR_KIND_NOT_FOUND);
    CHECK_STATUS(upti_get_tracing_operation_name(UPTI_TRACING_KIND_LAST, 1, &name),
                 UPTI_STATUS_ERROR_KIND_NOT_FOUND);
    CHECK_STATUS(upti_get_tracing_operation_name(UPTI_TRACING_KIND_MARKER_API,
                                                 UPTI_MARKER_API_LAST, &name),
                 UPTI_STATUS_ERROR_OPERATION_NOT_FOUND);
    CHECK_STATUS(upti_get_tracing_kind_name(UPTI_TRACING_KIND_MARKER_API, NULL),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_iterate_tracing_kind_operations(UPTI_TRACING_KIND_LAST, on_operation, NULL),
                 UPTI_STATUS_ERROR_KIND_NOT_FOUND);

    CHECK(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_ENTER) != NULL &&
          strcmp(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_ENTER), "ENTER") == 0);
    CHECK(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_EXIT) != NULL &&
          strcmp(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_EXIT), "EXIT") == 0);
    CHECK(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_LOAD) != NULL &&
          strcmp(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_LOAD), "LOAD") == 0);
    CHECK(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_UNLOAD) != NULL &&
          strcmp(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_UNLOAD), "UNLOAD") == 0);
    CHECK(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_LAST) == NULL);
}

static uint64_t raw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_timestamps(void)
{
    /* UPTI's clock is CLOCK_MONOTONIC_RAW in ns (types.h). */
    uint64_t before = raw_now();
    upti_timestamp_t ts = 0, prev = 0;
    CHECK_STATUS(upti_get_timestamp(&ts), UPTI_STATUS_SUCCESS);
    uint64_t after = raw_now();
    /* Through the TSC, calibrated against CLOCK_MONOTONIC_RAW: within 100 us of it
     * (a slow ASan run put it a little outside [before, after]); another clock
     * (REALTIME, BOOTTIME, MONOTONIC's slewed time) is off by far more. */
    CHECK(ts + 100000 >= before && ts <= after + 100000);
    long backwards = 0;
    for (int i = 0; i < 1000000; i++) {
        prev = ts;
        upti_get_timestamp(&ts);
        backwards += ts < prev;
    }
    CHECK_EQ_U64(backwards, 0);
    CHECK_STATUS(upti_get_timestamp(NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
}

static void *thread_main(void *arg)
{
    upti_thread_id_t *tid = arg;
    upti_get_thread_id(&tid[0]);
    tid[1] = (upti_thread_id_t)syscall(SYS_gettid);
    return NULL;
}

static void test_thread_ids(void)
{
    upti_thread_id_t tid = 0;
    CHECK_STATUS(upti_get_thread_id(&tid), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(tid, syscall(SYS_gettid));
    upti_thread_id_t other[2] = {0, 0};
    pthread_t t;
    pthread_create(&t, NULL, thread_main, other);
    pthread_join(t, NULL);
    CHECK_EQ_U64(other[0], other[1]);
    CHECK(other[0] != tid);
}

static void test_version(void)
{
    uint32_t major = 99, minor = 99, patch = 99;
    CHECK_STATUS(upti_get_version(&major, &minor, &patch), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(major, UPTI_VERSION_MAJOR);
    CHECK_EQ_U64(minor, UPTI_VERSION_MINOR);
    CHECK_EQ_U64(patch, UPTI_VERSION_PATCH);
    CHECK_STATUS(upti_get_version(NULL, NULL, NULL), UPTI_STATUS_SUCCESS);
}

typedef struct agents_t {
    int cpus;
    int total;
    uint32_t cpu_units;
    int bad;
} agents_t;

static upti_status_t on_agents(const upti_agent_t **agents, size_t n, void *data)
{
    agents_t *a = data;
    a->total = (int)n;
    for (size_t i = 0; i < n; i++) {
        const upti_agent_t *ag = agents[i];
        if (ag == NULL || ag->size < sizeof(upti_agent_t) || ag->id.handle == 0) {
            a->bad++;
            continue;
        }
        for (size_t j = 0; j < i; j++)
            if (agents[j] != NULL && agents[j]->id.handle == ag->id.handle)
                a->bad++;
        if (ag->type == UPTI_AGENT_TYPE_CPU) {
            a->cpus++;
            a->cpu_units += ag->compute_units;
            if (ag->name == NULL || ag->name[0] == '\0' || ag->runtime == NULL ||
                strcmp(ag->runtime, "host") != 0 || ag->compute_units == 0) {
                fprintf(stderr, "FAIL: CPU agent name='%s' runtime='%s' units=%u\n",
                        ag->name ? ag->name : "(null)", ag->runtime ? ag->runtime : "(null)",
                        ag->compute_units);
                a->bad++;
            }
        }
    }
    return UPTI_STATUS_SUCCESS;
}

static void test_agents(void)
{
    agents_t a = {0, 0, 0, 0};
    CHECK_STATUS(upti_query_available_agents(on_agents, &a), UPTI_STATUS_SUCCESS);
    CHECK(a.cpus >= 1);
    CHECK_EQ_U64(a.bad, 0);
    CHECK(a.cpu_units >= 1 && a.cpu_units <= (uint32_t)sysconf(_SC_NPROCESSORS_CONF));
    CHECK_STATUS(upti_query_available_agents(NULL, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
}

/* OPENCL_API ids are fixed forever (src/names/opencl/opencl_operations.def). */
static void test_opencl_operation_ids(void)
{
    static const struct { uint32_t id; const char *name; } fixed[] = {
        {1, "clGetPlatformIDs"}, {7, "clRetainContext"}, {60, "clEnqueueNDRangeKernel"},
        {149, "clSetContextDestructorCallback"},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        const char *name = NULL;
        CHECK_STATUS(upti_get_tracing_operation_name(UPTI_TRACING_KIND_OPENCL_API, fixed[i].id,
                                                     &name),
                     UPTI_STATUS_SUCCESS);
        CHECK(name != NULL && strcmp(name, fixed[i].name) == 0);
    }
    const char *name = NULL;
    CHECK_STATUS(upti_get_tracing_operation_name(UPTI_TRACING_KIND_OPENCL_API, 150, &name),
                 UPTI_STATUS_ERROR_OPERATION_NOT_FOUND);
}

static int same_name(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* One naming scheme: every lookup is upti_get_<enum>_name, every enum ends in
 * _LAST; the UPTI 0.1 names (upti_callback_phase_name…, _MAX; compat.h) stay as aliases
 * that give the same answer for every value, one past the end included. */
static void test_lookup_names_and_aliases(void)
{
    CHECK(UPTI_CB_DOMAIN_LAST == UPTI_CB_DOMAIN_MAX && UPTI_CB_DOMAIN_LAST == 11);
    CHECK(UPTI_CB_PHASE_LAST == UPTI_CB_PHASE_MAX && UPTI_CB_PHASE_LAST == 6);
    CHECK(UPTI_INTERNAL_EVENT_TYPE_LAST == UPTI_INTERNAL_EVENT_TYPE_MAX &&
          UPTI_INTERNAL_EVENT_TYPE_LAST == 3);
    CHECK(UPTI_GPU_OPERATION_KIND_LAST == UPTI_GPU_OPERATION_KIND_MAX &&
          UPTI_GPU_OPERATION_KIND_LAST == 11);
    CHECK(UPTI_INTERNAL_THREAD_LAST == 3);

    for (int d = -1; d <= UPTI_CB_DOMAIN_LAST; d++)
        CHECK(same_name(upti_get_callback_domain_name((upti_callback_domain_t)d),
                        upti_callback_domain_name((upti_callback_domain_t)d)));
    for (int p = -1; p <= UPTI_CB_PHASE_LAST; p++)
        CHECK(same_name(upti_get_callback_phase_kind_name((upti_callback_phase_kind_t)p),
                        upti_callback_phase_name((upti_callback_phase_kind_t)p)));
    for (int k = -1; k <= UPTI_GPU_OPERATION_KIND_LAST; k++)
        CHECK(same_name(upti_get_gpu_operation_kind_name((upti_gpu_operation_kind_t)k),
                        upti_gpu_operation_kind_name((upti_gpu_operation_kind_t)k)));
    for (int s = -1; s <= UPTI_STATUS_LAST; s++)
        CHECK(same_name(upti_get_status_name((upti_status_t)s),
                        upti_get_status_string((upti_status_t)s)));

    CHECK(same_name(upti_get_callback_domain_name(UPTI_CB_DOMAIN_INTERNAL_EVENT), "INTERNAL_EVENT"));
    CHECK(upti_get_callback_domain_name(UPTI_CB_DOMAIN_LAST) == NULL);
    CHECK(same_name(upti_get_callback_phase_kind_name(UPTI_CB_PHASE_API_ENTER), "API_ENTER"));
    CHECK(upti_get_callback_phase_kind_name(UPTI_CB_PHASE_LAST) == NULL);
    CHECK(same_name(upti_get_gpu_operation_kind_name(UPTI_GPU_OPERATION_KIND_OTHER), "OTHER"));
    CHECK(upti_get_gpu_operation_kind_name(UPTI_GPU_OPERATION_KIND_LAST) == NULL);
    CHECK(same_name(upti_get_status_name(UPTI_STATUS_ERROR_DEADLOCK), "UPTI_STATUS_ERROR_DEADLOCK"));
    CHECK(upti_get_status_name(UPTI_STATUS_LAST) == NULL);
    /* The two phase lookups differ by their enum, and say so: same value, other names. */
    CHECK(same_name(upti_get_callback_phase_name(UPTI_CALLBACK_PHASE_ENTER), "ENTER"));
    CHECK(same_name(upti_get_callback_phase_kind_name((upti_callback_phase_kind_t)UPTI_CALLBACK_PHASE_ENTER),
                    "API_ENTER"));
}

UNIT_TEST(names)
{
    test_status_strings();
    test_opencl_operation_ids();
    test_lookup_names_and_aliases();
    test_kind_and_operation_names();
    test_timestamps();
    test_thread_ids();
    test_version();
    test_agents();
    return test_result("names");
}
