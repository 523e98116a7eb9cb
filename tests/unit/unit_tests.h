/* SPDX-License-Identifier: MIT */
/* The unit tests' cases (one file each, test_*.c), run by one driver
 * (unit_tests.c). A case returns 0 when every check passed. sub is the part of
 * the case's name after its first dot ("wrap" for buffers.wrap), "" if none. */
#ifndef UPTI_UNIT_TESTS_H
#define UPTI_UNIT_TESTS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define UNIT_TEST(name) int unit_test_##name(const char *sub __attribute__((unused)))

/* A sub-case of a case: its name and its checks. */
typedef struct unit_sub_case {
    const char *name;
    void (*run)(void);
} unit_sub_case_t;

/* Runs the sub-case named sub of the n in cases (those of the case test);
 * false, with a usage line naming them, when there is none of that name. */
static inline bool unit_run_sub_case(const char *test, const char *sub, const unit_sub_case_t *cases,
                                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(sub, cases[i].name) == 0) {
            cases[i].run();
            return true;
        }
    fprintf(stderr, "usage: upti_unit_tests %s.", test);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%s", i ? "|" : "", cases[i].name);
    fprintf(stderr, "\n");
    return false;
}

UNIT_TEST(api_records);
UNIT_TEST(arg_link);
UNIT_TEST(buffers);
UNIT_TEST(capture_current);
UNIT_TEST(capture_spec);
UNIT_TEST(compact_api);
UNIT_TEST(compact_mark);
UNIT_TEST(config_parse);
UNIT_TEST(cpu_quota);
UNIT_TEST(db_errors);
UNIT_TEST(db_template);
UNIT_TEST(documented_status);
UNIT_TEST(env);
UNIT_TEST(handle_map);
UNIT_TEST(external_ids);
UNIT_TEST(intern);
UNIT_TEST(kv_pairs);
UNIT_TEST(lock_order);
UNIT_TEST(log);
UNIT_TEST(log_callback);
UNIT_TEST(names);
UNIT_TEST(page_writer);
UNIT_TEST(placeholders);
UNIT_TEST(private_dir);
UNIT_TEST(replace_file);
UNIT_TEST(ring_check);
UNIT_TEST(ring_futex);
UNIT_TEST(runtime_api_names);
UNIT_TEST(runtime_metadata);
UNIT_TEST(spirv);
UNIT_TEST(spool);
UNIT_TEST(thread_slice);
UNIT_TEST(struct_size);
UNIT_TEST(table_pages);
UNIT_TEST(uptx_table);
UNIT_TEST(vk_families);

#endif
