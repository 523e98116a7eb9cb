/* Validation of the tool's environment and the output fallback (tool_env.c). */
#ifndef UPTI_TOOL_ENV_H
#define UPTI_TOOL_ENV_H

#include <stddef.h>

/* The byte count in variable var: decimal digits with an optional k/K, m/M or
 * g/G suffix, within [min, max]. Unset or empty: def, silently. Anything else
 * (not a number, out of range, overflowing): one "upti:" line and def. */
size_t ut_env_size(const char *var, size_t def, size_t min, size_t max);

/* Where the trace goes when <base>.db cannot be created: $TMPDIR (else /tmp)
 * plus the last component of base. malloc'd; NULL if base is already there. */
char *ut_fallback_base(const char *base);

#endif
