/* SPDX-License-Identifier: MIT */
/* Internal: the application's references to OpenCL objects (app_refs.c). */
#ifndef UPTI_OPENCL_APP_REFS_H
#define UPTI_OPENCL_APP_REFS_H

#include <upti/types.h>

#include <CL/cl.h>
#include <stdint.h>

/* What the layer reports at an object's last release, captured at its
 * creation: the release queries nothing (the objects it was made from may
 * already be gone, and the runtime frees several at once). */
typedef struct uocl_appref_info_t {
    cl_context context;
    upti_agent_id_t agent; /* the context's device's agent if it has one device, else 0 */
    uint32_t type;         /* memory: upti_memory_allocation_type_t; else 0 */
    uint64_t size, flags;  /* memory */
    cl_program program;    /* kernels */
    const char *name;      /* kernels: interned, lives as long as the process */
} uocl_appref_info_t;

/** An object (cl_mem, SVM pointer, cl_program, cl_kernel) was created: the application holds one reference. */
void uocl_appref_created(const void *obj, const uocl_appref_info_t *info);
/** The application retained it, and the runtime answered status: counted if CL_SUCCESS. Returns status. */
cl_int uocl_appref_retained(cl_int status, const void *obj);
/**
 * The application releases it: 1 if that was its last reference (the object
 * is forgotten and *info, if not NULL, gets what its creation captured), 0 if
 * not, -1 if unknown (made before tracing, or already released).
 */
int uocl_appref_released(const void *obj, uocl_appref_info_t *info);

#endif
