/* SPDX-License-Identifier: MIT */
/* Byte buffers and the string safety of every output: UTF-8 repair, JSON, CSV and terminal escaping. */
#include "output.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void uo_buf_init(uo_buf *b, FILE *out)
{
    memset(b, 0, sizeof *b);
    b->out = out;
}

void uo_buf_free(uo_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int uo_grow_slow(void *array, size_t *cap, size_t need, size_t elem, size_t first)
{
    size_t n = *cap ? *cap : first;
    while (n < need)
        n *= 2;
    void *old;
    memcpy(&old, array, sizeof old);
    void *p = realloc(old, n * elem);
    if (p == NULL)
        return -1;
    memcpy(array, &p, sizeof p);
    *cap = n;
    return 0;
}

char *uo_buf_reserve(uo_buf *b, size_t n)
{
    /* At least one byte: an empty buffer has no data yet, and NULL + 0 is undefined. */
    if (uo_grow(&b->data, &b->cap, b->len + (n != 0 ? n : 1), 1, 4096) != 0) {
        b->error = 1;
        return NULL;
    }
    return b->data + b->len;
}

void uo_buf_put(uo_buf *b, const void *p, size_t n)
{
    char *d = uo_buf_reserve(b, n);
    if (d != NULL) {
        memcpy(d, p, n);
        b->len += n;
    }
}

void uo_buf_puts(uo_buf *b, const char *s) { uo_buf_put(b, s, strlen(s)); }

void uo_buf_putc(uo_buf *b, char c)
{
    char *d = uo_buf_reserve(b, 1);
    if (d != NULL) {
        *d = c;
        b->len++;
    }
}

void uo_buf_printf(uo_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    char *d = uo_buf_reserve(b, (size_t)n + 1);
    if (d == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void uo_buf_put_u64(uo_buf *b, uint64_t v)
{
    char tmp[24];
    int i = 24;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    uo_buf_put(b, tmp + i, (size_t)(24 - i));
}

void uo_buf_put_i64(uo_buf *b, int64_t v)
{
    if (v < 0) {
        uo_buf_putc(b, '-');
        uo_buf_put_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        uo_buf_put_u64(b, (uint64_t)v);
    }
}

void uo_buf_flush(uo_buf *b, size_t threshold)
{
    if (b->out == NULL || b->len == 0 || b->len < threshold)
        return;
    if (fwrite(b->data, 1, b->len, b->out) != b->len)
        b->error = 1;
    b->len = 0;
}

size_t uo_utf8_cut(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--; /* s[n] continues a character: cut before it starts */
    return n;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return (n >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && s[1] < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && s[1] >= 0xA0)
            return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90)
            return 0;
        if (c == 0xF4 && s[1] >= 0x90)
            return 0;
        return 4;
    }
    return 0;
}

int uo_utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq(s + i, n - i);
        if (k == 0)
            return 0;
        i += k;
    }
    return 1;
}

const char *uo_utf8_sanitize(const char *str, int *owned)
{
    *owned = 0;
    if (str == NULL)
        return NULL;
    size_t n = strlen(str);
    if (uo_utf8_valid(str, n))
        return str;
    const unsigned char *s = (const unsigned char *)str;
    char *out = malloc(n * 3 + 1);
    if (out == NULL)
        return "";
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(s + i, n - i);
        if (k == 0) {
            out[o++] = (char)0xEF; /* U+FFFD */
            out[o++] = (char)0xBF;
            out[o++] = (char)0xBD;
            i++;
        } else {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        }
    }
    out[o] = '\0';
    *owned = 1;
    return out;
}

static const char hexdig[] = "0123456789abcdef";

void uo_json_string(uo_buf *b, const char *s)
{
    if (s == NULL) {
        uo_buf_put(b, "\"\"", 2);
        return;
    }
    size_t n = strlen(s);
    char *d = uo_buf_reserve(b, n * 6 + 2);
    if (d == NULL)
        return;
    char *p = d;
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = (char)c;
        } else if (c < 0x20 || c == 0x7F) {
            *p++ = '\\';
            switch (c) {
            case '\n': *p++ = 'n'; break;
            case '\r': *p++ = 'r'; break;
            case '\t': *p++ = 't'; break;
            case '\b': *p++ = 'b'; break;
            case '\f': *p++ = 'f'; break;
            default:
                *p++ = 'u';
                *p++ = '0';
                *p++ = '0';
                *p++ = hexdig[c >> 4];
                *p++ = hexdig[c & 15];
            }
        } else {
            *p++ = (char)c;
        }
    }
    *p++ = '"';
    b->len += (size_t)(p - d);
}

void uo_csv_field(uo_buf *b, const char *s)
{
    if (s == NULL)
        return;
    size_t n = strlen(s);
    int quote = n > 0 && (s[0] == ' ' || s[n - 1] == ' ');
    for (size_t i = 0; i < n && !quote; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ',' || c == '"' || c < 0x20 || c == 0x7F)
            quote = 1;
    }
    if (!quote) {
        uo_buf_put(b, s, n);
        return;
    }
    char *d = uo_buf_reserve(b, n * 2 + 2);
    if (d == NULL)
        return;
    char *p = d;
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            *p++ = '"';
        *p++ = s[i];
    }
    *p++ = '"';
    b->len += (size_t)(p - d);
}

void uo_text_escape(uo_buf *b, const char *s, size_t max_chars)
{
    if (s == NULL)
        return;
    /* A longer name shows max_chars - 3 characters and "...": max_chars in all,
     * so that the columns after it stay in place. */
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && max_chars != 0; p++)
        chars += (*p & 0xC0) != 0x80;
    size_t keep = max_chars != 0 && chars > max_chars ? (max_chars > 3 ? max_chars - 3 : 0) : 0;
    size_t shown = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        /* cut before a character, never inside one (its continuation bytes follow it) */
        if (keep != 0 && shown >= keep && (*p & 0xC0) != 0x80) {
            uo_buf_puts(b, "...");
            return;
        }
        if (*p == '\n')
            uo_buf_puts(b, "\\n");
        else if (*p == '\t')
            uo_buf_puts(b, "\\t");
        else if (*p < 0x20 || *p == 0x7F)
            uo_buf_printf(b, "\\x%02x", *p);
        else
            uo_buf_putc(b, (char)*p);
        if ((*p & 0xC0) != 0x80)
            shown++;
    }
}
