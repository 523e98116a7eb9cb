/* SPDX-License-Identifier: MIT */
/* Prints the reports of `upti stats --report` as a table, CSV or JSON: every
 * query runs to its end before anything is written. */
#include "manifest.h"
#include "out_files.h"
#include "output.h"
#include "stats_reports.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_unit_names[] = {"ns", "us", "ms", "s"};
static const double k_unit_div[] = {1.0, 1e3, 1e6, 1e9};
static const int k_unit_decimals[] = {1, 3, 6, 9};

/* One report's rows: cells[row * ncols + col], NULL for an SQL NULL (hidden columns too). */
typedef struct report_rows {
    char **cells;
    size_t nrows, cap;
} report_rows;

static void upti_sqrt(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    double v = sqlite3_value_double(argv[0]);
    sqlite3_result_double(ctx, v > 0 ? sqrt(v) : 0.0);
}

static char *format_number(const char *fmt, double v, int decimals)
{
    if (!isfinite(v))
        return NULL;
    char tmp[64];
    snprintf(tmp, sizeof tmp, fmt, decimals, v);
    return strdup(tmp);
}

/* The cell of column col of st's row as printed (before any cutting or escaping). */
static char *format_cell(sqlite3_stmt *st, int col, report_col_type type, const report_options *o)
{
    int t = sqlite3_column_type(st, col);
    if (type == RC_HIDDEN || (t == SQLITE_NULL && type != RC_TEXT && type != RC_NAME &&
                              type != RC_KERNEL))
        return NULL;
    char tmp[32];
    switch (type) {
    case RC_PCT: return format_number("%.*f", sqlite3_column_double(st, col), 1);
    case RC_COUNT:
        snprintf(tmp, sizeof tmp, "%lld", (long long)sqlite3_column_int64(st, col));
        return strdup(tmp);
    case RC_MB: return format_number("%.*f", sqlite3_column_double(st, col) / 1e6, 3);
    case RC_TIME:
        if (o->unit == UNIT_NS && t == SQLITE_INTEGER) {
            snprintf(tmp, sizeof tmp, "%lld", (long long)sqlite3_column_int64(st, col));
            return strdup(tmp);
        }
        return format_number("%.*f", sqlite3_column_double(st, col) / k_unit_div[o->unit],
                             k_unit_decimals[o->unit]);
    default: break;
    }
    const char *text = (const char *)sqlite3_column_text(st, col);
    if (text == NULL)
        text = "";
    if (type == RC_KERNEL && o->demangle) {
        char *d = report_demangle(text);
        if (d != NULL)
            return d;
    }
    int owned = 0;
    const char *valid = uo_utf8_sanitize(text, &owned);
    return owned ? (char *)valid : strdup(valid);
}

static void rows_free(report_rows *r, size_t ncols)
{
    for (size_t i = 0; i < r->nrows * ncols; i++)
        free(r->cells[i]);
    free(r->cells);
    memset(r, 0, sizeof *r);
}

/* 1 when db's table has column (needs: "table.column"), as a database
 * written before that column was added does not. */
static int has_column(sqlite3 *db, const char *needs)
{
    const char *dot = strchr(needs, '.');
    sqlite3_stmt *st;
    if (dot == NULL || sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2",
                                          -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, needs, (int)(dot - needs), SQLITE_STATIC);
    sqlite3_bind_text(st, 2, dot + 1, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

/* Runs d's query; its first o->top rows (all for 0) in r; none when the
 * database lacks a column it needs. 0, or -1 with err. */
static int run_report(sqlite3 *db, const report_def *d, const report_options *o, report_rows *r,
                      char *err, size_t errlen)
{
    if (d->needs != NULL && !has_column(db, d->needs))
        return 0;
    if (d->prep != NULL && sqlite3_exec(db, d->prep, NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", d->name, sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, d->sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", d->name, sqlite3_errmsg(db));
        return -1;
    }
    int stepped;
    while ((stepped = sqlite3_step(st)) == SQLITE_ROW) {
        if (o->top > 0 && (long long)r->nrows >= o->top)
            continue; /* the rest of the query still runs: a damaged page is an error */
        if (uo_grow(&r->cells, &r->cap, (r->nrows + 1) * d->ncols, sizeof *r->cells,
                    64) != 0) {
            snprintf(err, errlen, "out of memory");
            sqlite3_finalize(st);
            return -1;
        }
        for (size_t c = 0; c < d->ncols; c++)
            r->cells[r->nrows * d->ncols + c] = format_cell(st, (int)c, d->cols[c].type, o);
        r->nrows++;
    }
    if (stepped != SQLITE_DONE) {
        snprintf(err, errlen, "%s: %s", d->name, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

/* A column's title with its time unit. */
static void put_title(uo_buf *b, const report_col *c, report_unit unit)
{
    const char *s = strstr(c->title, "%s");
    if (s == NULL) {
        uo_buf_puts(b, c->title);
        return;
    }
    uo_buf_put(b, c->title, (size_t)(s - c->title));
    uo_buf_puts(b, k_unit_names[unit]);
    uo_buf_puts(b, s + 2);
}

static size_t utf8_chars(const char *s, size_t n)
{
    size_t chars = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            chars++;
    return chars;
}

/* s as a table shows it: control bytes escaped; a name longer than
 * REPORT_NAME_WIDTH characters cut to its first ones and "..." (unless full). */
static char *table_text(const char *s, int cut)
{
    uo_buf b;
    uo_buf_init(&b, NULL);
    uo_text_escape(&b, s, 0);
    uo_buf_putc(&b, '\0');
    if (b.error) {
        uo_buf_free(&b);
        return NULL;
    }
    if (cut && utf8_chars(b.data, b.len - 1) > REPORT_NAME_WIDTH) {
        size_t chars = 0, i = 0;
        for (; b.data[i] != '\0'; i++) {
            if (((unsigned char)b.data[i] & 0xC0) != 0x80 && chars++ == REPORT_NAME_WIDTH - 3)
                break;
        }
        memcpy(b.data + i, "...", 4);
    }
    return b.data;
}

static int is_text(report_col_type t)
{
    return t == RC_TEXT || t == RC_NAME || t == RC_KERNEL;
}

static void pad(uo_buf *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        uo_buf_putc(b, ' ');
}

static void print_table(uo_buf *b, const report_def *d, const report_rows *r,
                        const report_options *o)
{
    size_t n = d->ncols;
    char **shown = calloc(r->nrows * n + 1, sizeof *shown);
    size_t *width = calloc(n, sizeof *width);
    uo_buf title;
    uo_buf_init(&title, NULL);
    if (shown == NULL || width == NULL) {
        b->error = 1;
        goto out;
    }
    for (size_t c = 0; c < n; c++) {
        if (d->cols[c].type == RC_HIDDEN)
            continue;
        title.len = 0;
        put_title(&title, &d->cols[c], o->unit);
        width[c] = utf8_chars(title.data, title.len);
        for (size_t i = 0; i < r->nrows; i++) {
            const char *cell = r->cells[i * n + c];
            int name = d->cols[c].type == RC_NAME || d->cols[c].type == RC_KERNEL;
            shown[i * n + c] = is_text(d->cols[c].type) ? table_text(cell ? cell : "",
                                                                    name && !o->full_names)
                                                        : strdup(cell ? cell : "-");
            if (shown[i * n + c] == NULL) {
                b->error = 1;
                goto out;
            }
            size_t w = utf8_chars(shown[i * n + c], strlen(shown[i * n + c]));
            if (w > width[c])
                width[c] = w;
        }
    }
    size_t last = 0;
    for (size_t c = 0; c < n; c++)
        if (d->cols[c].type != RC_HIDDEN)
            last = c;
    uo_buf_printf(b, "** %s (%s):\n\n", d->title, d->name);
    if (r->nrows == 0) {
        uo_buf_puts(b, "(no data)\n");
        goto out;
    }
    for (int line = 0; line < 2; line++) {
        const char *sep = "";
        for (size_t c = 0; c < n; c++) {
            if (d->cols[c].type == RC_HIDDEN)
                continue;
            title.len = 0;
            put_title(&title, &d->cols[c], o->unit);
            size_t w = utf8_chars(title.data, title.len);
            uo_buf_puts(b, sep);
            sep = "  ";
            if (line == 1) { /* the rule under the titles spans the column */
                for (size_t k = 0; k < width[c]; k++)
                    uo_buf_putc(b, '-');
                continue;
            }
            if (!is_text(d->cols[c].type))
                pad(b, width[c] - w);
            uo_buf_put(b, title.data, title.len);
            if (is_text(d->cols[c].type) && c != last)
                pad(b, width[c] - w);
        }
        uo_buf_putc(b, '\n');
    }
    for (size_t i = 0; i < r->nrows; i++) {
        const char *sep = "";
        for (size_t c = 0; c < n; c++) {
            if (d->cols[c].type == RC_HIDDEN)
                continue;
            const char *cell = shown[i * n + c];
            size_t w = utf8_chars(cell, strlen(cell));
            uo_buf_puts(b, sep);
            sep = "  ";
            if (!is_text(d->cols[c].type))
                pad(b, width[c] - w);
            uo_buf_puts(b, cell);
            if (is_text(d->cols[c].type) && c != last)
                pad(b, width[c] - w);
        }
        uo_buf_putc(b, '\n');
    }
out:
    for (size_t i = 0; shown != NULL && i < r->nrows * n; i++)
        free(shown[i]);
    free(shown);
    free(width);
    uo_buf_free(&title);
}

/* A report's CSV header line: its printed columns' titles in unit. */
static void put_csv_header(uo_buf *b, const report_def *d, report_unit unit)
{
    const char *sep = "";
    for (size_t c = 0; c < d->ncols; c++) {
        if (d->cols[c].type == RC_HIDDEN)
            continue;
        uo_buf_puts(b, sep);
        sep = ",";
        put_title(b, &d->cols[c], unit);
    }
    uo_buf_puts(b, "\r\n");
}

static void print_csv(uo_buf *b, const report_def *d, const report_rows *r, report_unit unit)
{
    size_t n = d->ncols;
    put_csv_header(b, d, unit);
    for (size_t i = 0; i < r->nrows; i++) {
        const char *sep = "";
        for (size_t c = 0; c < n; c++) {
            if (d->cols[c].type == RC_HIDDEN)
                continue;
            uo_buf_puts(b, sep);
            sep = ",";
            const char *cell = r->cells[i * n + c];
            if (cell != NULL)
                uo_csv_field(b, cell);
        }
        uo_buf_puts(b, "\r\n");
    }
}

/* Column c's key as a JSON string after *sep (then ","); 0 for a hidden column, left out. */
static int json_key(uo_buf *b, const report_def *d, size_t c, const char **sep)
{
    if (d->cols[c].type == RC_HIDDEN)
        return 0;
    uo_buf_puts(b, *sep);
    *sep = ",";
    uo_json_string(b, d->cols[c].key);
    return 1;
}

static void print_json(uo_buf *b, const report_def *d, const report_rows *r, report_unit unit)
{
    size_t n = d->ncols;
    uo_buf_puts(b, "{\"report\":");
    uo_json_string(b, d->name);
    uo_buf_puts(b, ",\"title\":");
    uo_json_string(b, d->title);
    uo_buf_printf(b, ",\"unit\":\"%s\",\"columns\":[", k_unit_names[unit]);
    const char *sep = "";
    for (size_t c = 0; c < n; c++)
        json_key(b, d, c, &sep);
    uo_buf_puts(b, "],\"rows\":[");
    for (size_t i = 0; i < r->nrows; i++) {
        uo_buf_puts(b, i ? ",\n{" : "\n{");
        sep = "";
        for (size_t c = 0; c < n; c++) {
            if (!json_key(b, d, c, &sep))
                continue;
            uo_buf_putc(b, ':');
            const char *cell = r->cells[i * n + c];
            if (cell == NULL)
                uo_buf_puts(b, "null");
            else if (is_text(d->cols[c].type))
                uo_json_string(b, cell);
            else
                uo_buf_puts(b, cell);
        }
        uo_buf_putc(b, '}');
    }
    uo_buf_puts(b, r->nrows ? "\n]}" : "]}");
}

/* upti_result_name(domain, value): report_result_name's, NULL where unknown. */
static void upti_result_name(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *name = report_result_name((const char *)sqlite3_value_text(argv[0]),
                                          sqlite3_value_int64(argv[1]));
    if (name != NULL)
        sqlite3_result_text(ctx, name, -1, SQLITE_STATIC);
    else
        sqlite3_result_null(ctx);
}

int report_print(sqlite3 *db, const report_def *const *reports, size_t n,
                 const report_options *o, FILE *out, char *err, size_t errlen)
{
    if (sqlite3_create_function(db, "upti_sqrt", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                upti_sqrt, NULL, NULL) != SQLITE_OK ||
        sqlite3_create_function(db, "upti_result_name", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                upti_result_name, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -1;
    }
    uo_buf b;
    uo_buf_init(&b, NULL);
    if (o->format == FORMAT_JSON)
        uo_buf_puts(&b, "{\"reports\":[\n");
    for (size_t i = 0; i < n; i++) {
        const report_def *d = reports[i];
        report_rows r = {0};
        if (run_report(db, d, o, &r, err, errlen) != 0) {
            rows_free(&r, d->ncols);
            uo_buf_free(&b);
            return -1;
        }
        if (i > 0)
            uo_buf_puts(&b, o->format == FORMAT_JSON ? ",\n" : o->format == FORMAT_CSV ? "\r\n" : "\n");
        if (o->format == FORMAT_TABLE)
            print_table(&b, d, &r, o);
        else if (o->format == FORMAT_CSV)
            print_csv(&b, d, &r, o->unit);
        else
            print_json(&b, d, &r, o->unit);
        rows_free(&r, d->ncols);
    }
    if (o->format == FORMAT_JSON)
        uo_buf_puts(&b, "\n]}\n");
    int failed = b.error;
    if (!failed && b.len > 0 && fwrite(b.data, 1, b.len, out) != b.len)
        failed = 1;
    uo_buf_free(&b);
    if (fflush(out) != 0)
        failed = 1;
    if (failed) {
        snprintf(err, errlen, "cannot write the reports");
        return -1;
    }
    return 0;
}

int report_print_list(sqlite3 *db, const char *list, const report_options *o, FILE *out,
                      char *err, size_t errlen)
{
    const report_def **defs;
    size_t n;
    if (report_parse_list(list, &defs, &n, err, errlen) != 0)
        return -1;
    int rc = report_print(db, defs, n, o, out, err, errlen);
    free(defs);
    return rc;
}

int report_csv_file(sqlite3 *db, const char *path, const char *list, char *err, size_t errlen)
{
    char *part;
    FILE *f = uo_part_open(path, "w", &part, err, errlen);
    if (f == NULL)
        return -1;
    report_options o = {.format = FORMAT_CSV};
    int rc = report_print_list(db, list, &o, f, err, errlen);
    if (fclose(f) != 0 && rc == 0) {
        snprintf(err, errlen, "cannot write %s: %s", part, strerror(errno));
        rc = -1;
    }
    if (uo_part_finish(part, path, rc == 0, err, errlen) != 0)
        rc = -1;
    free(part);
    if (rc == 0)
        uo_note_written(path);
    return rc;
}

int report_output_is_ours(const char *head)
{
    if (strncmp(head, "{\"reports\":[\n", 13) == 0)
        return 1;
    for (size_t i = 0; i < report_count; i++) {
        const report_def *d = &report_defs[i];
        char line[512];
        snprintf(line, sizeof line, "** %s (%s):\n", d->title, d->name);
        if (strncmp(head, line, strlen(line)) == 0)
            return 1;
        for (int unit = UNIT_NS; unit <= UNIT_S; unit++) {
            uo_buf b;
            uo_buf_init(&b, NULL);
            put_csv_header(&b, d, (report_unit)unit);
            int same = !b.error && strncmp(head, b.data, b.len) == 0;
            uo_buf_free(&b);
            if (same)
                return 1;
        }
    }
    return 0;
}
