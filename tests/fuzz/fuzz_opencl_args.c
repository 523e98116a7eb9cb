/* SPDX-License-Identifier: MIT */
/* libFuzzer: the OpenCL argument printer, through the public
 * upti_iterate_callback_tracing_operation_args(). The input chooses the
 * operation, the phase and every byte of the arguments; pointer arguments
 * point into buffers filled from the input, as an application's would
 * (strings NUL-terminated, property lists 0-terminated within the buffer),
 * so a crash is the printer's fault, never a wild pointer of the input. */
#include <upti/upti.h>
#include <upti/opencl_api.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POOL 4096
static char g_pool[POOL + 64];      /* pointed to by data pointers */
static char *g_strings[64];         /* pointed to by char ** */
static char g_text[64][300];

static int set_pointers(upti_tracing_kind_t kind, uint32_t op, uint32_t index,
                        const void *addr, int32_t indirection, const char *type,
                        const char *name, const char *value, int32_t deref, void *data)
{
    (void)kind, (void)op, (void)index, (void)name, (void)value, (void)deref, (void)data;
    if (indirection <= 0)
        return 0;
    void *target = g_pool;
    if (strstr(type, "char") != NULL)
        target = indirection >= 2 ? (void *)g_strings : (void *)g_text[index % 64];
    memcpy((void *)addr, &target, sizeof target);
    return 0;
}

static int consume(upti_tracing_kind_t kind, uint32_t op, uint32_t index, const void *addr,
                   int32_t indirection, const char *type, const char *name, const char *value,
                   int32_t deref, void *data)
{
    (void)kind, (void)op, (void)index, (void)addr, (void)indirection, (void)type, (void)name,
        (void)deref;
    *(size_t *)data += strlen(value);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    upti_callback_tracing_opencl_api_data_t payload;
    memset(&payload, 0, sizeof payload);
    uint32_t op = 1 + (uint32_t)((data[0] | data[1] << 8) % (UPTI_OPENCL_API_LAST - 1));
    upti_callback_phase_t phase = (data[2] & 1) ? UPTI_CALLBACK_PHASE_EXIT : UPTI_CALLBACK_PHASE_ENTER;
    data += 4;
    size -= 4;
    size_t n = size < sizeof payload.args ? size : sizeof payload.args;
    memcpy(&payload.args, data, n);
    data += n;
    size -= n;
    /* Buffers: the rest of the input, terminated. */
    memset(g_pool, 0, sizeof g_pool);
    memcpy(g_pool, data, size < POOL ? size : POOL);
    for (int i = 0; i < 64; i++) {
        size_t off = (size_t)i * 37 % (size + 1), len = size - off < 299 ? size - off : 299;
        memcpy(g_text[i], data + off, len);
        g_text[i][len] = '\0';
        g_strings[i] = g_text[i];
    }
    upti_callback_tracing_record_t record = {sizeof record, {0}, 0, {0, {0}},
                                             UPTI_TRACING_KIND_OPENCL_API, op, phase, &payload};
    upti_iterate_callback_tracing_operation_args(record, set_pointers, 0, NULL);
    size_t total = 0;
    upti_iterate_callback_tracing_operation_args(record, consume, 1, &total);
    return 0;
}
