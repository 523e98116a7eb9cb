/* SPDX-License-Identifier: MIT */
/* See run_options.h. */
#include "run_options.h"

#include "cli.h"
#include "log.h"
#include "out_files.h"
#include "output.h"
#include "run_config.h"
#include "stats_reports.h"
#include "trace_kinds.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cmd_run_help(FILE *out)
{
    fprintf(out,
            "usage: upti run [options] [--] PROGRAM [ARGS...]\n"
            "\n"
            "Runs PROGRAM with UPTI's tracing tool and writes, per process, a SQLite\n"
            "database (and the other formats asked for). Programs it starts (fork/exec)\n"
            "are traced too, each into its own files. Exits with PROGRAM's status\n"
            "(128+N if signal N killed it).\n"
            "\n"
            "what to trace (default: --sys-trace):\n"
            "  --opencl-trace            OpenCL API calls\n"
            "  --vulkan-trace            Vulkan API calls (the layer VK_LAYER_UPTI_trace)\n"
            "  --kernel-trace            kernel dispatches (and kernel symbols)\n"
            "  --memory-copy-trace       copies, fills, maps, migrations, markers, barriers\n"
            "  --memory-alloc-trace      buffer/image/SVM allocations and releases\n"
            "  --marker-trace            uptx and NVTX markers: ranges, marks, thread names\n"
            "  --runtime-trace           calls of runtimes that describe their API to UPTI\n"
            "                            (upti_register_runtime_api: not built in)\n"
            "  --sys-trace               all of the above\n"
            "  --kernel-include-regex RE keep only kernels whose name matches RE (POSIX ERE)\n"
            "  --kernel-exclude-regex RE drop kernels whose name matches RE\n"
            "  --kernel-iteration-range R keep only these executions of each kernel name,\n"
            "                            counted from 1: N, N-M, N-, a comma list, e.g. [1-3,5]\n"
            "  --args                    also record the arguments of OpenCL calls, and with\n"
            "                            --runtime-trace of described runtimes' calls (names,\n"
            "                            types, printed values: the arg table and the args\n"
            "                            view); implies --opencl-trace; off by default (cost)\n"
            "\n"
            "when to record (default: from start to end; see docs/cli.md):\n"
            "  --capture-range=marker --capture-range-name NAME[@DOMAIN]\n"
            "                            only inside uptx or NVTX ranges NAME (@DOMAIN: an\n"
            "                            NVTX domain; @*: any domain)\n"
            "  --capture-range-end stop|repeat[:N]\n"
            "                            the first range only (stop, the default), every\n"
            "                            one (repeat) or the first N (repeat:N)\n"
            "  --start-paused            record nothing until uptx_profiler_resume();\n"
            "                            uptx_profiler_pause() pauses (always honoured)\n"
            "  --delay SEC               record from SEC seconds after the start\n"
            "  --duration SEC            record for SEC seconds (after --delay)\n"
            "  -P, --collection-period START:DURATION:REPEAT\n"
            "                            REPEAT times (0: to the end): START s paused, then\n"
            "                            DURATION s recorded\n"
            "\n"
            "output:\n"
            "  -d, --output-dir DIR      directory of the outputs (default: .; created with\n"
            "                            its parents)\n"
            "  -o, --output NAME         file name without extension (also --output-file;\n"
            "                            default: upti-%%argv0%%-%%pid%%); placeholders in DIR\n"
            "                            and NAME: %%pid%% %%ppid%% %%hostname%% %%rank%%\n"
            "                            (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,\n"
            "                            SLURM_PROCID, MPI_LOCALRANKID) %%argv0%% %%env{NAME}%%\n"
            "                            %%pass%% (the pass of -i, from 1) and %%%% (a\n"
            "                            literal %%); any other %% is an error\n"
            "  -f, --format LIST         comma-separated: db (SQLite, see docs/database.md),\n"
            "                            pftrace (Perfetto protobuf), json (Chrome trace\n"
            "                            JSON), csv (one file per record kind). Default: db\n"
            "  --force-overwrite         replace existing files of the output names that\n"
            "                            upti did not write (default: refused, written under\n"
            "                            NAME-PID instead); also UPTI_TRACE_FORCE_OVERWRITE=1\n"
            "  --stats                   print the summary reports at exit (on stderr, per\n"
            "                            process; also NAME_stats.csv with --format csv):\n"
            "                            those of `upti stats DATABASE`\n"
            "  --stats-report NAME[,NAME]  --stats with these reports instead (`upti stats\n"
            "                            --list` names them)\n"
            "  -L, --list                list tracing kinds, operations and agents; with a\n"
            "                            PROGRAM, also run it (traced as usual) and print,\n"
            "                            per process at its end, the agents (devices) it saw\n"
            "  --log-level LEVEL         UPTI's messages on stderr: none, error, warning\n"
            "                            (default), info or debug (UPTI_LOG_LEVEL)\n"
            "  -i, --input FILE          options from a JSON or YAML file, by their long\n"
            "                            names, possibly several passes (\"jobs\"): the\n"
            "                            program runs once per pass; options given here\n"
            "                            override the file's (see docs/cli.md)\n"
            "  --output-config           also write the resolved settings as JSON to\n"
            "                            NAME_config.json (every database keeps them in\n"
            "                            its metadata \"config\")\n"
            "  -h, --help                this help\n"
            "\n"
            "Options come before PROGRAM: the first argument that is not an option (or\n"
            "everything after --) is PROGRAM, and what follows it is PROGRAM's own.\n"
            "Long options are taken by their exact name only.\n"
            "\n"
            "environment set for PROGRAM: UPTI_TOOL_LIBRARIES, OPENCL_LAYERS,\n"
            "XDG_DATA_DIRS and UPTI_VULKAN_LAYER (the Vulkan layer),\n"
            "NVTX_INJECTION64_PATH and UPTI_TRACE_* (see docs/cli.md).\n"
            "\n"
            "example: upti run --sys-trace --stats --format db,pftrace -d out -- ./app 100\n");
}

const cli_option run_option_table[] = {
    {O_OPENCL, 0, "opencl-trace", NULL, 0},
    {O_VULKAN, 0, "vulkan-trace", NULL, 0},
    {O_KERNEL, 0, "kernel-trace", NULL, 0},
    {O_COPY, 0, "memory-copy-trace", NULL, 0},
    {O_ALLOC, 0, "memory-alloc-trace", NULL, 0},
    {O_MARKER, 0, "marker-trace", NULL, 0},
    {O_RUNTIME, 0, "runtime-trace", NULL, 0},
    {O_SYS, 0, "sys-trace", NULL, 0},
    {O_STATS, 0, "stats", NULL, 0},
    {O_INCLUDE, 0, "kernel-include-regex", NULL, 1},
    {O_EXCLUDE, 0, "kernel-exclude-regex", NULL, 1},
    {O_ARGS, 0, "args", NULL, 0},
    {O_LIST, 'L', "list", NULL, 0},
    {O_FORCE, 0, "force-overwrite", NULL, 0},
    {O_CAPTURE_RANGE, 0, "capture-range", NULL, 1},
    {O_CAPTURE_NAME, 0, "capture-range-name", NULL, 1},
    {O_CAPTURE_END, 0, "capture-range-end", NULL, 1},
    {O_START_PAUSED, 0, "start-paused", NULL, 0},
    {O_DELAY, 0, "delay", NULL, 1},
    {O_DURATION, 0, "duration", NULL, 1},
    {O_PERIOD, 'P', "collection-period", NULL, 1},
    {O_ITERATIONS, 0, "kernel-iteration-range", NULL, 1},
    {O_LOG_LEVEL, 0, "log-level", NULL, 1},
    {O_INPUT, 'i', "input", NULL, 1},
    {O_OUTPUT_CONFIG, 0, "output-config", NULL, 0},
    {O_STATS_REPORT, 0, "stats-report", NULL, 1},
    CLI_OPTION_DIR,
    CLI_OPTION_OUTPUT,
    CLI_OPTION_FORMAT,
    CLI_OPTION_HELP,
};
const size_t run_option_count = sizeof run_option_table / sizeof run_option_table[0];

/* Adds a name to the UPTI_TRACE_KINDS list of o. */
static void add_kind(run_options *o, const char *name)
{
    size_t used = strlen(o->kinds);
    snprintf(o->kinds + used, sizeof o->kinds - used, "%s%s", used ? "," : "", name);
}

/* nsys's -d is a duration (`-d 5`); upti's names the output folder. A folder
 * named by a number is most likely that mistake: said once, and obeyed. */
static void warn_numeric_dir(const char *value)
{
    static int said;
    if (said || value[0] == '\0' || strspn(value, "0123456789.") != strlen(value) ||
        strcmp(value, ".") == 0 || strcmp(value, "..") == 0)
        return;
    said = 1;
    fprintf(stderr, "upti: run: warning: -d %s names the output folder '%s' (for a duration, as "
                    "nsys's -d, upti's is --duration SEC)\n",
            value, value);
}

int run_on_option(void *ctx, int id, const char *value)
{
    run_options *o = ctx;
    if (id >= 0 && id < O_END)
        o->given[id] = 1;
    switch (id) {
    case O_OPENCL: add_kind(o, upti_trace_kind_name(UPTI_TRACING_KIND_OPENCL_API)); break;
    case O_VULKAN: add_kind(o, upti_trace_kind_name(UPTI_TRACING_KIND_VULKAN_API)); break;
    case O_KERNEL:
        add_kind(o, upti_trace_kind_name(UPTI_TRACING_KIND_KERNEL_DISPATCH));
        add_kind(o, upti_trace_kind_name(UPTI_TRACING_KIND_CODE_OBJECT));
        break;
    case O_COPY: add_kind(o, upti_trace_kind_name(UPTI_TRACING_KIND_MEMORY_COPY)); break;
    case O_ALLOC: add_kind(o, upti_trace_kind_name(UPTI_TRACING_KIND_MEMORY_ALLOCATION)); break;
    case O_MARKER: add_kind(o, upti_trace_kind_name(UPTI_TRACING_KIND_MARKER_API)); break;
    case O_RUNTIME: add_kind(o, upti_trace_kind_name(UPTI_TRACING_KIND_RUNTIME_API)); break;
    case O_SYS: add_kind(o, "all"); break;
    case O_STATS: o->stats = 1; break;
    case O_STATS_REPORT: {
        const report_def **defs;
        size_t n;
        char err[768];
        if (report_parse_list(value, &defs, &n, err, sizeof err) != 0)
            return cli_usage_error("run", "--stats-report: %s", err);
        free(defs);
        o->stats = 1;
        o->stats_report = value;
        break;
    }
    case CLI_OPT_DIR:
        o->dir = value;
        warn_numeric_dir(value);
        break;
    case CLI_OPT_OUTPUT: o->file = value; break;
    case CLI_OPT_FORMAT: o->formats = value; break;
    case O_INCLUDE: o->include = value; break;
    case O_EXCLUDE: o->exclude = value; break;
    case O_LIST: o->list = 1; break;
    case O_ARGS:
        o->args = 1;
        add_kind(o, upti_trace_kind_name(UPTI_TRACING_KIND_OPENCL_API));
        break;
    case O_FORCE: o->force_overwrite = true; break;
    case O_LOG_LEVEL:
        if (upti_log_level_of(value) < 0) {
            char shown[64];
            cli_printable(value, shown, sizeof shown);
            return cli_usage_error("run", "--log-level '%s' is not none, error, warning, info or debug",
                                   shown);
        }
        o->log_level = value;
        break;
    case CLI_OPT_HELP: o->help = 1; break;
    case O_CAPTURE_RANGE: o->capture.range = value; break;
    case O_CAPTURE_NAME: o->capture.name = value; break;
    case O_CAPTURE_END: o->capture.end = value; break;
    case O_START_PAUSED: o->capture.start_paused = 1; break;
    case O_DELAY: o->capture.delay = value; break;
    case O_DURATION: o->capture.duration = value; break;
    case O_PERIOD: o->capture.period = value; break;
    case O_ITERATIONS: o->capture.iterations = value; break;
    case O_INPUT: o->input = value; break;
    case O_OUTPUT_CONFIG: o->output_config = 1; break;
    }
    return 0;
}

/* s with each %pass% replaced by pass ("%%" is left for the placeholders'
 * expansion); *found says whether there was one. malloc'd, or NULL. */
static char *expand_pass(const char *s, int pass, int *found)
{
    char *out = malloc(strlen(s) + 16 * (strlen(s) / 6 + 1) + 1);
    if (out == NULL)
        return NULL;
    size_t n = 0;
    for (const char *p = s; *p;) {
        if (strncmp(p, "%%", 2) == 0) {
            memcpy(out + n, p, 2), n += 2, p += 2;
        } else if (strncmp(p, "%pass%", 6) == 0) {
            n += (size_t)sprintf(out + n, "%d", pass);
            p += 6;
            *found = 1;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
    return out;
}

/* The output pattern of pass of npasses: %pass% expanded, or "-passN" after
 * the name when there are several passes and it has no %pass%. malloc'd. */
static char *pattern_of_pass(const char *pattern, int pass, int npasses)
{
    int found = 0;
    char *p = expand_pass(pattern, pass, &found);
    if (p == NULL || found || npasses <= 1)
        return p;
    char *q = cli_format_text("%s-pass%d", p, pass);
    free(p);
    return q;
}

int run_output_pattern(const run_options *o, char **pattern)
{
    static const char *const exts[] = {".db", ".pftrace", ".json", ".csv", NULL};
    int bad = cli_check_output_options("run", o->dir, o->file);
    if (bad != 0)
        return bad;
    char *base = cli_output_base(o->dir, o->file ? o->file : "upti-%argv0%-%pid%", exts);
    *pattern = base != NULL ? pattern_of_pass(base, o->pass > 0 ? o->pass : 1, o->npasses) : NULL;
    free(base);
    if (*pattern == NULL)
        return cli_error("out of memory");
    /* Expanded only to check it (the program's values are not known yet): upti's
     * own host name and argv[0] (from /proc) are not needed for that. */
    char err[256];
    uo_placeholder_values checked = {1, 1, "h", "0", "a", NULL, NULL};
    char *expanded = uo_expand_placeholders_with(*pattern, &checked, err, sizeof err);
    if (expanded == NULL) {
        free(*pattern);
        *pattern = NULL;
        if (strncmp(err, "unknown placeholder", 19) == 0)
            return cli_usage_error("run", "%s; upti run also expands %%pass%%", err);
        return err[0] ? cli_usage_error("run", "%s", err) : cli_error("out of memory");
    }
    free(expanded);
    return 0;
}

int run_check_formats(const char *formats, unsigned *bits)
{
    return cli_parse_formats("run", formats, upti_format_names, UPTI_FORMAT_OWN_NAMES, bits);
}

int run_check_regex(const char *value)
{
    regex_t re;
    if (regcomp(&re, value, REG_EXTENDED | REG_NOSUB) != 0) {
        char shown[160];
        cli_printable(value, shown, sizeof shown);
        return cli_usage_error("run", "invalid regular expression '%s'", shown);
    }
    regfree(&re);
    return 0;
}

int run_check_value(void *ctx, int id, const char *value)
{
    (void)ctx;
    unsigned bits;
    const cli_option *o = NULL;
    for (size_t i = 0; i < run_option_count; i++)
        if (run_option_table[i].id == id)
            o = &run_option_table[i];
    switch (id) {
    case CLI_OPT_FORMAT: return run_check_formats(value, &bits);
    case O_INCLUDE:
    case O_EXCLUDE: return run_check_regex(value);
    case O_LOG_LEVEL: {
        run_options scratch = {.formats = "db"};
        return run_on_option(&scratch, id, value);
    }
    case CLI_OPT_DIR:
    case CLI_OPT_OUTPUT: {
        run_options scratch = {.pass = 1, .npasses = 1};
        if (id == CLI_OPT_DIR)
            scratch.dir = value;
        else
            scratch.file = value;
        char *pattern = NULL;
        int rc = run_output_pattern(&scratch, &pattern);
        free(pattern);
        return rc;
    }
    default: return o != NULL ? run_capture_check_one(o->long_name, value) : 0;
    }
}

const char *run_given_value(const run_options *o, int id)
{
    const run_capture *c = &o->capture;
    switch (id) {
    case O_INCLUDE: return o->include;
    case O_EXCLUDE: return o->exclude;
    case O_CAPTURE_RANGE: return c->range;
    case O_CAPTURE_NAME: return c->name;
    case O_CAPTURE_END: return c->end;
    case O_DELAY: return c->delay;
    case O_DURATION: return c->duration;
    case O_PERIOD: return c->period;
    case O_ITERATIONS: return c->iterations;
    case O_LOG_LEVEL: return o->log_level;
    case O_STATS_REPORT: return o->stats_report;
    case CLI_OPT_DIR: return o->dir;
    case CLI_OPT_OUTPUT: return o->file;
    case CLI_OPT_FORMAT: return o->given[id] ? o->formats : NULL;
    default: return NULL;
    }
}

const char *run_stats_reports(const run_options *o)
{
    return o->stats_report != NULL ? o->stats_report : o->stats ? report_default_list : NULL;
}

char *run_resolved_config(const run_options *o)
{
    rc_text t = {0};
    rc_text_add(&t, RC_CONFIG_HEAD);
    static const int k_switch_kinds[] = {O_OPENCL, O_VULKAN, O_KERNEL, O_COPY, O_ALLOC, O_MARKER,
                                         O_RUNTIME};
    int any_kind = o->given[O_SYS] || o->given[O_ARGS];
    for (size_t i = 0; i < sizeof k_switch_kinds / sizeof k_switch_kinds[0]; i++)
        any_kind |= o->given[k_switch_kinds[i]];
    const char *level = o->log_level;
    if (level == NULL && getenv("UPTI_LOG_LEVEL") != NULL &&
        upti_log_level_of(getenv("UPTI_LOG_LEVEL")) >= 0)
        level = getenv("UPTI_LOG_LEVEL");
    const run_capture *c = &o->capture;
    int marker = c->name != NULL && (c->range == NULL || strcmp(c->range, "marker") == 0);
    const char *name = o->file ? o->file : "upti-%argv0%-%pid%";
    char *name_of_pass = pattern_of_pass(name, o->pass > 0 ? o->pass : 1, o->npasses);
    for (size_t i = 0; i < run_option_count; i++) {
        const cli_option *opt = &run_option_table[i];
        int id = opt->id;
        if (id == CLI_OPT_HELP || id == O_INPUT)
            continue;
        rc_text_add(&t, "  \"%s\": ", opt->long_name);
        if (!opt->takes_value) {
            int on = o->given[id] || (id == O_SYS && !any_kind) ||
                     (id == O_FORCE && uo_force_overwrite());
            rc_text_add(&t, "%s", on ? "true" : "false");
        } else if (id == CLI_OPT_FORMAT) {
            rc_text_add(&t, "[");
            for (const char *p = o->formats; *p;) {
                size_t len = strcspn(p, ",");
                char word[32];
                snprintf(word, sizeof word, "%.*s", (int)(len < 31 ? len : 31), p);
                rc_text_add(&t, "%s", p == o->formats ? "" : ", ");
                rc_text_json_string(&t, word);
                p += len;
                if (*p == ',')
                    p++;
            }
            rc_text_add(&t, "]");
        } else {
            const char *v = run_given_value(o, id);
            switch (id) {
            case O_CAPTURE_RANGE: v = c->range ? c->range : marker ? "marker" : "none"; break;
            case O_CAPTURE_END: v = c->end ? c->end : marker ? "stop" : NULL; break;
            case O_LOG_LEVEL: v = level ? level : "warning"; break;
            case O_STATS_REPORT: v = run_stats_reports(o); break;
            case CLI_OPT_DIR: v = o->dir ? o->dir : "."; break;
            case CLI_OPT_OUTPUT: v = name_of_pass; break;
            }
            rc_text_json_string(&t, v);
        }
        rc_text_add(&t, "%s\n", i + 2 < run_option_count ? "," : "");
    }
    rc_text_add(&t, "}\n");
    free(name_of_pass);
    if (t.failed) {
        free(t.s);
        return NULL;
    }
    return t.s;
}
