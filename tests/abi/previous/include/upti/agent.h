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
} upti_agent_t;

/** Receives all agents at once; agents[i] valid only during the call. */
typedef upti_status_t (*upti_query_available_agents_cb_t)(const upti_agent_t **agents,
                                                          size_t num_agents, void *data);

/**
 * Lists the agents known now: one CPU agent per NUMA node, then the devices
 * each registered runtime added. Never calls into a runtime.
 */
UPTI_API upti_status_t upti_query_available_agents(upti_query_available_agents_cb_t callback,
                                                   void *data);

UPTI_EXTERN_C_END

#endif
