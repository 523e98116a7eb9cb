/* SPDX-License-Identifier: MIT */
/* libFuzzer: `upti run -i FILE`'s readers (src/cli/run_config.c and the JSON
 * and YAML parsers of config_*.c) on any file given as a job file: the
 * options of each pass, or one "upti: run: FILE:LINE:COL: ..." line, never a
 * crash. The first byte chooses the file's name (.json, .yaml, or none: the
 * reader guesses); the rest is the file. The option table is a small one of
 * the shapes `upti run` has: flags, values, lists. */
#include "fuzz_workdir.h"
#include "options.h"
#include "run_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_SYS = CLI_OPT_OWN, OPT_KINCLUDE, OPT_RANGE, OPT_STATS };

static const cli_option k_table[] = {
    CLI_OPTION_HELP, CLI_OPTION_DIR, CLI_OPTION_OUTPUT, CLI_OPTION_FORMAT,
    {OPT_SYS, 0, "sys-trace", NULL, 0},
    {OPT_KINCLUDE, 0, "kernel-include-regex", NULL, 1},
    {OPT_RANGE, 0, "kernel-iteration-range", NULL, 1},
    {OPT_STATS, 0, "stats", NULL, 0},
};

static int accept_all(void *ctx, int id, const char *value)
{
    (void)ctx;
    (void)id;
    (void)value;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fuzz_workdir("job");
    if (size < 1)
        return 0;
    static const char *const names[] = {"job.json", "job.yaml", "job"};
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, names[data[0] % 3]);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return 0;
    fwrite(data + 1, 1, size - 1, f);
    fclose(f);
    run_config_file file;
    run_config_load(path, k_table, sizeof k_table / sizeof k_table[0], accept_all, NULL, &file);
    run_config_free(&file);
    unlink(path);
    return 0;
}
