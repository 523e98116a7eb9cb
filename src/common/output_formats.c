/* SPDX-License-Identifier: MIT */
/* See output_formats.h. */
#include "output_formats.h"

#include "log.h"

#include <stdlib.h>
#include <string.h>

const upti_format_name upti_format_names[UPTI_FORMAT_ALL_NAMES] = {
    {"db", UPTI_FORMAT_DB},    {"pftrace", UPTI_FORMAT_PFTRACE}, {"json", UPTI_FORMAT_JSON},
    {"csv", UPTI_FORMAT_CSV},  {"rocpd", UPTI_FORMAT_DB},        {"perfetto", UPTI_FORMAT_PFTRACE},
};

unsigned upti_parse_formats(const char *list, const char *var)
{
    if (list == NULL || list[0] == '\0')
        return UPTI_FORMAT_DB;
    unsigned bits = 0;
    char *copy = strdup(list);
    if (copy == NULL)
        return UPTI_FORMAT_DB;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < UPTI_FORMAT_ALL_NAMES && strcmp(t, upti_format_names[i].name) != 0)
            i++;
        if (i < UPTI_FORMAT_ALL_NAMES)
            bits |= upti_format_names[i].bit;
        else
            upti_log_warning("%s: unknown format '%s'", var, t);
    }
    free(copy);
    return bits;
}
