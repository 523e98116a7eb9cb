/* SPDX-License-Identifier: MIT */
/* toyrt: a runtime UPTI does not know, for the out-of-tree runtime test. */
#ifndef TOYRT_H
#define TOYRT_H

#include <stddef.h>

/** The runtime's exports (a build may hide everything else by default). */
#define TOYRT_API __attribute__((visibility("default")))

/** Returned by toyLaunch for a count of 0. */
#define TOYRT_ERROR_INVALID_COUNT (-2)

/** 0. */
TOYRT_API int toyInit(int flags);
/** Allocates bytes into *out: 0, or -1 if out is NULL. */
TOYRT_API int toyAlloc(size_t bytes, void **out);
/** Frees what toyAlloc gave. */
TOYRT_API void toyFree(void *ptr);
/** "Launches" kernel count times: 0, or TOYRT_ERROR_INVALID_COUNT for count 0. */
TOYRT_API int toyLaunch(const char *kernel, unsigned int count);

#endif
