/* SPDX-License-Identifier: MIT */
/* Marks texts of the lengths given: fault_marker_text LEN... Each text is
 * LEN bytes of 'a'..'z' repeating (byte i is 'a' + i % 26). Prints
 * "app: done" and exits 7. */
#include <uptx/uptx.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        size_t len = (size_t)atol(argv[a]);
        char *text = malloc(len + 1);
        if (text == NULL)
            return 1;
        for (size_t i = 0; i < len; i++)
            text[i] = (char)('a' + i % 26);
        text[len] = '\0';
        uptx_mark(text);
        free(text);
    }
    printf("app: done\n");
    return 7;
}
