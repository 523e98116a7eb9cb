/* SPDX-License-Identifier: MIT */
/* SIGBUS from a ring file cut short under the collector (ring_guard.h). */
#include "ring_guard.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local ur_guard *t_guard;
static struct sigaction g_previous;
static pthread_once_t g_installed = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
    (void)context;
    ur_guard *g = t_guard;
    const char *at = info->si_code > 0 ? info->si_addr : NULL; /* a fault, not kill(2) */
    if (g != NULL && at != NULL && at >= g->lo && (size_t)(at - g->lo) < g->len) {
        t_guard = g->prev;
        siglongjmp(g->env, 1);
    }
    /* Not a ring's page: the previous disposition, which the faulting instruction meets
     * again when this returns (and a SIGBUS that kill(2) sent, raised again). */
    sigaction(sig, &g_previous, NULL);
    if (info->si_code <= 0)
        raise(sig);
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    /* NODEFER: SIGBUS is not left blocked after the jump (sigsetjmp saved no mask). */
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &g_previous);
}

void ur_guard_push(ur_guard *g, const void *map, size_t len)
{
    pthread_once(&g_installed, install);
    g->lo = map;
    g->len = len;
    g->prev = t_guard;
    t_guard = g;
}

void ur_guard_leave(ur_guard *g)
{
    t_guard = g->prev;
}

void ur_guard_fault(void)
{
    ur_guard *g = t_guard;
    if (g == NULL)
        abort(); /* a fault outside any guard: a bug of the caller's */
    t_guard = g->prev;
    siglongjmp(g->env, 1);
}
