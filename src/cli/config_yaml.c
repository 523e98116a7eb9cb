/* SPDX-License-Identifier: MIT */
/* See config_tree.h: a YAML file through libyaml's event parser. */
#include "config_tree.h"

#include <stdio.h>
#include <string.h>

#ifndef UPTI_HAVE_YAML

cn_node *cn_parse_yaml(const char *text, size_t len, char *err, size_t errlen)
{
    (void)text;
    (void)len;
    if (errlen > 0)
        err[0] = '\0';
    return NULL;
}

#else

#include <stdlib.h>
#include <yaml.h>

enum { MAX_DEPTH = 64 };

typedef struct loader {
    yaml_parser_t parser;
    char *err;
    size_t errlen;
    int failed;
} loader;

static void fail_at(loader *l, yaml_mark_t m, const char *what)
{
    if (!l->failed)
        snprintf(l->err, l->errlen, "%zu:%zu: %s", m.line + 1, m.column + 1, what);
    l->failed = 1;
}

/* The next event; 0, or -1 after the parser's own message. */
static int next(loader *l, yaml_event_t *e)
{
    if (yaml_parser_parse(&l->parser, e))
        return 0;
    char what[300];
    snprintf(what, sizeof what, "%s%s%s", l->parser.problem ? l->parser.problem : "not YAML",
             l->parser.context ? " " : "", l->parser.context ? l->parser.context : "");
    fail_at(l, l->parser.problem_mark, what);
    return -1;
}

static int is_number(const char *s)
{
    /* YAML 1.2 core: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, 0x.., 0o.. */
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o'))
        return p[2] != '\0' && strspn(p + 2, p[1] == 'x' ? "0123456789abcdefABCDEF" : "01234567") ==
                                   strlen(p + 2);
    size_t digits = strspn(p, "0123456789");
    p += digits;
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        if (digits == 0 && frac == 0)
            return 0;
        p += 1 + frac;
    } else if (digits == 0) {
        return 0;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        size_t exp = strspn(p, "0123456789");
        if (exp == 0)
            return 0;
        p += exp;
    }
    return *p == '\0';
}

static cn_node *scalar(loader *l, const yaml_event_t *e)
{
    const char *v = (const char *)e->data.scalar.value;
    cn_type t = CN_STRING;
    if (e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && e->data.scalar.tag == NULL) {
        if (v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
            strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0)
            t = CN_NULL;
        else if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "TRUE") == 0)
            t = CN_BOOL, v = "true";
        else if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0 || strcmp(v, "FALSE") == 0)
            t = CN_BOOL, v = "false";
        else if (is_number(v))
            t = CN_NUMBER;
    }
    if (strlen(v) != e->data.scalar.length && t == CN_STRING) {
        fail_at(l, e->start_mark, "a NUL character in a string");
        return NULL;
    }
    cn_node *n = cn_new(t, (int)e->start_mark.line + 1, (int)e->start_mark.column + 1);
    if (n != NULL && t != CN_NULL && (n->text = strdup(v)) == NULL) {
        cn_free(n);
        n = NULL;
    }
    if (n == NULL)
        fail_at(l, e->start_mark, "out of memory");
    return n;
}

/* The node that event e starts (e is consumed). */
static cn_node *node_of(loader *l, yaml_event_t *e, int depth)
{
    if (e->type == YAML_ALIAS_EVENT) {
        fail_at(l, e->start_mark, "aliases (*name) are not supported: write the value out");
        yaml_event_delete(e);
        return NULL;
    }
    if (e->type == YAML_SCALAR_EVENT) {
        cn_node *n = scalar(l, e);
        yaml_event_delete(e);
        return n;
    }
    int object = e->type == YAML_MAPPING_START_EVENT;
    if (!object && e->type != YAML_SEQUENCE_START_EVENT) {
        fail_at(l, e->start_mark, "unexpected YAML event");
        yaml_event_delete(e);
        return NULL;
    }
    yaml_mark_t start = e->start_mark;
    yaml_event_delete(e);
    cn_node *node = cn_new(object ? CN_OBJECT : CN_ARRAY, (int)start.line + 1, (int)start.column + 1);
    if (depth >= MAX_DEPTH)
        fail_at(l, start, "nested more than 64 deep");
    if (node == NULL)
        fail_at(l, start, "out of memory");
    while (!l->failed) {
        yaml_event_t k;
        if (next(l, &k) != 0)
            break;
        if (k.type == YAML_MAPPING_END_EVENT || k.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&k);
            return node;
        }
        char *key = NULL;
        int kl = 0, kc = 0;
        if (object) {
            if (k.type != YAML_SCALAR_EVENT) {
                fail_at(l, k.start_mark, "a key must be a plain word, not a list or a mapping");
                yaml_event_delete(&k);
                break;
            }
            key = strdup((const char *)k.data.scalar.value);
            kl = (int)k.start_mark.line + 1, kc = (int)k.start_mark.column + 1;
            yaml_event_delete(&k);
            if (key == NULL || next(l, &k) != 0) {
                free(key);
                break;
            }
        }
        cn_node *child = node_of(l, &k, depth + 1);
        if (child == NULL) {
            free(key);
            break;
        }
        if (cn_append_keyed(node, child, key, kl, kc) != 0)
            fail_at(l, l->parser.mark, "out of memory");
    }
    cn_free(node);
    return NULL;
}

cn_node *cn_parse_yaml(const char *text, size_t len, char *err, size_t errlen)
{
    loader l = {.err = err, .errlen = errlen};
    if (!yaml_parser_initialize(&l.parser)) {
        snprintf(err, errlen, "1:1: out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&l.parser, (const unsigned char *)text, len);
    cn_node *root = NULL;
    yaml_event_t e;
    /* STREAM-START, DOCUMENT-START, the root node, DOCUMENT-END, STREAM-END. */
    if (next(&l, &e) == 0) {
        yaml_event_delete(&e);
        if (next(&l, &e) == 0) {
            if (e.type == YAML_STREAM_END_EVENT) {
                fail_at(&l, e.start_mark, "the file is empty");
                yaml_event_delete(&e);
            } else {
                yaml_event_delete(&e);
                if (next(&l, &e) == 0)
                    root = node_of(&l, &e, 0);
            }
        }
    }
    if (root != NULL && next(&l, &e) == 0) { /* DOCUMENT-END */
        yaml_event_delete(&e);
        if (next(&l, &e) == 0) {
            if (e.type != YAML_STREAM_END_EVENT)
                fail_at(&l, e.start_mark, "a second document ('---'): one document only");
            yaml_event_delete(&e);
        }
    }
    yaml_parser_delete(&l.parser);
    if (l.failed) {
        cn_free(root);
        return NULL;
    }
    return root;
}

#endif
