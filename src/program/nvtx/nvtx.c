/* SPDX-License-Identifier: MIT */
/* libupti-nvtx.so: an NVTX v3 injection library (NVTX_INJECTION64_PATH).
 *
 * NVTX calls its InitializeInjectionNvtx2() once per module that includes the
 * NVTX headers; each call fills that module's function-pointer slots. Calls
 * become MARKER_API records delivered through UPTI's runtime interface
 * (upti_runtime_emit): push/pop, start/end, marks, thread and category names.
 * The record's domain field holds (NVTX domain index << 32) | category; a
 * domain's name is reported as NAME_CATEGORY of (index << 32 | 0).
 * Registered strings and domains are handles owned here; wide strings are
 * converted to UTF-8; payloads and ARGB colours are kept.
 */
#include "nvtx_injection.h"

#include <upti/register.h>
#include <upti/runtime.h>
#include <upti/upti.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define UPTI_NVTX_EXPORT __attribute__((visibility("default")))

typedef struct nvtx_domain {
    uint32_t index;
    char *name;
} nvtx_domain;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static const upti_operation_plan_t *const *g_plans;
static uint32_t g_num_plans;
static _Atomic uint32_t g_next_domain = 1;
static _Atomic uint64_t g_next_range = 1;
static __thread int t_depth;

static void register_once(void)
{
    upti_register_library_id_t id;
    /* Discovers and initializes tools (first registration in the process). */
    upti_register_library_api_table("nvtx", 3, NULL, 0, &id);
    if (upti_runtime_get_operation_plans(UPTI_TRACING_KIND_MARKER_API, &g_plans, &g_num_plans) !=
        UPTI_STATUS_SUCCESS)
        g_plans = NULL;
}

/* UTF-8 of a wide string (UTF-32 on Linux); malloc'd. */
static char *utf8_of(const wchar_t *w)
{
    if (w == NULL)
        return NULL;
    size_t n = wcslen(w);
    char *out = malloc(n * 4 + 1), *p = out;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)w[i];
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            c = 0xFFFD;
        if (c < 0x80) {
            *p++ = (char)c;
        } else if (c < 0x800) {
            *p++ = (char)(0xC0 | (c >> 6));
            *p++ = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            *p++ = (char)(0xE0 | (c >> 12));
            *p++ = (char)(0x80 | ((c >> 6) & 0x3F));
            *p++ = (char)(0x80 | (c & 0x3F));
        } else {
            *p++ = (char)(0xF0 | (c >> 18));
            *p++ = (char)(0x80 | ((c >> 12) & 0x3F));
            *p++ = (char)(0x80 | ((c >> 6) & 0x3F));
            *p++ = (char)(0x80 | (c & 0x3F));
        }
    }
    *p = '\0';
    return out;
}

static inline const upti_operation_plan_t *plan_of(uint32_t op)
{
    if (g_plans == NULL || op >= g_num_plans)
        return NULL;
    return upti_runtime_plan(g_plans, op);
}

/* Builds and delivers one marker record. thread: the named OS thread (NAME_THREAD), else 0. */
static void emit(uint32_t op, const char *message, uint64_t range_id, uint32_t domain,
                 const un_event_attributes *attr, uint64_t thread)
{
    upti_buffer_tracing_marker_api_record_t r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    upti_get_timestamp(&r.start_timestamp);
    r.end_timestamp = r.start_timestamp;
    r.range_id = range_id;
    r.domain = (uint64_t)domain << 32;
    r.message = message;
    char *owned = NULL;
    if (attr != NULL && attr->size >= offsetof(un_event_attributes, message) + sizeof attr->message) {
        r.domain |= attr->category;
        if (attr->color_type == UN_COLOR_ARGB)
            r.color = attr->color;
        r.payload_type = (uint32_t)attr->payload_type;
        switch (attr->payload_type) {
        case UN_PAYLOAD_TYPE_UNSIGNED_INT64: r.payload = attr->payload.u64; break;
        case UN_PAYLOAD_TYPE_INT64: r.payload = (uint64_t)attr->payload.i64; break;
        case UN_PAYLOAD_TYPE_DOUBLE: memcpy(&r.payload, &attr->payload.d, 8); break;
        case UN_PAYLOAD_TYPE_UNSIGNED_INT32: r.payload = attr->payload.u32; break;
        case UN_PAYLOAD_TYPE_INT32: r.payload = (uint64_t)(int64_t)attr->payload.i32; break;
        case UN_PAYLOAD_TYPE_FLOAT: {
            uint32_t bits;
            memcpy(&bits, &attr->payload.f, 4);
            r.payload = bits;
            break;
        }
        default: r.payload_type = 0;
        }
        switch (attr->message_type) {
        case UN_MESSAGE_TYPE_ASCII: r.message = attr->message.ascii; break;
        case UN_MESSAGE_TYPE_UNICODE: r.message = owned = utf8_of(attr->message.unicode); break;
        case UN_MESSAGE_TYPE_REGISTERED:
            r.message = (const char *)attr->message.registered; /* our own copy */
            break;
        default: r.message = NULL;
        }
    }
    upti_runtime_correlation_t corr;
    upti_runtime_record_t rec = {
        .size = sizeof rec, .kind = UPTI_TRACING_KIND_MARKER_API, .operation = op,
        .record = &r, .string_offset = offsetof(upti_buffer_tracing_marker_api_record_t, message)};
    if (thread != 0) {
        upti_runtime_capture_correlation(NULL, &corr);
        corr.thread_id = thread;
        rec.correlation = &corr;
    }
    upti_runtime_emit(&rec);
    free(owned);
}

static uint32_t domain_index(un_domain_handle d)
{
    return d ? ((nvtx_domain *)d)->index : 0;
}

/* ---- core ---- */
static void mark_ex(const un_event_attributes *a)
{
    if (plan_of(UPTI_MARKER_API_MARK))
        emit(UPTI_MARKER_API_MARK, NULL, 0, 0, a, 0);
}
static void mark_a(const char *m)
{
    if (plan_of(UPTI_MARKER_API_MARK))
        emit(UPTI_MARKER_API_MARK, m, 0, 0, NULL, 0);
}
/* Attributes that hold only m, a wide message: what the *W entry points
   record (emit converts it to UTF-8 where the operation is traced). */
#define WIDE_MESSAGE(m)                                                                             \
    (&(un_event_attributes){.version = UN_VERSION, .size = UN_EVENT_ATTRIB_STRUCT_SIZE,             \
                            .message_type = UN_MESSAGE_TYPE_UNICODE, .message.unicode = (m)})
static void mark_w(const wchar_t *m) { mark_ex(WIDE_MESSAGE(m)); }
static un_range_id start_common(uint32_t domain, const char *m, const un_event_attributes *a)
{
    un_range_id id = atomic_fetch_add(&g_next_range, 1);
    if (plan_of(UPTI_MARKER_API_RANGE_START))
        emit(UPTI_MARKER_API_RANGE_START, m, id, domain, a, 0);
    return id;
}
static un_range_id start_ex(const un_event_attributes *a) { return start_common(0, NULL, a); }
static un_range_id start_a(const char *m) { return start_common(0, m, NULL); }
static un_range_id start_w(const wchar_t *m) { return start_common(0, NULL, WIDE_MESSAGE(m)); }
static void range_end(un_range_id id)
{
    if (plan_of(UPTI_MARKER_API_RANGE_STOP))
        emit(UPTI_MARKER_API_RANGE_STOP, NULL, id, 0, NULL, 0);
}
static int push_common(uint32_t domain, const char *m, const un_event_attributes *a)
{
    if (plan_of(UPTI_MARKER_API_RANGE_PUSH))
        emit(UPTI_MARKER_API_RANGE_PUSH, m, 0, domain, a, 0);
    return t_depth++;
}
static int push_ex(const un_event_attributes *a) { return push_common(0, NULL, a); }
static int push_a(const char *m) { return push_common(0, m, NULL); }
static int push_w(const wchar_t *m) { return push_common(0, NULL, WIDE_MESSAGE(m)); }
static int pop_common(uint32_t domain)
{
    if (t_depth == 0)
        return -1;
    if (plan_of(UPTI_MARKER_API_RANGE_POP))
        emit(UPTI_MARKER_API_RANGE_POP, NULL, 0, domain, NULL, 0);
    return --t_depth;
}
static int pop(void) { return pop_common(0); }
static void name_category_common(uint32_t domain, uint32_t category, const char *name)
{
    if (plan_of(UPTI_MARKER_API_NAME_CATEGORY)) {
        un_event_attributes a = {.version = UN_VERSION, .size = UN_EVENT_ATTRIB_STRUCT_SIZE,
                                 .category = category, .message_type = UN_MESSAGE_TYPE_ASCII,
                                 .message.ascii = name};
        emit(UPTI_MARKER_API_NAME_CATEGORY, name, 0, domain, &a, 0);
    }
}
static void name_category_a(uint32_t c, const char *n) { name_category_common(0, c, n); }
static void name_category_w(uint32_t c, const wchar_t *n)
{
    char *s = utf8_of(n);
    name_category_common(0, c, s);
    free(s);
}
static void name_thread_a(uint32_t tid, const char *n)
{
    if (plan_of(UPTI_MARKER_API_NAME_THREAD))
        emit(UPTI_MARKER_API_NAME_THREAD, n, 0, 0, NULL, tid); /* 0: the calling thread */
}
static void name_thread_w(uint32_t tid, const wchar_t *n)
{
    char *s = utf8_of(n);
    name_thread_a(tid, s);
    free(s);
}

/* ---- core2: domains, registered strings, resources ---- */
static void d_mark_ex(un_domain_handle d, const un_event_attributes *a)
{
    if (plan_of(UPTI_MARKER_API_MARK))
        emit(UPTI_MARKER_API_MARK, NULL, 0, domain_index(d), a, 0);
}
static un_range_id d_start_ex(un_domain_handle d, const un_event_attributes *a)
{
    return start_common(domain_index(d), NULL, a);
}
static void d_range_end(un_domain_handle d, un_range_id id)
{
    (void)d;
    range_end(id);
}
static int d_push_ex(un_domain_handle d, const un_event_attributes *a)
{
    return push_common(domain_index(d), NULL, a);
}
static int d_pop(un_domain_handle d) { return pop_common(domain_index(d)); }
static un_resource_handle d_resource_create(un_domain_handle d, void *a)
{
    (void)d;
    (void)a;
    return (un_resource_handle)malloc(1);
}
static void d_resource_destroy(un_resource_handle r) { free(r); }
static void d_name_category_a(un_domain_handle d, uint32_t c, const char *n)
{
    name_category_common(domain_index(d), c, n);
}
static void d_name_category_w(un_domain_handle d, uint32_t c, const wchar_t *n)
{
    char *s = utf8_of(n);
    name_category_common(domain_index(d), c, s);
    free(s);
}
/* Registered strings and domains live as long as the process: they stay
 * reachable from this list (no leak reported when the application drops its
 * handles). */
typedef struct kept_node {
    struct kept_node *next;
    void *ptr;
} kept_node;
static _Atomic(kept_node *) g_kept;

/* Adds p to g_kept; returns p. */
static void *keep_for_process_life(void *p)
{
    kept_node *n = p != NULL ? malloc(sizeof *n) : NULL;
    if (n == NULL)
        return p;
    n->ptr = p;
    n->next = atomic_load(&g_kept);
    while (!atomic_compare_exchange_weak(&g_kept, &n->next, n))
        ;
    return p;
}
static un_string_handle d_register_a(un_domain_handle d, const char *s)
{
    (void)d;
    return (un_string_handle)keep_for_process_life(strdup(s ? s : ""));
}
static un_string_handle d_register_w(un_domain_handle d, const wchar_t *s)
{
    (void)d;
    return (un_string_handle)keep_for_process_life(utf8_of(s ? s : L""));
}
static un_domain_handle d_create_a(const char *name)
{
    nvtx_domain *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->index = atomic_fetch_add(&g_next_domain, 1);
    d->name = strdup(name ? name : "");
    name_category_common(d->index, 0, d->name);
    return (un_domain_handle)keep_for_process_life(d);
}
static un_domain_handle d_create_w(const wchar_t *name)
{
    char *s = utf8_of(name ? name : L"");
    un_domain_handle d = d_create_a(s);
    free(s);
    return d;
}
static void d_destroy(un_domain_handle d)
{
    (void)d; /* records may still name it: kept */
}
static void initialize(const void *reserved) { (void)reserved; }

typedef struct slot {
    unsigned id;
    un_function fn;
} slot;

#define FN(f) ((un_function)(void (*)(void))(f))
static const slot k_core[] = {
    {UN_CBID_CORE_MarkEx, FN(mark_ex)},           {UN_CBID_CORE_MarkA, FN(mark_a)},
    {UN_CBID_CORE_MarkW, FN(mark_w)},             {UN_CBID_CORE_RangeStartEx, FN(start_ex)},
    {UN_CBID_CORE_RangeStartA, FN(start_a)},      {UN_CBID_CORE_RangeStartW, FN(start_w)},
    {UN_CBID_CORE_RangeEnd, FN(range_end)},       {UN_CBID_CORE_RangePushEx, FN(push_ex)},
    {UN_CBID_CORE_RangePushA, FN(push_a)},        {UN_CBID_CORE_RangePushW, FN(push_w)},
    {UN_CBID_CORE_RangePop, FN(pop)},             {UN_CBID_CORE_NameCategoryA, FN(name_category_a)},
    {UN_CBID_CORE_NameCategoryW, FN(name_category_w)},
    {UN_CBID_CORE_NameOsThreadA, FN(name_thread_a)},
    {UN_CBID_CORE_NameOsThreadW, FN(name_thread_w)},
};
static const slot k_core2[] = {
    {UN_CBID_CORE2_DomainMarkEx, FN(d_mark_ex)},
    {UN_CBID_CORE2_DomainRangeStartEx, FN(d_start_ex)},
    {UN_CBID_CORE2_DomainRangeEnd, FN(d_range_end)},
    {UN_CBID_CORE2_DomainRangePushEx, FN(d_push_ex)},
    {UN_CBID_CORE2_DomainRangePop, FN(d_pop)},
    {UN_CBID_CORE2_DomainResourceCreate, FN(d_resource_create)},
    {UN_CBID_CORE2_DomainResourceDestroy, FN(d_resource_destroy)},
    {UN_CBID_CORE2_DomainNameCategoryA, FN(d_name_category_a)},
    {UN_CBID_CORE2_DomainNameCategoryW, FN(d_name_category_w)},
    {UN_CBID_CORE2_DomainRegisterStringA, FN(d_register_a)},
    {UN_CBID_CORE2_DomainRegisterStringW, FN(d_register_w)},
    {UN_CBID_CORE2_DomainCreateA, FN(d_create_a)},
    {UN_CBID_CORE2_DomainCreateW, FN(d_create_w)},
    {UN_CBID_CORE2_DomainDestroy, FN(d_destroy)},
    {UN_CBID_CORE2_Initialize, FN(initialize)},
};

/* Puts each slot's function into module's function table (those the table has);
 * 0 if the module has no table. */
static int install_slots(const un_export_table_callbacks *cb, int module, const slot *slots,
                         size_t n)
{
    un_function_table table = NULL;
    unsigned int size = 0;
    if (!cb->get_module_function_table(module, &table, &size) || table == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (slots[i].id < size && table[slots[i].id] != NULL)
            *table[slots[i].id] = slots[i].fn;
    return 1;
}

UPTI_NVTX_EXPORT int InitializeInjectionNvtx2(un_get_export_table_fn get_export_table)
{
    if (get_export_table == NULL)
        return 0;
    const un_export_table_callbacks *cb =
        (const un_export_table_callbacks *)get_export_table(UN_ETID_CALLBACKS);
    if (cb == NULL || cb->struct_size < sizeof(un_export_table_callbacks))
        return 0;
    pthread_once(&g_once, register_once);
    if (!install_slots(cb, UN_CB_MODULE_CORE, k_core, sizeof k_core / sizeof k_core[0]))
        return 0;
    install_slots(cb, UN_CB_MODULE_CORE2, k_core2, sizeof k_core2 / sizeof k_core2[0]);
    return 1;
}
