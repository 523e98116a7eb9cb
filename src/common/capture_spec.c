/* SPDX-License-Identifier: MIT */
/* See capture_spec.h. */
#include "capture_spec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits only into *v (no sign, no overflow); the end in *end. 0 or -1. */
static int parse_count(const char *s, const char **end, uint64_t *v)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    uint64_t n = 0;
    for (; isdigit((unsigned char)*s); s++) {
        if (n > (UINT64_MAX - 9) / 10)
            return -1;
        n = n * 10 + (uint64_t)(*s - '0');
    }
    *v = n;
    *end = s;
    return 0;
}

/* Seconds "D[.F]" (up to 9 decimals) from s up to stop (or the end); 0 or -1. */
static int parse_seconds_upto(const char *s, const char *stop, uint64_t *ns)
{
    if (stop == NULL)
        stop = s + strlen(s);
    const char *p = s;
    uint64_t whole = 0;
    if (p == stop || parse_count(p, &p, &whole) != 0 || p > stop || whole > 1000000)
        return -1;
    uint64_t frac = 0, scale = 1000000000ull;
    if (p < stop && *p == '.') {
        p++;
        if (p == stop || !isdigit((unsigned char)*p))
            return -1;
        for (; p < stop && isdigit((unsigned char)*p); p++) {
            if (scale == 1)
                return -1; /* more than 9 decimals */
            scale /= 10;
            frac += (uint64_t)(*p - '0') * scale;
        }
    }
    if (p != stop)
        return -1;
    *ns = whole * 1000000000ull + frac;
    return 0;
}

int upti_parse_seconds(const char *text, uint64_t *ns)
{
    return text != NULL ? parse_seconds_upto(text, NULL, ns) : -1;
}

int upti_parse_collection_period(const char *text, upti_collection_period *out)
{
    if (text == NULL)
        return -1;
    int in_ns = strncmp(text, "ns:", 3) == 0; /* upti_format_period's form */
    const char *s = in_ns ? text + 3 : text;
    const char *c1 = strchr(s, ':');
    const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
    if (c1 == NULL || c2 == NULL || strchr(c2 + 1, ':') != NULL)
        return -1;
    upti_collection_period p;
    const char *end;
    if (in_ns) {
        if (parse_count(s, &end, &p.start_ns) != 0 || end != c1 ||
            parse_count(c1 + 1, &end, &p.duration_ns) != 0 || end != c2)
            return -1;
    } else if (parse_seconds_upto(s, c1, &p.start_ns) != 0 ||
               parse_seconds_upto(c1 + 1, c2, &p.duration_ns) != 0 || p.duration_ns == 0) {
        return -1;
    }
    if (parse_count(c2 + 1, &end, &p.repeat) != 0 || *end != '\0')
        return -1;
    *out = p;
    return 0;
}

void upti_format_period(const upti_collection_period *p, char *out, size_t len)
{
    snprintf(out, len, "ns:%llu:%llu:%llu", (unsigned long long)p->start_ns,
             (unsigned long long)p->duration_ns, (unsigned long long)p->repeat);
}

int upti_parse_capture_end(const char *text, uint64_t *windows)
{
    if (text == NULL)
        return -1;
    if (strcmp(text, "stop") == 0) {
        *windows = 1;
        return 0;
    }
    if (strcmp(text, "repeat") == 0) {
        *windows = 0;
        return 0;
    }
    const char *end;
    uint64_t n;
    if (strncmp(text, "repeat:", 7) != 0 || parse_count(text + 7, &end, &n) != 0 || *end != '\0' ||
        n == 0)
        return -1;
    *windows = n;
    return 0;
}

int upti_parse_capture_name(const char *text, char **copy, const char **name, const char **domain)
{
    if (text == NULL || text[0] == '\0')
        return -1;
    char *c = strdup(text);
    if (c == NULL)
        return -1;
    char *at = strrchr(c, '@');
    *domain = NULL;
    if (at != NULL) {
        *at = '\0';
        *domain = at + 1;
        if (**domain == '\0' || c[0] == '\0') {
            free(c);
            return -1;
        }
    }
    *copy = c;
    *name = c;
    return 0;
}

int upti_parse_iteration_range(const char *text, upti_iteration_range *out)
{
    if (text == NULL)
        return -1;
    upti_iteration_range r = {0};
    const char *p = text;
    int depth = 0;
    for (;;) {
        while (*p == '[') {
            if (depth++ > 0)
                return -1;
            p++;
        }
        uint64_t first, last;
        if (parse_count(p, &p, &first) != 0 || first == 0)
            return -1;
        last = first;
        if (*p == '-') {
            p++;
            if (isdigit((unsigned char)*p)) {
                if (parse_count(p, &p, &last) != 0 || last < first)
                    return -1;
            } else {
                last = UINT64_MAX;
            }
        }
        if (r.count == sizeof r.items / sizeof r.items[0])
            return -1;
        r.items[r.count].first = first;
        r.items[r.count].last = last;
        r.count++;
        if (*p == ']') {
            if (depth == 0)
                return -1;
            depth = 0;
            p++;
        }
        if (*p == '\0')
            break;
        if (*p != ',')
            return -1;
        p++;
    }
    if (depth != 0)
        return -1;
    *out = r;
    return 0;
}

int upti_iteration_in_range(const upti_iteration_range *r, uint64_t n)
{
    for (size_t i = 0; i < r->count; i++)
        if (n >= r->items[i].first && n <= r->items[i].last)
            return 1;
    return 0;
}
