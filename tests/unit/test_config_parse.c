/* SPDX-License-Identifier: MIT */
/* src/cli/config_json.c, config_yaml.c: `upti run -i`'s readers build the
 * exact tree (types, texts, keys, lines and columns), refuse bad input with
 * "LINE:COL: what", and survive every truncation and one-byte change of
 * their seeds (no crash, no leak: run under the sanitizer builds). */
#include "config_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "unit_tests.h"

static const cn_node *at(const cn_node *n, size_t i)
{
    CHECK(n != NULL && i < n->n);
    return n != NULL && i < n->n ? n->items[i] : NULL;
}

static void is(const cn_node *n, cn_type type, const char *text, const char *key, int line, int col)
{
    int ok = n != NULL && n->type == type &&
             (text == NULL ? n->text == NULL : n->text != NULL && strcmp(n->text, text) == 0) &&
             (key == NULL ? n->key == NULL : n->key != NULL && strcmp(n->key, key) == 0) &&
             n->line == line && n->col == col;
    if (!ok)
        fprintf(stderr, "FAIL: node %s: type %d text '%s' at %d:%d (want %d '%s' at %d:%d)\n",
                key ? key : "-", n ? (int)n->type : -1, n && n->text ? n->text : "(null)",
                n ? n->line : 0, n ? n->col : 0, (int)type, text ? text : "(null)", line, col);
    CHECK(ok);
}

static void refused(int yaml, const char *text, const char *want)
{
    char err[256] = "";
    cn_node *n = yaml ? cn_parse_yaml(text, strlen(text), err, sizeof err)
                      : cn_parse_json(text, strlen(text), err, sizeof err);
    if (n != NULL || strcmp(err, want) != 0)
        fprintf(stderr, "FAIL: '%s': '%s' (want '%s')\n", text, err, want);
    CHECK(n == NULL && strcmp(err, want) == 0);
    cn_free(n);
}

static void json_trees(void)
{
    const char *text = "{\n  \"a\": [1, -2.5e3, \"x\\u00e9\\ud83d\\ude00\\n\"],\n"
                       "  \"b\": {\"c\": null, \"d\": true, \"e\": false}\n}";
    char err[128];
    cn_node *root = cn_parse_json(text, strlen(text), err, sizeof err);
    is(root, CN_OBJECT, NULL, NULL, 1, 1);
    CHECK(root != NULL && root->n == 2);
    const cn_node *a = at(root, 0);
    is(a, CN_ARRAY, NULL, "a", 2, 8);
    CHECK(a != NULL && a->key_line == 2 && a->key_col == 3);
    is(at(a, 0), CN_NUMBER, "1", NULL, 2, 9);
    is(at(a, 1), CN_NUMBER, "-2.5e3", NULL, 2, 12);
    is(at(a, 2), CN_STRING, "x\xc3\xa9\xf0\x9f\x98\x80\n", NULL, 2, 20);
    const cn_node *b = at(root, 1);
    is(b, CN_OBJECT, NULL, "b", 3, 8);
    is(at(b, 0), CN_NULL, NULL, "c", 3, 14);
    is(at(b, 1), CN_BOOL, "true", "d", 3, 25);
    is(at(b, 2), CN_BOOL, "false", "e", 3, 36);
    cn_free(root);
}

static void json_errors(void)
{
    refused(0, "", "1:1: expected a value (an object, a list, a string, a number, true, false or "
                   "null), found the end of the file");
    refused(0, "{\"a\": 1,}", "1:9: a ',' before '}' (JSON has no trailing comma)");
    refused(0, "{\"a\" 1}", "1:6: expected ':' after the key, found '1'");
    refused(0, "{a: 1}", "1:2: expected a key in double quotes, found 'a'");
    refused(0, "[1 2]", "1:4: expected ',' or ']', found '2'");
    refused(0, "{} {}", "1:4: expected the end of the file after the value, found '{'");
    refused(0, "[01]", "1:3: expected ',' or ']', found '1'");
    refused(0, "[1.]", "1:4: expected a digit after '.'");
    refused(0, "[\"a\tb\"]", "1:4: control byte 0x09 in a string (write it as \\u0009)");
    refused(0, "[\"\\x\"]", "1:4: unknown escape in a string (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
    refused(0, "[\"\\ud800\"]", "1:9: a \\u surrogate without its pair");
    refused(0, "[\"\\u0000\"]", "1:9: \\u0000 in a string");
    refused(0, "[\"abc", "1:6: unterminated string");
    refused(0, "[tru]", "1:2: expected a value (an object, a list, a string, a number, true, false "
                        "or null), found 't'");
    char deep[200];
    memset(deep, '[', 100);
    deep[100] = '\0';
    refused(0, deep, "1:65: nested more than 64 deep");
}

static void yaml_trees(void)
{
    const char *text = "# options\nstats: true\ndelay: 0.5\nname: \"true\"\nnone: ~\nword: yes\n"
                       "format:\n  - db\n  - 'json'\nhex: 0x1f\n";
    char err[128] = "";
    cn_node *root = cn_parse_yaml(text, strlen(text), err, sizeof err);
    if (root == NULL && err[0] == '\0') {
        printf("SKIP yaml: built without libyaml\n");
        return;
    }
    is(root, CN_OBJECT, NULL, NULL, 2, 1);
    CHECK(root != NULL && root->n == 7);
    is(at(root, 0), CN_BOOL, "true", "stats", 2, 8);
    is(at(root, 1), CN_NUMBER, "0.5", "delay", 3, 8);
    is(at(root, 2), CN_STRING, "true", "name", 4, 7);
    is(at(root, 3), CN_NULL, NULL, "none", 5, 7);
    is(at(root, 4), CN_STRING, "yes", "word", 6, 7);
    const cn_node *f = at(root, 5);
    is(f, CN_ARRAY, NULL, "format", 8, 3);
    is(at(f, 0), CN_STRING, "db", NULL, 8, 5);
    is(at(f, 1), CN_STRING, "json", NULL, 9, 5);
    is(at(root, 6), CN_NUMBER, "0x1f", "hex", 10, 6);
    cn_free(root);
    refused(1, "", "1:1: the file is empty");
    refused(1, "a: &x 1\nb: *x\n", "2:4: aliases (*name) are not supported: write the value out");
    refused(1, "a: 1\n---\nb: 2\n", "2:1: a second document ('---'): one document only");
    refused(1, "[a, b]: 1\n", "1:1: a key must be a plain word, not a list or a mapping");
    refused(1, "a: [1\n", "2:1: did not find expected ',' or ']' while parsing a flow sequence");
}

/* Every truncation and one-byte change of the seeds: a tree or an error, never a crash. */
static void mutations(void)
{
    static const char *const seeds[] = {
        "{\"a\": [1, -2.5e3, \"x\\u00e9\\ud83d\\ude00\\n\"], \"b\": {\"c\": null, \"d\": true}}",
        "a: [1, 2]\nb:\n  - c: d\n    e: \"f\"\n", NULL};
    static const char subs[] = "{}[]\":,\\u0-e. \n\t'&*";
    char buf[128];
    long parsed = 0, refused_n = 0;
    for (int s = 0; seeds[s] != NULL; s++) {
        size_t len = strlen(seeds[s]);
        for (size_t cut = 0; cut <= len; cut++) {
            for (size_t pos = 0; pos < cut; pos++) {
                for (size_t k = 0; k < sizeof subs - 1; k++) {
                    memcpy(buf, seeds[s], cut);
                    buf[pos] = subs[k];
                    buf[cut] = '\0';
                    char err[256];
                    for (int yaml = 0; yaml < 2; yaml++) {
                        err[0] = 'x';
                        cn_node *n = yaml ? cn_parse_yaml(buf, cut, err, sizeof err)
                                          : cn_parse_json(buf, cut, err, sizeof err);
                        if (n != NULL)
                            parsed++;
                        else
                            refused_n++;
                        CHECK(n != NULL || err[0] == '\0' || (err[0] >= '1' && err[0] <= '9'));
                        cn_free(n);
                    }
                }
            }
        }
    }
    CHECK(parsed > 0 && refused_n > 0);
}

UNIT_TEST(config_parse)
{
    json_trees();
    json_errors();
    yaml_trees();
    mutations();
    return test_result("config_parse");
}
