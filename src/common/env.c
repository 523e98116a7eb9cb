/* SPDX-License-Identifier: MIT */
/* See env.h. */
#include "env.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { DURATION, SIZE, COUNT, SWITCH, CHOICE } env_type;

typedef struct env_var {
    const char *name;
    env_type type;
    uint64_t def, min, max;
    const char *const *words; /* CHOICE: the accepted words, NULL-terminated */
} env_var;

static const char *const k_completion[] = {"poll", "callback", NULL};
static const char *const k_clock[] = {"tsc", "gettime", NULL};
static const char *const k_vk_queries[] = {"auto", "copy", "read", "host", NULL};
static const char *const k_vk_timestamps[] = {"auto", "pairs", NULL};
/* upti_log_level_t's order */
static const char *const k_log_level[] = {"none", "error", "warning", "info", "debug", NULL};

static const env_var k_vars[UPTI_ENV_COUNT] = {
    [UPTI_ENV_TRACE_BUFFER_SIZE] = {"UPTI_TRACE_BUFFER_SIZE", SIZE, 1u << 20, 4096, 1u << 30, NULL},
    [UPTI_ENV_TRACE_STATS] = {"UPTI_TRACE_STATS", SWITCH, 0, 0, 1, NULL},
    [UPTI_ENV_TRACE_ARGS] = {"UPTI_TRACE_ARGS", SWITCH, 0, 0, 1, NULL},
    [UPTI_ENV_TRACE_LIST] = {"UPTI_TRACE_LIST", SWITCH, 0, 0, 1, NULL},
    [UPTI_ENV_OPENCL_COMPLETION] = {"UPTI_OPENCL_COMPLETION", CHOICE, 0, 0, 1, k_completion},
    [UPTI_ENV_CLOCK] = {"UPTI_CLOCK", CHOICE, 0, 0, 1, k_clock},
    [UPTI_ENV_RING_FULL_WAIT_MS] = {"UPTI_RING_FULL_WAIT_MS", DURATION, 50, 1, 3600000, NULL},
    [UPTI_ENV_TRACE_RING_SLOTS] = {"UPTI_TRACE_RING_SLOTS", COUNT, 256, 1, 65536, NULL},
    [UPTI_ENV_LOG_LEVEL] = {"UPTI_LOG_LEVEL", CHOICE, UPTI_LOG_LEVEL_WARNING, 0, 4, k_log_level},
    [UPTI_ENV_VK_DISABLE_CALIBRATED] = {"UPTI_VK_DISABLE_CALIBRATED", SWITCH, 0, 0, 1, NULL},
    [UPTI_ENV_VK_CLOCK_PROBE_INTERVAL_MS] = {"UPTI_VK_CLOCK_PROBE_INTERVAL_MS", DURATION, 100, 0, 86400000, NULL},
    [UPTI_ENV_VK_QUERIES] = {"UPTI_VK_QUERIES", CHOICE, UPTI_ENV_VK_QUERIES_AUTO, 0, 3, k_vk_queries},
    [UPTI_ENV_VK_TIMESTAMPS] = {"UPTI_VK_TIMESTAMPS", CHOICE, UPTI_ENV_VK_TIMESTAMPS_AUTO, 0, 1, k_vk_timestamps},
    [UPTI_ENV_VK_CALIBRATE_INTERVAL_MS] = {"UPTI_VK_CALIBRATE_INTERVAL_MS", DURATION, 10, 0, 86400000, NULL},
    [UPTI_ENV_VK_COMPLETION_WAIT_MS] = {"UPTI_VK_COMPLETION_WAIT_MS", DURATION, 5000, 1, 3600000, NULL},
};

/* Decimal digits at *p (at least one), without overflow; advances *p. */
static int parse_digits(const char **p, uint64_t *out)
{
    const char *s = *p;
    uint64_t n = 0;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (n > (UINT64_MAX - 9) / 10)
            return -1;
        n = n * 10 + (uint64_t)(*s - '0');
    }
    *p = s;
    *out = n;
    return 0;
}

int upti_parse_duration_ms(const char *text, uint64_t *ms)
{
    uint64_t n;
    const char *p = text;
    if (text == NULL || parse_digits(&p, &n) != 0)
        return -1;
    if (*p == '\0' || strcmp(p, "ms") == 0) {
        *ms = n;
        return 0;
    }
    if (strcmp(p, "s") == 0 && n <= UINT64_MAX / 1000) {
        *ms = n * 1000;
        return 0;
    }
    return -1;
}

int upti_parse_size(const char *text, uint64_t *bytes)
{
    uint64_t n;
    const char *p = text;
    if (text == NULL || parse_digits(&p, &n) != 0)
        return -1;
    unsigned shift = 0;
    if (*p != '\0') {
        switch (*p) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return -1;
        }
        if (p[1] != '\0' || n > (UINT64_MAX >> shift))
            return -1;
    }
    *bytes = n << shift;
    return 0;
}

/* A size in the largest unit that divides it: "4 MiB", "4096 bytes". */
static void size_text(char *out, size_t len, uint64_t n)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB"};
    unsigned u = 0;
    while (u < 3 && n >= 1024 && n % 1024 == 0) {
        n /= 1024;
        u++;
    }
    snprintf(out, len, "%llu %s", (unsigned long long)n, units[u]);
}

/* A duration as the user would write it: "50 ms", "3600 s". */
static void duration_text(char *out, size_t len, uint64_t ms)
{
    if (ms >= 1000 && ms % 1000 == 0)
        snprintf(out, len, "%llu s", (unsigned long long)(ms / 1000));
    else
        snprintf(out, len, "%llu ms", (unsigned long long)ms);
}

/* Parses the value of v; 0 and *out, or -1. */
static int parse(const env_var *v, const char *text, uint64_t *out)
{
    uint64_t n = 0;
    switch (v->type) {
    case DURATION:
        if (upti_parse_duration_ms(text, &n) != 0)
            return -1;
        break;
    case SIZE:
        if (upti_parse_size(text, &n) != 0)
            return -1;
        break;
    case COUNT: {
        const char *p = text;
        if (parse_digits(&p, &n) != 0 || *p != '\0')
            return -1;
        break;
    }
    case SWITCH:
        if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
            return -1;
        n = (uint64_t)(text[0] - '0');
        break;
    case CHOICE:
        for (n = 0; v->words[n] != NULL && strcmp(text, v->words[n]) != 0; n++)
            ;
        if (v->words[n] == NULL)
            return -1;
        break;
    }
    if (n < v->min || n > v->max)
        return -1;
    *out = n;
    return 0;
}

/* The refusal of text as v's value, the accepted forms and the default. */
static void refusal(const env_var *v, const char *text, char *msg, size_t len)
{
    char shown[72];
    size_t i = 0;
    for (; text[i] != '\0' && i < 64; i++) /* the value is data: no control bytes echoed */
        shown[i] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
    shown[i] = '\0';
    if (text[i] != '\0')
        memcpy(shown + i, "...", 4);
    char lo[32], hi[32], def[32];
    switch (v->type) {
    case DURATION:
    case SIZE: {
        int duration = v->type == DURATION;
        void (*text)(char *, size_t, uint64_t) = duration ? duration_text : size_text;
        text(lo, sizeof lo, v->min);
        text(hi, sizeof hi, v->max);
        text(def, sizeof def, v->def);
        snprintf(msg, len, "%s='%s' is not %s (digits with an optional %s suffix, %s to %s): using %s",
                 v->name, shown, duration ? "a duration" : "a size in bytes",
                 duration ? "ms or s" : "k, m or g", lo, hi, def);
        break;
    }
    case COUNT:
        snprintf(msg, len, "%s='%s' is not a count (digits, %llu to %llu): using %llu", v->name,
                 shown, (unsigned long long)v->min, (unsigned long long)v->max,
                 (unsigned long long)v->def);
        break;
    case SWITCH:
        snprintf(msg, len, "%s='%s' is neither 0 nor 1: using %d", v->name, shown, (int)v->def);
        break;
    case CHOICE: {
        char words[128] = "";
        for (size_t w = 0; v->words[w] != NULL; w++) {
            size_t used = strlen(words);
            snprintf(words + used, sizeof words - used, "%s%s", w ? ", " : "", v->words[w]);
        }
        snprintf(msg, len, "%s='%s' is not one of %s: using %s", v->name, shown, words,
                 v->words[v->def]);
        break;
    }
    }
}

const char *upti_env_name(upti_env_id id)
{
    return id < UPTI_ENV_COUNT ? k_vars[id].name : NULL;
}

int upti_env_check(upti_env_id id, char *msg, size_t len)
{
    if (id >= UPTI_ENV_COUNT)
        return 0;
    const env_var *v = &k_vars[id];
    const char *text = getenv(v->name);
    uint64_t n;
    if (text == NULL || text[0] == '\0' || parse(v, text, &n) == 0)
        return 0;
    if (msg != NULL && len > 0)
        refusal(v, text, msg, len);
    return 1;
}

uint64_t upti_env_get(upti_env_id id)
{
    if (id >= UPTI_ENV_COUNT)
        return 0;
    const env_var *v = &k_vars[id];
    const char *text = getenv(v->name);
    uint64_t n;
    if (text == NULL || text[0] == '\0')
        return v->def;
    if (parse(v, text, &n) == 0)
        return n;
    char msg[512];
    refusal(v, text, msg, sizeof msg);
    upti_log_error("%s", msg);
    return v->def;
}
