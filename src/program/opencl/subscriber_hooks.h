/* SPDX-License-Identifier: MIT */
/* libupti-opencl: serving UPTI's subscribers (callback.h) on OpenCL.
 * See subscriber_hooks.c; the tables below are generated (generate.py). */
#ifndef UPTI_OPENCL_SUBSCRIBER_HOOKS_H
#define UPTI_OPENCL_SUBSCRIBER_HOOKS_H

#include "layer.h"

#include <upti/callback.h>

#include <stddef.h>
#include <stdint.h>

/** What subscribers need to know of one OpenCL call. */
typedef struct uocl_api_info_t {
    uint8_t cmd_kind;      /**< KERNEL_DISPATCH / MEMORY_COPY for enqueue calls, else 0 */
    uint8_t cmd_op;        /**< its operation */
    uint16_t blocking_off; /**< offset of a blocking_* flag, 0 if none */
} uocl_api_info_t;

extern const uocl_api_info_t uocl_api_info[UPTI_OPENCL_API_LAST];
/** Fills sizes/bytes of an enqueue call's operation from its arguments (generated). */
void uocl_sub_describe(uint32_t op, const upti_opencl_api_args_t *a, upti_gpu_op_details_t *d);
void uocl_sub_kernel(upti_gpu_op_details_t *d, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                     const size_t *global, const size_t *local);

/** 1 while a subscriber wants GPU_OPERATION_DISPATCHED: enqueue wrappers then hand over the event. */
extern int uocl_sub_want_events;
/** Called by an enqueue wrapper with the command's event before UPTI's tracking takes it. */
void uocl_sub_enqueued(cl_event event);

/** The completion thread started (INTERNAL_THREADS); it ends at exit, after the final drain. */
void uocl_sub_thread_started(void);
/** The completion thread ends (at exit). */
void uocl_sub_thread_ended(void);

/** 1 on a thread while the layer emits one of its CODE_OBJECT records: the
    records other runtimes emit (the Vulkan layer's shader modules) reach the
    same callback and are theirs to report. */
extern __thread int uocl_sub_emitting_code_object;

/** Registers the layer as UPTI's subscriber provider (at registration). */
void uocl_sub_init(void);

#endif
