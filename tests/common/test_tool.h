/* SPDX-License-Identifier: MIT */
/* The configure function of a test's tool (upti_force_configure's argument). */
#ifndef UPTI_TEST_TOOL_H
#define UPTI_TEST_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include <upti/upti.h>

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

#endif
