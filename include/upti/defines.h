/* SPDX-License-Identifier: MIT */
/* UPTI — common macros for the public headers. */
#ifndef UPTI_DEFINES_H
#define UPTI_DEFINES_H

/** Marks a symbol that UPTI exports; everything else is hidden. */
#define UPTI_API __attribute__((visibility("default")))

/* The project's version, stated here only: CMake reads it from this file
 * (cmake/version.cmake), and the configure fails unless the newest node of
 * src/program/sdk/libupti.map is UPTI_<major>.<minor>. */
#define UPTI_VERSION_MAJOR 1
#define UPTI_VERSION_MINOR 0
#define UPTI_VERSION_PATCH 0
/** Version as one number: major * 10000 + minor * 100 + patch. */
#define UPTI_VERSION                                                          \
    (UPTI_VERSION_MAJOR * 10000 + UPTI_VERSION_MINOR * 100 + UPTI_VERSION_PATCH)
#define UPTI_VERSION_STR_(x) #x
#define UPTI_VERSION_XSTR_(x) UPTI_VERSION_STR_(x)
/** Version as a string literal, "major.minor.patch". */
#define UPTI_VERSION_STRING                                                   \
    UPTI_VERSION_XSTR_(UPTI_VERSION_MAJOR)                                    \
    "." UPTI_VERSION_XSTR_(UPTI_VERSION_MINOR) "." UPTI_VERSION_XSTR_(UPTI_VERSION_PATCH)

#ifdef __cplusplus
#define UPTI_EXTERN_C_BEGIN extern "C" {
#define UPTI_EXTERN_C_END }
#else
#define UPTI_EXTERN_C_BEGIN
#define UPTI_EXTERN_C_END
#endif

#endif
