/* SPDX-License-Identifier: MIT */
/* The part of the NVTX v3 injection ABI that libupti-nvtx.so implements,
 * declared here so that the library builds without the CUDA toolkit.
 *
 * NVTX (the header-only library in an instrumented program) loads the shared
 * object named by NVTX_INJECTION64_PATH and calls its exported
 *     int InitializeInjectionNvtx2(un_get_export_table_fn get_export_table);
 * once per module that includes the NVTX headers. The injection asks
 * get_export_table(UN_ETID_CALLBACKS) for the callbacks table, then, for
 * each callback module it implements, asks for that module's function table
 * and stores its own functions in the slots (indexed by the callback ids
 * below). It returns 1 on success, 0 to be left alone.
 *
 * Names are UPTI's own (un_*); values, layouts and calling conventions are
 * those of the documented ABI (NVTX v3, nvToolsExt.h and nvtxTypes.h), and
 * tests/integration/nvtx/check_abi.c compares them with the NVTX headers
 * wherever those are installed.
 */
#ifndef UPTI_NVTX_INJECTION_H
#define UPTI_NVTX_INJECTION_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/** The export table ids of NVTX's get_export_table(). */
enum { UN_ETID_CALLBACKS = 1 };

/** Callback modules (NvtxCallbackModule): the groups of function slots. */
enum { UN_CB_MODULE_CORE = 1, UN_CB_MODULE_CORE2 = 5 };

/** Slots of the CORE module (NvtxCallbackIdCore). */
enum un_cbid_core {
    UN_CBID_CORE_MarkEx = 1,
    UN_CBID_CORE_MarkA = 2,
    UN_CBID_CORE_MarkW = 3,
    UN_CBID_CORE_RangeStartEx = 4,
    UN_CBID_CORE_RangeStartA = 5,
    UN_CBID_CORE_RangeStartW = 6,
    UN_CBID_CORE_RangeEnd = 7,
    UN_CBID_CORE_RangePushEx = 8,
    UN_CBID_CORE_RangePushA = 9,
    UN_CBID_CORE_RangePushW = 10,
    UN_CBID_CORE_RangePop = 11,
    UN_CBID_CORE_NameCategoryA = 12,
    UN_CBID_CORE_NameCategoryW = 13,
    UN_CBID_CORE_NameOsThreadA = 14,
    UN_CBID_CORE_NameOsThreadW = 15,
};

/** Slots of the CORE2 module: domains, registered strings, resources (NvtxCallbackIdCore2). */
enum un_cbid_core2 {
    UN_CBID_CORE2_DomainMarkEx = 1,
    UN_CBID_CORE2_DomainRangeStartEx = 2,
    UN_CBID_CORE2_DomainRangeEnd = 3,
    UN_CBID_CORE2_DomainRangePushEx = 4,
    UN_CBID_CORE2_DomainRangePop = 5,
    UN_CBID_CORE2_DomainResourceCreate = 6,
    UN_CBID_CORE2_DomainResourceDestroy = 7,
    UN_CBID_CORE2_DomainNameCategoryA = 8,
    UN_CBID_CORE2_DomainNameCategoryW = 9,
    UN_CBID_CORE2_DomainRegisterStringA = 10,
    UN_CBID_CORE2_DomainRegisterStringW = 11,
    UN_CBID_CORE2_DomainCreateA = 12,
    UN_CBID_CORE2_DomainCreateW = 13,
    UN_CBID_CORE2_DomainDestroy = 14,
    UN_CBID_CORE2_Initialize = 15,
};

/** A slot's value: a function pointer, cast to the slot's real type when stored. */
typedef void (*un_function)(void);
/** A module's table: an array of pointers to the slots (NvtxFunctionTable). */
typedef un_function **un_function_table;

/** get_export_table(id): the table with that id, or NULL (NvtxGetExportTableFunc_t). */
typedef const void *(*un_get_export_table_fn)(uint32_t export_table_id);

/** The callbacks export table (NvtxExportTableCallbacks). */
typedef struct un_export_table_callbacks {
    size_t struct_size; /**< sizeof the table as the program's NVTX knows it */
    /** The module's table and its number of slots; returns nonzero on success. */
    int (*get_module_function_table)(int callback_module, un_function_table *out_table,
                                     unsigned int *out_size);
} un_export_table_callbacks;

/** Opaque handles the injection hands out (domains, registered strings, resources). */
typedef struct un_domain *un_domain_handle;
typedef struct un_string *un_string_handle;
typedef struct un_resource *un_resource_handle;
/** A start/end range id (nvtxRangeId_t). */
typedef uint64_t un_range_id;

/** colorType values. */
enum { UN_COLOR_ARGB = 1 };
/** messageType values. */
enum { UN_MESSAGE_TYPE_ASCII = 1, UN_MESSAGE_TYPE_UNICODE = 2, UN_MESSAGE_TYPE_REGISTERED = 3 };
/** payloadType values (what the database's payload_type column holds). */
enum {
    UN_PAYLOAD_TYPE_UNSIGNED_INT64 = 1,
    UN_PAYLOAD_TYPE_INT64 = 2,
    UN_PAYLOAD_TYPE_DOUBLE = 3,
    UN_PAYLOAD_TYPE_UNSIGNED_INT32 = 4,
    UN_PAYLOAD_TYPE_INT32 = 5,
    UN_PAYLOAD_TYPE_FLOAT = 6,
};
/** The version of the event attribute structure this library reads. */
#define UN_VERSION 3

/** An event's attributes (nvtxEventAttributes_t, version 2 layout). Fields
 * are read only when size covers them. */
typedef struct un_event_attributes {
    uint16_t version;
    uint16_t size; /**< sizeof the structure as the program knows it */
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type;
    int32_t reserved0;
    union {
        uint64_t u64;
        int64_t i64;
        double d;
        uint32_t u32;
        int32_t i32;
        float f;
    } payload;
    int32_t message_type;
    union {
        const char *ascii;
        const wchar_t *unicode;
        un_string_handle registered;
    } message;
} un_event_attributes;

/** The size a program sets in un_event_attributes.size. */
#define UN_EVENT_ATTRIB_STRUCT_SIZE ((uint16_t)sizeof(un_event_attributes))

#endif
