/* Alike on purpose (duplicates): its set-up of the environment looks like test_env.c's; each
 * unit test is one program. */
/* src/common/log.c: one error line on stderr, prefixed "upti: ", newlines
 * inside the message flattened, long messages cut, always one line. */
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../integration/core/testutil.h"

/* Runs upti_log_error with stderr redirected into a pipe; returns what was written. */
static size_t capture(char *out, size_t cap, const char *fmt, const char *arg)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 0;
    int saved = dup(STDERR_FILENO);
    dup2(fds[1], STDERR_FILENO);
    upti_log_error(fmt, arg);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = read(fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    return n;
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

int main(void)
{
    char buf[4096];
    capture(buf, sizeof buf, "cannot load %s", "libfoo.so");
    CHECK(strcmp(buf, "upti: cannot load libfoo.so\n") == 0);

    capture(buf, sizeof buf, "dlerror: %s", "line one\nline two");
    CHECK(strcmp(buf, "upti: dlerror: line one line two\n") == 0);

    char longarg[3000];
    memset(longarg, 'x', sizeof longarg - 1);
    longarg[sizeof longarg - 1] = '\0';
    size_t n = capture(buf, sizeof buf, "%s", longarg);
    CHECK(n > 6 && n <= 1024);
    CHECK(strncmp(buf, "upti: xxx", 9) == 0);
    CHECK_EQ_U64(count_char(buf, '\n'), 1);
    CHECK(n > 0 && buf[n - 1] == '\n');
    return test_result("log");
}
