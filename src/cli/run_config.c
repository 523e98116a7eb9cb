/* SPDX-License-Identifier: MIT */
/* See run_config.h. */
#include "run_config.h"

#include "cli.h"
#include "files.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options whose value may also be a list (joined with ','). */
static int listable(const char *name)
{
    return strcmp(name, "format") == 0 || strcmp(name, "kernel-iteration-range") == 0 ||
           strcmp(name, "stats-report") == 0;
}

typedef struct loading {
    const char *path;
    const cli_option *table;
    size_t n;
    rc_check_fn check;
    void *ctx;
    run_config_file *out;
} loading;

/* "upti: run: PATH:LINE:COL: message" */
static int refuse(const loading *ld, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int refuse(const loading *ld, int line, int col, const char *fmt, ...)
{
    char msg[768], shown[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_printable(ld->path, shown, sizeof shown);
    return cli_usage_error("run", "%s:%d:%d: %s", shown, line, col, msg);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The value of an option's node as the command line would give it (*value
 * NULL: off or unset). 0, or 2 after the line. */
static int value_of(loading *ld, const cli_option *o, const cn_node *v, const char **value)
{
    *value = NULL;
    char key[80];
    cli_printable(v->key, key, sizeof key);
    if (!o->takes_value) {
        if (v->type == CN_BOOL) {
            *value = v->text[0] == 't' ? "1" : NULL;
            return 0;
        }
        if (v->type == CN_NULL)
            return 0;
        return refuse(ld, v->line, v->col, "\"%s\": expected true or false, found %s", key,
                      cn_describe(v));
    }
    if (v->type == CN_NULL)
        return 0;
    if (v->type == CN_STRING || v->type == CN_NUMBER) {
        *value = v->text;
        return 0;
    }
    int list = listable(o->long_name);
    if (v->type == CN_ARRAY && list) {
        size_t len = 1;
        for (size_t i = 0; i < v->n; i++) {
            const cn_node *item = v->items[i];
            if (item->type != CN_STRING && item->type != CN_NUMBER)
                return refuse(ld, item->line, item->col,
                              "\"%s\": a list of strings or numbers, found %s in it", key,
                              cn_describe(item));
            len += strlen(item->text) + 1;
        }
        if (v->n == 0)
            return refuse(ld, v->line, v->col, "\"%s\": an empty list", key);
        char *joined = malloc(len);
        char **owned = realloc(ld->out->owned, (ld->out->nowned + 1) * sizeof *owned);
        if (joined == NULL || owned == NULL) {
            free(joined);
            if (owned != NULL)
                ld->out->owned = owned;
            return cli_error("out of memory");
        }
        ld->out->owned = owned;
        joined[0] = '\0';
        for (size_t i = 0; i < v->n; i++) {
            strcat(joined, v->items[i]->text);
            if (i + 1 < v->n)
                strcat(joined, ",");
        }
        owned[ld->out->nowned++] = joined;
        *value = joined;
        return 0;
    }
    return refuse(ld, v->line, v->col, "\"%s\": expected %s, found %s", key,
                  list ? "a string or a list of strings" : "a string or a number",
                  cn_describe(v));
}

/* Sets entry id of pass to value (replacing an earlier one). 0 or -1. */
static int put(rc_pass *pass, int id, const char *value)
{
    for (size_t i = 0; i < pass->n; i++) {
        if (pass->entries[i].id == id) {
            pass->entries[i].value = value;
            return 0;
        }
    }
    rc_entry *e = realloc(pass->entries, (pass->n + 1) * sizeof *e);
    if (e == NULL)
        return -1;
    pass->entries = e;
    pass->entries[pass->n++] = (rc_entry){id, value};
    return 0;
}

/* The members of one object of options into pass; top: the file's top level. */
static int load_object(loading *ld, const cn_node *obj, rc_pass *pass, int top)
{
    /* the option of each member so far, to refuse one given twice */
    int *ids = calloc(obj->n + 1, sizeof *ids);
    int rc = ids == NULL ? cli_error("out of memory") : 0;
    for (size_t i = 0; i < obj->n && rc == 0; i++) {
        const cn_node *v = obj->items[i];
        char key[80], name[80];
        cli_printable(v->key, key, sizeof key);
        snprintf(name, sizeof name, "%s", v->key);
        for (char *p = name; *p; p++)
            if (*p == '_')
                *p = '-';
        if (strcmp(name, "jobs") == 0 || strcmp(name, "upti-config") == 0) {
            if (!top)
                rc = refuse(ld, v->key_line, v->key_col, "\"%s\" belongs at the top level, not "
                            "in a pass", key);
            continue; /* read by the caller */
        }
        const cli_option *o = cli_find_option(ld->table, ld->n, name);
        if (o == NULL || strcmp(name, "help") == 0 || strcmp(name, "input") == 0) {
            const char *hint = o == NULL ? cli_closest_option(ld->table, ld->n, name) : NULL;
            if (o != NULL)
                rc = refuse(ld, v->key_line, v->key_col, "\"%s\" cannot be given in a file", key);
            else if (hint != NULL)
                rc = refuse(ld, v->key_line, v->key_col, "unknown key \"%s\" (did you mean \"%s\"?)",
                            key, hint);
            else
                rc = refuse(ld, v->key_line, v->key_col, "unknown key \"%s\" (the keys are the "
                            "long options of upti run, e.g. \"sys-trace\", and \"jobs\")", key);
            break;
        }
        for (size_t k = 0; k < i; k++) {
            if (ids[k] == o->id) {
                const cn_node *first = obj->items[k];
                char fk[80];
                cli_printable(first->key, fk, sizeof fk);
                rc = refuse(ld, v->key_line, v->key_col, "\"%s\" is given twice (also \"%s\" at "
                            "line %d)", key, fk, first->key_line);
                break;
            }
        }
        if (rc != 0)
            break;
        ids[i] = o->id;
        const char *value;
        rc = value_of(ld, o, v, &value);
        if (rc != 0)
            break;
        if (value != NULL && ld->check != NULL) {
            char context[700], shown[512];
            cli_printable(ld->path, shown, sizeof shown);
            snprintf(context, sizeof context, "%s:%d:%d: \"%s\"", shown, v->line, v->col, key);
            cli_set_error_context(context);
            rc = ld->check(ld->ctx, o->id, value);
            cli_set_error_context(NULL);
            if (rc != 0)
                break;
        }
        if (put(pass, o->id, value) != 0)
            rc = cli_error("out of memory");
    }
    free(ids);
    return rc;
}

static const cn_node *member(const cn_node *obj, const char *name)
{
    for (size_t i = 0; i < obj->n; i++) {
        char key[80];
        snprintf(key, sizeof key, "%s", obj->items[i]->key);
        for (char *p = key; *p; p++)
            if (*p == '_')
                *p = '-';
        if (strcmp(key, name) == 0)
            return obj->items[i];
    }
    return NULL;
}

int run_config_load(const char *path, const cli_option *table, size_t n, rc_check_fn check,
                    void *ctx, run_config_file *out)
{
    memset(out, 0, sizeof *out);
    loading ld = {path, table, n, check, ctx, out};
    char shown[512];
    cli_printable(path, shown, sizeof shown);
    size_t len = 0;
    char *text = cli_read_file(path, &len);
    if (text == NULL)
        return cli_usage_error("run", "cannot read the configuration file %s: %s", shown,
                               strerror(errno));
    int yaml = ends_with(path, ".yaml") || ends_with(path, ".yml");
    if (!yaml && !ends_with(path, ".json")) {
        size_t i = strspn(text, " \t\r\n");
        yaml = text[i] != '{';
    }
    char err[512] = "";
    out->root = yaml ? cn_parse_yaml(text, len, err, sizeof err) : cn_parse_json(text, len, err, sizeof err);
    free(text);
    if (out->root == NULL) {
        if (yaml && err[0] == '\0')
            return cli_usage_error("run", "%s: YAML files need libyaml, which this upti was "
                                   "built without: use JSON", shown);
    {
        /* err is "LINE:COL: what" */
        const char *what = strstr(err, ": ");
        int at = what != NULL ? (int)(what - err) : 0;
        return cli_usage_error("run", "%s:%.*s: not valid %s: %s", shown, at, err,
                               yaml ? "YAML" : "JSON", what != NULL ? what + 2 : err);
    }
    }
    const cn_node *root = out->root;
    if (root->type != CN_OBJECT)
        return refuse(&ld, root->line, root->col, "expected an object of options (e.g. "
                      "{\"sys-trace\": true}), found %s", cn_describe(root));
    const cn_node *version = member(root, "upti-config");
    if (version != NULL && !(version->type == CN_NUMBER && strcmp(version->text, "1") == 0))
        return refuse(&ld, version->line, version->col, "\"upti-config\": this upti reads "
                      "version 1 only");
    rc_pass common = {NULL, 0};
    int rc = load_object(&ld, root, &common, 1);
    const cn_node *jobs = member(root, "jobs");
    if (rc == 0 && jobs != NULL && (jobs->type != CN_ARRAY || jobs->n == 0))
        rc = refuse(&ld, jobs->line, jobs->col, "\"jobs\": expected a list of one or more "
                    "objects of options (one per pass), found %s",
                    jobs->type == CN_ARRAY ? "an empty list" : cn_describe(jobs));
    size_t npasses = jobs != NULL && rc == 0 ? jobs->n : 1;
    if (rc == 0 && (out->passes = calloc(npasses, sizeof *out->passes)) == NULL)
        rc = cli_error("out of memory");
    if (rc == 0)
        out->npasses = npasses;
    for (size_t p = 0; rc == 0 && p < npasses; p++) {
        for (size_t i = 0; rc == 0 && i < common.n; i++)
            if (put(&out->passes[p], common.entries[i].id, common.entries[i].value) != 0)
                rc = cli_error("out of memory");
        if (rc == 0 && jobs != NULL) {
            const cn_node *job = jobs->items[p];
            if (job->type != CN_OBJECT)
                rc = refuse(&ld, job->line, job->col, "\"jobs\": pass %zu: expected an object "
                            "of options, found %s", p + 1, cn_describe(job));
            else
                rc = load_object(&ld, job, &out->passes[p], 0);
        }
    }
    free(common.entries);
    return rc;
}

void run_config_free(run_config_file *f)
{
    for (size_t p = 0; p < f->npasses; p++)
        free(f->passes[p].entries);
    free(f->passes);
    for (size_t i = 0; i < f->nowned; i++)
        free(f->owned[i]);
    free(f->owned);
    cn_free(f->root);
    memset(f, 0, sizeof *f);
}

void rc_text_add(rc_text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->s != NULL && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap ? t->cap * 2 : 1024) + (size_t)n;
        char *s = realloc(t->s, cap);
        if (s == NULL) {
            t->failed = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

void rc_text_json_string(rc_text *t, const char *s)
{
    if (s == NULL) {
        rc_text_add(t, "null");
        return;
    }
    rc_text_add(t, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            rc_text_add(t, "\\%c", *p);
        else if (*p == '\n')
            rc_text_add(t, "\\n");
        else if (*p == '\t')
            rc_text_add(t, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            rc_text_add(t, "\\u%04x", *p);
        else
            rc_text_add(t, "%c", *p);
    }
    rc_text_add(t, "\"");
}
