/* SPDX-License-Identifier: MIT */
/* The SPIR-V name reader of the Vulkan layer (src/program/vulkan/spirv.c): entry
 * points and the source file of well-formed modules, in either byte order;
 * malformed modules (truncated, a zero or oversized word count, a string
 * without its NUL, not SPIR-V) yield what came before the fault and never a
 * read outside the module (run under ASan by the sanitizer script). */
#include "../../src/program/vulkan/spirv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "unit_tests.h"

#define OP(count, op) (((uint32_t)(count) << 16) | (op))

/* "/src/dir/add.comp" as a literal: 18 bytes with its NUL -> 5 words. */
static const uint32_t k_module[] = {
    0x07230203, 0x00010000, 0, 50, 0,
    OP(5, 15), 5, 4, 0x6e69616d, 0,                      /* OpEntryPoint GLCompute %4 "main" */
    OP(5, 15), 5, 6, 0x6464615f, 0x00000031,             /* OpEntryPoint GLCompute %6 "_add1" */
    OP(7, 7), 9, 0x6372732f, 0x7269642f, 0x6464612f, 0x6d6f632e, 0x00000070, /* OpString %9 "/src/dir/add.comp" */
    OP(6, 7), 10, 0x68746f, 0, 0, 0,                    /* OpString %10 "oth" (padded) */
    OP(4, 3), 2, 450, 9,                                 /* OpSource GLSL 450 %9 */
    OP(5, 54), 1, 4, 0, 3,                               /* OpFunction: the end of what is read */
};

static void test_well_formed(void)
{
    uvk_spirv_names_t n;
    CHECK(uvk_spirv_names(k_module, sizeof k_module, &n) == 0);
    CHECK(n.num_entries == 2);
    CHECK(strcmp(n.entries[0], "main") == 0);
    CHECK(strcmp(n.entries[1], "_add1") == 0);
    CHECK(strcmp(n.file, "add.comp") == 0);

    uint32_t swapped[sizeof k_module / 4];
    for (size_t i = 0; i < sizeof k_module / 4; i++)
        swapped[i] = __builtin_bswap32(k_module[i]);
    CHECK(uvk_spirv_names(swapped, sizeof swapped, &n) == 0);
    CHECK(n.num_entries == 2 && strcmp(n.file, "add.comp") == 0);
}

static void test_malformed(void)
{
    uvk_spirv_names_t n;
    /* Not SPIR-V, too short, size not a multiple of 4. */
    uint32_t bad[8] = {0x12345678};
    CHECK(uvk_spirv_names(bad, sizeof bad, &n) == -1 && n.num_entries == 0);
    CHECK(uvk_spirv_names(k_module, 16, &n) == -1);
    CHECK(uvk_spirv_names(k_module, sizeof k_module - 1, &n) == -1);
    CHECK(uvk_spirv_names(NULL, 64, &n) == -1);

    /* Every truncation, each copied to a buffer of exactly that size. */
    for (size_t words = 5; words < sizeof k_module / 4; words++) {
        uint32_t *copy = malloc(words * 4);
        memcpy(copy, k_module, words * 4);
        CHECK(uvk_spirv_names(copy, words * 4, &n) == 0);
        CHECK(n.num_entries <= 2);
        CHECK(n.file[0] == '\0' || strcmp(n.file, "add.comp") == 0);
        free(copy);
    }

    /* A word count of 0, and one past the end: what came before is kept. */
    uint32_t m[sizeof k_module / 4];
    memcpy(m, k_module, sizeof m);
    m[10] = OP(0, 15);
    CHECK(uvk_spirv_names(m, sizeof m, &n) == 0 && n.num_entries == 1 && n.file[0] == '\0');
    m[10] = OP(1000, 15);
    CHECK(uvk_spirv_names(m, sizeof m, &n) == 0 && n.num_entries == 1);

    /* An entry point name without its NUL: not taken. */
    const uint32_t no_nul[] = {0x07230203, 0x00010000, 0, 50, 0, OP(4, 15), 5, 4, 0x6e69616d};
    CHECK(uvk_spirv_names(no_nul, sizeof no_nul, &n) == 0 && n.num_entries == 0);

    /* OpSource naming an OpString that does not exist: no file. */
    memcpy(m, k_module, sizeof m);
    m[31] = 77;
    CHECK(uvk_spirv_names(m, sizeof m, &n) == 0 && n.file[0] == '\0' && n.num_entries == 2);
}

/* A module whose OpString path is 200 bytes long (a build from a deep
   folder): the file is its last component whole, not what is left of the
   path cut to the name's 63 bytes ("tes:main" named kernels before). */
static void test_long_path(void)
{
    char path[201];
    memset(path, 'd', sizeof path);
    for (size_t i = 0; i < 190; i += 19)
        path[i] = '/';
    strcpy(path + 200 - strlen("/tests/apps/vk_vadd.comp"), "/tests/apps/vk_vadd.comp");
    CHECK(strlen(path) == 200);
    uint32_t m[5 + 2 + 51 + 4 + 5] = {0x07230203, 0x00010000, 0, 50, 0};
    size_t i = 5;
    m[i++] = OP(2 + 51, 7); /* OpString %9: 201 bytes with the NUL, in 51 words */
    m[i++] = 9;
    memcpy(&m[i], path, sizeof path);
    i += 51;
    const uint32_t source[] = {OP(4, 3), 2, 450, 9, OP(5, 54), 1, 4, 0, 3};
    memcpy(&m[i], source, sizeof source);
    uvk_spirv_names_t n;
    CHECK(uvk_spirv_names(m, sizeof m, &n) == 0);
    CHECK(strcmp(n.file, "vk_vadd.comp") == 0);
}

/* The content hash that names a module without OpSource: 32-bit FNV-1a of
   the module's bytes in little-endian word order (0x7c708f60 for k_module,
   from Python's struct.pack('<37I') and the published FNV-1a constants),
   alike for a byte-swapped copy, different for a one-word change. */
static void test_hash(void)
{
    uvk_spirv_names_t n;
    CHECK(uvk_spirv_names(k_module, sizeof k_module, &n) == 0 && n.hash == 0x7c708f60u);
    uint32_t m[sizeof k_module / 4];
    for (size_t i = 0; i < sizeof k_module / 4; i++)
        m[i] = __builtin_bswap32(k_module[i]);
    CHECK(uvk_spirv_names(m, sizeof m, &n) == 0 && n.hash == 0x7c708f60u);
    memcpy(m, k_module, sizeof m);
    m[8] = 0x6e69616e; /* "nain" */
    CHECK(uvk_spirv_names(m, sizeof m, &n) == 0 && n.hash != 0x7c708f60u && n.hash != 0);
    uint32_t bad[8] = {0x12345678};
    CHECK(uvk_spirv_names(bad, sizeof bad, &n) == -1 && n.hash == 0);
}

UNIT_TEST(spirv)
{
    test_hash();
    test_long_path();
    test_well_formed();
    test_malformed();
    return test_result("spirv");
}
