/* SPDX-License-Identifier: MIT */
/* UPTI — agents: the host CPUs and the devices runtimes report. */
#ifndef UPTI_AGENT_H
#define UPTI_AGENT_H

#include <upti/types.h>

UPTI_EXTERN_C_BEGIN

typedef enum upti_agent_type_t {
    UPTI_AGENT_TYPE_NONE = 0,
    UPTI_AGENT_TYPE_CPU,
    UPTI_AGENT_TYPE_GPU,
    UPTI_AGENT_TYPE_ACCELERATOR,
    UPTI_AGENT_TYPE_LAST
} upti_agent_type_t;

/** One agent. Strings live as long as the process. */
typedef struct upti_agent_t {
    size_t size;
    upti_agent_id_t id;            /**< unique, never 0 */
    upti_agent_type_t type;
    const char *runtime;           /**< "host", "opencl", … */
    const char *name;              /**< e.g. the CPU model or CL_DEVICE_NAME */
    const char *vendor;
    const char *driver_version;
    uint32_t compute_units;        /**< CPU: logical processors of the node */
    uint64_t global_memory_bytes;
    uint64_t runtime_handle;       /**< the runtime's device handle (cl_device_id), 0 for host */
    uint32_t node_id;              /**< index among agents of the same runtime */
    uint32_t reserved0;            /**< must be zero: what was tail padding */
} upti_agent_t;

/** Receives all agents at once; agents[i] valid only during the call. Its
 *  return value is ignored (UPTI_STATUS_SUCCESS is what to return). */
typedef upti_status_t (*upti_query_available_agents_cb_t)(const upti_agent_t **agents,
                                                          size_t num_agents, void *data);

/**
 * Lists the agents known now: one CPU agent per NUMA node, then the devices
 * each registered runtime added. Never calls into a runtime. Thread-safe.
 * Returns UPTI_STATUS_SUCCESS once callback has run (whatever it returned),
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT if callback is NULL,
 * UPTI_STATUS_ERROR_OUT_OF_RESOURCES if memory is short (callback not called).
 */
UPTI_API upti_status_t upti_query_available_agents(upti_query_available_agents_cb_t callback,
                                                   void *data);

/** Receives one fact a runtime reported; key and value valid only during the call. */
typedef void (*upti_query_runtime_metadata_cb_t)(const char *key, const char *value, void *data);

/**
 * Calls callback once per fact the runtime integrations reported about the
 * trace (upti_runtime_set_metadata in <upti/runtime.h>; e.g. the Vulkan
 * layer's "vulkan.calibration_max_deviation_ns"), with its latest value, in
 * the order the keys first appeared. Thread-safe; never calls into a runtime.
 * UPTI_STATUS_ERROR_INVALID_ARGUMENT if callback is NULL.
 */
UPTI_API upti_status_t upti_query_runtime_metadata(upti_query_runtime_metadata_cb_t callback, void *data);

UPTI_EXTERN_C_END

#endif
