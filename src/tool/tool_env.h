/* Validation of the tool's environment and the output fallback (tool_env.c). */
#ifndef UPTI_TOOL_ENV_H
#define UPTI_TOOL_ENV_H

#include <stddef.h>

/* Where the trace goes when <base>.db cannot be created: $TMPDIR (else /tmp)
 * plus the last component of base. malloc'd; NULL if base is already there. */
char *ut_fallback_base(const char *base);

#endif
