/* SPDX-License-Identifier: MIT */
/* bench_vulkan MODE N REPS: time per call of Vulkan commands on lavapipe.
 *   dispatch  vkCmdDispatch recorded N times, RECORDING per recording of
 *             one command buffer (begin, bind, end and reset not timed).
 *             Prints "dispatch NS": the fastest of REPS repetitions' means.
 *   bind_dispatch the same, each vkCmdDispatch after a vkCmdBindPipeline of
 *             its pipeline (as programs with many pipelines record): NS per pair.
 *   submit    N x REPS submissions of a command buffer holding one
 *             dispatch, each waited for with its fence. A sample is one
 *             submission's host time: its vkQueueSubmit, then, after a
 *             pause of PAUSE_US in which the device finishes it, its
 *             vkWaitForFences (where a tracing layer reads the
 *             submission's times and emits its records) and vkResetFences.
 *             The pause keeps the device's own work (lavapipe executes the
 *             command buffer on threads of its own, on the same cores) out
 *             of the timed calls, as a GPU's would be.
 *             Prints "submit P10 MEDIAN CALL_P10 CALL_MEDIAN": the samples'
 *             10th percentile and median, then those of the vkQueueSubmit
 *             call alone.
 *   submit_ts the same, the program itself bracketing its dispatch with
 *             two timestamps (a reset of their queries before them).
 *   stream    N x REPS submissions without a wait between them: STREAM
 *             command buffers in turn, a fence on every STREAM-th (waited
 *             for, not timed). A sample is one vkQueueSubmit call, with up
 *             to STREAM submissions in flight (a tracing layer reads the
 *             finished ones there). Prints "stream P10 MEDIAN".
 * Percentiles, not means: on a shared VM a call is sometimes preempted, or
 * its wake-up of lavapipe's queue thread costs an inter-processor
 * interrupt of several us; those only add time, so a low percentile is the
 * call's own cost and the median what it usually costs there.
 * Plain Vulkan: run_bench.py runs it bare and with the layer (and a tool). */
#include <vulkan/vulkan.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vk_common.h"
#include "vk_compute.spv.h"

#define RECORDING 200 /* dispatches per recording */
#define PAUSE_US 200  /* submit: between the submission and its fence wait */
#define STREAM 64     /* stream: command buffers in flight */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The pct-th percentile of v[0..n) (sorts v). */
static double percentile(uint64_t *v, size_t n, int pct)
{
    qsort(v, n, sizeof *v, cmp_u64);
    return (double)v[(n - 1) * (size_t)pct / 100];
}

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
    int stream = strcmp(mode, "stream") == 0;
    int bind = strcmp(mode, "bind_dispatch") == 0;
    int submit = timestamps || strcmp(mode, "submit") == 0;
    if (n < 1 || reps < 1 || (!submit && !stream && !bind && strcmp(mode, "dispatch") != 0)) {
        fprintf(stderr, "usage: bench_vulkan dispatch|bind_dispatch|submit|submit_ts|stream N REPS\n");
        return 2;
    }
    size_t nsamples = (size_t)n * (size_t)reps;
    uint64_t *samples = malloc(nsamples * sizeof *samples);
    uint64_t *calls = malloc(nsamples * sizeof *calls);
    if (samples == NULL || calls == NULL) {
        fprintf(stderr, "bench_vulkan: out of memory\n");
        return 2;
    }
    size_t taken = 0;
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
    VKC_CHECK(vkCreateDevice(phys, &dci, NULL, &dev));
    VkQueue queue;
    vkGetDeviceQueue(dev, 0, 0, &queue);
    VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                     .codeSize = sizeof vk_compute_spv, .pCode = vk_compute_spv};
    VkShaderModule module;
    VKC_CHECK(vkCreateShaderModule(dev, &smci, NULL, &module));
    VkDescriptorSetLayoutBinding b[2] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL}};
    VkDescriptorSetLayoutCreateInfo dslci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                             .bindingCount = 2, .pBindings = b};
    VkDescriptorSetLayout dsl;
    VKC_CHECK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &dsl));
    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                       .pSetLayouts = &dsl, .pushConstantRangeCount = 1,
                                       .pPushConstantRanges = &pcr};
    VkPipelineLayout layout;
    VKC_CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &layout));
    VkComputePipelineCreateInfo cpci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = module, .pName = "main"},
        .layout = layout};
    VkPipeline pipeline;
    VKC_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));
    VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VkCommandPool pool;
    VKC_CHECK(vkCreateCommandPool(dev, &cpi, NULL, &pool));
    VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = 1};
    VkCommandBuffer cb, ring[STREAM];
    VKC_CHECK(vkAllocateCommandBuffers(dev, &cbai, &cb));
    cbai.commandBufferCount = STREAM;
    VKC_CHECK(vkAllocateCommandBuffers(dev, &cbai, ring));
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkFence fence = vkc_fence(dev);
    VkQueryPoolCreateInfo qpi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
    VkQueryPool queries;
    VKC_CHECK(vkCreateQueryPool(dev, &qpi, NULL, &queries));
    const struct timespec pause = {0, PAUSE_US * 1000};

    uint64_t best = UINT64_MAX;
    for (int r = 0; r < reps; r++) {
        uint64_t total = 0;
        if (!submit && !stream) {
            /* count 0: each dispatch is recorded, none does any work. In
               recordings of RECORDING dispatches, each with the layer's timestamps. */
            for (int done = 0; done < n; done += RECORDING) {
                int m = n - done < RECORDING ? n - done : RECORDING;
                VKC_CHECK(vkBeginCommandBuffer(cb, &begin));
                vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
                uint64_t t0 = now_ns();
                if (bind)
                    for (int i = 0; i < m; i++) {
                        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
                        vkCmdDispatch(cb, 0, 0, 0);
                    }
                else
                    for (int i = 0; i < m; i++)
                        vkCmdDispatch(cb, 0, 0, 0);
                total += now_ns() - t0;
                VKC_CHECK(vkEndCommandBuffer(cb));
                VKC_CHECK(vkResetCommandBuffer(cb, 0));
            }
        } else if (stream) {
            for (int k = 0; k < STREAM; k++) {
                VKC_CHECK(vkBeginCommandBuffer(ring[k], &begin));
                vkCmdBindPipeline(ring[k], VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
                vkCmdDispatch(ring[k], 0, 0, 0);
                VKC_CHECK(vkEndCommandBuffer(ring[k]));
            }
            for (int i = 0; i < n; i++) {
                VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                                   .pCommandBuffers = &ring[i % STREAM]};
                int last = i % STREAM == STREAM - 1 || i == n - 1;
                uint64_t t0 = now_ns();
                VKC_CHECK(vkQueueSubmit(queue, 1, &si, last ? fence : VK_NULL_HANDLE));
                samples[taken++] = now_ns() - t0;
                if (last) {
                    VKC_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
                    VKC_CHECK(vkResetFences(dev, 1, &fence));
                }
            }
        } else {
            VKC_CHECK(vkBeginCommandBuffer(cb, &begin));
            vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            if (timestamps) {
                vkCmdResetQueryPool(cb, queries, 0, 2);
                vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
            }
            vkCmdDispatch(cb, 0, 0, 0);
            if (timestamps)
                vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
            VKC_CHECK(vkEndCommandBuffer(cb));
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                               .pCommandBuffers = &cb};
            for (int i = 0; i < n; i++) {
                uint64_t t0 = now_ns();
                VKC_CHECK(vkQueueSubmit(queue, 1, &si, fence));
                uint64_t call = now_ns() - t0;
                nanosleep(&pause, NULL);
                t0 = now_ns();
                VKC_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
                VKC_CHECK(vkResetFences(dev, 1, &fence));
                calls[taken] = call;
                samples[taken++] = call + (now_ns() - t0);
            }
            VKC_CHECK(vkResetCommandBuffer(cb, 0));
        }
        if (total < best)
            best = total;
    }
    if (submit)
        printf("%s %.1f %.1f %.1f %.1f\n", mode, percentile(samples, taken, 10), percentile(samples, taken, 50),
               percentile(calls, taken, 10), percentile(calls, taken, 50));
    else if (stream)
        printf("%s %.1f %.1f\n", mode, percentile(samples, taken, 10), percentile(samples, taken, 50));
    else
        printf("%s %.1f\n", mode, (double)best / n);
    free(samples);
    free(calls);
    vkDestroyQueryPool(dev, queries, NULL);
    vkDestroyFence(dev, fence, NULL);
    vkFreeCommandBuffers(dev, pool, 1, &cb);
    vkFreeCommandBuffers(dev, pool, STREAM, ring);
    vkDestroyCommandPool(dev, pool, NULL);
    vkDestroyPipeline(dev, pipeline, NULL);
    vkDestroyPipelineLayout(dev, layout, NULL);
    vkDestroyDescriptorSetLayout(dev, dsl, NULL);
    vkDestroyShaderModule(dev, module, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(instance, NULL);
    return 0;
}
