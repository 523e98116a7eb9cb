/* SPDX-License-Identifier: MIT */
/* Releases OpenCL objects in every legal order.
 *
 *   ocl_release_order pairs            every chain of parent and children
 *                                      (below), created fresh and released in
 *                                      each of its orders
 *   ocl_release_order random SEED      many objects of three contexts alive at
 *                                      once, released in a seeded random order
 *   ocl_release_order completed        a kernel whose queue, kernel, program,
 *                                      buffer and context are all released
 *                                      before it is waited for
 *
 * An object keeps the objects it was made from alive, so any order is legal,
 * except that an SVM pointer is freed while its context is still held (by the
 * program or through one of its objects). Prints what it made, per kind, for
 * the test to compare with the trace ("made: buffer=N ..."), then "ok".
 *
 * Built twice: plain, and with SUBSCRIBER (the program is then its own UPTI
 * tool, subscribed to every callback domain, and also prints what it was told).
 */
#include "ocl_common.h"

#include <stdint.h>
#include <string.h>

#ifdef SUBSCRIBER
#include <stdatomic.h>
#include <upti/upti.h>
#endif

enum kind { CTX, QUEUE, PROG, KERN, BUF, SUB, IMG, SAMP, SVM, SVMQ, EVT, UEVT, KINDS };
static const char *const kind_names[KINDS] = {"context", "queue", "program", "kernel", "buffer", "sub_buffer",
                                              "image", "sampler", "svm", "svm_enqueued", "event", "user_event"};
static int g_made[KINDS];

static cl_device_id g_dev;

#ifdef SUBSCRIBER
static _Atomic int g_seen[UPTI_CB_DOMAIN_LAST];
static _Atomic int g_completed_on_device; /* COMPLETED naming the device */

static void on_callback(upti_callback_domain_t domain, uint32_t api_group, uint32_t api_id, void *backend_context,
                        const void *cb_data, void *user_data, void **instance)
{
    (void)api_group, (void)api_id, (void)backend_context, (void)user_data, (void)instance;
    if (domain > 0 && domain < UPTI_CB_DOMAIN_LAST) {
        const upti_callback_gpu_op_data_t *d = cb_data;
        if (domain >= UPTI_CB_DOMAIN_INTERNAL_THREADS || d->phase == UPTI_CB_PHASE_API_EXIT)
            atomic_fetch_add(&g_seen[domain], 1);
        if (domain == UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED && d->device_handle == (uintptr_t)g_dev)
            atomic_fetch_add(&g_completed_on_device, 1);
    }
}

static int initialize(upti_client_finalize_t fin, void *data)
{
    (void)fin, (void)data;
    upti_callback_subscriber_t s;
    if (upti_callback_subscribe(&s, on_callback, NULL) != UPTI_STATUS_SUCCESS)
        return 1;
    for (int d = 1; d < UPTI_CB_DOMAIN_LAST; d++)
        if (upti_callback_enable_domain(s, (upti_callback_domain_t)d, 1, 1) != UPTI_STATUS_SUCCESS)
            return 1;
    return 0;
}

static upti_tool_configure_result_t *configure(uint32_t version, const char *runtime_version, uint32_t priority,
                                              upti_client_id_t *id)
{
    (void)version, (void)runtime_version, (void)priority;
    static upti_tool_configure_result_t r = {sizeof r, initialize, NULL, NULL};
    id->name = "ocl_release_order";
    return &r;
}
#endif

static int g_svm; /* the device has coarse-grained SVM */

static const char *const source = "__kernel void k(__global int *a) { if (a) a[get_global_id(0)] += 1; }\n";

/* One family: a context and objects made from it; NULL where not made. */
typedef struct family {
    void *obj[KINDS];
    cl_context ctx_for_svm; /* the context an SVM pointer is freed with */
} family;

static cl_context new_context(void)
{
    cl_context c = ocl_context(g_dev);
    g_made[CTX]++;
    return c;
}

static cl_command_queue new_queue(cl_context c)
{
    cl_command_queue q = ocl_queue(c, g_dev);
    g_made[QUEUE]++;
    return q;
}

/* The first program is built from source; the others from the device binary
 * that build gave (the same kernel without PoCL's compiler front end, which
 * took half of each run's time: this program makes some 80 programs). */
static unsigned char *g_binary;
static size_t g_binary_size;

static cl_program new_program(cl_context c)
{
    cl_program p;
    if (g_binary == NULL) {
        p = ocl_build(c, g_dev, source);
        CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof g_binary_size, &g_binary_size,
                               NULL));
        g_binary = malloc(g_binary_size);
        if (g_binary == NULL) {
            printf("FAILED malloc\n");
            exit(1);
        }
        CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof g_binary, &g_binary, NULL));
    } else {
        cl_int err, status;
        const unsigned char *bin = g_binary;
        p = clCreateProgramWithBinary(c, 1, &g_dev, &g_binary_size, &bin, &status, &err);
        CHECK(err);
        CHECK(status);
        CHECK(clBuildProgram(p, 1, &g_dev, "", NULL, NULL));
    }
    g_made[PROG]++;
    return p;
}

static cl_kernel new_kernel(cl_program p)
{
    cl_kernel k = ocl_kernel(p, "k");
    cl_mem none = NULL;
    CHECK(clSetKernelArg(k, 0, sizeof none, &none));
    g_made[KERN]++;
    return k;
}

static cl_mem new_buffer(cl_context c)
{
    cl_mem b = ocl_buffer(c, CL_MEM_READ_WRITE, 4096);
    g_made[BUF]++;
    return b;
}

static cl_mem new_sub_buffer(cl_mem b, size_t offset)
{
    cl_int err;
    cl_buffer_region region = {offset, 1024};
    cl_mem s = clCreateSubBuffer(b, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CHECK(err);
    g_made[SUB]++;
    return s;
}

static cl_mem new_image(cl_context c)
{
    cl_int err;
    cl_image_format format = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc = ocl_image2d_desc(16, 16);
    cl_mem i = clCreateImage(c, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
    CHECK(err);
    g_made[IMG]++;
    return i;
}

static cl_sampler new_sampler(cl_context c)
{
    cl_int err;
    cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE, 0};
    cl_sampler s = clCreateSamplerWithProperties(c, props, &err);
    CHECK(err);
    g_made[SAMP]++;
    return s;
}

static void *new_svm(cl_context c, enum kind how)
{
    void *p = clSVMAlloc(c, CL_MEM_READ_WRITE, 2048, 0);
    if (p == NULL) {
        printf("FAILED clSVMAlloc\n");
        exit(1);
    }
    g_made[how]++;
    return p;
}

/* A command on q that uses k (NULL: a fill of b): its event. */
static cl_event new_event(cl_command_queue q, cl_kernel k, cl_mem b)
{
    cl_event e;
    if (k != NULL) {
        size_t global = 1;
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &e));
    } else {
        cl_int pattern = 7;
        CHECK(clEnqueueFillBuffer(q, b, &pattern, sizeof pattern, 0, 1024, 0, NULL, &e));
    }
    CHECK(clFlush(q));
    g_made[EVT]++;
    return e;
}

static cl_event new_user_event(cl_context c)
{
    cl_int err;
    cl_event e = clCreateUserEvent(c, &err);
    CHECK(err);
    CHECK(clSetUserEventStatus(e, CL_COMPLETE));
    g_made[UEVT]++;
    return e;
}

static void release(family *f, enum kind k)
{
    void *o = f->obj[k];
    switch (k) {
    case CTX: CHECK(clReleaseContext(o)); break;
    case QUEUE: CHECK(clReleaseCommandQueue(o)); break;
    case PROG: CHECK(clReleaseProgram(o)); break;
    case KERN: CHECK(clReleaseKernel(o)); break;
    case BUF:
    case SUB:
    case IMG: CHECK(clReleaseMemObject(o)); break;
    case SAMP: CHECK(clReleaseSampler(o)); break;
    case SVM: clSVMFree(f->ctx_for_svm, o); break;
    case SVMQ: CHECK(clEnqueueSVMFree(f->obj[QUEUE], 1, &o, NULL, NULL, 0, NULL, NULL)); break;
    case EVT:
    case UEVT: CHECK(clReleaseEvent(o)); break;
    default: break;
    }
    f->obj[k] = NULL;
}

/* Makes the objects of chain (a bit set of kinds) in one family. */
static void make(family *f, unsigned chain)
{
    memset(f, 0, sizeof *f);
    cl_context c = new_context();
    f->obj[CTX] = c;
    f->ctx_for_svm = c;
    if (chain & (1u << QUEUE))
        f->obj[QUEUE] = new_queue(c);
    if (chain & (1u << PROG))
        f->obj[PROG] = new_program(c);
    if (chain & (1u << KERN))
        f->obj[KERN] = new_kernel(f->obj[PROG]);
    if (chain & (1u << BUF))
        f->obj[BUF] = new_buffer(c);
    if (chain & (1u << SUB))
        f->obj[SUB] = new_sub_buffer(f->obj[BUF], 1024);
    if (chain & (1u << IMG))
        f->obj[IMG] = new_image(c);
    if (chain & (1u << SAMP))
        f->obj[SAMP] = new_sampler(c);
    if (chain & (1u << SVM))
        f->obj[SVM] = new_svm(c, SVM);
    if (chain & (1u << SVMQ))
        f->obj[SVMQ] = new_svm(c, SVMQ);
    if (chain & (1u << EVT))
        f->obj[EVT] = new_event(f->obj[QUEUE], f->obj[KERN], f->obj[BUF]);
    if (chain & (1u << UEVT))
        f->obj[UEVT] = new_user_event(c);
}

/* An SVM pointer is freed while its context is held; an enqueued free needs its queue. */
static int legal(const enum kind *order, int n)
{
    for (int i = 0; i < n; i++) {
        if (order[i] != SVM && order[i] != SVMQ)
            continue;
        int holders_after = 0;
        for (int j = i + 1; j < n; j++)
            holders_after += order[j] != SVM && order[j] != SVMQ;
        if (holders_after == 0)
            return 0;
        if (order[i] == SVMQ)
            for (int j = 0; j < i; j++)
                if (order[j] == QUEUE)
                    return 0;
    }
    return 1;
}

static int g_orders;

/* Every order of kinds[from..n): the permutations by swapping. The kinds of
 * chain not in kinds are released first, right after they are made. */
static void permute(enum kind *kinds, int from, int n, unsigned chain)
{
    if (from == n) {
        if (!legal(kinds, n))
            return;
        family f;
        make(&f, chain);
        for (int k = 0; k < KINDS; k++)
            if (f.obj[k] != NULL) {
                int permuted = 0;
                for (int i = 0; i < n; i++)
                    permuted |= kinds[i] == (enum kind)k;
                if (!permuted)
                    release(&f, (enum kind)k);
            }
        for (int i = 0; i < n; i++)
            release(&f, kinds[i]);
        g_orders++;
        return;
    }
    for (int i = from; i < n; i++) {
        enum kind t = kinds[from];
        kinds[from] = kinds[i];
        kinds[i] = t;
        permute(kinds, from + 1, n, chain);
        kinds[i] = kinds[from];
        kinds[from] = t;
    }
}

#define B(k) (1u << (k))
static void pairs(void)
{
    /* Each chain: a parent and what is made from it (and from that); all of
     * its objects in every order, but those in the second mask: released
     * first (a kernel's event: each order of four of its five objects). */
    const unsigned chains[][2] = {
        {B(CTX) | B(QUEUE), 0},
        {B(CTX) | B(PROG) | B(KERN), 0},
        {B(CTX) | B(BUF) | B(SUB), 0},
        {B(CTX) | B(IMG) | B(SAMP), 0},
        {B(CTX) | B(BUF) | B(SVM), 0},
        {B(CTX) | B(QUEUE) | B(SVMQ), 0},
        {B(CTX) | B(QUEUE) | B(BUF) | B(EVT), 0},
        {B(CTX) | B(QUEUE) | B(PROG) | B(KERN) | B(EVT), B(PROG)},
        {B(CTX) | B(QUEUE) | B(PROG) | B(KERN) | B(EVT), B(QUEUE)},
        {B(CTX) | B(QUEUE) | B(PROG) | B(KERN) | B(EVT), B(CTX)},
        {B(CTX) | B(UEVT), 0},
    };
    for (size_t i = 0; i < sizeof chains / sizeof chains[0]; i++) {
        if (!g_svm && (chains[i][0] & (B(SVM) | B(SVMQ))))
            continue;
        enum kind kinds[KINDS];
        int n = 0;
        for (int k = 0; k < KINDS; k++)
            if ((chains[i][0] & ~chains[i][1]) & B(k))
                kinds[n++] = (enum kind)k;
        permute(kinds, 0, n, chains[i][0]);
    }
}

/* --- many objects at once, a seeded order --- */

static uint64_t g_rng;
static uint32_t next_random(void)
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g_rng >> 33);
}

typedef struct item {
    enum kind kind;
    int family;
    void *obj;
} item;

#define FAMILIES 3
#define MAX_ITEMS 256

static item g_items[MAX_ITEMS];
static int g_num_items;

static void add(enum kind k, int fam, void *obj)
{
    g_items[g_num_items++] = (item){k, fam, obj};
}

/* How many objects of family fam the program still holds (SVM pointers aside). */
static int holders(int fam, int from)
{
    int n = 0;
    for (int i = from; i < g_num_items; i++)
        n += g_items[i].family == fam && g_items[i].obj != NULL && g_items[i].kind != SVM &&
             g_items[i].kind != SVMQ;
    return n;
}

static cl_command_queue live_queue(int fam, int from)
{
    for (int i = from; i < g_num_items; i++)
        if (g_items[i].family == fam && g_items[i].kind == QUEUE && g_items[i].obj != NULL)
            return g_items[i].obj;
    return NULL;
}

static cl_context g_contexts[FAMILIES];

static void free_svm(item *it, int from)
{
    cl_command_queue q = live_queue(it->family, from);
    if (it->kind == SVMQ && q != NULL)
        CHECK(clEnqueueSVMFree(q, 1, &it->obj, NULL, NULL, 0, NULL, NULL));
    else
        clSVMFree(g_contexts[it->family], it->obj);
    it->obj = NULL;
}

static void release_item(item *it)
{
    family f;
    memset(&f, 0, sizeof f);
    f.obj[it->kind] = it->obj;
    release(&f, it->kind);
    it->obj = NULL;
}

static void random_order(uint64_t seed)
{
    g_rng = seed;
    for (int fam = 0; fam < FAMILIES; fam++) {
        cl_context c = new_context();
        g_contexts[fam] = c;
        add(CTX, fam, c);
        cl_command_queue q[2] = {new_queue(c), new_queue(c)};
        add(QUEUE, fam, q[0]);
        add(QUEUE, fam, q[1]);
        cl_program p = new_program(c);
        add(PROG, fam, p);
        cl_kernel k[3];
        for (int i = 0; i < 3; i++)
            add(KERN, fam, k[i] = new_kernel(p));
        cl_mem b[4];
        for (int i = 0; i < 4; i++)
            add(BUF, fam, b[i] = new_buffer(c));
        add(SUB, fam, new_sub_buffer(b[0], 0));
        add(SUB, fam, new_sub_buffer(b[0], 2048));
        add(SUB, fam, new_sub_buffer(b[1], 1024));
        add(IMG, fam, new_image(c));
        add(IMG, fam, new_image(c));
        add(SAMP, fam, new_sampler(c));
        add(SAMP, fam, new_sampler(c));
        if (g_svm) {
            add(SVM, fam, new_svm(c, SVM));
            add(SVM, fam, new_svm(c, SVM));
            add(SVMQ, fam, new_svm(c, SVMQ));
        }
        for (int i = 0; i < 3; i++)
            add(EVT, fam, new_event(q[i & 1], k[i], NULL));
        add(EVT, fam, new_event(q[0], NULL, b[2]));
        add(EVT, fam, new_event(q[1], NULL, b[3]));
        add(UEVT, fam, new_user_event(c));
    }
    /* Fisher-Yates, then releases in that order. */
    for (int i = g_num_items - 1; i > 0; i--) {
        int j = (int)(next_random() % (uint32_t)(i + 1));
        item t = g_items[i];
        g_items[i] = g_items[j];
        g_items[j] = t;
    }
    for (int i = 0; i < g_num_items; i++) {
        item *it = &g_items[i];
        if (it->obj == NULL)
            continue; /* an SVM pointer already freed */
        if (it->kind == SVM || it->kind == SVMQ) {
            free_svm(it, i + 1);
            continue;
        }
        if (holders(it->family, i) == 1) {
            /* The family's last holder: its SVM pointers go first. */
            for (int j = i + 1; j < g_num_items; j++)
                if (g_items[j].family == it->family && g_items[j].obj != NULL &&
                    (g_items[j].kind == SVM || g_items[j].kind == SVMQ)) {
                    /* An enqueued free still needs a queue: this one, if it is one. */
                    if (g_items[j].kind == SVMQ && it->kind == QUEUE)
                        CHECK(clEnqueueSVMFree(it->obj, 1, &g_items[j].obj, NULL, NULL, 0, NULL, NULL));
                    else
                        clSVMFree(g_contexts[it->family], g_items[j].obj);
                    g_items[j].obj = NULL;
                }
        }
        release_item(it);
    }
    g_orders = 1;
}

/* --- a command that completes after everything it used is released --- */

static void completed_after_release(void)
{
    family f;
    make(&f, B(CTX) | B(QUEUE) | B(PROG) | B(KERN) | B(BUF));
    CHECK(clSetKernelArg(f.obj[KERN], 0, sizeof(cl_mem), &f.obj[BUF]));
    cl_event gate = new_user_event(f.obj[CTX]);
    /* The user event was completed at creation; a second one holds the kernel back. */
    cl_int err;
    cl_event hold = clCreateUserEvent(f.obj[CTX], &err);
    CHECK(err);
    g_made[UEVT]++;
    size_t global = 64;
    cl_event done;
    cl_event wait[2] = {gate, hold};
    CHECK(clEnqueueNDRangeKernel(f.obj[QUEUE], f.obj[KERN], 1, NULL, &global, NULL, 2, wait, &done));
    g_made[EVT]++;
    CHECK(clFlush(f.obj[QUEUE]));
    release(&f, KERN);
    release(&f, PROG);
    release(&f, BUF);
    release(&f, QUEUE);
    release(&f, CTX);
    CHECK(clReleaseEvent(gate));
    /* Nothing it used is held by the program any more: now let it run. */
    CHECK(clSetUserEventStatus(hold, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &done));
    cl_int status = 1;
    CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    printf("kernel status %d\n", status);
    CHECK(clReleaseEvent(done));
    CHECK(clReleaseEvent(hold));
    g_orders = 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s pairs | random SEED | completed\n", argv[0]);
        return 2;
    }
#ifdef SUBSCRIBER
    if (upti_force_configure(configure) != UPTI_STATUS_SUCCESS) {
        printf("FAILED upti_force_configure\n");
        return 1;
    }
#endif
    g_dev = ocl_first_device(NULL);
    cl_device_svm_capabilities caps = 0;
    g_svm = clGetDeviceInfo(g_dev, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL) == CL_SUCCESS &&
            (caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER);
    if (strcmp(argv[1], "pairs") == 0)
        pairs();
    else if (strcmp(argv[1], "random") == 0 && argc > 2)
        random_order(strtoull(argv[2], NULL, 0));
    else if (strcmp(argv[1], "completed") == 0)
        completed_after_release();
    else {
        fprintf(stderr, "usage: %s pairs | random SEED | completed\n", argv[0]);
        return 2;
    }
    printf("orders: %d\nmade:", g_orders);
    for (int k = 0; k < KINDS; k++)
        printf(" %s=%d", kind_names[k], g_made[k]);
    printf("\n");
#ifdef SUBSCRIBER
    printf("seen: loaded=%d unloaded=%d completed=%d on_device=%d\n",
           atomic_load(&g_seen[UPTI_CB_DOMAIN_DRIVER_MODULE_LOADED]),
           atomic_load(&g_seen[UPTI_CB_DOMAIN_DRIVER_MODULE_UNLOADED]),
           atomic_load(&g_seen[UPTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED]), atomic_load(&g_completed_on_device));
#endif
    free(g_binary);
    printf("ok\n");
    return 0;
}
