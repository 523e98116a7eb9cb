/* SPDX-License-Identifier: MIT */
/* Subscribers (callback.h): handles, enabled domains, dispatch.
 *
 * A subscriber is a slot of a fixed table; its handle carries the slot and a
 * generation, so a handle kept after unsubscribe never matches again. For
 * each domain two bit masks (ENTER, the rest) say which slots want it; a
 * notification loads one mask. The union of enabled domains is one word the
 * runtime providers read; when it changes they reconfigure the callback
 * services of the subscribers' internal context (context.c), so that the
 * runtimes' wrappers need no check of their own.
 */
#include "internal.h"
#include "fork.h"

#include <upti/compat.h> /* the UPTI 0.1 names of the lookups, defined here */
#include <upti/runtime_callback.h>

#include <sched.h>
#include <stdio.h>
#include <string.h>

#define MAX_PROVIDERS 8

struct subscriber {
    uint32_t generation; /* under g_subscribers_lock */
    bool in_use;         /* under g_subscribers_lock */
    upti_callback_function_t callback;
    void *user_data;
    _Atomic uint32_t busy; /* callbacks of this slot running now */
};

static struct subscriber g_subs[UPTI_MAX_SUBSCRIBERS];
static _Atomic uint32_t g_enter_mask[UPTI_CB_DOMAIN_LAST];
static _Atomic uint32_t g_other_mask[UPTI_CB_DOMAIN_LAST];
uint32_t upti_subscriber_domain_word;
static upti_runtime_subscriber_provider_t g_providers[MAX_PROVIDERS];
static int g_num_providers;
/* Guards g_subs, the domain masks and g_providers. Outermost: providers' domains_changed()
 * run under it and take the contexts' lock (lock order: internal.h). */
static pthread_mutex_t g_subscribers_lock = PTHREAD_MUTEX_INITIALIZER;

static bool two_phase(upti_callback_domain_t d)
{
    return d == UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED ||
           d == UPTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION || d == UPTI_CB_DOMAIN_DRIVER_API;
}

/* The slot of a live handle, or -1. Caller holds g_subscribers_lock. */
static int slot_of(upti_callback_subscriber_t h)
{
    uint64_t slot = (h.handle & 0xff) - 1;
    uint32_t gen = (uint32_t)(h.handle >> 8);
    if (h.handle == 0 || slot >= UPTI_MAX_SUBSCRIBERS || !g_subs[slot].in_use ||
        g_subs[slot].generation != gen)
        return -1;
    return (int)slot;
}

/* Recomputes the domain word and tells the providers. Caller holds g_subscribers_lock. */
static void domains_changed(void)
{
    uint32_t word = 0;
    for (int d = 1; d < UPTI_CB_DOMAIN_LAST; d++)
        if (atomic_load(&g_enter_mask[d]) | atomic_load(&g_other_mask[d]))
            word |= 1u << d;
    if (word == __atomic_load_n(&upti_subscriber_domain_word, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&upti_subscriber_domain_word, word, __ATOMIC_RELEASE);
    for (int i = 0; i < g_num_providers; i++)
        g_providers[i].domains_changed(word, g_providers[i].data);
}

static void set_bits(int slot, upti_callback_domain_t d, bool enter, bool other)
{
    uint32_t bit = 1u << slot;
    if (enter)
        atomic_fetch_or(&g_enter_mask[d], bit);
    else
        atomic_fetch_and(&g_enter_mask[d], ~bit);
    if (other)
        atomic_fetch_or(&g_other_mask[d], bit);
    else
        atomic_fetch_and(&g_other_mask[d], ~bit);
}

UPTI_API upti_status_t upti_callback_subscribe(upti_callback_subscriber_t *subscriber,
                                               upti_callback_function_t callback, void *user_data)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (subscriber == NULL || callback == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&g_subscribers_lock);
    upti_status_t st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    for (int i = 0; i < UPTI_MAX_SUBSCRIBERS; i++) {
        struct subscriber *s = &g_subs[i];
        if (s->in_use)
            continue;
        s->in_use = true;
        s->generation = (s->generation + 1) & 0xffffffu;
        if (s->generation == 0)
            s->generation = 1;
        s->callback = callback;
        s->user_data = user_data;
        subscriber->handle = ((uint64_t)s->generation << 8) | (uint64_t)(i + 1);
        st = UPTI_STATUS_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&g_subscribers_lock);
    return st;
}

static upti_status_t change(upti_callback_subscriber_t h, upti_callback_domain_t domain,
                            bool all, bool enter, bool other, bool unsubscribe)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (!all && (domain <= UPTI_CB_DOMAIN_INVALID || domain >= UPTI_CB_DOMAIN_LAST))
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&g_subscribers_lock);
    int slot = slot_of(h);
    if (slot < 0) {
        pthread_mutex_unlock(&g_subscribers_lock);
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    }
    if (all) {
        for (int d = 1; d < UPTI_CB_DOMAIN_LAST; d++)
            set_bits(slot, (upti_callback_domain_t)d, false, false);
    } else {
        set_bits(slot, domain, enter, other);
    }
    domains_changed();
    if (unsubscribe) {
        /* No new callback of this slot starts now; wait for those running. */
        while (atomic_load(&g_subs[slot].busy) != 0)
            sched_yield();
        g_subs[slot].in_use = false;
        g_subs[slot].callback = NULL;
        g_subs[slot].user_data = NULL;
    }
    pthread_mutex_unlock(&g_subscribers_lock);
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_callback_unsubscribe(upti_callback_subscriber_t subscriber)
{
    return change(subscriber, UPTI_CB_DOMAIN_INVALID, true, false, false, true);
}

UPTI_API upti_status_t upti_callback_enable_domain(upti_callback_subscriber_t subscriber,
                                                   upti_callback_domain_t domain,
                                                   uint32_t enter_cb, uint32_t exit_cb)
{
    if (domain > UPTI_CB_DOMAIN_INVALID && domain < UPTI_CB_DOMAIN_LAST && !two_phase(domain)) {
        bool on = enter_cb || exit_cb;
        return change(subscriber, domain, false, false, on, false);
    }
    return change(subscriber, domain, false, enter_cb != 0, exit_cb != 0, false);
}

UPTI_API upti_status_t upti_callback_disable_domain(upti_callback_subscriber_t subscriber,
                                                    upti_callback_domain_t domain)
{
    return change(subscriber, domain, false, false, false, false);
}

UPTI_API upti_status_t upti_callback_disable_all_domains(upti_callback_subscriber_t subscriber)
{
    return change(subscriber, UPTI_CB_DOMAIN_INVALID, true, false, false, false);
}

/* ---- names (allowed inside callbacks) ---- */

UPTI_API const char *upti_get_callback_domain_name(upti_callback_domain_t domain)
{
    static const char *const names[UPTI_CB_DOMAIN_LAST] = {
        "INVALID", "DRIVER_CONTEXT_CREATED", "DRIVER_MODULE_LOADED", "DRIVER_MODULE_UNLOADED",
        "DRIVER_GPU_OPERATION_APPENDED", "DRIVER_GPU_OPERATION_DISPATCHED",
        "DRIVER_GPU_OPERATION_COMPLETED", "DRIVER_HOST_SYNCHRONIZATION", "DRIVER_API",
        "INTERNAL_THREADS", "INTERNAL_EVENT",
    };
    return (unsigned)domain < UPTI_CB_DOMAIN_LAST ? names[domain] : NULL;
}

UPTI_API const char *upti_get_callback_phase_kind_name(upti_callback_phase_kind_t phase)
{
    static const char *const names[UPTI_CB_PHASE_LAST] = {
        "INVALID", "API_ENTER", "API_EXIT", "INTERNAL_THREAD_START", "INTERNAL_THREAD_END",
        "INTERNAL_EVENT",
    };
    return (unsigned)phase < UPTI_CB_PHASE_LAST ? names[phase] : NULL;
}

UPTI_API const char *upti_get_gpu_operation_kind_name(upti_gpu_operation_kind_t kind)
{
    static const char *const names[UPTI_GPU_OPERATION_KIND_LAST] = {
        "INVALID", "KERNEL", "MEMORY_COPY", "MEMORY_FILL", "MAP", "UNMAP",
        "MIGRATE", "MARKER", "BARRIER", "FREE", "OTHER",
    };
    return (unsigned)kind < UPTI_GPU_OPERATION_KIND_LAST ? names[kind] : NULL;
}

/* The UPTI 0.1 names of the three lookups above (callback.h): compatibility aliases. */
UPTI_API const char *upti_callback_domain_name(upti_callback_domain_t domain)
{
    return upti_get_callback_domain_name(domain);
}

UPTI_API const char *upti_callback_phase_name(upti_callback_phase_kind_t phase)
{
    return upti_get_callback_phase_kind_name(phase);
}

UPTI_API const char *upti_gpu_operation_kind_name(upti_gpu_operation_kind_t kind)
{
    return upti_get_gpu_operation_kind_name(kind);
}

/* ---- runtime side ---- */

UPTI_API upti_status_t upti_runtime_register_subscriber_provider(
    const upti_runtime_subscriber_provider_t *provider)
{
    upti_runtime_subscriber_provider_t p;
    upti_status_t valid = upti_struct_copy(&p, sizeof p, provider);
    if (valid != UPTI_STATUS_SUCCESS)
        return valid;
    if (p.domains_changed == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    p.size = sizeof p;
    provider = &p;
    pthread_mutex_lock(&g_subscribers_lock);
    upti_status_t st = UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    if (g_num_providers < MAX_PROVIDERS) {
        g_providers[g_num_providers++] = *provider;
        provider->domains_changed(upti_subscriber_domain_word, provider->data);
        st = UPTI_STATUS_SUCCESS;
    }
    pthread_mutex_unlock(&g_subscribers_lock);
    return st;
}

UPTI_API upti_status_t upti_runtime_subscriber_service(upti_tracing_kind_t kind,
                                                       const uint8_t *filter,
                                                       upti_callback_tracing_cb_t callback,
                                                       void *callback_data)
{
    return upti_subscriber_context_service(kind, filter, callback, callback_data);
}

UPTI_API const uint32_t *upti_runtime_subscriber_domains(void)
{
    return &upti_subscriber_domain_word;
}

UPTI_API void upti_runtime_subscriber_notify(const upti_runtime_notification_t *n)
{
    if (n == NULL || n->domain <= UPTI_CB_DOMAIN_INVALID || n->domain >= UPTI_CB_DOMAIN_LAST)
        return;
    _Atomic uint32_t *masks = n->phase == UPTI_CB_PHASE_API_ENTER ? g_enter_mask : g_other_mask;
    uint32_t mask = atomic_load_explicit(&masks[n->domain], memory_order_acquire);
    if (mask == 0)
        return;
    upti_thread_state_t *s = upti_thread_state();
    s->in_subscriber++;
    s->in_callback++;
    while (mask != 0) {
        int i = __builtin_ctz(mask);
        mask &= mask - 1;
        struct subscriber *sub = &g_subs[i];
        atomic_fetch_add(&sub->busy, 1);
        /* Re-checked after announcing ourselves: unsubscribe waits for us or we see it. */
        if (atomic_load(&masks[n->domain]) & (1u << i)) {
            upti_callback_function_t fn = sub->callback;
            if (fn != NULL)
                fn(n->domain, n->api_group, n->api_id, n->backend_context, n->cb_data,
                   sub->user_data, n->instance != NULL ? &n->instance[i] : NULL);
        }
        atomic_fetch_sub(&sub->busy, 1);
    }
    s->in_callback--;
    s->in_subscriber--;
}

UPTI_API void upti_runtime_subscriber_internal(upti_callback_domain_t domain,
                                               upti_callback_phase_kind_t phase, uint32_t detail,
                                               const char *message, uint64_t count)
{
    if (domain <= UPTI_CB_DOMAIN_INVALID || domain >= UPTI_CB_DOMAIN_LAST ||
        atomic_load_explicit(&g_other_mask[domain], memory_order_relaxed) == 0)
        return;
    upti_callback_internal_data_t data = {
        .size = sizeof data,
        .domain = domain,
        .phase = phase,
        .detail = detail,
        .message = message,
        .count = count,
        .thread_id = upti_thread_state()->tid,
    };
    upti_runtime_notification_t n = {
        .domain = domain,
        .phase = phase,
        .cb_data = &data,
    };
    upti_runtime_subscriber_notify(&n);
}

void upti_subscriber_thread(int start, uint32_t type, const char *name)
{
    upti_runtime_subscriber_internal(UPTI_CB_DOMAIN_INTERNAL_THREADS,
                                     start ? UPTI_CB_PHASE_INTERNAL_THREAD_START
                                           : UPTI_CB_PHASE_INTERNAL_THREAD_END,
                                     type, name, 0);
}

void upti_subscriber_drops(uint64_t buffer, uint64_t drops)
{
    if (atomic_load_explicit(&g_other_mask[UPTI_CB_DOMAIN_INTERNAL_EVENT], memory_order_relaxed) == 0)
        return;
    char message[96];
    snprintf(message, sizeof message, "buffer %llu dropped %llu records (discard policy)",
             (unsigned long long)buffer, (unsigned long long)drops);
    upti_runtime_subscriber_internal(UPTI_CB_DOMAIN_INTERNAL_EVENT, UPTI_CB_PHASE_INTERNAL_EVENT,
                                     UPTI_INTERNAL_EVENT_TYPE_WARNING, message, drops);
}

/* fork() without exec (fork.h): not taken by prepare (an unsubscribe holds
 * it while it waits for running callbacks); a fresh one in the child, which
 * has none of the threads that may have held it. */
void upti_subscriber_fork_child(void)
{
    pthread_mutex_init(&g_subscribers_lock, NULL);
    for (int i = 0; i < UPTI_MAX_SUBSCRIBERS; i++)
        atomic_store(&g_subs[i].busy, 0);
}
