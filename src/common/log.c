/* SPDX-License-Identifier: MIT */
#include "log.h"

#include "env.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where messages go. Each setting is a new sink, never freed (a thread may be
 * reading the previous one); they are chained so that they stay reachable. */
struct sink {
    upti_log_callback_t callback;
    void *data;
    struct sink *previous;
};

static _Atomic(struct sink *) g_sink;
static _Atomic int g_level = -1; /* -1: UPTI_LOG_LEVEL not read yet */
static _Thread_local int t_in_callback;

static const char *const k_level_words[] = {"none", "error", "warning", "info", "debug", NULL};

int upti_log_level_of(const char *word)
{
    for (int i = 0; word != NULL && k_level_words[i] != NULL; i++)
        if (strcmp(word, k_level_words[i]) == 0)
            return i;
    return -1;
}

/* One line on stderr in one write(): "upti: " + text + "\n". */
static void write_stderr(const char *text)
{
    char line[1024];
    int n = snprintf(line, sizeof line - 1, "upti: %s", text);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

static void deliver(upti_log_level_t level, const char *text)
{
    struct sink *s = atomic_load_explicit(&g_sink, memory_order_acquire);
    if (s == NULL || s->callback == NULL || t_in_callback) {
        write_stderr(text);
        return;
    }
    t_in_callback++;
    s->callback(level, text, s->data);
    t_in_callback--;
}

static int threshold(void)
{
    int level = atomic_load_explicit(&g_level, memory_order_acquire);
    if (level >= 0)
        return level;
    /* Read once. A bad value is said (at the default level) after the default
     * is in place: saying it must not read the variable again. */
    char msg[256];
    int bad = upti_env_check(UPTI_ENV_LOG_LEVEL, msg, sizeof msg);
    level = bad ? UPTI_LOG_LEVEL_WARNING : (int)upti_env_get(UPTI_ENV_LOG_LEVEL);
    int unset = -1;
    if (atomic_compare_exchange_strong(&g_level, &unset, level) && bad)
        deliver(UPTI_LOG_LEVEL_ERROR, msg);
    return atomic_load_explicit(&g_level, memory_order_acquire);
}

int upti_log_enabled(upti_log_level_t level)
{
    return level > UPTI_LOG_LEVEL_NONE && (int)level <= threshold();
}

void upti_log(upti_log_level_t level, const char *fmt, ...)
{
    if (!upti_log_enabled(level))
        return;
    char text[1000];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    /* Messages are single lines: a newline inside (from dlerror, a path) becomes a space. */
    for (char *p = text; *p; p++)
        if (*p == '\n')
            *p = ' ';
    deliver(level, text);
}

void upti_log_configure(upti_log_level_t level, upti_log_callback_t callback, void *data)
{
    struct sink *s = NULL;
    if (callback != NULL) {
        s = malloc(sizeof *s);
        if (s == NULL) {
            write_stderr("out of memory: the log callback is not set; messages stay on stderr");
            return;
        }
        s->callback = callback;
        s->data = data;
        s->previous = NULL;
    }
    /* Keep every earlier sink reachable through the newest one (or a static head). */
    static struct sink *retired;
    struct sink *old = atomic_exchange_explicit(&g_sink, s, memory_order_acq_rel);
    if (old != NULL)
        old->previous = __atomic_exchange_n(&retired, old, __ATOMIC_ACQ_REL);
    atomic_store_explicit(&g_level, (int)level, memory_order_release);
}
