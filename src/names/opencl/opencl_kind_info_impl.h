/* SPDX-License-Identifier: MIT */
/* Argument descriptions of the OpenCL API, used by the generated
 * opencl_kind_info.c and printed by opencl_args.c (both inside libupti). */
#ifndef UPTI_OPENCL_KIND_INFO_IMPL_H
#define UPTI_OPENCL_KIND_INFO_IMPL_H

#include "kind_info.h"

#include <upti/opencl.h>

/* How an argument is printed. */
enum {
    UOCL_F_NONE = 0,
    UOCL_F_HANDLE,   /* an OpenCL object: its address */
    UOCL_F_SIGNED,   /* signed decimal */
    UOCL_F_UNSIGNED, /* unsigned decimal */
    UOCL_F_HEX,      /* flags, enums, bitfields */
    UOCL_F_ERROR,    /* an error code: its name */
    UOCL_F_PTR,      /* an address only (void *, callbacks, deeper pointers) */
    UOCL_F_STR,      /* const char *: the text at depth 1 */
    UOCL_F_STRARR,   /* const char **: count strings at depth 1 */
    UOCL_F_DEREF,    /* pointer to one scalar: the value at depth 1 */
    UOCL_F_ARRAY,    /* pointer to count scalars: [a, b, ...] at depth 1 */
    UOCL_F_PROPS,    /* zero-terminated property list at depth 1 */
};

typedef struct uocl_arg_desc_t {
    const char *name;
    const char *type;
    unsigned short offset;     /* in upti_opencl_api_args_t */
    unsigned char size;        /* of the member */
    unsigned char format;      /* UOCL_F_* */
    unsigned char indirection; /* number of '*' in the type */
    unsigned char output;      /* a non-const pointer the runtime writes */
    unsigned char elem_size;   /* of what it points to (DEREF, ARRAY, PROPS) */
    unsigned char elem_format;
    unsigned short count_offset; /* ARRAY, STRARR: the member holding the count */
    unsigned char count_size;    /* 0: use count_const */
    unsigned char count_const;
} uocl_arg_desc_t;

typedef struct uocl_func_desc_t {
    const uocl_arg_desc_t *args;
    unsigned count;
} uocl_func_desc_t;

/* Indexed by operation (0 = NONE). */
extern const uocl_func_desc_t uocl_func_descs[];

upti_status_t uocl_iterate_args(const upti_callback_tracing_record_t *record,
                                upti_callback_tracing_operation_args_cb_t callback,
                                int32_t max_dereference_count, void *data);

#endif
