/* SPDX-License-Identifier: MIT */
/* Kernel names demangled for `upti stats --demangle`: C++ (Itanium ABI) names
 * through libiberty's cplus_demangle (Debian's libiberty-dev), when upti was
 * built with it. */
#include "stats_reports.h"

#include <stdlib.h>
#include <string.h>

#ifdef UPTI_HAVE_LIBIBERTY
#include <libiberty/demangle.h>

int report_can_demangle(void)
{
    return 1;
}

char *report_demangle(const char *name)
{
    if (name == NULL || strncmp(name, "_Z", 2) != 0)
        return NULL;
    char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
    /* SYCL names a kernel by the typeinfo name of its kernel type (_ZTS...). */
    static const char k_typeinfo[] = "typeinfo name for ";
    if (d != NULL && strncmp(d, k_typeinfo, sizeof k_typeinfo - 1) == 0)
        memmove(d, d + sizeof k_typeinfo - 1, strlen(d) - (sizeof k_typeinfo - 1) + 1);
    return d;
}
#else
int report_can_demangle(void)
{
    return 0;
}

char *report_demangle(const char *name)
{
    (void)name;
    return NULL;
}
#endif
