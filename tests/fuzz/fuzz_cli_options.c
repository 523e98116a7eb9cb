/* SPDX-License-Identifier: MIT */
/* libFuzzer: the `upti` option parser (src/cli/options.c, through stats,
 * export, merge and help: every option, -d/-o/-f, format lists), argv made
 * from the input (NUL-separated).
 * Runs in an empty directory; arguments naming other places ('/') or the run
 * subcommand (which would start programs) are dropped. */
#include "fuzz_workdir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int upti_cli_main(int argc, char **argv);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        if (chdir(fuzz_workdir("cli")) != 0)
            abort();
        freopen("/dev/null", "w", stdout);
        ready = 1;
    }
    if (size < 1)
        return 0;
    static const char *const cmds[] = {"stats", "export", "merge", "help"};
    char *copy = malloc(size + 1);
    memcpy(copy, data + 1, size - 1);
    copy[size - 1] = '\0';
    char *argv[34] = {"upti", (char *)cmds[data[0] % 4]};
    int argc = 2;
    for (char *p = copy; p < copy + size - 1 && argc < 33; p += strlen(p) + 1) {
        if (strchr(p, '/') != NULL || strcmp(p, "run") == 0)
            continue;
        argv[argc++] = p;
    }
    argv[argc] = NULL;
    /* The parser keeps no state between calls (no getopt): nothing to reset. */
    upti_cli_main(argc, argv);
    free(copy);
    return 0;
}
