/* SPDX-License-Identifier: MIT */
/* Output file names: %pid% %ppid% %hostname% %rank% %argv0% %env{NAME}% and %%. */
#include "output.h"
#include "proc_stat.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *uo_rank_string(void)
{
    const char *rank = upti_proc_mpi_rank();
    return rank != NULL ? rank : "0";
}

/* Appends text, turning '/' into '_' so one placeholder stays one component,
 * and control characters (a newline in a program's name) into '_' too: an
 * output name is printed in one line and typed in shells. */
static void put_component(uo_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        uo_buf_putc(b, c == '/' || c < 0x20 || c == 0x7f ? '_' : *s);
    }
}

/* The text of the unknown placeholder at p: "%name%" when a '%' closes a run
 * of name bytes, else the '%' and a few bytes after it; control bytes as '?'. */
static void unknown_token(const char *p, char *out, size_t len)
{
    size_t n = 1;
    while (p[n] != '\0' && p[n] != '%' && n < 24 &&
           (p[n] == '_' || p[n] == '{' || p[n] == '}' || (p[n] >= '0' && p[n] <= '9') ||
            ((p[n] | 0x20) >= 'a' && (p[n] | 0x20) <= 'z')))
        n++;
    if (p[n] == '%')
        n++;
    else if (n == 1)
        while (p[n] != '\0' && n < 8)
            n++;
    size_t i = 0;
    for (; i < n && i + 1 < len; i++)
        out[i] = (unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i];
    out[i] = '\0';
}

static const char *own_env(void *data, const char *name)
{
    (void)data;
    return getenv(name);
}

char *uo_expand_placeholders(const char *pattern, char *err, size_t errlen)
{
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    char a[1024];
    upti_proc_argv0(a, sizeof a);
    uo_placeholder_values v = {getpid(), getppid(), host, uo_rank_string(), a, own_env, NULL};
    return uo_expand_placeholders_with(pattern, &v, err, errlen);
}

char *uo_expand_placeholders_with(const char *pattern, const uo_placeholder_values *v, char *err,
                                  size_t errlen)
{
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    uo_buf b;
    uo_buf_init(&b, NULL);
    for (const char *p = pattern; *p;) {
        if (*p != '%') {
            uo_buf_putc(&b, *p++);
            continue;
        }
        if (strncmp(p, "%%", 2) == 0) {
            uo_buf_putc(&b, '%');
            p += 2;
        } else if (strncmp(p, "%pid%", 5) == 0) {
            uo_buf_put_i64(&b, v->pid);
            p += 5;
        } else if (strncmp(p, "%ppid%", 6) == 0) {
            uo_buf_put_i64(&b, v->ppid);
            p += 6;
        } else if (strncmp(p, "%hostname%", 10) == 0) {
            put_component(&b, v->hostname ? v->hostname : "unknown");
            p += 10;
        } else if (strncmp(p, "%rank%", 6) == 0) {
            put_component(&b, v->rank ? v->rank : "0");
            p += 6;
        } else if (strncmp(p, "%argv0%", 7) == 0) {
            put_component(&b, v->argv0 ? v->argv0 : "");
            p += 7;
        } else if (strncmp(p, "%env{", 5) == 0 && strstr(p + 5, "}%") != NULL) {
            const char *end = strstr(p + 5, "}%");
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(end - (p + 5)), p + 5);
            const char *value = v->getenv != NULL ? v->getenv(v->getenv_data, name) : NULL;
            if (value != NULL)
                put_component(&b, value);
            p = end + 2;
        } else {
            char token[32];
            unknown_token(p, token, sizeof token);
            /* nsys writes %q{VAR} for a variable's value; upti's is %env{VAR}%. */
            int nsys_env = strncmp(p, "%q{", 3) == 0;
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "unknown placeholder '%s' (%s%s)", token,
                         nsys_env ? "nsys's %q{VAR} is upti's %env{VAR}%; known: " : "known: ",
                         UO_PLACEHOLDERS_KNOWN);
            uo_buf_free(&b);
            return NULL;
        }
    }
    uo_buf_putc(&b, '\0');
    if (b.error) {
        uo_buf_free(&b);
        return NULL;
    }
    return b.data;
}
