/* SPDX-License-Identifier: MIT */
/* UPTI — the OpenCL runtime: what tools see of OpenCL calls.
 *
 * libupti-opencl.so is an OpenCL layer (OPENCL_LAYERS=/path/libupti-opencl.so).
 * It wraps every entry of struct _cl_icd_dispatch and reports:
 *  - OPENCL_API: every call. The callback payload is an
 *    upti_callback_tracing_opencl_api_data_t: args.<function>.<parameter>
 *    as the application passed them, retval.<type>_retval at EXIT (the
 *    return code, or *errcode_ret through args, is visible at EXIT).
 *    Operations are UPTI_OPENCL_API_<function>, in dispatch-slot order.
 *    upti_iterate_callback_tracing_operation_args() prints each argument.
 *  - KERNEL_DISPATCH, MEMORY_COPY: device commands with device times
 *    (queued, submit, start, end) mapped onto UPTI's clock, correlated with
 *    the enqueue call.
 *  - MEMORY_ALLOCATION: buffers, sub-buffers, images, pipes, SVM.
 *  - CODE_OBJECT: programs (LOAD when built, UNLOAD at their final release)
 *    and kernels (KERNEL_SYMBOL, LOAD at creation, UNLOAD at release).
 * Every OpenCL device appears among the agents (runtime "opencl",
 * runtime_handle = the cl_device_id).
 *
 * upti_at_intercept_table_registration(UPTI_INTERCEPT_TABLE_OPENCL) hands a
 * tool the layer's struct _cl_icd_dispatch (one table; include <CL/cl_icd.h>):
 * an entry replaced there is what the application calls, and the saved
 * original traces and calls the driver.
 *
 * <upti/opencl_api.h> is generated from the layer's description of the API.
 */
#ifndef UPTI_OPENCL_H
#define UPTI_OPENCL_H

#include <upti/opencl_api.h>

/** The version the layer registers its table with ("opencl"): the highest OpenCL version it knows, 3.0. */
#define UPTI_OPENCL_TABLE_VERSION 300

#endif
