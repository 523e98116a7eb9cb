/* SPDX-License-Identifier: MIT */
/* src/collector/output/placeholders.c: each placeholder expands; %% is a literal '%';
 * an unknown one (%foo%, a lone '%') is refused with a message that names it
 * and lists the known ones. */
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "unit_tests.h"

static void expands(const char *pattern, const char *want)
{
    char err[256] = "not touched";
    char *got = uo_expand_placeholders(pattern, err, sizeof err);
    if (got == NULL || strcmp(got, want) != 0 || err[0] != '\0')
        fprintf(stderr, "FAIL '%s': '%s' (want '%s'), err '%s'\n", pattern, got ? got : "(null)",
                want, err);
    CHECK(got != NULL && strcmp(got, want) == 0 && err[0] == '\0');
    free(got);
}

static void refused(const char *pattern, const char *token)
{
    char err[256], want[256];
    snprintf(want, sizeof want, "unknown placeholder '%s' (known: %%pid%% %%ppid%% %%hostname%% "
             "%%rank%% %%argv0%% %%env{NAME}%% %%%%)", token);
    char *got = uo_expand_placeholders(pattern, err, sizeof err);
    if (got != NULL || strcmp(err, want) != 0)
        fprintf(stderr, "FAIL '%s': '%s', err '%s' (want '%s')\n", pattern, got ? got : "(null)",
                err, want);
    CHECK(got == NULL && strcmp(err, want) == 0);
    free(got);
}

static const char *fake_env(void *data, const char *name)
{
    return strcmp(name, "WHO") == 0 ? (const char *)data : NULL;
}

/* uo_expand_placeholders_with: another process's values (the collector's case). */
static void expands_with(const char *pattern, const uo_placeholder_values *v, const char *want)
{
    char err[256] = "not touched";
    char *got = uo_expand_placeholders_with(pattern, v, err, sizeof err);
    if (got == NULL || strcmp(got, want) != 0 || err[0] != '\0')
        fprintf(stderr, "FAIL with '%s': '%s' (want '%s'), err '%s'\n", pattern,
                got ? got : "(null)", want, err);
    CHECK(got != NULL && strcmp(got, want) == 0 && err[0] == '\0');
    free(got);
}

UNIT_TEST(placeholders)
{
    char want[512];
    snprintf(want, sizeof want, "out/%d-%d", (int)getpid(), (int)getppid());
    expands("out/%pid%-%ppid%", want);
    expands("plain/name", "plain/name");
    expands("", "");
    expands("100%%", "100%");
    expands("%%pid%%", "%pid%");
    setenv("UPTI_TEST_PLACEHOLDER_WORD", "a/b", 1);
    expands("x-%env{UPTI_TEST_PLACEHOLDER_WORD}%", "x-a_b"); /* one component stays one */
    unsetenv("UPTI_TEST_PLACEHOLDER_UNSET");
    expands("x-%env{UPTI_TEST_PLACEHOLDER_UNSET}%-y", "x--y");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    unsetenv("PMIX_RANK");
    unsetenv("SLURM_PROCID");
    unsetenv("MPI_LOCALRANKID");
    setenv("PMI_RANK", "7", 1);
    expands("r%rank%", "r7");
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    for (char *c = host; *c; c++)
        if (*c == '/')
            *c = '_';
    snprintf(want, sizeof want, "h-%s", host);
    expands("h-%hostname%", want);
    /* The first launcher variable set wins; none: rank 0. */
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    expands("r%rank%", "r3");
    unsetenv("OMPI_COMM_WORLD_RANK");
    setenv("PMI_RANK", "", 1); /* empty: not set */
    expands("r%rank%", "r0");
    unsetenv("PMI_RANK");
    /* %argv0%: this program's basename. */
    expands("%argv0%.db", "upti_unit_tests.db");
    /* Given values; NULL ones expand to their defaults, '/' never splits a component. */
    uo_placeholder_values v = {.pid = 42, .ppid = 1, .hostname = "node/7", .rank = "5",
                               .argv0 = "app", .getenv = fake_env, .getenv_data = "me"};
    expands_with("%argv0%-%pid%-%ppid%-%rank%-%hostname%-%env{WHO}%-%env{NOPE}%", &v,
                 "app-42-1-5-node_7-me-");
    /* A newline, a tab or DEL in a value never reaches the name. */
    uo_placeholder_values odd = {.pid = 1, .ppid = 1, .argv0 = "my\napp\tx\x7f", .rank = "0"};
    expands_with("%argv0%", &odd, "my_app_x_");
    uo_placeholder_values none = {.pid = 9, .ppid = 8};
    expands_with("%hostname%/%rank%/%argv0%x/%env{WHO}%", &none, "unknown/0/x/");
    refused("x-%foo%", "%foo%");
    refused("%PID%", "%PID%");
    refused("out/%pid%/%bar%-%pid%", "%bar%");
    refused("50%", "%");
    refused("50% done", "% done");
    refused("a%env{X", "%env{X");
    refused("%\x01\x02%", "%??%"); /* control bytes are not echoed */
    /* A lone '%' followed by control bytes: they are not echoed. */
    char err[256];
    CHECK(uo_expand_placeholders("%\n\t", err, sizeof err) == NULL);
    CHECK(strchr(err, '\n') == NULL && strchr(err, '\t') == NULL);
    CHECK(uo_expand_placeholders("%foo%", NULL, 0) == NULL); /* no err buffer: still refused */
    return test_result("placeholders");
}
