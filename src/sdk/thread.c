/* Per-thread state: thread id, correlation-id blocks, external correlation stacks. */
#include "internal.h"

#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

UPTI_TLS upti_thread_state_t *upti_tls_state;
_Atomic uint64_t upti_correlation_counter = 1;

static pthread_key_t g_thread_key;
static pthread_once_t g_thread_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg)
{
    upti_thread_state_t *s = arg;
    upti_buffer_thread_exit(s);
    for (uint32_t i = 0; i < UPTI_MAX_CONTEXTS; i++)
        free(s->external[i]);
    upti_tls_state = NULL;
    free(s);
}

static void make_key(void)
{
    pthread_key_create(&g_thread_key, thread_exit);
}

upti_thread_state_t *upti_thread_state_slow(void)
{
    upti_thread_state_t *s = calloc(1, sizeof *s);
    if (s == NULL) {
        upti_log_error("out of memory for thread state");
        abort();
    }
    s->tid = (upti_thread_id_t)syscall(SYS_gettid);
    pthread_once(&g_thread_key_once, make_key);
    pthread_setspecific(g_thread_key, s);
    upti_tls_state = s;
    return s;
}

void upti_thread_mark_internal(void)
{
    upti_thread_state()->in_callback = 1;
}

/* A forked child is a new process: its only thread has a new id. */
static void after_fork_child(void)
{
    if (upti_tls_state != NULL)
        upti_tls_state->tid = (upti_thread_id_t)syscall(SYS_gettid);
}

__attribute__((constructor)) static void thread_init(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

UPTI_API upti_status_t upti_get_thread_id(upti_thread_id_t *tid)
{
    if (tid == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    *tid = upti_thread_state()->tid;
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_get_timestamp(upti_timestamp_t *ts)
{
    if (ts == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    *ts = upti_now();
    return UPTI_STATUS_SUCCESS;
}

static upti_status_t context_index(upti_context_id_t id, uint32_t *index)
{
    int valid = 0;
    upti_context_is_valid(id, &valid);
    if (!valid)
        return UPTI_STATUS_ERROR_CONTEXT_NOT_FOUND;
    *index = (uint32_t)(id.handle - 1);
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_push_external_correlation_id(upti_context_id_t context_id,
                                                         upti_user_data_t external_id)
{
    uint32_t ctx;
    upti_status_t st = context_index(context_id, &ctx);
    if (st != UPTI_STATUS_SUCCESS)
        return st;
    upti_thread_state_t *s = upti_thread_state();
    struct external_stack *stack = s->external[ctx];
    if (stack == NULL) {
        stack = calloc(1, sizeof *stack);
        if (stack == NULL)
            return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
        s->external[ctx] = stack;
    }
    if (stack->depth == UPTI_EXTERNAL_STACK_DEPTH)
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    stack->ids[stack->depth++] = external_id;
    s->external_mask |= 1u << ctx;
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_pop_external_correlation_id(upti_context_id_t context_id,
                                                        upti_user_data_t *external_id)
{
    uint32_t ctx;
    upti_status_t st = context_index(context_id, &ctx);
    if (st != UPTI_STATUS_SUCCESS)
        return st;
    upti_thread_state_t *s = upti_thread_state();
    struct external_stack *stack = s->external[ctx];
    if (stack == NULL || stack->depth == 0)
        return UPTI_STATUS_ERROR_NOT_AVAILABLE;
    upti_user_data_t top = stack->ids[--stack->depth];
    if (stack->depth == 0)
        s->external_mask &= ~(1u << ctx);
    if (external_id != NULL)
        *external_id = top;
    return UPTI_STATUS_SUCCESS;
}
