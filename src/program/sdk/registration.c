/* SPDX-License-Identifier: MIT */
/* Tool discovery and the configure → initialize → finalize life cycle. */
#include "internal.h"
#include "sdk_entry.h"
#include "fork.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/types.h>
#include <unistd.h>

enum life_state { LIFE_NONE = 0, LIFE_DISCOVERING, LIFE_INITIALIZED, LIFE_FINALIZING, LIFE_FINALIZED };

struct tool {
    upti_configure_func_t configure;
    char *origin; /* where it was found, for messages */
    upti_tool_configure_result_t *result; /* &result_copy, or NULL: declined or skipped */
    upti_tool_configure_result_t result_copy; /* what the tool returned, read by its size */
    upti_client_id_t client_id;
    _Atomic bool finalized;
};

/* A tool's request for tables: by mask (callback), or by name (named; name[0] == 0: any). */
struct intercept_request {
    upti_intercept_library_cb_t callback;
    int mask;
    void *data;
    upti_intercept_named_table_cb_t named;
    uint64_t min_version;
    char name[64];
};

static struct tool g_tools[UPTI_MAX_TOOLS];
static int g_num_tools;
static struct intercept_request g_intercepts[UPTI_MAX_TOOLS * 4];
static int g_num_intercepts;
static upti_configure_func_t g_forced;
static bool g_any_tool; /* some upti_configure returned a result */

static _Atomic int g_state = LIFE_NONE;
/* Guards the tool table, g_forced and discovery; let go before tool code runs (lock
 * order: internal.h). */
static pthread_mutex_t g_tools_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;
static pthread_t g_discovery_thread;
static int g_current_tool = -1; /* tool whose configure/initialize runs now */
static bool g_in_initialize;

/*
 * Threads started during discovery (by a tool's configure or initialize, or
 * by the program meanwhile) must not wait for it: a tool's initialize may be
 * joining them. They are told apart by their kernel thread ids: those of the
 * threads alive when discovery began, sorted (under g_tools_lock). SIZE_MAX: not
 * known (/proc unreadable), and then every thread waits.
 */
static pid_t *g_threads_before;
static size_t g_num_threads_before;

static int compare_tid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

static void snapshot_threads(void)
{
    g_num_threads_before = SIZE_MAX;
    DIR *dir = opendir("/proc/self/task");
    if (dir == NULL)
        return;
    size_t n = 0, cap = 0;
    pid_t *tids = NULL;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            pid_t *t = realloc(tids, cap * sizeof *t);
            ok = t != NULL;
            if (ok)
                tids = t;
        }
        if (ok)
            tids[n++] = (pid_t)atol(e->d_name);
    }
    closedir(dir);
    if (!ok) {
        free(tids);
        return;
    }
    qsort(tids, n, sizeof *tids, compare_tid);
    g_threads_before = tids;
    g_num_threads_before = n;
}

/*
 * How long a thread started during discovery waits for it before it goes on
 * untraced. It may be the program's own (a program that starts threads while
 * the first one discovers the tools): it then waits, and is traced, as
 * discovery takes milliseconds. It may be one a tool's initialize joins: then
 * discovery cannot end before it, and it goes on untraced after this bound
 * (once: later such threads do not wait).
 */
#define DISCOVERY_WAIT_NS (5ull * 1000 * 1000 * 1000)
static struct timespec g_discovery_began;

static uint64_t ns_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)(now.tv_sec - t->tv_sec) * 1000000000ull + (uint64_t)now.tv_nsec -
           (uint64_t)t->tv_nsec;
}

/* The calling thread was started after discovery began and waited for it
 * long enough (g_tools_lock held). */
static bool started_during_discovery(void)
{
    if (g_num_threads_before == SIZE_MAX)
        return false;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    bool during = g_num_threads_before == 0 ||
                  bsearch(&tid, g_threads_before, g_num_threads_before, sizeof tid,
                          compare_tid) == NULL;
    return during && ns_since(&g_discovery_began) >= DISCOVERY_WAIT_NS;
}

/* Exported for libupti-register (sdk_entry.h, upti_register_wait_allowed). */
UPTI_API int upti_sdk_thread_must_not_wait(void)
{
    if (atomic_load(&g_state) != LIFE_DISCOVERING)
        return 0;
    pthread_mutex_lock(&g_tools_lock);
    int r = atomic_load(&g_state) == LIFE_DISCOVERING &&
            (pthread_equal(pthread_self(), g_discovery_thread) || started_during_discovery());
    pthread_mutex_unlock(&g_tools_lock);
    return r;
}

bool upti_configuration_open(void)
{
    return atomic_load(&g_state) == LIFE_DISCOVERING && g_in_initialize &&
           pthread_equal(pthread_self(), g_discovery_thread);
}

int upti_current_tool(void)
{
    return g_current_tool;
}

static bool discovery_thread(void)
{
    return atomic_load(&g_state) == LIFE_DISCOVERING &&
           pthread_equal(pthread_self(), g_discovery_thread);
}

/* ---- discovery ---- */

/* Adds a candidate unless the same upti_configure was found already. */
static void add_candidate(upti_configure_func_t fn, const char *origin)
{
    for (int i = 0; i < g_num_tools; i++)
        if (g_tools[i].configure == fn)
            return;
    if (g_num_tools == UPTI_MAX_TOOLS) {
        upti_log_error("more than %d tools: '%s' ignored", UPTI_MAX_TOOLS, origin);
        return;
    }
    g_tools[g_num_tools].configure = fn;
    g_tools[g_num_tools].origin = strdup(origin[0] ? origin : "(executable)");
    g_num_tools++;
    upti_log_debug("tool %d found: upti_configure in %s", g_num_tools,
                   origin[0] ? origin : "(executable)");
}

/* upti_configure defined by the object behind handle itself, not by one of its dependencies. */
static upti_configure_func_t own_configure(void *handle)
{
    void *sym = dlsym(handle, "upti_configure");
    if (sym == NULL)
        return NULL;
    struct link_map *object = NULL, *owner = NULL;
    Dl_info info;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &object) != 0 ||
        dladdr1(sym, &info, (void **)&owner, RTLD_DL_LINKMAP) == 0 || owner != object)
        return NULL;
    upti_configure_func_t fn;
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

struct object_list {
    char **names; /* "" for the executable */
    size_t count, capacity;
    size_t seen; /* objects iterated: the first is the executable */
};

/* Whether the object may define name among its dynamic symbols: 0 only where
 * the Bloom filter of its GNU hash table says it does not, which is most of
 * a process's libraries; those are then not opened to look (a dlopen, a
 * dlsym over the object and its dependencies, a dlclose: for the 29 objects
 * of an OpenCL program on PoCL, 0.7 M instructions at its first call, two
 * thirds of the tools' discovery). 1 where it may, or without that table. */
static int may_define(const struct dl_phdr_info *info, const char *name)
{
    const ElfW(Dyn) *dyn = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    const uint32_t *table = NULL;
    for (; dyn != NULL && dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag != DT_GNU_HASH)
            continue;
        /* The dynamic loader moves d_ptr by the load address in place, but not
         * in a read-only dynamic section (the vDSO's): there it is an offset. */
        ElfW(Addr) at = dyn->d_un.d_ptr;
        table = (const uint32_t *)(at < info->dlpi_addr ? at + info->dlpi_addr : at);
    }
    if (table == NULL)
        return 1;
    /* nbuckets, symoffset, Bloom words (a power of two), Bloom shift, then the words. */
    uint32_t words = table[2], shift = table[3];
    if (words == 0 || (words & (words - 1)) != 0)
        return 1;
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c != '\0'; c++)
        h = h * 33 + *c;
    enum { BITS = sizeof(ElfW(Addr)) * 8 };
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(table + 4);
    ElfW(Addr) word = bloom[(h / BITS) & (words - 1)];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (h % BITS)) | ((ElfW(Addr))1 << ((h >> shift) % BITS));
    return (word & mask) == mask;
}

static int collect_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct object_list *list = arg;
    int executable = list->seen++ == 0;
    if (!may_define(info, "upti_configure"))
        return 0;
    if (list->count == list->capacity) {
        size_t cap = list->capacity ? list->capacity * 2 : 64;
        char **n = realloc(list->names, cap * sizeof *n);
        if (n == NULL)
            return 1;
        list->names = n;
        list->capacity = cap;
    }
    list->names[list->count] = strdup(executable || info->dlpi_name == NULL ? "" : info->dlpi_name);
    if (list->names[list->count] != NULL)
        list->count++;
    return 0;
}

/* (a) every object already loaded: the executable, linked and preloaded libraries. */
static void scan_loaded_objects(void)
{
    struct object_list list = {0};
    dl_iterate_phdr(collect_object, &list);
    upti_log_debug("tool discovery: looked in %zu of %zu loaded objects for upti_configure",
                   list.count, list.seen);
    for (size_t i = 0; i < list.count; i++) {
        const char *name = list.names[i];
        void *handle = dlopen(name[0] == '\0' ? NULL : name, RTLD_LAZY | RTLD_NOLOAD);
        if (handle != NULL) {
            upti_configure_func_t fn = own_configure(handle);
            if (fn != NULL)
                add_candidate(fn, name);
            dlclose(handle);
        }
        free(list.names[i]);
    }
    free(list.names);
}

/* (b) each entry of UPTI_TOOL_LIBRARIES, the last one included; empty entries are skipped. */
static void scan_tool_libraries(void)
{
    const char *env = secure_getenv("UPTI_TOOL_LIBRARIES");
    if (env == NULL) {
        if (getenv("UPTI_TOOL_LIBRARIES") != NULL)
            upti_log_error("UPTI_TOOL_LIBRARIES ignored in a setuid/setgid process");
        return;
    }
    char *copy = strdup(env);
    if (copy == NULL)
        return;
    char *save = NULL;
    for (char *path = strtok_r(copy, ":", &save); path != NULL; path = strtok_r(NULL, ":", &save)) {
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) {
            upti_log_error("cannot load tool library '%s' (UPTI_TOOL_LIBRARIES): %s", path,
                           dlerror());
            continue;
        }
        upti_configure_func_t fn = own_configure(handle);
        if (fn == NULL) {
            upti_log_error("tool library '%s' (UPTI_TOOL_LIBRARIES) has no upti_configure: skipped",
                           path);
            dlclose(handle);
            continue;
        }
        add_candidate(fn, path); /* the handle stays open for the life of the process */
    }
    free(copy);
}

static const char *tool_name(const struct tool *t)
{
    return t->client_id.name != NULL ? t->client_id.name : t->origin;
}

/* ---- finalization ---- */

static void finalize_tool(int i, bool stop_and_flush)
{
    struct tool *t = &g_tools[i];
    if (t->result == NULL || atomic_exchange(&t->finalized, true))
        return;
    if (stop_and_flush) {
        upti_stop_tool_contexts(i);
        upti_flush_buffers(upti_tool_buffers(i));
    }
    if (t->result->finalize != NULL)
        t->result->finalize(t->result->tool_data);
}

static void client_finalize(upti_client_id_t client_id)
{
    for (int i = 0; i < g_num_tools; i++)
        if (g_tools[i].result != NULL && g_tools[i].client_id.handle == client_id.handle)
            finalize_tool(i, true);
}

static void finalize_all(void)
{
    int expected = LIFE_INITIALIZED;
    if (!atomic_compare_exchange_strong(&g_state, &expected, LIFE_FINALIZING))
        return;
    upti_thread_mark_internal();
    upti_stop_all_contexts();
    upti_flush_all_buffers();
    upti_report_marker_texts_cut();
    for (int i = g_num_tools - 1; i >= 0; i--)
        finalize_tool(i, false);
    upti_stop_callback_threads();
    atomic_store(&g_state, LIFE_FINALIZED);
}

/* ---- discovery and initialization ---- */

static void discover_and_initialize(void)
{
    if (g_forced != NULL)
        add_candidate(g_forced, "upti_force_configure");
    scan_loaded_objects();
    scan_tool_libraries();

    /* Every configure call happens before any initialize. */
    uint32_t priority = 0;
    for (int i = 0; i < g_num_tools; i++) {
        struct tool *t = &g_tools[i];
        t->client_id = (upti_client_id_t){.size = sizeof(upti_client_id_t), .handle = priority};
        g_current_tool = i;
        upti_tool_configure_result_t *returned =
            t->configure(UPTI_VERSION, UPTI_VERSION_STRING, priority, &t->client_id);
        priority++;
        t->result = NULL;
        if (returned == NULL)
            continue;
        switch (upti_struct_copy(&t->result_copy, sizeof t->result_copy, returned)) {
        case UPTI_STATUS_SUCCESS:
            t->result = &t->result_copy;
            break;
        case UPTI_STATUS_ERROR_INCOMPATIBLE_ABI:
            upti_log_error("tool '%s' returned a configure result of %zu bytes that sets fields "
                           "this UPTI %s does not know (it knows %zu): skipped",
                           tool_name(t), returned->size, UPTI_VERSION_STRING,
                           sizeof t->result_copy);
            break;
        default:
            upti_log_error("tool '%s' returned a configure result without a size: skipped",
                           tool_name(t));
            break;
        }
    }
    bool any = false;
    int configured = 0;
    for (int i = 0; i < g_num_tools; i++) {
        any |= g_tools[i].result != NULL;
        configured += g_tools[i].result != NULL;
        if (g_tools[i].result == NULL)
            upti_log_debug("tool '%s' declined (upti_configure returned NULL or was skipped)",
                           tool_name(&g_tools[i]));
    }
    upti_log_info("%d tool(s) configured, of %d found", configured, g_num_tools);
    g_any_tool = any;
    if (any) {
        upti_agents_init_host();
        atexit(finalize_all);
    }
    for (int i = 0; i < g_num_tools; i++) {
        struct tool *t = &g_tools[i];
        if (t->result == NULL || t->result->initialize == NULL)
            continue;
        g_current_tool = i;
        g_in_initialize = true;
        int rc = t->result->initialize(client_finalize, t->result->tool_data);
        g_in_initialize = false;
        if (rc != 0) {
            upti_log_error("tool '%s' failed to initialize (returned %d): it is finalized",
                           tool_name(t), rc);
            finalize_tool(i, true);
        }
    }
    g_current_tool = -1;
}

bool upti_ensure_tools(void)
{
    if (upti_likely(atomic_load(&g_state) >= LIFE_INITIALIZED))
        return true;
    pthread_mutex_lock(&g_tools_lock);
    if (atomic_load(&g_state) == LIFE_DISCOVERING) {
        if (pthread_equal(pthread_self(), g_discovery_thread)) {
            pthread_mutex_unlock(&g_tools_lock); /* re-entered from a tool: carry on */
            return true;
        }
        while (atomic_load(&g_state) == LIFE_DISCOVERING) {
            if (started_during_discovery()) {
                pthread_mutex_unlock(&g_tools_lock); /* discovery may be waiting for it */
                return false;
            }
            /* Timed: started_during_discovery() turns true with time. */
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 20 * 1000 * 1000;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&g_done, &g_tools_lock, &until);
        }
    }
    if (atomic_load(&g_state) == LIFE_NONE) {
        g_discovery_thread = pthread_self();
        atomic_store(&g_state, LIFE_DISCOVERING);
        snapshot_threads(); /* before any tool code runs */
        clock_gettime(CLOCK_MONOTONIC, &g_discovery_began);
        pthread_mutex_unlock(&g_tools_lock);
        upti_thread_state()->in_callback++;
        discover_and_initialize();
        upti_thread_state()->in_callback--;
        pthread_mutex_lock(&g_tools_lock);
        atomic_store(&g_state, LIFE_INITIALIZED);
        free(g_threads_before);
        g_threads_before = NULL;
        g_num_threads_before = 0;
        pthread_cond_broadcast(&g_done);
    }
    pthread_mutex_unlock(&g_tools_lock);
    return true;
}

/* ---- fork() without exec (fork.h) ---- */

void upti_registration_fork_prepare(void)
{
    pthread_mutex_lock(&g_tools_lock);
}

void upti_registration_fork_parent(void)
{
    pthread_mutex_unlock(&g_tools_lock);
}

/* A child forked while another thread ran the tools' configure or initialize
 * never sees them finish: it is not traced (its calls would otherwise wait
 * for ever for the end of discovery). */
void upti_registration_fork_child(void)
{
    pthread_mutex_unlock(&g_tools_lock);
    if (atomic_load(&g_state) == LIFE_DISCOVERING &&
        !pthread_equal(pthread_self(), g_discovery_thread)) {
        upti_stop_all_contexts();
        atomic_store(&g_state, LIFE_FINALIZED);
    }
}

/* ---- entry from libupti-register ---- */

static int library_mask(const char *name)
{
    if (strcmp(name, "uptx") == 0)
        return UPTI_INTERCEPT_TABLE_MARKER;
    if (strcmp(name, "opencl") == 0)
        return UPTI_INTERCEPT_TABLE_OPENCL;
    if (strcmp(name, "vulkan") == 0)
        return UPTI_INTERCEPT_TABLE_VULKAN;
    return UPTI_INTERCEPT_TABLE_NONE;
}

void upti_pass_tables(const upti_intercept_table_info_t *info, void **tables, uint64_t num_tables)
{
    int mask = library_mask(info->name);
    upti_thread_state()->in_callback++;
    for (int i = 0; i < g_num_intercepts; i++) {
        const struct intercept_request *r = &g_intercepts[i];
        if (r->named != NULL) {
            if ((r->name[0] == '\0' || strcmp(r->name, info->name) == 0) &&
                info->version >= r->min_version)
                r->named(info, tables, num_tables, r->data);
        } else if (r->mask & mask) {
            r->callback((upti_intercept_table_t)mask, info->version, info->instance, tables,
                        num_tables, r->data);
        }
    }
    upti_thread_state()->in_callback--;
}

UPTI_API upti_status_t upti_sdk_set_api_table(const char *name, uint64_t version,
                                              uint64_t instance, void **tables,
                                              uint64_t num_tables)
{
    if (!upti_ensure_tools())
        return UPTI_STATUS_ERROR_DEADLOCK; /* started during discovery: registers later */
    upti_log_debug("runtime '%s' registered (version %llu, %llu table(s))", name,
                   (unsigned long long)version, (unsigned long long)num_tables);
    if (library_mask(name) == UPTI_INTERCEPT_TABLE_MARKER && num_tables >= 1)
        upti_marker_install_wrappers(tables[0]);
    upti_intercept_table_info_t info = {sizeof info, name, version, instance,
                                        UPTI_TRACING_KIND_NONE, 0, 0, 0};
    upti_pass_tables(&info, tables, num_tables);
    return UPTI_STATUS_SUCCESS;
}

/* ---- public API ---- */

UPTI_API upti_status_t upti_set_log_callback(upti_log_level_t level, upti_log_callback_t callback,
                                             void *data)
{
    if ((int)level < UPTI_LOG_LEVEL_NONE || level >= UPTI_LOG_LEVEL_LAST)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    upti_log_configure(level, callback, data);
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_at_intercept_table_registration(upti_intercept_library_cb_t callback,
                                                            int library_mask, void *data)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (callback == NULL || (library_mask & ~UPTI_INTERCEPT_TABLE_ALL) != 0 || library_mask == 0)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    if (!discovery_thread())
        return UPTI_STATUS_ERROR_CONFIGURATION_LOCKED;
    if (g_num_intercepts == (int)(sizeof g_intercepts / sizeof g_intercepts[0]))
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    g_intercepts[g_num_intercepts++] =
        (struct intercept_request){.callback = callback, .mask = library_mask, .data = data};
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_at_named_intercept_table_registration(const char *name,
                                                                  uint64_t min_version,
                                                                  upti_intercept_named_table_cb_t callback,
                                                                  void *data)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    struct intercept_request r = {.named = callback, .min_version = min_version, .data = data};
    if (callback == NULL ||
        (name != NULL && (name[0] == '\0' || strlen(name) >= sizeof r.name)))
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    if (!discovery_thread())
        return UPTI_STATUS_ERROR_CONFIGURATION_LOCKED;
    if (g_num_intercepts == (int)(sizeof g_intercepts / sizeof g_intercepts[0]))
        return UPTI_STATUS_ERROR_OUT_OF_RESOURCES;
    if (name != NULL)
        memcpy(r.name, name, strlen(name) + 1);
    g_intercepts[g_num_intercepts++] = r;
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_force_configure(upti_configure_func_t configure_func)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    if (configure_func == NULL)
        return UPTI_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&g_tools_lock);
    bool fresh = atomic_load(&g_state) == LIFE_NONE && g_forced == NULL;
    if (fresh)
        g_forced = configure_func;
    pthread_mutex_unlock(&g_tools_lock);
    if (!fresh)
        return UPTI_STATUS_ERROR_CONFIGURATION_LOCKED;
    upti_ensure_tools();
    return UPTI_STATUS_SUCCESS;
}

UPTI_API upti_status_t upti_is_initialized(int *status)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    UPTI_RETURN_OUT(status, atomic_load(&g_state) >= LIFE_INITIALIZED);
}

UPTI_API upti_status_t upti_runtime_tools_present(int *present)
{
    UPTI_RETURN_OUT(present, atomic_load(&g_state) >= LIFE_INITIALIZED && g_any_tool);
}

UPTI_API upti_status_t upti_is_finalized(int *status)
{
    UPTI_REFUSE_IN_SUBSCRIBER();
    UPTI_RETURN_OUT(status, atomic_load(&g_state) == LIFE_FINALIZED);
}

UPTI_API upti_status_t upti_get_version(uint32_t *major, uint32_t *minor, uint32_t *patch)
{
    if (major != NULL)
        *major = UPTI_VERSION_MAJOR;
    if (minor != NULL)
        *minor = UPTI_VERSION_MINOR;
    if (patch != NULL)
        *patch = UPTI_VERSION_PATCH;
    return UPTI_STATUS_SUCCESS;
}
