/* SPDX-License-Identifier: MIT */
/* nvtx.injection_abi: the injection ABI that src/program/nvtx/nvtx_injection.h declares
 * (UPTI's own names) has the values, sizes and offsets of the NVTX v3 headers.
 * Built only where the headers are installed (CUDA toolkit). */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "nvtx_injection.h"

#include <stdio.h>

static int checks, failures;

#define SAME(ours, theirs)                                                                     \
    do {                                                                                        \
        checks++;                                                                              \
        if ((unsigned long long)(ours) != (unsigned long long)(theirs)) {                        \
            failures++;                                                                        \
            printf("FAIL: %s = %llu, NVTX's %s = %llu\n", #ours, (unsigned long long)(ours),     \
                   #theirs, (unsigned long long)(theirs));                                     \
        }                                                                                      \
    } while (0)

/* A member of a struct: the same offset and the same size. */
#define SAME_FIELD(ours, our_field, theirs, their_field)                                       \
    do {                                                                                        \
        SAME(offsetof(ours, our_field), offsetof(theirs, their_field));                         \
        SAME(sizeof(((ours *)0)->our_field), sizeof(((theirs *)0)->their_field));               \
    } while (0)

/* The function types must agree too: assigning ours to theirs compiles only if they do. */
static void types(void)
{
    NvtxGetExportTableFunc_t get = (un_get_export_table_fn)0;
    un_function_table *ours = (NvtxFunctionTable *)0;
    NvtxFunctionPointer fp = (un_function)0;
    (void)get;
    (void)ours;
    (void)fp;
}

int main(void)
{
    types();
    SAME(UN_ETID_CALLBACKS, NVTX_ETID_CALLBACKS);
    SAME(UN_CB_MODULE_CORE, NVTX_CB_MODULE_CORE);
    SAME(UN_CB_MODULE_CORE2, NVTX_CB_MODULE_CORE2);
    SAME(UN_CBID_CORE_MarkEx, NVTX_CBID_CORE_MarkEx);
    SAME(UN_CBID_CORE_MarkA, NVTX_CBID_CORE_MarkA);
    SAME(UN_CBID_CORE_MarkW, NVTX_CBID_CORE_MarkW);
    SAME(UN_CBID_CORE_RangeStartEx, NVTX_CBID_CORE_RangeStartEx);
    SAME(UN_CBID_CORE_RangeStartA, NVTX_CBID_CORE_RangeStartA);
    SAME(UN_CBID_CORE_RangeStartW, NVTX_CBID_CORE_RangeStartW);
    SAME(UN_CBID_CORE_RangeEnd, NVTX_CBID_CORE_RangeEnd);
    SAME(UN_CBID_CORE_RangePushEx, NVTX_CBID_CORE_RangePushEx);
    SAME(UN_CBID_CORE_RangePushA, NVTX_CBID_CORE_RangePushA);
    SAME(UN_CBID_CORE_RangePushW, NVTX_CBID_CORE_RangePushW);
    SAME(UN_CBID_CORE_RangePop, NVTX_CBID_CORE_RangePop);
    SAME(UN_CBID_CORE_NameCategoryA, NVTX_CBID_CORE_NameCategoryA);
    SAME(UN_CBID_CORE_NameCategoryW, NVTX_CBID_CORE_NameCategoryW);
    SAME(UN_CBID_CORE_NameOsThreadA, NVTX_CBID_CORE_NameOsThreadA);
    SAME(UN_CBID_CORE_NameOsThreadW, NVTX_CBID_CORE_NameOsThreadW);
    SAME(UN_CBID_CORE2_DomainMarkEx, NVTX_CBID_CORE2_DomainMarkEx);
    SAME(UN_CBID_CORE2_DomainRangeStartEx, NVTX_CBID_CORE2_DomainRangeStartEx);
    SAME(UN_CBID_CORE2_DomainRangeEnd, NVTX_CBID_CORE2_DomainRangeEnd);
    SAME(UN_CBID_CORE2_DomainRangePushEx, NVTX_CBID_CORE2_DomainRangePushEx);
    SAME(UN_CBID_CORE2_DomainRangePop, NVTX_CBID_CORE2_DomainRangePop);
    SAME(UN_CBID_CORE2_DomainResourceCreate, NVTX_CBID_CORE2_DomainResourceCreate);
    SAME(UN_CBID_CORE2_DomainResourceDestroy, NVTX_CBID_CORE2_DomainResourceDestroy);
    SAME(UN_CBID_CORE2_DomainNameCategoryA, NVTX_CBID_CORE2_DomainNameCategoryA);
    SAME(UN_CBID_CORE2_DomainNameCategoryW, NVTX_CBID_CORE2_DomainNameCategoryW);
    SAME(UN_CBID_CORE2_DomainRegisterStringA, NVTX_CBID_CORE2_DomainRegisterStringA);
    SAME(UN_CBID_CORE2_DomainRegisterStringW, NVTX_CBID_CORE2_DomainRegisterStringW);
    SAME(UN_CBID_CORE2_DomainCreateA, NVTX_CBID_CORE2_DomainCreateA);
    SAME(UN_CBID_CORE2_DomainCreateW, NVTX_CBID_CORE2_DomainCreateW);
    SAME(UN_CBID_CORE2_DomainDestroy, NVTX_CBID_CORE2_DomainDestroy);
    SAME(UN_CBID_CORE2_Initialize, NVTX_CBID_CORE2_Initialize);
    SAME(UN_COLOR_ARGB, NVTX_COLOR_ARGB);
    SAME(UN_MESSAGE_TYPE_ASCII, NVTX_MESSAGE_TYPE_ASCII);
    SAME(UN_MESSAGE_TYPE_UNICODE, NVTX_MESSAGE_TYPE_UNICODE);
    SAME(UN_MESSAGE_TYPE_REGISTERED, NVTX_MESSAGE_TYPE_REGISTERED);
    SAME(UN_PAYLOAD_TYPE_UNSIGNED_INT64, NVTX_PAYLOAD_TYPE_UNSIGNED_INT64);
    SAME(UN_PAYLOAD_TYPE_INT64, NVTX_PAYLOAD_TYPE_INT64);
    SAME(UN_PAYLOAD_TYPE_DOUBLE, NVTX_PAYLOAD_TYPE_DOUBLE);
    SAME(UN_PAYLOAD_TYPE_UNSIGNED_INT32, NVTX_PAYLOAD_TYPE_UNSIGNED_INT32);
    SAME(UN_PAYLOAD_TYPE_INT32, NVTX_PAYLOAD_TYPE_INT32);
    SAME(UN_PAYLOAD_TYPE_FLOAT, NVTX_PAYLOAD_TYPE_FLOAT);
    SAME(UN_VERSION, NVTX_VERSION);
    SAME(UN_EVENT_ATTRIB_STRUCT_SIZE, NVTX_EVENT_ATTRIB_STRUCT_SIZE);
    SAME(sizeof(un_event_attributes), sizeof(nvtxEventAttributes_t));
    SAME_FIELD(un_event_attributes, version, nvtxEventAttributes_t, version);
    SAME_FIELD(un_event_attributes, size, nvtxEventAttributes_t, size);
    SAME_FIELD(un_event_attributes, category, nvtxEventAttributes_t, category);
    SAME_FIELD(un_event_attributes, color_type, nvtxEventAttributes_t, colorType);
    SAME_FIELD(un_event_attributes, color, nvtxEventAttributes_t, color);
    SAME_FIELD(un_event_attributes, payload_type, nvtxEventAttributes_t, payloadType);
    SAME_FIELD(un_event_attributes, reserved0, nvtxEventAttributes_t, reserved0);
    SAME_FIELD(un_event_attributes, payload, nvtxEventAttributes_t, payload);
    SAME_FIELD(un_event_attributes, message_type, nvtxEventAttributes_t, messageType);
    SAME_FIELD(un_event_attributes, message, nvtxEventAttributes_t, message);
    SAME(sizeof(un_export_table_callbacks), sizeof(NvtxExportTableCallbacks));
    SAME(offsetof(un_export_table_callbacks, get_module_function_table), offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable));
    SAME(sizeof(un_range_id), sizeof(nvtxRangeId_t));
    SAME(sizeof(NvtxCallbackModule), sizeof(int));
    printf("nvtx ABI: %d checks, %d failures\n", checks, failures);
    return failures == 0 && checks > 0 ? 0 : 1;
}
