/* SPDX-License-Identifier: MIT */
/* Shader modules, compute pipelines and object names: the names dispatch
 * records carry, and CODE_OBJECT records.
 *
 * Object names (vkSetDebugUtilsObjectNameEXT) are kept for pipelines, shader
 * modules and command buffers (submissions.c makes a named command buffer's
 * executions marker ranges). A shader module is named by the object name the program gave it
 * (vkSetDebugUtilsObjectNameEXT), else by the source file its SPIR-V names
 * (OpSource, spirv.c). A compute pipeline is named by its object name, else
 * "MODULE:ENTRY" (its stage's module and entry point), else "ENTRY@HASH" (its
 * module's content hash, 8 hex digits: shaders compiled at run time, without
 * OpSource, still get a name of their own, the same in every run), else ENTRY
 * alone (a module the layer could not read).
 *
 * CODE_OBJECT: vkCreateShaderModule / vkDestroyShaderModule are LOAD records
 * (phase LOAD / UNLOAD; code_object_id = the VkShaderModule, name = the
 * module's name, else its entry points joined by ';');
 * vkCreateComputePipelines / vkDestroyPipeline are KERNEL_SYMBOL records
 * (kernel_id = the VkPipeline, code_object_id = its module, name = the
 * pipeline's name).
 */
#include "subscribers.h"
#include "spirv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const upti_operation_plan_t *const *uvk_code_plans;

typedef struct module_t {
    VkShaderModule module;
    uvk_spirv_names_t names;
} module_t;

typedef struct pipeline_t {
    VkPipeline pipeline;
    VkShaderModule module;
    char module_name[UVK_NAME_MAX]; /* at creation: object name or SPIR-V file */
    char entry[UVK_SPIRV_NAME_MAX];
    uint32_t module_hash;           /* uvk_spirv_hash of its module; 0 if unknown */
    char name[UVK_NAME_MAX];        /* pipeline_name's, kept: read at every vkCmdBindPipeline */
    size_t name_len;
} pipeline_t;

typedef struct object_name_t {
    char name[UVK_NAME_MAX];
} object_name_t;

/* Guards the maps below (by handle). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uvk_handle_map_t g_modules;   /* module_t */
static uvk_handle_map_t g_pipelines; /* pipeline_t */
/* Object names of pipelines, shader modules and command buffers (object_name_t). */
static uvk_handle_map_t g_names[3];
static size_t g_nnames; /* names held (read without the lock only to skip it when 0) */

/* --- object names (under g_lock) --- */

/* The map of names of objects of type; NULL for a type whose names are not kept. */
static uvk_handle_map_t *names_of(VkObjectType type)
{
    switch (type) {
    case VK_OBJECT_TYPE_PIPELINE: return &g_names[0];
    case VK_OBJECT_TYPE_SHADER_MODULE: return &g_names[1];
    case VK_OBJECT_TYPE_COMMAND_BUFFER: return &g_names[2];
    default: return NULL;
    }
}

static object_name_t *name_find(VkObjectType type, uint64_t handle)
{
    uvk_handle_map_t *m = names_of(type);
    return m != NULL ? uvk_handle_map_get(m, handle) : NULL;
}

static void name_forget(VkObjectType type, uint64_t handle)
{
    uvk_handle_map_t *m = names_of(type);
    object_name_t *dead = m != NULL ? uvk_handle_map_remove(m, handle) : NULL;
    if (dead != NULL) {
        free(dead);
        UVK_STORE(g_nnames, g_nnames - 1);
    }
}

void uvk_object_name_forget(VkObjectType type, uint64_t handle)
{
    if (UVK_LOAD(g_nnames) == 0)
        return;
    pthread_mutex_lock(&g_lock);
    name_forget(type, handle);
    pthread_mutex_unlock(&g_lock);
}

int uvk_object_name(VkObjectType type, uint64_t handle, char out[UVK_NAME_MAX])
{
    if (UVK_LOAD(g_nnames) == 0)
        return 0;
    pthread_mutex_lock(&g_lock);
    object_name_t *o = name_find(type, handle);
    if (o != NULL)
        memcpy(out, o->name, UVK_NAME_MAX);
    pthread_mutex_unlock(&g_lock);
    return o != NULL;
}

static void pipeline_name(pipeline_t *p);

VkResult uvk_dt_vkSetDebugUtilsObjectNameEXT(const upti_vulkan_dispatch_t *n, VkDevice device,
                                             const VkDebugUtilsObjectNameInfoEXT *info)
{
    VkResult r = n->vkSetDebugUtilsObjectNameEXT(device, info);
    /* Only the names records use: programs may name every object they make. */
    if (r != VK_SUCCESS || !uvk_tracing || info == NULL ||
        (info->objectType != VK_OBJECT_TYPE_PIPELINE && info->objectType != VK_OBJECT_TYPE_SHADER_MODULE &&
         info->objectType != VK_OBJECT_TYPE_COMMAND_BUFFER))
        return r;
    pthread_mutex_lock(&g_lock);
    name_forget(info->objectType, info->objectHandle);
    object_name_t *o;
    if (info->pObjectName != NULL && info->pObjectName[0] != '\0' && (o = malloc(sizeof *o)) != NULL) {
        snprintf(o->name, sizeof o->name, "%s", info->pObjectName);
        if (uvk_handle_map_put(names_of(info->objectType), info->objectHandle, o) == 0)
            UVK_STORE(g_nnames, g_nnames + 1);
        else
            free(o);
    }
    pipeline_t *p = info->objectType == VK_OBJECT_TYPE_PIPELINE ? uvk_handle_map_get(&g_pipelines, info->objectHandle)
                                                                 : NULL;
    if (p != NULL)
        pipeline_name(p); /* recordings from now on carry the new name */
    pthread_mutex_unlock(&g_lock);
    return r;
}

/* --- CODE_OBJECT records --- */

static void emit_code_object(uint32_t op, upti_callback_phase_t phase, VkDevice device, uint64_t module,
                             uint64_t pipeline, const char *name)
{
    upti_callback_domain_t domain = phase == UPTI_CALLBACK_PHASE_LOAD ? UPTI_CB_DOMAIN_DRIVER_MODULE_LOADED
                                                                     : UPTI_CB_DOMAIN_DRIVER_MODULE_UNLOADED;
    uint32_t api_id = op == UPTI_CODE_OBJECT_KERNEL_SYMBOL
                          ? (phase == UPTI_CALLBACK_PHASE_LOAD ? UPTI_VULKAN_API_vkCreateComputePipelines
                                                               : UPTI_VULKAN_API_vkDestroyPipeline)
                          : (phase == UPTI_CALLBACK_PHASE_LOAD ? UPTI_VULKAN_API_vkCreateShaderModule
                                                               : UPTI_VULKAN_API_vkDestroyShaderModule);
    if (uvk_sub_wants(domain))
        uvk_sub_module(domain, api_id, op, device, op == UPTI_CODE_OBJECT_KERNEL_SYMBOL ? pipeline : module, name);
    if (uvk_code_plans == NULL || upti_runtime_plan(uvk_code_plans, op) == NULL)
        return;
    upti_buffer_tracing_code_object_record_t r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    r.timestamp = uvk_now();
    r.phase = phase;
    r.runtime_context = (uint64_t)(uintptr_t)device;
    r.code_object_id = module;
    r.kernel_id = pipeline;
    r.name = name;
    uvk_emit(UPTI_TRACING_KIND_CODE_OBJECT, op, phase, NULL, &r,
             offsetof(upti_buffer_tracing_code_object_record_t, name));
}

/* The module's name: its object name, else its SPIR-V file, else its entry points (joined: 1). Under g_lock. */
static void module_name(const module_t *m, int joined, char out[UVK_NAME_MAX])
{
    out[0] = '\0';
    object_name_t *o = name_find(VK_OBJECT_TYPE_SHADER_MODULE, (uint64_t)m->module);
    if (o != NULL) {
        memcpy(out, o->name, UVK_NAME_MAX);
    } else if (m->names.file[0] != '\0') {
        snprintf(out, UVK_NAME_MAX, "%s", m->names.file);
    } else if (joined) {
        size_t len = 0;
        for (uint32_t i = 0; i < m->names.num_entries && len + 1 < UVK_NAME_MAX; i++)
            len += (size_t)snprintf(out + len, UVK_NAME_MAX - len, "%s%s", i ? ";" : "", m->names.entries[i]);
    }
}

/* What the layer knew of a module or pipeline the program destroys. */
typedef struct destroyed_t {
    void *state;             /* its module_t or pipeline_t, taken out of its map; NULL if none */
    uint64_t module;         /* the module, or the pipeline's */
    char name[UVK_NAME_MAX]; /* the name its records had */
} destroyed_t;

/* Takes what the layer keeps of handle, a VkShaderModule or VkPipeline
   (type), out of its map, and forgets its object name. */
static destroyed_t take_destroyed(VkObjectType type, uint64_t handle)
{
    destroyed_t gone = {NULL, handle, ""};
    if (!uvk_tracing || handle == 0)
        return gone;
    pthread_mutex_lock(&g_lock);
    if (type == VK_OBJECT_TYPE_PIPELINE) {
        pipeline_t *p = uvk_handle_map_remove(&g_pipelines, handle);
        if (p != NULL) {
            memcpy(gone.name, p->name, UVK_NAME_MAX);
            gone.module = (uint64_t)p->module;
        }
        gone.state = p;
    } else {
        module_t *m = uvk_handle_map_remove(&g_modules, handle);
        if (m != NULL)
            module_name(m, 1, gone.name);
        gone.state = m;
    }
    name_forget(type, handle);
    pthread_mutex_unlock(&g_lock);
    return gone;
}

/* The UNLOAD record (op) of what take_destroyed found, if anything, which it frees. */
static void emit_destroyed(destroyed_t *gone, uint32_t op, VkDevice device, uint64_t pipeline)
{
    if (gone->state != NULL)
        emit_code_object(op, UPTI_CALLBACK_PHASE_UNLOAD, device, gone->module, pipeline, gone->name);
    free(gone->state);
}

/* --- shader modules --- */

VkResult uvk_dt_vkCreateShaderModule(const upti_vulkan_dispatch_t *n, VkDevice device,
                                     const VkShaderModuleCreateInfo *info, const VkAllocationCallbacks *alloc,
                                     VkShaderModule *module)
{
    VkResult r = n->vkCreateShaderModule(device, info, alloc, module);
    module_t *m = uvk_created(r, sizeof *m);
    if (m == NULL)
        return r;
    m->module = *module;
    uvk_spirv_names(info->pCode, info->codeSize, &m->names);
    char name[UVK_NAME_MAX];
    pthread_mutex_lock(&g_lock);
    if (uvk_handle_map_put(&g_modules, (uint64_t)m->module, m) != 0) {
        pthread_mutex_unlock(&g_lock);
        free(m);
        return r;
    }
    module_name(m, 1, name);
    pthread_mutex_unlock(&g_lock);
    emit_code_object(UPTI_CODE_OBJECT_LOAD, UPTI_CALLBACK_PHASE_LOAD, device, (uint64_t)*module, 0, name);
    return r;
}

void uvk_dt_vkDestroyShaderModule(const upti_vulkan_dispatch_t *n, VkDevice device, VkShaderModule module,
                                  const VkAllocationCallbacks *alloc)
{
    destroyed_t gone = take_destroyed(VK_OBJECT_TYPE_SHADER_MODULE, (uint64_t)module);
    n->vkDestroyShaderModule(device, module, alloc);
    emit_destroyed(&gone, UPTI_CODE_OBJECT_LOAD, device, 0);
}

/* --- pipelines --- */

/* Sets p's name (under g_lock). */
static void pipeline_name(pipeline_t *p)
{
    object_name_t *o = name_find(VK_OBJECT_TYPE_PIPELINE, (uint64_t)p->pipeline);
    if (o != NULL)
        memcpy(p->name, o->name, UVK_NAME_MAX);
    else if (p->module_name[0] != '\0')
        snprintf(p->name, UVK_NAME_MAX, "%.63s:%.63s", p->module_name, p->entry);
    else if (p->module_hash != 0)
        snprintf(p->name, UVK_NAME_MAX, "%.63s@%08x", p->entry, (unsigned)p->module_hash);
    else
        snprintf(p->name, UVK_NAME_MAX, "%s", p->entry);
    p->name_len = strnlen(p->name, UVK_NAME_MAX - 1);
    p->name[p->name_len] = '\0';
}

size_t uvk_pipeline_name(VkPipeline pipeline, char out[UVK_NAME_MAX])
{
    size_t len = 0;
    pthread_mutex_lock(&g_lock);
    const pipeline_t *p = uvk_handle_map_get(&g_pipelines, (uint64_t)pipeline);
    if (p != NULL) {
        len = p->name_len;
        memcpy(out, p->name, len + 1);
    }
    pthread_mutex_unlock(&g_lock);
    out[len] = '\0';
    return len;
}

/* The module a stage runs: its VkShaderModule, or one chained in its pNext
   (VK_KHR_maintenance5), read on the spot. Under g_lock. */
static void stage_module(const VkPipelineShaderStageCreateInfo *stage, pipeline_t *p)
{
    p->module = stage->module;
    p->module_name[0] = '\0';
    p->module_hash = 0;
    const module_t *m = uvk_handle_map_get(&g_modules, (uint64_t)stage->module);
    if (m != NULL) {
        module_name(m, 0, p->module_name);
        p->module_hash = m->names.hash;
        return;
    }
    for (const VkBaseInStructure *s = stage->pNext; s != NULL; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO) {
            const VkShaderModuleCreateInfo *ci = (const VkShaderModuleCreateInfo *)(const void *)s;
            uvk_spirv_names_t names;
            if (uvk_spirv_names(ci->pCode, ci->codeSize, &names) == 0) {
                snprintf(p->module_name, sizeof p->module_name, "%s", names.file);
                p->module_hash = names.hash;
            }
            return;
        }
}

VkResult uvk_dt_vkCreateComputePipelines(const upti_vulkan_dispatch_t *n, VkDevice device,
                                         VkPipelineCache cache, uint32_t count,
                                         const VkComputePipelineCreateInfo *infos,
                                         const VkAllocationCallbacks *alloc, VkPipeline *pipelines)
{
    VkResult r = n->vkCreateComputePipelines(device, cache, count, infos, alloc, pipelines);
    if (r != VK_SUCCESS || !uvk_tracing)
        return r;
    for (uint32_t i = 0; i < count; i++) {
        pipeline_t *p = malloc(sizeof *p);
        if (p == NULL)
            break;
        char name[UVK_NAME_MAX];
        p->pipeline = pipelines[i];
        snprintf(p->entry, sizeof p->entry, "%s", infos[i].stage.pName != NULL ? infos[i].stage.pName : "");
        pthread_mutex_lock(&g_lock);
        stage_module(&infos[i].stage, p);
        pipeline_name(p);
        memcpy(name, p->name, UVK_NAME_MAX);
        int kept = uvk_handle_map_put(&g_pipelines, (uint64_t)p->pipeline, p) == 0;
        pthread_mutex_unlock(&g_lock);
        if (!kept)
            free(p); /* its dispatches go unnamed */
        emit_code_object(UPTI_CODE_OBJECT_KERNEL_SYMBOL, UPTI_CALLBACK_PHASE_LOAD, device,
                         (uint64_t)infos[i].stage.module, (uint64_t)pipelines[i], name);
    }
    return r;
}

void uvk_dt_vkDestroyPipeline(const upti_vulkan_dispatch_t *n, VkDevice device, VkPipeline pipeline,
                              const VkAllocationCallbacks *alloc)
{
    destroyed_t gone = take_destroyed(VK_OBJECT_TYPE_PIPELINE, (uint64_t)pipeline);
    n->vkDestroyPipeline(device, pipeline, alloc);
    emit_destroyed(&gone, UPTI_CODE_OBJECT_KERNEL_SYMBOL, device, (uint64_t)pipeline);
}
