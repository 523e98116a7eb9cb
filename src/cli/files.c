/* SPDX-License-Identifier: MIT */
/* See files.h. */
#include "files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int cli_output_is_input(const char *output, const char *const *inputs, int n)
{
    struct stat out;
    if (stat(output, &out) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        struct stat in;
        if (stat(inputs[i], &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            return i;
    }
    return -1;
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return NULL;
    char *data = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *grown = cap <= (64u << 20) ? realloc(data, cap) : NULL;
            if (grown == NULL) {
                free(data);
                fclose(f);
                errno = cap > (64u << 20) ? EFBIG : ENOMEM;
                return NULL;
            }
            data = grown;
        }
        errno = 0;
        size_t got = fread(data + *len, 1, 4096, f);
        *len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f) ? (errno != 0 ? errno : EIO) : 0; /* EISDIR for a folder */
    fclose(f);
    if (bad) {
        free(data);
        errno = bad;
        return NULL;
    }
    data[*len] = '\0';
    return data;
}
