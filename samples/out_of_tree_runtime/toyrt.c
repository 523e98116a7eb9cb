/* SPDX-License-Identifier: MIT */
/* toyrt: public function -> dispatch table -> implementation. The first call
 * registers the table, described, with UPTI (upti_register_runtime_api); it
 * links libupti-register only. */
#include "toyrt.h"
#include "toyrt_table.h"
#include "toyrt_upti.h"

#include <upti/register.h>

#include <pthread.h>
#include <stdlib.h>

static int impl_init(int flags)
{
    (void)flags;
    return 0;
}

static int impl_alloc(size_t bytes, void **out)
{
    if (out == NULL)
        return -1;
    *out = malloc(bytes);
    return 0;
}

static void impl_free(void *ptr)
{
    free(ptr);
}

static int impl_launch(const char *kernel, unsigned int count)
{
    (void)kernel;
    return count == 0 ? TOYRT_ERROR_INVALID_COUNT : 0;
}

static toyrt_table_t g_table = {sizeof(toyrt_table_t), impl_init, impl_alloc, impl_free,
                                impl_launch};
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void register_table(void)
{
    upti_register_library_id_t id;
    upti_register_runtime_api(&toyrt_upti_api, &g_table, &id);
}

static const toyrt_table_t *table(void)
{
    pthread_once(&g_once, register_table);
    return &g_table;
}

TOYRT_API int toyInit(int flags)
{
    return table()->toyInit(flags);
}

TOYRT_API int toyAlloc(size_t bytes, void **out)
{
    return table()->toyAlloc(bytes, out);
}

TOYRT_API void toyFree(void *ptr)
{
    table()->toyFree(ptr);
}

TOYRT_API int toyLaunch(const char *kernel, unsigned int count)
{
    return table()->toyLaunch(kernel, count);
}
