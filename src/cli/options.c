/* SPDX-License-Identifier: MIT */
/* See options.h. */
#include "options.h"

#include "cli.h"
#include "dirs.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_printable(const char *s, char *out, size_t len)
{
    size_t i = 0;
    if (len < 8)
        return;
    for (; s[i] != '\0' && i + 4 < len; i++)
        out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    if (s[i] != '\0')
        memcpy(out + i, "...", 3), i += 3;
    out[i] = '\0';
}

/* Edit distance of a and b (insertions, deletions, substitutions), capped at 99. */
static unsigned distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    unsigned row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static const cli_option *find_long(const cli_option *table, size_t n, const char *name, size_t len);

/* The long name closest to name when it is close (a typo, or a prefix of it); NULL otherwise. */
static const char *closest(const cli_option *table, size_t n, const char *name, size_t len)
{
    char typed[64];
    if (len == 0 || len >= sizeof typed)
        return NULL;
    memcpy(typed, name, len);
    typed[len] = '\0';
    const char *best = NULL;
    unsigned best_d = 99;
    for (size_t i = 0; i < n; i++) {
        const char *names[2] = {table[i].long_name, table[i].alias};
        for (int k = 0; k < 2; k++) {
            if (names[k] == NULL)
                continue;
            unsigned d = distance(typed, names[k]);
            if (len >= 3 && strncmp(names[k], typed, len) == 0)
                d = d < 2 ? d : 2;
            if (d < best_d)
                best_d = d, best = names[k];
        }
    }
    return best_d <= 2 ? best : NULL;
}

const char *cli_closest_option(const cli_option *table, size_t n, const char *name)
{
    return closest(table, n, name, strlen(name));
}

const cli_option *cli_find_option(const cli_option *table, size_t n, const char *name)
{
    return find_long(table, n, name, strlen(name));
}

static const cli_option *find_long(const cli_option *table, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        const char *names[2] = {table[i].long_name, table[i].alias};
        for (int k = 0; k < 2; k++)
            if (names[k] != NULL && strlen(names[k]) == len && strncmp(names[k], name, len) == 0)
                return &table[i];
    }
    return NULL;
}

/* Options as other tracers spell them (nsys, rocprofv3), and what upti calls
 * them: an unknown option of these gets the hint instead of "did you mean". */
static const char k_trace_hint[] =
    "nsys -t/--trace: upti traces everything by default (--sys-trace), or --opencl-trace, "
    "--vulkan-trace, --kernel-trace, --memory-copy-trace, --memory-alloc-trace, --marker-trace, --runtime-trace";
static const struct {
    const char *command, *spelling, *hint;
} k_foreign[] = {
    {"run", "-t", k_trace_hint},
    {"run", "--trace", k_trace_hint},
    {"run", "-y", "nsys -y: upti's is --delay SEC"},
    {"run", "--output-format", "rocprofv3 --output-format: upti's is -f/--format (db, pftrace, "
                               "json, csv)"},
    {"run", "--hip-trace", "rocprofv3 --hip-trace: upti traces OpenCL (--opencl-trace) and "
                           "Vulkan (--vulkan-trace)"},
    {"run", "--hsa-trace", "rocprofv3 --hsa-trace: upti traces OpenCL (--opencl-trace) and "
                           "Vulkan (--vulkan-trace)"},
    {"run", "--nvtx-trace", "upti's --marker-trace records NVTX and uptx"},
};

static const char *foreign_hint(const char *command, const char *spelling, size_t len)
{
    for (size_t i = 0; i < sizeof k_foreign / sizeof k_foreign[0]; i++)
        if (command != NULL && strcmp(command, k_foreign[i].command) == 0 &&
            strlen(k_foreign[i].spelling) == len && strncmp(spelling, k_foreign[i].spelling, len) == 0)
            return k_foreign[i].hint;
    return NULL;
}

static const cli_option *find_short(const cli_option *table, size_t n, char c)
{
    for (size_t i = 0; i < n; i++)
        if (table[i].short_name != 0 && table[i].short_name == c)
            return &table[i];
    return NULL;
}

/* --name, --name=value or --name value at argv[*i]. */
static int parse_long(const char *command, const cli_option *table, size_t n, int argc,
                      char **argv, int *i, cli_option_fn fn, void *ctx)
{
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const cli_option *o = find_long(table, n, arg, len);
    char shown[80];
    if (o == NULL) {
        cli_printable(argv[*i], shown, sizeof shown);
        if (eq != NULL && (size_t)(eq - argv[*i]) < sizeof shown)
            shown[eq - argv[*i]] = '\0';
        const char *foreign = foreign_hint(command, argv[*i], len + 2);
        if (foreign != NULL)
            return cli_usage_error(command, "unknown option '%s' (%s)", shown, foreign);
        const char *hint = closest(table, n, arg, len);
        if (hint != NULL)
            return cli_usage_error(command, "unknown option '%s' (did you mean --%s?)", shown, hint);
        return cli_usage_error(command, "unknown option '%s'", shown);
    }
    char name[72];
    snprintf(name, sizeof name, "--%.*s", (int)len, arg);
    const char *value = NULL;
    if (o->takes_value) {
        if (eq != NULL)
            value = eq + 1;
        else if (*i + 1 < argc)
            value = argv[++*i];
        else
            return cli_usage_error(command, "option %s needs a value", name);
    } else if (eq != NULL) {
        return cli_usage_error(command, "option %s takes no value", name);
    }
    return fn(ctx, o->id, value);
}

/* -x, -xVALUE, -x VALUE or a cluster of switches -xyz at argv[*i]. */
static int parse_short(const char *command, const cli_option *table, size_t n, int argc,
                       char **argv, int *i, cli_option_fn fn, void *ctx)
{
    for (const char *p = argv[*i] + 1; *p != '\0'; p++) {
        const cli_option *o = find_short(table, n, *p);
        if (o == NULL) {
            char c[2] = {*p, '\0'}, shown[8], dashed[3] = {'-', *p, '\0'};
            cli_printable(c, shown, sizeof shown);
            const char *foreign = foreign_hint(command, dashed, 2);
            if (foreign != NULL)
                return cli_usage_error(command, "unknown option '-%s' (%s)", shown, foreign);
            return cli_usage_error(command, "unknown option '-%s'", shown);
        }
        if (!o->takes_value) {
            int rc = fn(ctx, o->id, NULL);
            if (rc != 0)
                return rc;
            continue;
        }
        const char *value = p + 1;
        if (*value == '\0') {
            if (*i + 1 >= argc)
                return cli_usage_error(command, "option -%c needs a value", *p);
            value = argv[++*i];
        }
        return fn(ctx, o->id, value);
    }
    return 0;
}

int cli_parse_options(const char *command, const cli_option *table, size_t n, int argc,
                      char **argv, cli_args_mode mode, cli_option_fn fn, void *ctx,
                      char **positionals, int *npositional)
{
    int np = 0, rc = 0, options_end = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        if (options_end || a[0] != '-' || a[1] == '\0') {
            positionals[np++] = argv[i];
            if (mode == CLI_ARGS_PROGRAM)
                options_end = 1;
        } else if (strcmp(a, "--") == 0) {
            options_end = 1;
        } else if (a[1] == '-') {
            rc = parse_long(command, table, n, argc, argv, &i, fn, ctx);
        } else {
            rc = parse_short(command, table, n, argc, argv, &i, fn, ctx);
        }
    }
    *npositional = np;
    return rc;
}

int cli_parse_formats(const char *command, const char *list, const cli_format *formats, size_t n,
                      unsigned *bits)
{
    char shown[80];
    cli_printable(list, shown, sizeof shown);
    char names[160] = "";
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", formats[i].name);
    }
    if (list[0] == '\0')
        return cli_usage_error(command, "empty --format (one or more of %s, comma-separated)", names);
    *bits = 0;
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return cli_usage_error(command, "empty format in --format '%s' (one or more of %s, "
                                   "comma-separated)", shown, names);
        size_t i = 0;
        while (i < n && !(strlen(formats[i].name) == len && strncmp(formats[i].name, p, len) == 0))
            i++;
        if (i == n) {
            char word[80];
            snprintf(word, sizeof word, "%.*s", (int)(len < 64 ? len : 64), p);
            cli_printable(word, shown, sizeof shown);
            return cli_usage_error(command, "unknown format '%s' (%s)", shown, names);
        }
        *bits |= formats[i].bit;
        p += len;
        if (*p == '\0')
            break;
    }
    return 0;
}

int cli_check_output_options(const char *command, const char *dir, const char *name)
{
    if (dir != NULL && dir[0] == '\0')
        return cli_usage_error(command, "empty --output-dir");
    if (name == NULL)
        return 0;
    if (name[0] == '\0')
        return cli_usage_error(command, "empty --output");
    const char *slash = strrchr(name, '/');
    const char *last = slash != NULL ? slash + 1 : name;
    if (last[0] == '\0' || strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
        return cli_usage_error(command, "--output '%s' names a folder, not a file name "
                               "(-d DIR -o NAME, or -o DIR/NAME)", name);
    return 0;
}

int cli_parse_anywhere(const char *command, const cli_option *table, size_t n, int argc,
                       char **argv, cli_option_fn fn, void *ctx, char ***positionals,
                       int *npositional)
{
    *npositional = 0;
    *positionals = calloc((size_t)argc + 1, sizeof **positionals);
    if (*positionals == NULL)
        return cli_error("out of memory");
    return cli_parse_options(command, table, n, argc, argv, CLI_ARGS_ANYWHERE, fn, ctx,
                             *positionals, npositional);
}

int cli_parse_input(const char *command, const cli_option *table, size_t n, int argc, char **argv,
                    cli_option_fn fn, void *ctx, const char **input, int *npositional)
{
    char **positionals;
    int rc = cli_parse_anywhere(command, table, n, argc, argv, fn, ctx, &positionals, npositional);
    *input = positionals != NULL && *npositional > 0 ? positionals[0] : NULL;
    free(positionals);
    return rc;
}

int cli_on_output_option(cli_output_options *o, int id, const char *value)
{
    switch (id) {
    case CLI_OPT_FORMAT: o->formats = value; return 1;
    case CLI_OPT_DIR: o->dir = value; return 1;
    case CLI_OPT_OUTPUT: o->output = value; return 1;
    case CLI_OPT_HELP: o->help = 1; return 1;
    default: return 0;
    }
}

char *cli_input_output_base(const char *dir, const char *name, const char *input,
                            const char *const *exts)
{
    if (name != NULL)
        return cli_output_base(dir, name, exts);
    char *stripped = cli_strip_db(input);
    if (dir == NULL || stripped == NULL)
        return stripped;
    const char *slash = strrchr(stripped, '/');
    char *base = cli_output_base(dir, slash ? slash + 1 : stripped, NULL);
    free(stripped);
    return base;
}

char *cli_output_base(const char *dir, const char *name, const char *const *exts)
{
    size_t dlen = dir != NULL && name[0] != '/' ? strlen(dir) : 0;
    size_t len = dlen + strlen(name) + 2;
    char *base = malloc(len);
    if (base == NULL)
        return NULL;
    if (dlen > 0)
        snprintf(base, len, "%s%s%s", dir, dir[dlen - 1] == '/' ? "" : "/", name);
    else
        snprintf(base, len, "%s", name);
    size_t blen = strlen(base);
    for (size_t i = 0; exts != NULL && exts[i] != NULL; i++) {
        size_t e = strlen(exts[i]);
        if (blen > e && strcmp(base + blen - e, exts[i]) == 0 && base[blen - e - 1] != '/') {
            base[blen - e] = '\0';
            break;
        }
    }
    return base;
}

/* 1 if the absolute path, or a folder above it, may be written by anyone and is not
 * sticky; path is cut down to that folder. */
static int open_folder_on(char *path)
{
    for (;;) {
        struct stat st;
        if (stat(path[0] != '\0' ? path : "/", &st) == 0 && (st.st_mode & S_IWOTH) &&
            !(st.st_mode & S_ISVTX)) {
            if (path[0] == '\0')
                strcpy(path, "/");
            return 1;
        }
        char *slash = strrchr(path, '/');
        if (slash == NULL || path[0] == '\0')
            return 0;
        *slash = '\0';
    }
}

/* 1 if dir, or a folder above it, may be written by anyone and is not sticky: then anyone
 * may rename or replace what is in it, the outputs once written or the folder that holds
 * them. Both the path as written (a link in such a folder can be swapped too) and the path
 * with its links resolved are walked; one that cannot be read counts as such a folder.
 * The first such folder goes to out (PATH_MAX). A sticky folder (/tmp) is fine: only a
 * file's owner may remove or rename it there. A folder only its group may write (a
 * project's) is the group's choice. */
static int writable_by_anyone(const char *dir, char *out)
{
    char cwd[PATH_MAX] = "";
    if (dir[0] != '/' && getcwd(cwd, sizeof cwd) == NULL) {
        snprintf(out, PATH_MAX, "%s", ".");
        return 1;
    }
    if (strlen(cwd) + 1 + strlen(dir) >= PATH_MAX) {
        snprintf(out, PATH_MAX, "%s", dir);
        return 1;
    }
    size_t n = strlen(cwd);
    memcpy(out, cwd, n);
    if (n > 0 && strcmp(dir, ".") != 0)
        out[n++] = '/';
    strcpy(out + n, strcmp(dir, ".") != 0 ? dir : ""); /* (the lengths were checked) */
    if (open_folder_on(out))
        return 1;
    if (realpath(dir, out) == NULL) {
        snprintf(out, PATH_MAX, "%s", dir);
        return 1;
    }
    return open_folder_on(out);
}

int cli_make_output_dir(const char *base, int placeholders)
{
    /* (No folder in base: the current one.) */
    char *dir = strchr(base, '/') != NULL ? strdup(base) : strdup("./");
    if (dir == NULL)
        return cli_error("out of memory");
    *strrchr(dir, '/') = '\0';
    /* Up to the component before the first placeholder. */
    char *pct = placeholders ? strchr(dir, '%') : NULL;
    if (pct != NULL) {
        while (pct > dir && pct[-1] != '/')
            pct--;
        *pct = '\0';
    }
    int rc = 0;
    char shown[1024];
    cli_printable(dir, shown, sizeof shown);
    char open_to_all[PATH_MAX];
    if (dir[0] != '\0' && upti_mkdirs(dir) != 0) {
        rc = cli_error("cannot create the directory %s: %s", shown, strerror(errno));
    } else if (writable_by_anyone(dir[0] != '\0' ? dir : base[0] == '/' ? "/" : ".",
                                  open_to_all)) {
        cli_printable(open_to_all, shown, sizeof shown);
        cli_error("the output folder's path goes through %s, which anyone may write and which "
                  "is not sticky: another user could replace the outputs; choose a folder of "
                  "yours (or chmod +t it)", shown);
        rc = 2;
    }
    free(dir);
    return rc;
}
