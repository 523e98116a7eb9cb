/* SPDX-License-Identifier: MIT */
/* upti_unit_tests: the driver of the unit tests. Each case runs in a process
 * of its own (a process configures UPTI's tools once):
 *
 *   upti_unit_tests --list           the cases built in, one name a line
 *   upti_unit_tests CASE             runs CASE; exit 0 when all its checks pass
 *   upti_unit_tests --check NAME...  exit 0 when the names are exactly the
 *                                    cases built in (ctest registers each as
 *                                    unit.NAME: none is left unrun)
 *
 * A name with a dot is a sub-case: buffers.wrap runs the buffers case with
 * "wrap". Which cases are built in depends on the libraries this build has
 * (UNIT_HAVE_*, tests/unit/CMakeLists.txt). */
#include "unit_tests.h"

#include <stdio.h>
#include <string.h>

typedef struct unit_case {
    const char *name;
    int (*run)(const char *sub);
} unit_case;

static const unit_case k_cases[] = {
#ifdef UNIT_HAVE_UPTI
    {"names", unit_test_names},
    {"runtime_metadata", unit_test_runtime_metadata},
    {"documented_status", unit_test_documented_status},
    {"log_callback", unit_test_log_callback},
    {"lock_order", unit_test_lock_order},
    {"capture_current", unit_test_capture_current},
    {"api_records", unit_test_api_records},
    {"compact_api", unit_test_compact_api},
    {"struct_size.copy", unit_test_struct_size},
    {"struct_size.buffer_options", unit_test_struct_size},
    {"struct_size.result_small", unit_test_struct_size},
    {"struct_size.result_unknown", unit_test_struct_size},
#endif
#ifdef UNIT_HAVE_UPTX
    {"compact_mark", unit_test_compact_mark},
    {"external_ids", unit_test_external_ids},
    {"buffers.wrap", unit_test_buffers},
    {"buffers.drops", unit_test_buffers},
    {"buffers.lossless", unit_test_buffers},
    {"buffers.reassign", unit_test_buffers},
    {"buffers.ranges", unit_test_buffers},
    {"uptx_table.header", unit_test_uptx_table},
    {"uptx_table.sdk", unit_test_uptx_table},
#endif
    {"log", unit_test_log},
    {"log.env_info", unit_test_log},
    {"log.env_bad", unit_test_log},
    {"env", unit_test_env},
    {"kv_pairs", unit_test_kv_pairs},
    {"ring_futex", unit_test_ring_futex},
    {"capture_spec", unit_test_capture_spec},
    {"config_parse", unit_test_config_parse},
    {"private_dir", unit_test_private_dir},
    {"private_dir.proc_stat", unit_test_private_dir},
    {"replace_file", unit_test_replace_file},
    {"cpu_quota", unit_test_cpu_quota},
#ifdef UNIT_HAVE_OUTPUT
    {"placeholders", unit_test_placeholders},
    {"intern", unit_test_intern},
    {"db_errors", unit_test_db_errors},
    {"db_template", unit_test_db_template},
    {"arg_link", unit_test_arg_link},
    {"runtime_api_names", unit_test_runtime_api_names},
    {"table_pages.trees", unit_test_table_pages},
    {"table_pages.rebuild", unit_test_table_pages},
    {"table_pages.full", unit_test_table_pages},
    {"table_pages.tmpdir", unit_test_table_pages},
    {"table_pages.memory", unit_test_table_pages},
    {"page_writer.same", unit_test_page_writer},
    {"page_writer.full", unit_test_page_writer},
#endif
#ifdef UNIT_HAVE_COLLECTOR
    {"spool", unit_test_spool},
    {"ring_check", unit_test_ring_check},
    {"thread_slice", unit_test_thread_slice},
#endif
#ifdef UNIT_HAVE_SPIRV
    {"spirv", unit_test_spirv},
    {"vk_families", unit_test_vk_families},
    {"handle_map", unit_test_handle_map},
#endif
};
enum { CASES = sizeof k_cases / sizeof k_cases[0] };

static const unit_case *find_case(const char *name)
{
    for (size_t i = 0; i < CASES; i++)
        if (strcmp(k_cases[i].name, name) == 0)
            return &k_cases[i];
    return NULL;
}

/* 0 if names[0..n) and the cases built in are the same set, each once. */
static int check_names(char **names, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int again = 0;
        for (int j = 0; j < i; j++)
            again |= strcmp(names[i], names[j]) == 0;
        if (again || find_case(names[i]) == NULL) {
            fprintf(stderr, "upti_unit_tests: %s: %s\n", names[i],
                    again ? "registered twice" : "no such case");
            bad = 1;
        }
    }
    for (size_t c = 0; c < CASES; c++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= strcmp(names[i], k_cases[c].name) == 0;
        if (!found) {
            fprintf(stderr, "upti_unit_tests: case %s is not registered with ctest\n",
                    k_cases[c].name);
            bad = 1;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < CASES; i++)
            printf("%s\n", k_cases[i].name);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--check") == 0)
        return check_names(argv + 2, argc - 2);
    const unit_case *c = argc == 2 ? find_case(argv[1]) : NULL;
    if (c == NULL) {
        fprintf(stderr, "usage: upti_unit_tests --list | CASE | --check NAME...\n");
        if (argc == 2)
            fprintf(stderr, "upti_unit_tests: no case %s (--list shows them)\n", argv[1]);
        return 2;
    }
    const char *dot = strchr(c->name, '.');
    return c->run(dot != NULL ? dot + 1 : "");
}
