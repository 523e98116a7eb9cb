/* SPDX-License-Identifier: MIT */
/* Internal interface of libupti-opencl: shared by the generated wrappers and
 * the hand-written parts (layer.c, commands.c, objects.c, tables.c). */
#ifndef UPTI_OPENCL_LAYER_H
#define UPTI_OPENCL_LAYER_H

#include "../sdk/layer_records.h"

#include <upti/opencl.h>
#include <upti/runtime.h>
#include <upti/buffer_tracing.h>

#include <CL/cl_icd.h>
#include <stdatomic.h>

/* The next layer (or the loader's dispatch) beneath us: internal calls go here. */
extern struct _cl_icd_dispatch uocl_next;
/* The table registered with UPTI: tools may chain its entries; initially the wrappers. */
extern struct _cl_icd_dispatch uocl_registered;
/* Number of entries the generated tables fill. */
extern const unsigned uocl_num_entries;

/* UPTI's plan tables per kind; all-NULL until registration. */
extern const upti_operation_plan_t *const *uocl_api_plans;
extern const upti_operation_plan_t *const *uocl_kernel_plans;
extern const upti_operation_plan_t *const *uocl_copy_plans;
extern const upti_operation_plan_t *const *uocl_alloc_plans;
extern const upti_operation_plan_t *const *uocl_code_plans;

/* 1 once a tool is present: queues are then created with profiling on. */
extern int uocl_tools_present;

void uocl_fill_tables(struct _cl_icd_dispatch *wrappers, struct _cl_icd_dispatch *trampolines);

/* Registers with UPTI once, on the first call of a REGISTER_FIRST entry. */
void uocl_register_slow(void);
extern _Atomic int uocl_reg_state; /* 0 not yet, 1 in progress, 2 done */
static inline void uocl_ensure_registered(void)
{
    if (__builtin_expect(atomic_load_explicit(&uocl_reg_state, memory_order_acquire) == 2, 1))
        return;
    uocl_register_slow();
}

/* --- devices (layer.c) --- */
typedef struct uocl_device_t {
    cl_device_id id;
    upti_agent_id_t agent;
    _Atomic int clock_state;   /* 0 unknown, 1 calibrated */
    int64_t clock_offset;      /* ns added to device times to get UPTI's clock */
} uocl_device_t;
/* The device's entry, or NULL for a device unknown at registration (sub-devices). */
uocl_device_t *uocl_device_find(cl_device_id id);
/* The device of an agent (records carry agents), or NULL; asks the runtime nothing. */
uocl_device_t *uocl_device_of_agent(upti_agent_id_t agent);

/* --- object tables (tables.c): pointer-keyed, lock-free reads --- */
typedef struct uocl_queue_info_t {
    cl_context context;
    cl_device_id device;
    uocl_device_t *dev;
    cl_command_queue_properties app_properties; /* what the application asked for */
    int forced_profiling;                       /* UPTI turned profiling on */
    int app_list;                               /* uocl_app_list_t: how to undo it in the list */
} uocl_queue_info_t;

/* What UPTI did to the property list of a queue it turned profiling on for
 * (clCreateCommandQueueWithProperties), so that CL_QUEUE_PROPERTIES_ARRAY
 * reads back the program's own list. */
typedef enum {
    UOCL_LIST_AS_MADE = 0, /* the runtime's list is the program's (1.x entry, or not forced) */
    UOCL_LIST_NULL,        /* the program passed NULL: no list at all */
    UOCL_LIST_ADDED,       /* UPTI appended the CL_QUEUE_PROPERTIES pair */
    UOCL_LIST_CHANGED      /* UPTI ORed profiling into the program's CL_QUEUE_PROPERTIES */
} uocl_app_list_t;

void uocl_queue_put(cl_command_queue q, const uocl_queue_info_t *info);
/* Copies the queue's info into *out; 0 if unknown. */
int uocl_queue_get(cl_command_queue q, uocl_queue_info_t *out);
/* Learns an unknown queue from the runtime (queues made before registration). */
int uocl_queue_lookup(cl_command_queue q, uocl_queue_info_t *out);

void uocl_kernel_put(cl_kernel k, cl_program program, const char *name);
/* Interned name and program of a kernel (queried and cached if unknown). */
const char *uocl_kernel_name(cl_kernel k, cl_program *program);
/* Returns a copy of s that lives as long as the process (one per distinct text). */
const char *uocl_intern(const char *s);

/* --- device commands (commands.c) --- */
typedef struct uocl_cmd_t uocl_cmd_t;
/*
 * Starts tracking a command about to be enqueued. *event is the event
 * pointer passed down: replaced with an internal one if the application
 * passed NULL. Returns NULL if the command cannot be tracked.
 */
uocl_cmd_t *uocl_cmd_begin(const upti_runtime_call_t *call, upti_tracing_kind_t kind, uint32_t op,
                           cl_command_queue queue, cl_event **event);
void uocl_cmd_kernel(uocl_cmd_t *c, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                     const size_t *global, const size_t *local);
void uocl_cmd_copy(uocl_cmd_t *c, upti_memory_direction_t direction, uint64_t bytes);
/* Finishes the enqueue: status is what the runtime returned. */
void uocl_cmd_end(uocl_cmd_t *c, cl_int status);

uint64_t uocl_image_bytes(cl_mem image, const size_t *region);
uint64_t uocl_mems_bytes(cl_uint n, const cl_mem *mems);
uint64_t uocl_sizes_bytes(cl_uint n, const size_t *sizes);

/* Reaps the queue's finished commands (q NULL: all) and emits what completed. */
void uocl_commands_sync(cl_command_queue q);
/* How many references UPTI holds on an application's event. */
cl_uint uocl_commands_event_holds(cl_event event);
/* Waits (bounded) for every pending command and emits all records: at exit. */
void uocl_commands_drain_all(void);
/** Stops the completion thread (at exit, after the final drain); waits at most 200 ms. */
void uocl_commands_stop_thread(void);

/* --- extension functions (layer.c) --- */
/* What clGetExtensionFunctionAddress* hands the program for name, given what
   the layers beneath returned: a dispatch slot's trampoline when the pointer
   would bypass the layers (it is the vendor's), else found unchanged. */
void *uocl_extension_function(const char *name, void *found);

#endif
