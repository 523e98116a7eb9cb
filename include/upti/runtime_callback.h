/* SPDX-License-Identifier: MIT */
/* UPTI — what runtime integrations use to serve subscribers (callback.h).
 *
 * Not for tools. A runtime registers a provider; UPTI calls its
 * domains_changed() with the set of domains some subscriber enabled (bit
 * 1u << domain) whenever that set changes, and once at registration. The
 * provider then asks for the callback-tracing services it needs with
 * upti_runtime_subscriber_service(): they belong to one internal context,
 * so wrappers see ordinary plans (no extra check on their fast path) and
 * correlation ids are the ones buffer records get. The provider turns what
 * its service callbacks see into upti_runtime_subscriber_notify() calls.
 */
#ifndef UPTI_RUNTIME_CALLBACK_H
#define UPTI_RUNTIME_CALLBACK_H

#include <upti/callback.h>
#include <upti/callback_tracing.h>

UPTI_EXTERN_C_BEGIN

/** Most subscribers at once; instance slots are arrays of this many entries. */
#define UPTI_MAX_SUBSCRIBERS 16

typedef struct upti_runtime_subscriber_provider_t {
    size_t size;                                        /**< sizeof(upti_runtime_subscriber_provider_t) */
    const char *name;                                   /**< "opencl" */
    void (*domains_changed)(uint32_t domains, void *data); /**< called under UPTI's subscriber lock */
    void *data;
} upti_runtime_subscriber_provider_t;

/**
 * Registers a provider and calls its domains_changed() at once with the
 * current set. At most 8 providers (then UPTI_STATUS_ERROR_OUT_OF_RESOURCES);
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT for provider NULL, a size below
 * sizeof(size_t) or domains_changed NULL; UPTI_STATUS_ERROR_INCOMPATIBLE_ABI
 * for non-zero fields this UPTI does not know.
 */
UPTI_API upti_status_t upti_runtime_register_subscriber_provider(
    const upti_runtime_subscriber_provider_t *provider);

/**
 * Sets the internal context's callback service of kind: filter[op] != 0 for
 * the operations wanted (filter NULL: none; kind's operation count entries).
 * callback must be the same function for a kind each time. The context is
 * active while any service wants something.
 */
UPTI_API upti_status_t upti_runtime_subscriber_service(upti_tracing_kind_t kind,
                                                       const uint8_t *filter,
                                                       upti_callback_tracing_cb_t callback,
                                                       void *callback_data);

/** The enabled-domain word (bit 1u << domain): one load tells whether a domain is wanted. */
UPTI_API const uint32_t *upti_runtime_subscriber_domains(void);

/** One notification. */
typedef struct upti_runtime_notification_t {
    upti_callback_domain_t domain;
    upti_callback_phase_kind_t phase;
    uint32_t api_group;
    uint32_t api_id;
    void *backend_context;
    const void *cb_data;
    /** UPTI_MAX_SUBSCRIBERS slots kept from ENTER to EXIT of one call, or NULL. */
    void **instance;
} upti_runtime_notification_t;

/** Calls every subscriber that enabled (domain, phase). */
UPTI_API void upti_runtime_subscriber_notify(const upti_runtime_notification_t *notification);

/** Reports an internal thread's start/end or an internal event to INTERNAL_* subscribers. */
UPTI_API void upti_runtime_subscriber_internal(upti_callback_domain_t domain,
                                               upti_callback_phase_kind_t phase, uint32_t detail,
                                               const char *message, uint64_t count);

UPTI_EXTERN_C_END

#endif
