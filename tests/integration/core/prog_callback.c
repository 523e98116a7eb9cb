/* SPDX-License-Identifier: MIT */
/* Callback tracing of the marker API, checked call by call:
 *  - context A (every operation): an ENTER and an EXIT per uptx call, adjacent,
 *    in call order, with the user-data slot carried from ENTER to EXIT, the
 *    caller's thread id, one internal correlation id per call (equal at ENTER
 *    and EXIT, unique, non-zero), arguments and return values in the payload;
 *  - context B (RANGE_PUSH only): callbacks for pushes and nothing else, its
 *    own user-data slot, the same correlation id as A for the same call;
 *  - context C (never started): nothing;
 *  - A stopped: nothing; started again: callbacks again;
 *  - an external correlation id pushed for A is in A's records of the calls
 *    made while pushed, and in no record of B;
 *  - upti_iterate_callback_tracing_operation_args on uptx_range_push gives one
 *    argument "message" of type "const char *" whose value is the text.
 */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <pthread.h>
#include <string.h>

#include "check.h"
#include "test_tool.h"

#define MAX_EVENTS 256

typedef struct event_t {
    uint64_t ctx;
    uint32_t op;
    int phase;
    uint64_t corr;
    uint64_t external;
    upti_thread_id_t tid;
    uint64_t slot;        /* user_data->value seen at the callback (after ENTER stored it) */
    char text[32];        /* message / name argument */
    uint64_t arg_u64;     /* range_stop id, name_category category */
    int64_t retval;       /* EXIT: int_retval, or uint64_retval for range_start */
} event_t;

typedef struct arg_t {
    uint32_t index;
    char name[32];
    char type[32];
    char value[32];
    int32_t deref;
} arg_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static event_t g_events[MAX_EVENTS];
static int g_num_events;
static uint64_t g_next_slot = 1;
static upti_context_id_t g_a, g_b, g_c;
static arg_t g_push_args[8];
static int g_num_push_args;
static int g_push_args_done;
static arg_t g_cat_args[8];
static int g_num_cat_args;
static int g_cat_args_done;
static int g_c_calls;

static int collect_arg(upti_tracing_kind_t kind, uint32_t operation, uint32_t arg_index,
                       const void *arg_value_addr, int32_t indirection_count, const char *arg_type,
                       const char *arg_name, const char *arg_value_string,
                       int32_t dereference_count, void *data)
{
    (void)kind, (void)operation, (void)arg_value_addr, (void)indirection_count;
    arg_t *args = data;
    int *n = args == g_push_args ? &g_num_push_args : &g_num_cat_args;
    if (*n < 8) {
        arg_t *a = &args[*n];
        a->index = arg_index;
        snprintf(a->name, sizeof a->name, "%s", arg_name ? arg_name : "(null)");
        snprintf(a->type, sizeof a->type, "%s", arg_type ? arg_type : "(null)");
        snprintf(a->value, sizeof a->value, "%s", arg_value_string ? arg_value_string : "(null)");
        a->deref = dereference_count;
    }
    (*n)++;
    return 0;
}

static void on_marker(upti_callback_tracing_record_t record, upti_user_data_t *user_data,
                      void *data)
{
    pthread_mutex_lock(&g_lock);
    if (data == &g_c) {
        g_c_calls++;
        pthread_mutex_unlock(&g_lock);
        return;
    }
    if (g_num_events >= MAX_EVENTS) {
        pthread_mutex_unlock(&g_lock);
        return;
    }
    event_t *e = &g_events[g_num_events++];
    memset(e, 0, sizeof *e);
    e->ctx = record.context_id.handle;
    CHECK(record.context_id.handle == ((upti_context_id_t *)data)->handle);
    CHECK(record.kind == UPTI_TRACING_KIND_MARKER_API);
    CHECK(record.size >= sizeof(upti_callback_tracing_record_t));
    e->op = record.operation;
    e->phase = (int)record.phase;
    e->corr = record.correlation_id.internal;
    e->external = record.correlation_id.external.value;
    e->tid = record.thread_id;
    CHECK(user_data != NULL);
    if (record.phase == UPTI_CALLBACK_PHASE_ENTER && user_data != NULL)
        user_data->value = g_next_slot++;
    e->slot = user_data ? user_data->value : 0;

    const upti_callback_tracing_marker_api_data_t *p = record.payload;
    CHECK(p != NULL);
    if (p != NULL) {
        CHECK(p->size >= sizeof(upti_callback_tracing_marker_api_data_t));
        const char *text = NULL;
        switch (record.operation) {
        case UPTI_MARKER_API_RANGE_PUSH: text = p->args.range_push.message; break;
        case UPTI_MARKER_API_RANGE_START: text = p->args.range_start.message; break;
        case UPTI_MARKER_API_MARK: text = p->args.mark.message; break;
        case UPTI_MARKER_API_NAME_THREAD: text = p->args.name_thread.name; break;
        case UPTI_MARKER_API_NAME_CATEGORY:
            text = p->args.name_category.name;
            e->arg_u64 = p->args.name_category.category;
            break;
        case UPTI_MARKER_API_RANGE_STOP: e->arg_u64 = p->args.range_stop.id; break;
        default: break;
        }
        if (text != NULL)
            snprintf(e->text, sizeof e->text, "%s", text);
        if (record.phase == UPTI_CALLBACK_PHASE_EXIT)
            e->retval = record.operation == UPTI_MARKER_API_RANGE_START
                            ? (int64_t)p->retval.uint64_retval
                            : (int64_t)p->retval.int_retval;
    }
    if (data == &g_a && record.phase == UPTI_CALLBACK_PHASE_ENTER) {
        if (record.operation == UPTI_MARKER_API_RANGE_PUSH && !g_push_args_done) {
            g_push_args_done = 1;
            CHECK_STATUS(upti_iterate_callback_tracing_operation_args(record, collect_arg, 1,
                                                                      g_push_args),
                         UPTI_STATUS_SUCCESS);
        }
        if (record.operation == UPTI_MARKER_API_NAME_CATEGORY && !g_cat_args_done) {
            g_cat_args_done = 1;
            CHECK_STATUS(upti_iterate_callback_tracing_operation_args(record, collect_arg, 1,
                                                                      g_cat_args),
                         UPTI_STATUS_SUCCESS);
        }
    }
    pthread_mutex_unlock(&g_lock);
}

static int tool_init(upti_client_finalize_t fini, void *tool_data)
{
    (void)fini, (void)tool_data;
    static const uint32_t push_only[] = {UPTI_MARKER_API_RANGE_PUSH};
    CHECK_STATUS(upti_create_context(&g_a), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_context(&g_b), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_create_context(&g_c), UPTI_STATUS_SUCCESS);
    CHECK(g_a.handle != g_b.handle && g_b.handle != g_c.handle && g_a.handle != g_c.handle);
    CHECK_STATUS(upti_configure_callback_tracing_service(g_a, UPTI_TRACING_KIND_MARKER_API, NULL,
                                                         0, on_marker, &g_a),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_callback_tracing_service(g_b, UPTI_TRACING_KIND_MARKER_API,
                                                         push_only, 1, on_marker, &g_b),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_configure_callback_tracing_service(g_c, UPTI_TRACING_KIND_MARKER_API, NULL,
                                                         0, on_marker, &g_c),
                 UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(g_a), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(g_b), UPTI_STATUS_SUCCESS);
    return 0;
}

TEST_CONFIGURE(configure, tool_init, NULL)

static upti_thread_id_t g_thread2_tid;
static int g_thread2_push, g_thread2_pop;

static void *thread2(void *arg)
{
    (void)arg;
    upti_get_thread_id(&g_thread2_tid);
    g_thread2_push = uptx_range_push("t2");
    g_thread2_pop = uptx_range_pop();
    return NULL;
}

/* What one uptx call must produce in a context's log. */
typedef struct expect_t {
    uint32_t op;
    const char *text; /* NULL: no text argument */
    int64_t retval;   /* checked for push, pop, start */
    uint64_t external;
    int thread2;
} expect_t;

/* Checks the events of context ctx against calls[], ENTER then EXIT per call. */
static void check_log(const char *label, upti_context_id_t ctx, const expect_t *calls, int n,
                      upti_thread_id_t main_tid, uint64_t *corr_out)
{
    int k = 0;
    for (int i = 0; i < g_num_events; i++)
        if (g_events[i].ctx == ctx.handle)
            k++;
    if (k != 2 * n) {
        fprintf(stderr, "FAIL %s: %d callbacks, expected %d\n", label, k, 2 * n);
        test_failures++;
    }
    int call = 0;
    const event_t *enter = NULL;
    for (int i = 0; i < g_num_events && call < n; i++) {
        const event_t *e = &g_events[i];
        if (e->ctx != ctx.handle)
            continue;
        const expect_t *x = &calls[call];
        int ok = e->op == x->op && e->tid == (x->thread2 ? g_thread2_tid : main_tid) &&
                 e->external == x->external && e->corr != 0 &&
                 (x->text == NULL ? e->text[0] == '\0' : strcmp(e->text, x->text) == 0);
        if (enter == NULL) {
            ok = ok && e->phase == UPTI_CALLBACK_PHASE_ENTER;
            enter = e;
        } else {
            ok = ok && e->phase == UPTI_CALLBACK_PHASE_EXIT && e->corr == enter->corr &&
                 e->slot == enter->slot && e->arg_u64 == enter->arg_u64;
            if (x->op == UPTI_MARKER_API_RANGE_PUSH || x->op == UPTI_MARKER_API_RANGE_POP ||
                x->op == UPTI_MARKER_API_RANGE_START)
                ok = ok && e->retval == x->retval;
            if (corr_out != NULL)
                corr_out[call] = e->corr;
            enter = NULL;
            call++;
        }
        if (!ok) {
            fprintf(stderr,
                    "FAIL %s: call %d: got op=%u phase=%d corr=%llu ext=%llu tid=%llu slot=%llu "
                    "text='%s' retval=%lld; expected op=%u text='%s' retval=%lld ext=%llu\n",
                    label, call, e->op, e->phase, (unsigned long long)e->corr,
                    (unsigned long long)e->external, (unsigned long long)e->tid,
                    (unsigned long long)e->slot, e->text, (long long)e->retval, x->op,
                    x->text ? x->text : "", (long long)x->retval,
                    (unsigned long long)x->external);
            test_failures++;
        }
    }
}

int main(void)
{
    CHECK_STATUS(upti_force_configure(configure), UPTI_STATUS_SUCCESS);
    upti_thread_id_t main_tid = 0;
    CHECK_STATUS(upti_get_thread_id(&main_tid), UPTI_STATUS_SUCCESS);

    int d0 = uptx_range_push("alpha");
    uptx_mark("m1");
    upti_user_data_t ext = {.value = 42};
    CHECK_STATUS(upti_push_external_correlation_id(g_a, ext), UPTI_STATUS_SUCCESS);
    int d1 = uptx_range_push("beta");
    int r1 = uptx_range_pop();
    upti_user_data_t popped = {.value = 0};
    CHECK_STATUS(upti_pop_external_correlation_id(g_a, &popped), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(popped.value, 42);
    int r0 = uptx_range_pop();
    uint64_t id = uptx_range_start("s");
    uptx_range_stop(id);
    uptx_name_thread("main-thread");
    uptx_name_category(7, "cat7");
    int rneg = uptx_range_pop();
    CHECK_STATUS(upti_pop_external_correlation_id(g_a, &popped),
                 UPTI_STATUS_ERROR_NOT_AVAILABLE);

    /* What the application sees is what it would see without UPTI. */
    CHECK_EQ_U64(d0, 0);
    CHECK_EQ_U64(d1, 1);
    CHECK_EQ_U64(r1, 1);
    CHECK_EQ_U64(r0, 0);
    CHECK_EQ_U64(rneg, -1);
    CHECK(id != 0);

    /* A stopped context produces nothing. */
    CHECK_STATUS(upti_stop_context(g_a), UPTI_STATUS_SUCCESS);
    uptx_mark("hidden");
    CHECK_STATUS(upti_start_context(g_a), UPTI_STATUS_SUCCESS);

    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread2, NULL) == 0);
    pthread_join(t, NULL);
    CHECK_EQ_U64(g_thread2_push, 0);
    CHECK_EQ_U64(g_thread2_pop, 0);
    CHECK(g_thread2_tid != main_tid);

    pthread_mutex_lock(&g_lock);
    const expect_t calls_a[] = {
        {UPTI_MARKER_API_RANGE_PUSH, "alpha", 0, 0, 0},
        {UPTI_MARKER_API_MARK, "m1", 0, 0, 0},
        {UPTI_MARKER_API_RANGE_PUSH, "beta", 1, 42, 0},
        {UPTI_MARKER_API_RANGE_POP, NULL, 1, 42, 0},
        {UPTI_MARKER_API_RANGE_POP, NULL, 0, 0, 0},
        {UPTI_MARKER_API_RANGE_START, "s", (int64_t)id, 0, 0},
        {UPTI_MARKER_API_RANGE_STOP, NULL, 0, 0, 0},
        {UPTI_MARKER_API_NAME_THREAD, "main-thread", 0, 0, 0},
        {UPTI_MARKER_API_NAME_CATEGORY, "cat7", 0, 0, 0},
        {UPTI_MARKER_API_RANGE_POP, NULL, -1, 0, 0},
        {UPTI_MARKER_API_RANGE_PUSH, "t2", 0, 0, 1},
        {UPTI_MARKER_API_RANGE_POP, NULL, 0, 0, 1},
    };
    const expect_t calls_b[] = {
        {UPTI_MARKER_API_RANGE_PUSH, "alpha", 0, 0, 0},
        {UPTI_MARKER_API_RANGE_PUSH, "beta", 1, 0, 0},
        {UPTI_MARKER_API_RANGE_PUSH, "t2", 0, 0, 1},
    };
    enum { NA = sizeof calls_a / sizeof calls_a[0], NB = sizeof calls_b / sizeof calls_b[0] };
    uint64_t corr_a[NA] = {0}, corr_b[NB] = {0};
    check_log("context A", g_a, calls_a, NA, main_tid, corr_a);
    check_log("context B", g_b, calls_b, NB, main_tid, corr_b);
    CHECK_EQ_U64(g_c_calls, 0);

    /* One internal correlation id per call: unique, and the same in every context. */
    for (int i = 0; i < NA; i++)
        for (int j = i + 1; j < NA; j++)
            if (corr_a[i] == corr_a[j]) {
                fprintf(stderr, "FAIL: calls %d and %d share correlation id %llu\n", i, j,
                        (unsigned long long)corr_a[i]);
                test_failures++;
            }
    CHECK_EQ_U64(corr_b[0], corr_a[0]);
    CHECK_EQ_U64(corr_b[1], corr_a[2]);
    CHECK_EQ_U64(corr_b[2], corr_a[10]);
    /* Slots of different contexts are different slots. */
    for (int i = 0; i < g_num_events; i++)
        for (int j = 0; j < g_num_events; j++)
            if (g_events[i].ctx != g_events[j].ctx &&
                g_events[i].phase == UPTI_CALLBACK_PHASE_EXIT &&
                g_events[i].slot == g_events[j].slot) {
                fprintf(stderr, "FAIL: a user-data slot value leaked between contexts\n");
                test_failures++;
            }

    /* Arguments of uptx_range_push("alpha") and uptx_name_category(7, "cat7"). */
    CHECK_EQ_U64(g_num_push_args, 1);
    if (g_num_push_args >= 1) {
        CHECK_EQ_U64(g_push_args[0].index, 0);
        CHECK(strcmp(g_push_args[0].name, "message") == 0);
        CHECK(strcmp(g_push_args[0].type, "const char *") == 0);
        CHECK(strcmp(g_push_args[0].value, "alpha") == 0);
        if (strcmp(g_push_args[0].value, "alpha") != 0 ||
            strcmp(g_push_args[0].type, "const char *") != 0)
            fprintf(stderr, "  push arg: name='%s' type='%s' value='%s' deref=%d\n",
                    g_push_args[0].name, g_push_args[0].type, g_push_args[0].value,
                    g_push_args[0].deref);
    }
    CHECK_EQ_U64(g_num_cat_args, 2);
    if (g_num_cat_args >= 2) {
        CHECK(strcmp(g_cat_args[0].name, "category") == 0);
        CHECK(strcmp(g_cat_args[0].value, "7") == 0);
        CHECK(strcmp(g_cat_args[1].name, "name") == 0);
        CHECK(strcmp(g_cat_args[1].value, "cat7") == 0);
        CHECK_EQ_U64(g_cat_args[1].index, 1);
    }
    pthread_mutex_unlock(&g_lock);
    return test_result("callback_tracing");
}
