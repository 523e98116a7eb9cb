/* SPDX-License-Identifier: MIT */
/* See config_tree.h. */
#include "config_tree.h"

#include <stdlib.h>
#include <string.h>

cn_node *cn_new(cn_type type, int line, int col)
{
    cn_node *n = calloc(1, sizeof *n);
    if (n != NULL) {
        n->type = type;
        n->line = line;
        n->col = col;
    }
    return n;
}

int cn_append(cn_node *parent, cn_node *child)
{
    cn_node **items = realloc(parent->items, (parent->n + 1) * sizeof *items);
    if (items == NULL)
        return -1;
    parent->items = items;
    parent->items[parent->n++] = child;
    return 0;
}

int cn_append_keyed(cn_node *parent, cn_node *child, char *key, int line, int col)
{
    child->key = key;
    child->key_line = line;
    child->key_col = col;
    if (cn_append(parent, child) == 0)
        return 0;
    cn_free(child);
    return -1;
}

void cn_free(cn_node *node)
{
    if (node == NULL)
        return;
    for (size_t i = 0; i < node->n; i++)
        cn_free(node->items[i]);
    free(node->items);
    free(node->text);
    free(node->key);
    free(node);
}

const char *cn_describe(const cn_node *node)
{
    switch (node->type) {
    case CN_NULL: return "null";
    case CN_BOOL: return node->text[0] == 't' ? "true" : "false";
    case CN_NUMBER: return "a number";
    case CN_STRING: return "a string";
    case CN_ARRAY: return "a list";
    case CN_OBJECT: return "an object";
    }
    return "?";
}
