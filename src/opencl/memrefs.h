/* Internal: the application's references to memory objects (memrefs.c). */
#ifndef UPTI_OPENCL_MEMREFS_H
#define UPTI_OPENCL_MEMREFS_H

#include <CL/cl.h>

/** A memory object was created: the application holds one reference. */
void uocl_memref_created(cl_mem mem);
/** The application retained it. */
void uocl_memref_retained(cl_mem mem);
/** The application releases it: 1 if that was its last reference, 0 if not, -1 if unknown. */
int uocl_memref_released(cl_mem mem);

#endif
