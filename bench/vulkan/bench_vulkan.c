/* bench_vulkan MODE N REPS: time per call of one Vulkan command on lavapipe.
 *   dispatch  vkCmdDispatch recorded N times, RECORDING per recording of
 *             one command buffer (begin, bind, end and reset not timed)
 *   submit    vkQueueSubmit of a command buffer holding one dispatch (the
 *             wait for its fence is not timed)
 *   submit_ts the same, the program itself bracketing its dispatch with two
 *             timestamps (a reset of their queries before them): what a
 *             device costs to execute the timestamps the layer adds. On
 *             lavapipe a queue thread of its own executes the command
 *             buffer, beside the program's: on a busy machine that cost
 *             shows in the submit's
 * Prints "MODE ns_per_call" for the fastest of REPS repetitions. Plain
 * Vulkan: run_bench.py runs it bare and with the layer (and a tool). */
#include <vulkan/vulkan.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vk_compute.spv.h"

#define RECORDING 200 /* dispatches per recording */

#define CHECK_VK(call)                                                                         \
    do {                                                                                       \
        VkResult r_ = (call);                                                                  \
        if (r_ != VK_SUCCESS) {                                                                \
            fprintf(stderr, "bench_vulkan: %s failed: %d\n", #call, (int)r_);                  \
            exit(2);                                                                           \
        }                                                                                      \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "dispatch";
    int n = argc > 2 ? atoi(argv[2]) : 100000;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    int timestamps = strcmp(mode, "submit_ts") == 0;
    int submit = timestamps || strcmp(mode, "submit") == 0;
    if (n < 1 || reps < 1 || (!submit && strcmp(mode, "dispatch") != 0)) {
        fprintf(stderr, "usage: bench_vulkan dispatch|submit|submit_ts N REPS\n");
        return 2;
    }
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance instance;
    if (vkCreateInstance(&ici, NULL, &instance) != VK_SUCCESS)
        return 77;
    uint32_t nd = 1;
    VkPhysicalDevice phys;
    if (vkEnumeratePhysicalDevices(instance, &nd, &phys) < 0 || nd == 0)
        return 77;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = 0, .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci};
    VkDevice dev;
    CHECK_VK(vkCreateDevice(phys, &dci, NULL, &dev));
    VkQueue queue;
    vkGetDeviceQueue(dev, 0, 0, &queue);
    VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                     .codeSize = sizeof vk_compute_spv, .pCode = vk_compute_spv};
    VkShaderModule module;
    CHECK_VK(vkCreateShaderModule(dev, &smci, NULL, &module));
    VkDescriptorSetLayoutBinding b[2] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL}};
    VkDescriptorSetLayoutCreateInfo dslci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                             .bindingCount = 2, .pBindings = b};
    VkDescriptorSetLayout dsl;
    CHECK_VK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &dsl));
    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                       .pSetLayouts = &dsl, .pushConstantRangeCount = 1,
                                       .pPushConstantRanges = &pcr};
    VkPipelineLayout layout;
    CHECK_VK(vkCreatePipelineLayout(dev, &plci, NULL, &layout));
    VkComputePipelineCreateInfo cpci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = module, .pName = "main"},
        .layout = layout};
    VkPipeline pipeline;
    CHECK_VK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));
    VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VkCommandPool pool;
    CHECK_VK(vkCreateCommandPool(dev, &cpi, NULL, &pool));
    VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = 1};
    VkCommandBuffer cb;
    CHECK_VK(vkAllocateCommandBuffers(dev, &cbai, &cb));
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK_VK(vkCreateFence(dev, &fci, NULL, &fence));
    VkQueryPoolCreateInfo qpi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
    VkQueryPool queries;
    CHECK_VK(vkCreateQueryPool(dev, &qpi, NULL, &queries));

    uint64_t best = UINT64_MAX;
    for (int r = 0; r < reps; r++) {
        uint64_t total = 0;
        if (!submit) {
            /* count 0: each dispatch is recorded, none does any work. In
               recordings of RECORDING dispatches, each with the layer's timestamps. */
            for (int done = 0; done < n; done += RECORDING) {
                int m = n - done < RECORDING ? n - done : RECORDING;
                CHECK_VK(vkBeginCommandBuffer(cb, &begin));
                vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
                uint64_t t0 = now_ns();
                for (int i = 0; i < m; i++)
                    vkCmdDispatch(cb, 0, 0, 0);
                total += now_ns() - t0;
                CHECK_VK(vkEndCommandBuffer(cb));
                CHECK_VK(vkResetCommandBuffer(cb, 0));
            }
        } else {
            CHECK_VK(vkBeginCommandBuffer(cb, &begin));
            vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            if (timestamps) {
                vkCmdResetQueryPool(cb, queries, 0, 2);
                vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
            }
            vkCmdDispatch(cb, 0, 0, 0);
            if (timestamps)
                vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
            CHECK_VK(vkEndCommandBuffer(cb));
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                               .pCommandBuffers = &cb};
            for (int i = 0; i < n; i++) {
                uint64_t t0 = now_ns();
                CHECK_VK(vkQueueSubmit(queue, 1, &si, fence));
                total += now_ns() - t0;
                CHECK_VK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
                CHECK_VK(vkResetFences(dev, 1, &fence));
            }
            CHECK_VK(vkResetCommandBuffer(cb, 0));
        }
        if (total < best)
            best = total;
    }
    printf("%s %.1f\n", mode, (double)best / n);
    vkDestroyQueryPool(dev, queries, NULL);
    vkDestroyFence(dev, fence, NULL);
    vkFreeCommandBuffers(dev, pool, 1, &cb);
    vkDestroyCommandPool(dev, pool, NULL);
    vkDestroyPipeline(dev, pipeline, NULL);
    vkDestroyPipelineLayout(dev, layout, NULL);
    vkDestroyDescriptorSetLayout(dev, dsl, NULL);
    vkDestroyShaderModule(dev, module, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(instance, NULL);
    return 0;
}
