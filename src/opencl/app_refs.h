/* Internal: the application's references to OpenCL objects (app_refs.c). */
#ifndef UPTI_OPENCL_APP_REFS_H
#define UPTI_OPENCL_APP_REFS_H

#include <CL/cl.h>

/** An object (cl_mem, cl_program, cl_kernel) was created: the application holds one reference. */
void uocl_appref_created(const void *obj);
/** The application retained it, and the runtime answered status: counted if CL_SUCCESS. Returns status. */
cl_int uocl_appref_retained(cl_int status, const void *obj);
/** The application releases it: 1 if that was its last reference, 0 if not, -1 if unknown. */
int uocl_appref_released(const void *obj);

#endif
