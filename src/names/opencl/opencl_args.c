/* SPDX-License-Identifier: MIT */
/* Prints the arguments of an OpenCL call (compiled into libupti, called by
 * upti_iterate_callback_tracing_operation_args for OPENCL_API records). */
#include "opencl_kind_info_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAX_ELEMS 16 /* array elements printed before "..." */
#define MAX_TEXT 256 /* characters of a string printed */

static const char *error_name(int64_t code)
{
    switch (code) {
#define E(x) case x: return #x;
        E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
        E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH)
        E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
        E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
        E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE)
        E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
        E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
        E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
        E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
        E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION)
        E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
        E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
        E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
        E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
        E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
        E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
        E(CL_INVALID_DEVICE_PARTITION_COUNT) E(CL_INVALID_PIPE_SIZE) E(CL_INVALID_DEVICE_QUEUE)
        E(CL_INVALID_SPEC_ID) E(CL_MAX_SIZE_RESTRICTION_EXCEEDED) E(CL_PLATFORM_NOT_FOUND_KHR)
#undef E
    default:
        return NULL;
    }
}

static uint64_t read_uint(const void *p, unsigned size)
{
    switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: return *(const uint16_t *)p;
    case 4: return *(const uint32_t *)p;
    default: return *(const uint64_t *)p;
    }
}

/* read_uint's value, sign-extended from its size (an arithmetic shift). */
static int64_t read_int(const void *p, unsigned size)
{
    unsigned shift = size == 1 || size == 2 || size == 4 ? 64 - 8 * size : 0;
    return (int64_t)(read_uint(p, size) << shift) >> shift;
}

/* Appends the scalar at p to out. */
static void put_scalar(char *out, size_t cap, const void *p, unsigned size, unsigned format)
{
    size_t n = strlen(out);
    if (n >= cap)
        return;
    switch (format) {
    case UOCL_F_SIGNED:
        snprintf(out + n, cap - n, "%" PRId64, read_int(p, size));
        break;
    case UOCL_F_ERROR: {
        int64_t v = read_int(p, size);
        const char *name = error_name(v);
        if (name != NULL)
            snprintf(out + n, cap - n, "%s", name);
        else
            snprintf(out + n, cap - n, "%" PRId64, v);
        break;
    }
    case UOCL_F_UNSIGNED:
        snprintf(out + n, cap - n, "%" PRIu64, read_uint(p, size));
        break;
    default: /* HANDLE, HEX, PTR */
        snprintf(out + n, cap - n, "0x%" PRIx64, read_uint(p, size));
        break;
    }
}

/* Appends at most MAX_TEXT bytes of s; len: its length when known (not NUL-terminated), else SIZE_MAX. */
static void put_text_n(char *out, size_t cap, const char *s, size_t len)
{
    size_t n = strlen(out);
    size_t have = len != SIZE_MAX ? len : strnlen(s, MAX_TEXT + 1);
    if (n < cap)
        snprintf(out + n, cap - n, "%.*s%s", (int)(have > MAX_TEXT ? MAX_TEXT : have), s,
                 have > MAX_TEXT ? "..." : "");
}

static void put_text(char *out, size_t cap, const char *s)
{
    put_text_n(out, cap, s, SIZE_MAX);
}

/* Prints one argument; returns the number of dereferences applied. */
/* lengths: clCreateProgramWithSource's lengths array for its strings (NULL: NUL-terminated). */
static int format_arg(const uocl_arg_desc_t *a, const char *args, int deref, const size_t *lengths,
                      char *out, size_t cap)
{
    const void *addr = args + a->offset;
    out[0] = '\0';
    if (a->indirection == 0 || a->format == UOCL_F_PTR || deref < 1) {
        put_scalar(out, cap, addr, a->size, a->indirection == 0 ? a->format : UOCL_F_PTR);
        return 0;
    }
    const char *ptr = *(const char *const *)addr;
    if (ptr == NULL) {
        snprintf(out, cap, "0x0");
        return 0;
    }
    size_t count = a->count_const;
    if (a->count_size != 0)
        count = (size_t)read_uint(args + a->count_offset, a->count_size);
    switch (a->format) {
    case UOCL_F_STR:
        put_text(out, cap, ptr);
        return 1;
    case UOCL_F_STRARR:
        strcat(out, "[");
        for (size_t i = 0; i < count && i < MAX_ELEMS; i++) {
            const char *s = ((const char *const *)ptr)[i];
            if (i > 0)
                strncat(out, ", ", cap - strlen(out) - 1);
            size_t len = lengths != NULL && lengths[i] != 0 ? lengths[i] : SIZE_MAX;
            put_text_n(out, cap, s != NULL ? s : "(null)", s != NULL ? len : SIZE_MAX);
        }
        strncat(out, count > MAX_ELEMS ? ", ...]" : "]", cap - strlen(out) - 1);
        return 1;
    case UOCL_F_DEREF:
        put_scalar(out, cap, ptr, a->elem_size, a->elem_format);
        return 1;
    case UOCL_F_ARRAY:
    case UOCL_F_PROPS:
        strcat(out, "[");
        for (size_t i = 0; i < MAX_ELEMS * 4; i++) {
            if (a->format == UOCL_F_ARRAY && (i >= count || i >= MAX_ELEMS))
                break;
            const void *e = ptr + i * a->elem_size;
            if (i > 0)
                strncat(out, ", ", cap - strlen(out) - 1);
            put_scalar(out, cap, e, a->elem_size, a->elem_format);
            if (a->format == UOCL_F_PROPS && i % 2 == 0 && read_uint(e, a->elem_size) == 0)
                break; /* the terminating 0 */
        }
        if (a->format == UOCL_F_ARRAY && count > MAX_ELEMS)
            strncat(out, ", ...", cap - strlen(out) - 1);
        strncat(out, "]", cap - strlen(out) - 1);
        return 1;
    default:
        put_scalar(out, cap, addr, a->size, UOCL_F_PTR);
        return 0;
    }
}

/* The generated public enum has the ids of the committed list that names them. */
#define UPTI_OPENCL_OPERATION(id, name)                                                          \
    _Static_assert((int)UPTI_OPENCL_API_##name == id, #name ": its operation id changed; ids are "     \
                   "fixed forever (src/names/opencl/opencl_operations.def)");
#include "opencl_operations.def"
#undef UPTI_OPENCL_OPERATION
enum {
    UOCL_GOLDEN_OPERATIONS = 1
#define UPTI_OPENCL_OPERATION(id, name) +1
#include "opencl_operations.def"
#undef UPTI_OPENCL_OPERATION
};
_Static_assert((int)UPTI_OPENCL_API_LAST == (int)UOCL_GOLDEN_OPERATIONS,
               "opencl_api.txt and src/names/opencl/opencl_operations.def list different entries");

upti_status_t uocl_iterate_args(const upti_callback_tracing_record_t *record,
                                upti_callback_tracing_operation_args_cb_t callback,
                                int32_t max_dereference_count, void *data)
{
    if (record->operation == 0 || record->operation >= UPTI_OPENCL_API_LAST || record->payload == NULL)
        return UPTI_STATUS_ERROR_OPERATION_NOT_FOUND;
    const upti_callback_tracing_opencl_api_data_t *payload = record->payload;
    const char *args = (const char *)&payload->args;
    const uocl_func_desc_t *f = &uocl_func_descs[record->operation];
    char value[2048];
    for (unsigned i = 0; i < f->count; i++) {
        const uocl_arg_desc_t *a = &f->args[i];
        /* At ENTER, what the runtime will write is not there yet: print its address. */
        int deref = max_dereference_count;
        if (a->output && record->phase == UPTI_CALLBACK_PHASE_ENTER)
            deref = 0;
        /* A string array followed by its lengths (clCreateProgramWithSource): strings
         * with a length need not be NUL-terminated, so never read past it. */
        const size_t *lengths = NULL;
        if (a->format == UOCL_F_STRARR && i + 1 < f->count && strcmp(f->args[i + 1].name, "lengths") == 0)
            lengths = *(const size_t *const *)(args + f->args[i + 1].offset);
        int applied = format_arg(a, args, deref, lengths, value, sizeof value);
        if (callback(record->kind, record->operation, i, args + a->offset, a->indirection, a->type, a->name,
                     value, applied, data) != 0)
            break;
    }
    return UPTI_STATUS_SUCCESS;
}
