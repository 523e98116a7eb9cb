/* SPDX-License-Identifier: MIT */
/* See config_tree.h: a JSON reader (RFC 8259) that says where it stopped. */
#include "config_tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

typedef struct reader {
    const char *s;
    size_t len, pos;
    int line, col;
    char *err;
    size_t errlen;
    int failed;
} reader;

static void fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(reader *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = 1;
    int used = snprintf(r->err, r->errlen, "%d:%d: ", r->line, r->col);
    va_list ap;
    va_start(ap, fmt);
    if (used >= 0 && (size_t)used < r->errlen)
        vsnprintf(r->err + used, r->errlen - (size_t)used, fmt, ap);
    va_end(ap);
}

static int peek(const reader *r)
{
    return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

static void advance(reader *r)
{
    if (r->pos >= r->len)
        return;
    if (r->s[r->pos] == '\n')
        r->line++, r->col = 1;
    else if (((unsigned char)r->s[r->pos] & 0xc0) != 0x80) /* a UTF-8 character is one column */
        r->col++;
    r->pos++;
}

static void skip_space(reader *r)
{
    for (int c = peek(r); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek(r))
        advance(r);
}

/* "'x'" or "the end of the file", for messages. */
static const char *shown_char(const reader *r, char *buf, size_t len)
{
    int c = peek(r);
    if (c < 0)
        return "the end of the file";
    if (c < 0x20 || c >= 0x7f)
        snprintf(buf, len, "byte 0x%02x", (unsigned)c);
    else
        snprintf(buf, len, "'%c'", c);
    return buf;
}

static void put_utf8(char *out, size_t *n, unsigned long cp)
{
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xc0 | (cp >> 6));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out[(*n)++] = (char)(0xe0 | (cp >> 12));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*n)++] = (char)(0xf0 | (cp >> 18));
        out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    }
}

static int hex4(reader *r, unsigned long *cp)
{
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        int c = peek(r);
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (v < 0) {
            fail(r, "\\u needs 4 hex digits");
            return -1;
        }
        *cp = *cp * 16 + (unsigned long)v;
        advance(r);
    }
    return 0;
}

/* A string at the opening quote; malloc'd. */
static char *read_string(reader *r)
{
    advance(r); /* " */
    char *out = malloc(r->len - r->pos + 1); /* never longer than its source */
    size_t n = 0;
    if (out == NULL) {
        fail(r, "out of memory");
        return NULL;
    }
    for (;;) {
        int c = peek(r);
        if (c < 0) {
            fail(r, "unterminated string");
            break;
        }
        if (c == '"') {
            advance(r);
            out[n] = '\0';
            return out;
        }
        if (c < 0x20) {
            fail(r, "control byte 0x%02x in a string (write it as \\u%04x)", (unsigned)c,
                 (unsigned)c);
            break;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            advance(r);
            continue;
        }
        advance(r);
        c = peek(r);
        const char *simple = strchr("\"\\/bfnrt", c > 0 ? c : 'x');
        if (c > 0 && simple != NULL) {
            static const char k_out[] = "\"\\/\b\f\n\r\t";
            out[n++] = k_out[simple - "\"\\/bfnrt"];
            advance(r);
            continue;
        }
        if (c != 'u') {
            fail(r, "unknown escape in a string (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            break;
        }
        advance(r);
        unsigned long cp;
        if (hex4(r, &cp) != 0)
            break;
        if (cp >= 0xd800 && cp < 0xdc00) {
            unsigned long lo;
            if (peek(r) != '\\' || (advance(r), peek(r)) != 'u' || (advance(r), hex4(r, &lo)) != 0 ||
                lo < 0xdc00 || lo >= 0xe000) {
                fail(r, "a \\u surrogate without its pair");
                break;
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp < 0xe000) {
            fail(r, "a \\u surrogate without its pair");
            break;
        }
        if (cp == 0) {
            fail(r, "\\u0000 in a string");
            break;
        }
        put_utf8(out, &n, cp);
    }
    free(out);
    return NULL;
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static cn_node *read_value(reader *r, int depth);

static cn_node *read_number(reader *r)
{
    cn_node *node = cn_new(CN_NUMBER, r->line, r->col);
    size_t start = r->pos;
    if (peek(r) == '-')
        advance(r);
    if (peek(r) == '0') {
        advance(r);
    } else if (is_digit(peek(r))) {
        while (is_digit(peek(r)))
            advance(r);
    } else {
        fail(r, "expected a digit");
    }
    if (!r->failed && peek(r) == '.') {
        advance(r);
        if (!is_digit(peek(r)))
            fail(r, "expected a digit after '.'");
        while (is_digit(peek(r)))
            advance(r);
    }
    if (!r->failed && (peek(r) == 'e' || peek(r) == 'E')) {
        advance(r);
        if (peek(r) == '+' || peek(r) == '-')
            advance(r);
        if (!is_digit(peek(r)))
            fail(r, "expected a digit in the exponent");
        while (is_digit(peek(r)))
            advance(r);
    }
    if (node != NULL && !r->failed)
        node->text = strndup(r->s + start, r->pos - start);
    if (node == NULL || r->failed || node->text == NULL) {
        if (!r->failed)
            fail(r, "out of memory");
        cn_free(node);
        return NULL;
    }
    return node;
}

static cn_node *read_word(reader *r)
{
    static const char *const k_words[] = {"true", "false", "null"};
    char buf[16];
    for (size_t i = 0; i < 3; i++) {
        size_t k = strlen(k_words[i]);
        if (r->len - r->pos >= k && memcmp(r->s + r->pos, k_words[i], k) == 0) {
            cn_node *node = cn_new(i == 2 ? CN_NULL : CN_BOOL, r->line, r->col);
            if (node == NULL || (i < 2 && (node->text = strdup(k_words[i])) == NULL)) {
                cn_free(node);
                fail(r, "out of memory");
                return NULL;
            }
            for (size_t j = 0; j < k; j++)
                advance(r);
            return node;
        }
    }
    fail(r, "expected a value (an object, a list, a string, a number, true, false or null), "
            "found %s", shown_char(r, buf, sizeof buf));
    return NULL;
}

static cn_node *read_container(reader *r, int depth, int object)
{
    cn_node *node = cn_new(object ? CN_OBJECT : CN_ARRAY, r->line, r->col);
    char buf[16];
    if (node == NULL) {
        fail(r, "out of memory");
        return NULL;
    }
    if (depth >= MAX_DEPTH) {
        fail(r, "nested more than %d deep", MAX_DEPTH);
        cn_free(node);
        return NULL;
    }
    advance(r);
    skip_space(r);
    char close = object ? '}' : ']';
    if (peek(r) == close) {
        advance(r);
        return node;
    }
    for (;;) {
        char *key = NULL;
        int kl = 0, kc = 0;
        if (object) {
            if (peek(r) != '"') {
                fail(r, "expected a key in double quotes, found %s", shown_char(r, buf, sizeof buf));
                break;
            }
            kl = r->line, kc = r->col;
            key = read_string(r);
            if (key == NULL)
                break;
            skip_space(r);
            if (peek(r) != ':') {
                fail(r, "expected ':' after the key, found %s", shown_char(r, buf, sizeof buf));
                free(key);
                break;
            }
            advance(r);
            skip_space(r);
        }
        cn_node *child = read_value(r, depth + 1);
        if (child == NULL) {
            free(key);
            break;
        }
        if (cn_append_keyed(node, child, key, kl, kc) != 0) {
            fail(r, "out of memory");
            break;
        }
        skip_space(r);
        if (peek(r) == ',') {
            advance(r);
            skip_space(r);
            if (peek(r) == close) {
                fail(r, "a ',' before '%c' (JSON has no trailing comma)", close);
                break;
            }
            continue;
        }
        if (peek(r) == close) {
            advance(r);
            return node;
        }
        fail(r, "expected ',' or '%c', found %s", close, shown_char(r, buf, sizeof buf));
        break;
    }
    cn_free(node);
    return NULL;
}

static cn_node *read_value(reader *r, int depth)
{
    int c = peek(r);
    if (c == '{' || c == '[')
        return read_container(r, depth, c == '{');
    if (c == '"') {
        cn_node *node = cn_new(CN_STRING, r->line, r->col);
        if (node == NULL || (node->text = read_string(r)) == NULL) {
            fail(r, "out of memory");
            cn_free(node);
            return NULL;
        }
        return node;
    }
    if (c == '-' || is_digit(c))
        return read_number(r);
    return read_word(r);
}

cn_node *cn_parse_json(const char *text, size_t len, char *err, size_t errlen)
{
    reader r = {text, len, 0, 1, 1, err, errlen, 0};
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        r.pos = 3; /* a UTF-8 byte order mark */
    if (memchr(text, '\0', len) != NULL) {
        snprintf(err, errlen, "1:1: a NUL byte in the file: not a JSON text");
        return NULL;
    }
    skip_space(&r);
    cn_node *root = read_value(&r, 0);
    if (root == NULL)
        return NULL;
    skip_space(&r);
    if (r.pos < r.len) {
        char buf[16];
        fail(&r, "expected the end of the file after the value, found %s",
             shown_char(&r, buf, sizeof buf));
        cn_free(root);
        return NULL;
    }
    return root;
}
