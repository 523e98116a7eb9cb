/* SPDX-License-Identifier: MIT */
/* The names a SPIR-V module carries: its entry points (OpEntryPoint) and the
 * file it was compiled from (OpSource's file operand, an OpString), read
 * from the words a program hands vkCreateShaderModule; and a hash of its
 * content, which names a module that carries no file.
 *
 * SPIR-V (Khronos SPIR-V specification, "Physical Layout"): five header
 * words, the first the magic number; then instructions, each starting with
 * a word holding its word count (high 16 bits) and its opcode (low 16 bits).
 * A literal string is UTF-8, NUL-terminated, padded to whole words. Every
 * read is checked against the module's size; a module that breaks these
 * rules yields what was read before the fault.
 */
#include "spirv.h"

#include <string.h>

#define SPIRV_MAGIC 0x07230203u
#define SPIRV_MAGIC_SWAPPED 0x03022307u
enum { OP_SOURCE = 3, OP_STRING = 7, OP_ENTRY_POINT = 15, OP_FUNCTION = 54 };

static uint32_t word(const uint32_t *w, size_t i, int swapped)
{
    uint32_t v = w[i];
    return swapped ? __builtin_bswap32(v) : v;
}

uint32_t uvk_spirv_hash(const uint32_t *w, size_t n, int swapped)
{
    uint32_t h = 2166136261u; /* FNV-1a's 32-bit offset basis */
    for (size_t i = 0; i < n; i++) {
        uint32_t v = word(w, i, swapped);
        for (int b = 0; b < 4; b++) {
            h ^= (v >> (8 * b)) & 0xff;
            h *= 16777619u; /* FNV's 32-bit prime */
        }
    }
    return h;
}

/* Copies the literal string in words [first, end) into out (size cap), or
   only its last path component (last_component: each '/' starts the copy
   again, so a long path keeps its file's name whole); returns the number of
   words it takes, 0 if it has no NUL before end. */
static size_t literal(const uint32_t *w, size_t first, size_t end, int swapped, int last_component, char *out,
                      size_t cap)
{
    size_t len = 0;
    for (size_t i = first; i < end; i++) {
        uint32_t v = word(w, i, swapped);
        for (int b = 0; b < 4; b++) {
            char c = (char)((v >> (8 * b)) & 0xff); /* little-endian within the word */
            if (c == '/' && last_component) {
                len = 0;
                continue;
            }
            if (c == '\0') {
                if (cap > 0)
                    out[len < cap ? len : cap - 1] = '\0';
                return i - first + 1;
            }
            if (len + 1 < cap)
                out[len] = c;
            len++;
        }
    }
    if (cap > 0)
        out[0] = '\0';
    return 0;
}

int uvk_spirv_names(const void *code, size_t size, uvk_spirv_names_t *out)
{
    memset(out, 0, sizeof *out);
    if (code == NULL || size < 20 || size % 4 != 0)
        return -1;
    const uint32_t *w = code;
    size_t n = size / 4;
    int swapped;
    if (w[0] == SPIRV_MAGIC)
        swapped = 0;
    else if (w[0] == SPIRV_MAGIC_SWAPPED)
        swapped = 1;
    else
        return -1;
    out->hash = uvk_spirv_hash(w, n, swapped);
    /* OpStrings come before the OpSource that names one as its file. */
    struct {
        uint32_t id;
        size_t first, end;
    } strings[16];
    size_t nstrings = 0;
    for (size_t i = 5; i < n;) {
        uint32_t head = word(w, i, swapped);
        uint32_t count = head >> 16, op = head & 0xffff;
        if (count == 0 || count > n - i)
            break; /* malformed: keep what was read */
        size_t end = i + count;
        if (op == OP_FUNCTION)
            break; /* entry points and debug instructions all come before the functions */
        if (op == OP_ENTRY_POINT && count >= 4 && out->num_entries < UVK_SPIRV_MAX_ENTRIES) {
            if (literal(w, i + 3, end, swapped, 0, out->entries[out->num_entries], UVK_SPIRV_NAME_MAX) > 0)
                out->num_entries++;
        } else if (op == OP_STRING && count >= 3 && nstrings < sizeof strings / sizeof strings[0]) {
            strings[nstrings].id = word(w, i + 1, swapped);
            strings[nstrings].first = i + 2;
            strings[nstrings].end = end;
            nstrings++;
        } else if (op == OP_SOURCE && count >= 4 && out->file[0] == '\0') {
            uint32_t file_id = word(w, i + 3, swapped);
            for (size_t k = 0; k < nstrings; k++)
                if (strings[k].id == file_id) {
                    literal(w, strings[k].first, strings[k].end, swapped, 1, out->file, sizeof out->file);
                    break;
                }
        }
        i = end;
    }
    return 0;
}
