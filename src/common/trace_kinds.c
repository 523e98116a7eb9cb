/* SPDX-License-Identifier: MIT */
/* See trace_kinds.h. */
#include "trace_kinds.h"

#include "log.h"

#include <stdlib.h>
#include <string.h>

static const char *const k_names[UPTI_TRACING_KIND_LAST] = {
    [UPTI_TRACING_KIND_MARKER_API] = "marker_api",
    [UPTI_TRACING_KIND_OPENCL_API] = "opencl_api",
    [UPTI_TRACING_KIND_KERNEL_DISPATCH] = "kernel_dispatch",
    [UPTI_TRACING_KIND_MEMORY_COPY] = "memory_copy",
    [UPTI_TRACING_KIND_MEMORY_ALLOCATION] = "memory_allocation",
    [UPTI_TRACING_KIND_CODE_OBJECT] = "code_object",
    [UPTI_TRACING_KIND_VULKAN_API] = "vulkan_api",
    [UPTI_TRACING_KIND_RUNTIME_API] = "runtime_api",
};

const char *upti_trace_kind_name(upti_tracing_kind_t kind)
{
    return (unsigned)kind < UPTI_TRACING_KIND_LAST ? k_names[kind] : NULL;
}

/* The kind named name, or UPTI_TRACING_KIND_NONE. */
static upti_tracing_kind_t kind_named(const char *name)
{
    for (unsigned k = UPTI_TRACING_KIND_NONE + 1; k < UPTI_TRACING_KIND_LAST; k++)
        if (strcmp(name, k_names[k]) == 0)
            return (upti_tracing_kind_t)k;
    return UPTI_TRACING_KIND_NONE;
}

unsigned upti_parse_trace_kinds(const char *list, const char *var)
{
    if (list == NULL || list[0] == '\0' || strcmp(list, "all") == 0)
        return ~0u;
    unsigned bits = 0;
    char *copy = strdup(list);
    if (copy == NULL)
        return ~0u;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        upti_tracing_kind_t kind = kind_named(t);
        if (kind != UPTI_TRACING_KIND_NONE)
            bits |= 1u << kind;
        else if (strcmp(t, "all") == 0)
            bits = ~0u;
        else
            upti_log_warning("%s: unknown kind '%s' (ignored)", var, t);
    }
    free(copy);
    return bits;
}
