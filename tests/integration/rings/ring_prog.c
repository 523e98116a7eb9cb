/* A traced program whose tool (in the executable, upti_force_configure)
 * writes its marker records into a shared buffer; check_rings.py kills it,
 * crashes it or lets it end, then counts what the collector got.
 *
 *   ring_prog MODE DIR COUNTER N [THREADS [SIZE [POLICY [SLOTS]]]]
 *
 * Each of THREADS threads (default 1) makes N uptx_mark("<thread>:<i>")
 * calls; after each call returns it stores i + 1 in its counter, word
 * <thread> of the file COUNTER (a shared mapping the killer reads after the
 * kill: a call counted there had returned, so its record was committed).
 * MODE: return (main returns, having printed UPTI's threads (named upti-*)
 * and the signals with a handler, before UPTI started and after its own
 * threads ended), exit (_exit(0)), segv (SIGSEGV, default
 * action), segv_caught (a handler swallows a SIGSEGV halfway; the program
 * goes on), kill (return, but the test kills it before), fork (thread 0
 * makes N/2 marks, forks a child that execs /bin/true (it records nothing:
 * it must leave no ring file), then one that makes N marks "c:<i>" and _exits; the
 * parent waits for it, then makes N marks "p:<i>"). SIZE: bytes per ring
 * (default 1 MiB). POLICY: lossless (default) or discard. SLOTS: rings
 * (default THREADS + 1). Prints the ring file's path on stdout. MODE api:
 * prints name=STATUS for the calls of the API's contract (errors included),
 * then makes N marks.
 */
#include <upti/upti.h>
#include <uptx/uptx.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 64

static const char *g_dir;
static size_t g_size = 1u << 20;
static upti_buffer_policy_t g_policy = UPTI_BUFFER_POLICY_LOSSLESS;
static uint32_t g_slots;
static long g_n;
static _Atomic uint64_t *g_counter;
static upti_buffer_id_t g_buffer;
static int g_api; /* MODE api: the API's contract, printed as name=STATUS lines */

static void on_buffer(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **h, size_t n,
                      void *data, uint64_t drops)
{
    (void)c, (void)b, (void)h, (void)n, (void)data, (void)drops;
}

static void show(const char *name, upti_status_t st)
{
    printf("%s=%s\n", name, upti_get_status_string(st));
}

/* Inside initialize: the arguments upti_create_shared_buffer refuses, and the path query. */
static void api_checks(upti_context_id_t ctx)
{
    upti_buffer_id_t b;
    char path[4096];
    show("zero_threads", upti_create_shared_buffer(ctx, 4096, g_policy, g_dir, 0, &b));
    show("no_policy", upti_create_shared_buffer(ctx, 4096, UPTI_BUFFER_POLICY_NONE, g_dir, 1, &b));
    show("null_id", upti_create_shared_buffer(ctx, 4096, g_policy, g_dir, 1, NULL));
    show("bad_context", upti_create_shared_buffer((upti_context_id_t){999}, 4096, g_policy, g_dir, 1, &b));
    show("missing_dir", upti_create_shared_buffer(ctx, 4096, g_policy, "/nonexistent-upti-dir/x.upti-ring", 1, &b));
    snprintf(path, sizeof path, "%s/named.upti-ring", g_dir);
    show("named_file", upti_create_shared_buffer(ctx, 4096, g_policy, path, 1, &b));
    char got[4096];
    show("path_short", upti_get_shared_buffer_path(b, got, strlen(path)));
    upti_status_t st = upti_get_shared_buffer_path(b, got, strlen(path) + 1);
    show("path_exact", st);
    printf("path_same=%d\n", st == UPTI_STATUS_SUCCESS && strcmp(got, path) == 0);
    upti_buffer_id_t plain;
    upti_create_buffer(ctx, 4096, 0, g_policy, on_buffer, NULL, &plain);
    show("path_of_plain_buffer", upti_get_shared_buffer_path(plain, got, sizeof got));
    show("flush_shared", upti_flush_buffer(b));
    show("destroy_shared", upti_destroy_buffer(b));
}

static void die(const char *what, upti_status_t st)
{
    fprintf(stderr, "ring_prog: %s: %d\n", what, (int)st);
    _exit(3);
}

static int tool_init(upti_client_finalize_t fini, void *data)
{
    (void)fini;
    (void)data;
    upti_context_id_t ctx;
    upti_status_t st = upti_create_context(&ctx);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_create_context", st);
    st = upti_create_shared_buffer(ctx, g_size, g_policy, g_dir, g_slots, &g_buffer);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_create_shared_buffer", st);
    if (g_api)
        api_checks(ctx);
    st = upti_configure_buffer_tracing_service(ctx, UPTI_TRACING_KIND_MARKER_API, NULL, 0, g_buffer);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_configure_buffer_tracing_service", st);
    return upti_start_context(ctx) == UPTI_STATUS_SUCCESS ? 0 : 1;
}

static void tool_fini(void *data)
{
    (void)data;
}

static upti_tool_configure_result_t g_result = {sizeof(upti_tool_configure_result_t), tool_init,
                                                tool_fini, NULL};

static upti_tool_configure_result_t *configure(uint32_t version, const char *runtime_version,
                                               uint32_t priority, upti_client_id_t *client_id)
{
    (void)version;
    (void)runtime_version;
    (void)priority;
    (void)client_id;
    return &g_result;
}

static sigjmp_buf g_jump;
/* Address 8, through a volatile pointer the compiler cannot see through. */
static volatile int *volatile g_bad = (volatile int *)(uintptr_t)8;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(g_jump, 1);
}

static void marks(const char *who, int word, long from, long to, int crash_at_half)
{
    char msg[64];
    for (long i = from; i < to; i++) {
        snprintf(msg, sizeof msg, "%s:%ld", who, i);
        uptx_mark(msg);
        atomic_store_explicit(&g_counter[word], (uint64_t)(i + 1), memory_order_release);
        if (crash_at_half && i == to / 2 && sigsetjmp(g_jump, 1) == 0)
            *g_bad = 1; /* SIGSEGV, swallowed by on_segv */
    }
}

/* All threads are alive from before the first mark to after the last: the
 * rings they hold are never given back meanwhile. */
static pthread_barrier_t g_alive;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    char who[16];
    snprintf(who, sizeof who, "%d", t);
    pthread_barrier_wait(&g_alive);
    marks(who, t, 0, g_n, 0);
    pthread_barrier_wait(&g_alive);
    return NULL;
}

/* UPTI's threads in the process, and the signals with a handler. */
static void process_state(int *tasks, int *handlers)
{
    *handlers = 0;
    for (int sig = 1; sig < 32; sig++) {
        struct sigaction old;
        if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &old) == 0 &&
            old.sa_handler != SIG_DFL)
            (*handlers)++;
    }
    /* UPTI names its threads upti-* (a sanitizer may have threads of its own). */
    *tasks = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(comm, sizeof comm, f) != NULL && strncmp(comm, "upti", 4) == 0)
            (*tasks)++;
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
}

static int g_tasks0, g_handlers0;

int main(int argc, char **argv)
{
    process_state(&g_tasks0, &g_handlers0); /* before UPTI (a sanitizer has its own) */
    if (argc < 5) {
        fprintf(stderr, "usage: ring_prog MODE DIR COUNTER N [THREADS [SIZE [POLICY [SLOTS]]]]\n");
        return 2;
    }
    const char *mode = argv[1];
    g_api = strcmp(mode, "api") == 0;
    g_dir = argv[2];
    g_n = atol(argv[4]);
    int threads = argc > 5 ? atoi(argv[5]) : 1;
    if (threads < 1 || threads > MAX_THREADS)
        return 2;
    if (argc > 6)
        g_size = (size_t)atol(argv[6]);
    if (argc > 7 && strcmp(argv[7], "discard") == 0)
        g_policy = UPTI_BUFFER_POLICY_DISCARD;
    g_slots = argc > 8 ? (uint32_t)atoi(argv[8]) : (uint32_t)threads + 1;
    int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, MAX_THREADS * 8) != 0)
        return 2;
    g_counter = mmap(NULL, MAX_THREADS * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (g_counter == MAP_FAILED)
        return 2;
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);

    upti_status_t st = upti_force_configure(configure);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_force_configure", st);
    char path[4096];
    st = upti_get_shared_buffer_path(g_buffer, path, sizeof path);
    if (st != UPTI_STATUS_SUCCESS)
        die("upti_get_shared_buffer_path", st);
    if (g_api) {
        upti_buffer_id_t late;
        upti_context_id_t none = {1};
        show("after_initialize", upti_create_shared_buffer(none, 4096, g_policy, g_dir, 1, &late));
        marks("0", 0, 0, g_n, 0);
        return 0;
    }
    printf("%s\n", path);
    fflush(stdout);

    if (strcmp(mode, "fork") == 0) {
        marks("0", 0, 0, g_n / 2, 0);
        fflush(stdout);
        pid_t exec_child = fork(); /* execs at once: it records nothing, so no ring file */
        if (exec_child == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        int exec_status = 0;
        waitpid(exec_child, &exec_status, 0);
        if (!WIFEXITED(exec_status) || WEXITSTATUS(exec_status) != 0)
            return 1;
        pid_t child = fork();
        if (child == 0) {
            marks("c", 1, 0, g_n, 0);
            char mine[4096];
            if (upti_get_shared_buffer_path(g_buffer, mine, sizeof mine) == UPTI_STATUS_SUCCESS)
                printf("%s\n", mine);
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        marks("p", 2, 0, g_n, 0);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    }
    if (strcmp(mode, "segv_caught") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_segv;
        sigaction(SIGSEGV, &sa, NULL);
        marks("0", 0, 0, g_n, 1);
        return 0;
    }
    pthread_t th[MAX_THREADS];
    pthread_barrier_init(&g_alive, NULL, (unsigned)threads);
    for (int t = 1; t < threads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0)
            return 2;
    worker((void *)(intptr_t)0);
    for (int t = 1; t < threads; t++)
        pthread_join(th[t], NULL);
    if (strcmp(mode, "return") == 0) {
        /* What the shared buffer left in the process: no thread, no signal handler. */
        int tasks, handlers;
        process_state(&tasks, &handlers);
        printf("before: upti_threads=%d handlers=%d\nafter: upti_threads=%d handlers=%d\n", g_tasks0,
               g_handlers0, tasks, handlers);
    }
    if (strcmp(mode, "exit") == 0)
        _exit(0);
    if (strcmp(mode, "segv") == 0) {
        signal(SIGSEGV, SIG_DFL);
        *g_bad = 1;
    }
    return 0;
}
