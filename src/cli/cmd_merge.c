/* upti merge: several trace databases into one (one track group per process). */
#include "cli.h"
#include "files.h"
#include "output.h"

#include <getopt.h>
#include <stdlib.h>

void cmd_merge_help(FILE *out)
{
    fprintf(out,
            "usage: upti merge DATABASE... -o OUTPUT.db\n"
            "\n"
            "Joins the databases of several processes or MPI ranks into one. Each\n"
            "process keeps its own rows (info_process.id is renumbered, strings are\n"
            "re-interned), so `upti export` draws one track group per process and\n"
            "`upti stats` sums over all of them.\n"
            "\n"
            "options:\n"
            "  -o, --output PATH   the merged database (required); replaces only a\n"
            "                      database written by upti, never an input\n"
            "  -h, --help          this help\n");
}

int cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *output = NULL;
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    int n = 0, c;
    opterr = 0;
    optind = 1;
    while (optind < argc) {
        c = getopt_long(argc, argv, "+:o:h", opts, NULL);
        if (c == -1) {
            inputs[n++] = argv[optind++];
            continue;
        }
        switch (c) {
        case 'o': output = optarg; break;
        case 'h': cmd_merge_help(stdout); free(inputs); return 0;
        default: free(inputs); return cli_bad_option("merge", c, argv, optind, optopt);
        }
    }
    if (output == NULL || n == 0) {
        free(inputs);
        return cli_usage_error("merge", output ? "no input DATABASE" : "missing -o OUTPUT.db");
    }
    int same = cli_output_is_input(output, inputs, n);
    if (same >= 0) {
        int rc = cli_usage_error("merge", "the output %s is the input %s (choose another -o)",
                                 output, inputs[same]);
        free(inputs);
        return rc;
    }
    char err[1024];
    int rc = uo_merge(output, inputs, n, err, sizeof err);
    free(inputs);
    return rc == 0 ? 0 : cli_error("%s", err);
}
