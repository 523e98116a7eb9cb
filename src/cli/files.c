/* See files.h. */
#include "files.h"

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
