/* SPDX-License-Identifier: MIT */
/* The configure function of a test's tool (upti_force_configure's argument). */
#ifndef UPTI_TEST_TOOL_H
#define UPTI_TEST_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include <upti/upti.h>

#include "check.h"

/* Defines `function`, a tool's configure function: it returns a static result with
 * init and fini (either may be NULL). */
#define TEST_CONFIGURE(function, init, fini) TEST_CONFIGURE_AS(function, NULL, init, fini)

/* The same, naming the client `client` (a string, or NULL to leave the name alone). */
#define TEST_CONFIGURE_AS(function, client, init, fini)                                            \
    static upti_tool_configure_result_t *function(uint32_t version, const char *runtime_version,   \
                                                  uint32_t priority,                               \
                                                  upti_client_id_t *client_id) {                   \
        (void)version, (void)runtime_version, (void)priority;                                      \
        static const char *const client_name_ = client;                                            \
        static upti_tool_configure_result_t result = {sizeof result, init, fini, NULL};            \
        if (client_name_ != NULL)                                                                  \
            client_id->name = client_name_;                                                        \
        return &result;                                                                            \
    }

/* Records the marker calls into buffer and starts ctx: the end of a test
 * tool's initialize. */
static inline void test_trace_markers(upti_context_id_t ctx, upti_buffer_id_t buffer)
    __attribute__((unused));
static inline void test_trace_markers(upti_context_id_t ctx, upti_buffer_id_t buffer)
{
    CHECK_STATUS(
        upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, buffer),
        UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_start_context(ctx), UPTI_STATUS_SUCCESS);
}

/* upti_force_configure(configure), its status said ("main force_configure=..."). */
static inline void test_force_configure(upti_configure_func_t configure) __attribute__((unused));
static inline void test_force_configure(upti_configure_func_t configure)
{
    upti_status_t s = upti_force_configure(configure);
    say("main force_configure=%s", upti_get_status_name(s));
}
#endif
