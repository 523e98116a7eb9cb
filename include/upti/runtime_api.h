/* SPDX-License-Identifier: MIT */
/* UPTI — a runtime UPTI does not know at build time describes its API, and UPTI
 * traces it like a built-in runtime (kind UPTI_TRACING_KIND_RUNTIME_API).
 *
 * The runtime does not write any of this by hand: `upti-wrap` (installed with
 * UPTI; CMake: upti_wrap() after find_package(upti)) reads a description of
 * the API, one C declaration per function, and generates the tracing
 * wrappers and the upti_runtime_api_t that describes them. The runtime hands
 * it to upti_register_runtime_api() (upti/register.h) with its dispatch
 * table; it still links only libupti-register. With no tool present the table
 * is left as it is. Otherwise UPTI gives the API a range of RUNTIME_API
 * operation ids, saves each entry's original into `next`, installs the
 * wrappers, then hands the table to the tools that asked for it
 * (upti_at_named_intercept_table_registration, upti/intercept_table.h).
 *
 * A wrapper reads its plan from `plans`, an array in the runtime's own
 * memory that UPTI keeps current: untraced, a call costs that one load and
 * one branch before it calls the saved entry. Traced, it brackets the call
 * with state->call_enter and state->call_exit_result (the functions of
 * upti/runtime.h, handed over here so that the runtime never links libupti).
 * docs/integrating-a-runtime.md shows the whole path.
 */
#ifndef UPTI_RUNTIME_API_H
#define UPTI_RUNTIME_API_H

#include <upti/callback_tracing.h>
#include <upti/runtime.h>

UPTI_EXTERN_C_BEGIN

/** How UPTI prints an argument (upti_iterate_callback_tracing_operation_args). */
typedef enum upti_runtime_arg_format_t {
    UPTI_RUNTIME_ARG_POINTER = 0, /**< an address (any pointer, and what is not below) */
    UPTI_RUNTIME_ARG_SIGNED,      /**< a signed integer of `size` bytes */
    UPTI_RUNTIME_ARG_UNSIGNED,    /**< an unsigned integer of `size` bytes */
    UPTI_RUNTIME_ARG_FLOAT,       /**< a float or double (`size` 4 or 8) */
    UPTI_RUNTIME_ARG_STRING,      /**< a const char *: its text at dereference depth 1 */
    UPTI_RUNTIME_ARG_LAST
} upti_runtime_arg_format_t;

/** One argument of a described function. */
typedef struct upti_runtime_api_arg_t {
    const char *name;  /**< as declared: "bytes" */
    const char *type;  /**< as declared: "size_t" */
    uint32_t offset;   /**< in the function's argument struct (the payload's args) */
    uint32_t size;     /**< sizeof the argument */
    uint32_t format;   /**< upti_runtime_arg_format_t */
    uint32_t reserved0; /**< 0 */
} upti_runtime_api_arg_t;

/** One function of a described API: an entry of its dispatch table. */
typedef struct upti_runtime_api_function_t {
    const char *name;     /**< the operation's name: "toyAlloc" */
    size_t table_offset;  /**< offsetof(the table type, its entry) */
    void *wrapper;        /**< UPTI's tracing wrapper installed at that entry */
    const upti_runtime_api_arg_t *args; /**< num_args descriptions, in order */
    uint32_t num_args;
    uint32_t reserved0;   /**< 0 */
} upti_runtime_api_function_t;

/** Filled in by UPTI when the API registers; read by the generated wrappers. */
typedef struct upti_runtime_api_state_t {
    size_t size;      /**< sizeof(upti_runtime_api_state_t), set by the generated code */
    size_t call_size; /**< sizeof(upti_runtime_call_t) the wrappers were built with: must be UPTI's */
    upti_tracing_kind_t kind;  /**< UPTI_TRACING_KIND_RUNTIME_API once registered */
    uint32_t first_operation;  /**< the first function's operation id; the others follow in order */
    /** upti_runtime_call_enter and upti_runtime_call_exit_result (upti/runtime.h). */
    void (*call_enter)(upti_runtime_call_t *call, const upti_operation_plan_t *plan,
                       upti_tracing_kind_t kind, uint32_t operation, void *payload);
    void (*call_exit_result)(upti_runtime_call_t *call, int64_t result);
} upti_runtime_api_state_t;

/**
 * An API described to UPTI (made by upti-wrap). Everything it points to lives
 * as long as the process. It describes one table: registered again, it keeps
 * the operations and wrappers of its first registration and installs nothing.
 */
typedef struct upti_runtime_api_t {
    size_t size;          /**< sizeof(upti_runtime_api_t) */
    const char *name;     /**< the runtime's name: the database's api domain ("toyrt") */
    uint64_t version;     /**< the table's version, as upti_register_library_api_table's */
    size_t table_size;    /**< sizeof the table type the wrappers were built with */
    const upti_runtime_api_function_t *functions; /**< num_functions, in operation order */
    upti_runtime_api_state_t *state;       /**< UPTI fills it in */
    /** num_functions plans, one per function, kept current by UPTI (NULL: not traced). */
    const upti_operation_plan_t **plans;
    void *next;           /**< table_size bytes: UPTI saves the original entries here */
    uint32_t num_functions;
    uint32_t reserved0;   /**< 0 */
} upti_runtime_api_t;

UPTI_EXTERN_C_END

#endif
