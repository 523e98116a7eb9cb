/* SPDX-License-Identifier: MIT */
/* Per-thread state: thread id, correlation-id blocks, external correlation stacks. */
#include "internal.h"
#include "fork.h"

#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

UPTI_TLS upti_thread_state_t *upti_tls_state;
_Atomic uint64_t upti_correlation_counter = 1;

static pthread_key_t g_thread_key;
static pthread_once_t g_thread_key_once = PTHREAD_ONCE_INIT;

/* Every live thread's state is on one list, so that a forked child, which has
 * only the forking thread, frees the states of the threads it does not have. */
typedef struct state_node {
    struct state_node *prev, *next;
    upti_thread_state_t s;
} state_node;
static state_node *g_states;
static pthread_mutex_t g_states_lock = PTHREAD_MUTEX_INITIALIZER;

static state_node *node_of(upti_thread_state_t *s)
{
    return (state_node *)((char *)s - offsetof(state_node, s));
}

static void free_state(upti_thread_state_t *s)
{
    for (uint32_t i = 0; i < UPTI_MAX_CONTEXTS; i++)
        free(s->external[i]);
    free(node_of(s));
}

static void thread_exit(void *arg)
{
    upti_thread_state_t *s = arg;
    upti_buffer_thread_exit(s);
    state_node *n = node_of(s);
    pthread_mutex_lock(&g_states_lock);
    *(n->prev != NULL ? &n->prev->next : &g_states) = n->next;
    if (n->next != NULL)
        n->next->prev = n->prev;
    pthread_mutex_unlock(&g_states_lock);
    upti_tls_state = NULL;
    free_state(s);
}

static void make_key(void)
{
    pthread_key_create(&g_thread_key, thread_exit);
}

upti_thread_state_t *upti_thread_state_slow(void)
{
    state_node *n = calloc(1, sizeof *n);
    if (n == NULL) {
        upti_log_error("out of memory for thread state");
        abort();
    }
    upti_thread_state_t *s = &n->s;
    pthread_mutex_lock(&g_states_lock);
    n->next = g_states;
    if (g_states != NULL)
        g_states->prev = n;
    g_states = n;
    pthread_mutex_unlock(&g_states_lock);
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

/* A forked child is a new process: its only thread has a new id, and the
 * states of the other threads (gone) are freed. Their buffer rings are
 * orphaned by buffer.c's fork handler (fork.h). */
void upti_thread_fork_prepare(void)
{
    pthread_mutex_lock(&g_states_lock);
}

void upti_thread_fork_parent(void)
{
    pthread_mutex_unlock(&g_states_lock);
}

void upti_thread_fork_child(void)
{
    pthread_mutex_unlock(&g_states_lock);
    upti_thread_state_t *self = upti_tls_state;
    state_node *keep = self != NULL ? node_of(self) : NULL;
    for (state_node *n = g_states, *next; n != NULL; n = next) {
        next = n->next;
        if (n != keep)
            free_state(&n->s);
    }
    g_states = keep;
    if (keep != NULL) {
        keep->prev = keep->next = NULL;
        self->tid = (upti_thread_id_t)syscall(SYS_gettid);
    }
}

UPTI_API upti_status_t upti_get_thread_id(upti_thread_id_t *tid)
{
    UPTI_RETURN_OUT(tid, upti_thread_state()->tid);
}

UPTI_API upti_status_t upti_get_timestamp(upti_timestamp_t *ts)
{
    UPTI_RETURN_OUT(ts, upti_now());
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

/* Pushes *pushed on the calling thread's stack of external ids of a context,
   or (pushed NULL) pops its top into *popped (if not NULL). */
static upti_status_t external_push_pop(upti_context_id_t context_id, const upti_user_data_t *pushed,
                                       upti_user_data_t *popped)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    uint32_t ctx;
    upti_status_t st = context_index(context_id, &ctx);
    if (st != UPTI_STATUS_SUCCESS)
        return st;
    upti_thread_state_t *s = upti_thread_state();
    struct external_stack *stack = s->external[ctx];
    if (pushed != NULL) {
        if (stack == NULL) {
            stack = calloc(1, sizeof *stack);
            if (stack == NULL)
                return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
            s->external[ctx] = stack;
        }
        if (stack->depth == UPTI_EXTERNAL_STACK_DEPTH)
            return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
        stack->ids[stack->depth++] = *pushed;
        s->external_mask |= 1u << ctx;
        return UPTI_STATUS_SUCCESS;
    }
    if (stack == NULL || stack->depth == 0)
        return UPTI_STATUS_ERROR_NOT_AVAILABLE;
    upti_user_data_t top = stack->ids[--stack->depth];
    if (stack->depth == 0)
        s->external_mask &= ~(1u << ctx);
    if (popped != NULL)
        *popped = top;
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_push_external_correlation_id(upti_context_id_t context_id,
                                                         upti_user_data_t external_id)
{
    return external_push_pop(context_id, &external_id, NULL);
}

UPTI_API upti_status_t upti_pop_external_correlation_id(upti_context_id_t context_id,
                                                        upti_user_data_t *external_id)
{
    return external_push_pop(context_id, NULL, external_id);
}
