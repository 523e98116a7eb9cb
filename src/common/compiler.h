/* SPDX-License-Identifier: MIT */
/* Internal: branch hints and attributes. */
#ifndef UPTI_COMMON_COMPILER_H
#define UPTI_COMMON_COMPILER_H

#define upti_likely(x) __builtin_expect(!!(x), 1)
#define upti_unlikely(x) __builtin_expect(!!(x), 0)
#define UPTI_TLS __thread __attribute__((tls_model("initial-exec")))
#define UPTI_CACHELINE 64

#endif
