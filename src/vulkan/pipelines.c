/* Compute pipelines and their names: the name a dispatch record carries is
 * its pipeline's shader entry point. */
#include "devtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pipeline_t {
    VkPipeline pipeline;
    char name[UVK_NAME_MAX];
    struct pipeline_t *next;
} pipeline_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pipeline_t *g_pipelines;

void uvk_pipeline_name(VkPipeline pipeline, char out[UVK_NAME_MAX])
{
    out[0] = '\0';
    pthread_mutex_lock(&g_lock);
    for (pipeline_t *p = g_pipelines; p != NULL; p = p->next)
        if (p->pipeline == pipeline) {
            memcpy(out, p->name, UVK_NAME_MAX);
            break;
        }
    pthread_mutex_unlock(&g_lock);
}

VkResult uvk_dt_vkCreateComputePipelines(const upti_vulkan_dispatch_t *n, VkDevice device,
                                         VkPipelineCache cache, uint32_t count,
                                         const VkComputePipelineCreateInfo *infos,
                                         const VkAllocationCallbacks *alloc, VkPipeline *pipelines)
{
    VkResult r = n->vkCreateComputePipelines(device, cache, count, infos, alloc, pipelines);
    if (r != VK_SUCCESS || !uvk_tracing)
        return r;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < count; i++) {
        pipeline_t *p = malloc(sizeof *p);
        if (p == NULL)
            break;
        p->pipeline = pipelines[i];
        snprintf(p->name, sizeof p->name, "%s", infos[i].stage.pName != NULL ? infos[i].stage.pName : "");
        p->next = g_pipelines;
        g_pipelines = p;
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

void uvk_dt_vkDestroyPipeline(const upti_vulkan_dispatch_t *n, VkDevice device, VkPipeline pipeline,
                              const VkAllocationCallbacks *alloc)
{
    if (uvk_tracing && pipeline != VK_NULL_HANDLE) {
        pthread_mutex_lock(&g_lock);
        for (pipeline_t **pp = &g_pipelines; *pp != NULL; pp = &(*pp)->next)
            if ((*pp)->pipeline == pipeline) {
                pipeline_t *dead = *pp;
                *pp = dead->next;
                free(dead);
                break;
            }
        pthread_mutex_unlock(&g_lock);
    }
    n->vkDestroyPipeline(device, pipeline, alloc);
}
