/* SPDX-License-Identifier: MIT */
/* Shared set-up of the Vulkan test programs (plain Vulkan, no UPTI): the
 * first CPU device (lavapipe), its compute queue family, buffers, a compute
 * pipeline over storage buffers, one-shot submissions. Every failure exits
 * 2 with a message; no device exits 77. */
#ifndef VK_COMMON_H
#define VK_COMMON_H

#include <vulkan/vulkan.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VKC_CHECK(call)                                                                        \
    do {                                                                                       \
        VkResult r_ = (call);                                                                  \
        if (r_ != VK_SUCCESS) {                                                                \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)r_);     \
            exit(2);                                                                           \
        }                                                                                      \
    } while (0)

typedef struct vkc_t {
    VkInstance instance;
    VkPhysicalDevice phys;
    uint32_t family; /* a compute queue family */
} vkc_t;

typedef struct vkc_buffer_t {
    VkBuffer buffer;
    VkDeviceMemory memory;
} vkc_buffer_t;

typedef struct vkc_pipeline_t {
    VkShaderModule module;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkDescriptorPool pool;
    VkDescriptorSet set;
} vkc_pipeline_t;

#define VKC_HOST (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)

/* The instance (Vulkan api_version, with the instance extension named extension unless NULL) and the
   first CPU device (else the first device); exits 77 without one. */
static inline void vkc_init_extension(vkc_t *c, const char *app_name, uint32_t api_version, const char *extension)
{
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = app_name,
                             .apiVersion = api_version};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app,
                                .enabledExtensionCount = extension != NULL ? 1 : 0,
                                .ppEnabledExtensionNames = &extension};
    VkResult r = vkCreateInstance(&ici, NULL, &c->instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
        fprintf(stderr, "%s: no Vulkan driver\n", app_name);
        exit(77);
    }
    VKC_CHECK(r);
    uint32_t n = 16;
    VkPhysicalDevice devs[16];
    r = vkEnumeratePhysicalDevices(c->instance, &n, devs);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
        fprintf(stderr, "%s: no Vulkan device\n", app_name);
        exit(77);
    }
    c->phys = devs[0];
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(devs[i], &props);
        if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
            c->phys = devs[i];
            break;
        }
    }
    uint32_t nf = 16;
    VkQueueFamilyProperties fams[16];
    vkGetPhysicalDeviceQueueFamilyProperties(c->phys, &nf, fams);
    for (c->family = 0; c->family < nf; c->family++)
        if (fams[c->family].queueFlags & VK_QUEUE_COMPUTE_BIT)
            return;
    fprintf(stderr, "%s: no compute queue family\n", app_name);
    exit(2);
}

/* vkc_init_extension without an extension. */
static inline void vkc_init_version(vkc_t *c, const char *app_name, uint32_t api_version)
{
    vkc_init_extension(c, app_name, api_version, NULL);
}

/* vkc_init_version for Vulkan 1.1. */
static inline void vkc_init(vkc_t *c, const char *app_name)
{
    vkc_init_version(c, app_name, VK_API_VERSION_1_1);
}

/* A device with one queue of the compute family. */
static inline VkDevice vkc_device(const vkc_t *c, VkQueue *queue)
{
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = c->family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &priority};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci};
    VkDevice dev;
    VKC_CHECK(vkCreateDevice(c->phys, &dci, NULL, &dev));
    vkGetDeviceQueue(dev, c->family, 0, queue);
    return dev;
}

static inline uint32_t vkc_memory_type(const vkc_t *c, uint32_t bits, VkMemoryPropertyFlags want)
{
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(c->phys, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
            return i;
    fprintf(stderr, "no memory type\n");
    exit(2);
}

/* Memory for what req describes, of a type with the properties want. */
static inline VkDeviceMemory vkc_allocate(const vkc_t *c, VkDevice dev, const VkMemoryRequirements *req,
                                          VkMemoryPropertyFlags want)
{
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req->size,
                                .memoryTypeIndex = vkc_memory_type(c, req->memoryTypeBits, want)};
    VkDeviceMemory memory;
    VKC_CHECK(vkAllocateMemory(dev, &mai, NULL, &memory));
    return memory;
}

static inline vkc_buffer_t vkc_buffer(const vkc_t *c, VkDevice dev, VkDeviceSize size, VkBufferUsageFlags usage,
                                      VkMemoryPropertyFlags want)
{
    vkc_buffer_t b;
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = size,
                              .usage = usage,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VKC_CHECK(vkCreateBuffer(dev, &bci, NULL, &b.buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, b.buffer, &req);
    b.memory = vkc_allocate(c, dev, &req, want);
    VKC_CHECK(vkBindBufferMemory(dev, b.buffer, b.memory, 0));
    return b;
}

static inline void vkc_free_buffer(VkDevice dev, vkc_buffer_t *b)
{
    vkDestroyBuffer(dev, b->buffer, NULL);
    vkFreeMemory(dev, b->memory, NULL);
}

/* A compute pipeline of spv over n storage buffers (bindings 0..n-1) and push_bytes of push constants. */
static inline void vkc_pipeline(VkDevice dev, const uint32_t *spv, size_t spv_bytes, uint32_t n,
                                const VkBuffer *buffers, uint32_t push_bytes, vkc_pipeline_t *p)
{
    VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                     .codeSize = spv_bytes,
                                     .pCode = spv};
    VKC_CHECK(vkCreateShaderModule(dev, &smci, NULL, &p->module));
    VkDescriptorSetLayoutBinding bindings[8];
    VkDescriptorBufferInfo infos[8];
    VkWriteDescriptorSet writes[8];
    for (uint32_t i = 0; i < n && i < 8; i++) {
        bindings[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                                     .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                     .descriptorCount = 1,
                                                     .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
        infos[i] = (VkDescriptorBufferInfo){buffers[i], 0, VK_WHOLE_SIZE};
    }
    VkDescriptorSetLayoutCreateInfo dslci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                             .bindingCount = n,
                                             .pBindings = bindings};
    VKC_CHECK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &p->dsl));
    VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = push_bytes};
    VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                       .setLayoutCount = 1,
                                       .pSetLayouts = &p->dsl,
                                       .pushConstantRangeCount = push_bytes ? 1 : 0,
                                       .pPushConstantRanges = &pcr};
    VKC_CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &p->layout));
    VkComputePipelineCreateInfo cpci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = p->module,
                  .pName = "main"},
        .layout = p->layout};
    VKC_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &p->pipeline));
    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = n};
    VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = 1,
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &ps};
    VKC_CHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &p->pool));
    VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                        .descriptorPool = p->pool,
                                        .descriptorSetCount = 1,
                                        .pSetLayouts = &p->dsl};
    VKC_CHECK(vkAllocateDescriptorSets(dev, &dsai, &p->set));
    for (uint32_t i = 0; i < n && i < 8; i++)
        writes[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                           .dstSet = p->set,
                                           .dstBinding = i,
                                           .descriptorCount = 1,
                                           .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                           .pBufferInfo = &infos[i]};
    vkUpdateDescriptorSets(dev, n, writes, 0, NULL);
}

static inline void vkc_destroy_pipeline(VkDevice dev, vkc_pipeline_t *p)
{
    vkDestroyDescriptorPool(dev, p->pool, NULL);
    vkDestroyPipeline(dev, p->pipeline, NULL);
    vkDestroyPipelineLayout(dev, p->layout, NULL);
    vkDestroyDescriptorSetLayout(dev, p->dsl, NULL);
    vkDestroyShaderModule(dev, p->module, NULL);
}

/* A primary command buffer of pool, begun. */
static inline VkCommandBuffer vkc_begin_in(VkDevice dev, VkCommandPool pool)
{
    VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = pool,
                                        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = 1};
    VkCommandBuffer cb;
    VKC_CHECK(vkAllocateCommandBuffers(dev, &cbai, &cb));
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VKC_CHECK(vkBeginCommandBuffer(cb, &begin));
    return cb;
}

/* A command pool of the compute family and one primary command buffer, begun. */
static inline VkCommandBuffer vkc_begin(const vkc_t *c, VkDevice dev, VkCommandPool *pool)
{
    VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = c->family};
    VKC_CHECK(vkCreateCommandPool(dev, &cpci, NULL, pool));
    return vkc_begin_in(dev, *pool);
}

/* Submits cb and waits for it with fence (reset afterwards). */
static inline void vkc_submit_wait(VkDevice dev, VkQueue queue, VkCommandBuffer cb, VkFence fence)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    VKC_CHECK(vkQueueSubmit(queue, 1, &si, fence));
    VKC_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
    VKC_CHECK(vkResetFences(dev, 1, &fence));
}

/* An unsignalled fence. */
static inline VkFence vkc_fence(VkDevice dev)
{
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VKC_CHECK(vkCreateFence(dev, &fci, NULL, &fence));
    return fence;
}

/* Binds p's pipeline and descriptor set and pushes count, its push constant. */
static inline void vkc_bind(VkCommandBuffer cb, const vkc_pipeline_t *p, uint32_t count)
{
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &p->set, 0, NULL);
    vkCmdPushConstants(cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof count, &count);
}

/* A global memory barrier from what earlier commands wrote to what later ones read. */
static inline void vkc_barrier(VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                                           VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb,
                         0, NULL, 0, NULL);
}

#endif
