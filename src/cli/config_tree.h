/* SPDX-License-Identifier: MIT */
/* Internal: a configuration file read into a tree (config_json.c, config_yaml.c,
 * config_tree.c): objects keep their keys in file order, and every node its
 * line and column, for the messages of `upti run -i FILE`. */
#ifndef UPTI_CLI_CONFIG_TREE_H
#define UPTI_CLI_CONFIG_TREE_H

#include <stddef.h>

/** What a node holds. */
typedef enum cn_type { CN_NULL, CN_BOOL, CN_NUMBER, CN_STRING, CN_ARRAY, CN_OBJECT } cn_type;

/** One value of the file. */
typedef struct cn_node {
    cn_type type;
    int line, col;          /**< where it starts, from 1 */
    char *text;             /**< CN_STRING: the string; CN_NUMBER: as written; CN_BOOL: "true"/"false" */
    char *key;              /**< the key naming it in its object, or NULL */
    int key_line, key_col;  /**< where that key is */
    struct cn_node **items; /**< CN_ARRAY, CN_OBJECT: the elements or members, in file order */
    size_t n;
} cn_node;

/** The tree of a JSON text (RFC 8259, nesting up to 64); NULL with "LINE:COL: what" in err. */
cn_node *cn_parse_json(const char *text, size_t len, char *err, size_t errlen);

/**
 * The tree of a YAML text (libyaml; one document; no aliases; plain scalars
 * typed as YAML 1.2's core schema: null, true/false, numbers, else strings).
 * NULL with "LINE:COL: what" in err; "" when this upti was built without libyaml.
 */
cn_node *cn_parse_yaml(const char *text, size_t len, char *err, size_t errlen);

/** Appends child to parent's items. 0, or -1 (out of memory). */
int cn_append(cn_node *parent, cn_node *child);
/**
 * Names child with key (malloc'd, or NULL in an array) found at line:col, and
 * appends it to parent's items. 0, or -1 (out of memory: child and key freed).
 */
int cn_append_keyed(cn_node *parent, cn_node *child, char *key, int line, int col);
/** A new node (zeroed but type and place), or NULL. */
cn_node *cn_new(cn_type type, int line, int col);
void cn_free(cn_node *node);
/** "an object", "a string", "true", ... for messages. */
const char *cn_describe(const cn_node *node);

#endif
