/* SPDX-License-Identifier: MIT */
/* vk_compute: a plain Vulkan compute program (no UPTI) for the Vulkan tests.
 *
 *   vk_compute [SUBMITS [submit2|secondary|... [nofence]]]
 *     SUBMITS    default 10
 *     submit2    submits with Vulkan 1.3's vkQueueSubmit2
 *     secondary  the dispatch, barrier and copy are recorded into a secondary
 *                command buffer that the primary executes (vkCmdExecuteCommands)
 *     secondary_twice  the same, the primary executing the secondary twice
 *                in one vkCmdExecuteCommands (VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT)
 *     timeline   timeline semaphores (VK_KHR_timeline_semaphore, enabled in a
 *                VkPhysicalDeviceTimelineSemaphoreFeatures): each submit also
 *                signals the program's timeline semaphore with the submit's
 *                number (a VkTimelineSemaphoreSubmitInfo chained to it), whose
 *                value is checked after each fence wait
 *     timeline_off  the program turns timeline semaphores off in that structure
 *     many       (third argument, with secondary_twice) the secondary holds
 *                the operations of "many" (below), the primary executes it twice
 *     nofence    (third argument, with any of the above or "plain") submits
 *                without a fence and waits for each submit with vkQueueWaitIdle
 *     semwait    (third argument, with timeline) waits for each submit with
 *                the timeline semaphore only, then resets the fence
 *     many       one command buffer of MANY_DISPATCHES (1000) dispatches, each
 *                after a barrier, every tenth followed by a barrier and the
 *                copy: 2200 operations, more than one query pool of the layer
 *                holds; after the SUBMITS, recorded again (vkResetCommandPool)
 *                and submitted once, then freed and a new command buffer
 *                (begun by another thread) recorded the same way and submitted once
 *     many_simultaneous  the same recorded with
 *                VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT
 *     many_handoff  the same, each dispatch recorded by a thread of its own
 *                (created and joined: the program synchronizes the command buffer)
 *     older_device  a second device created right after the program's own and
 *                destroyed before it: the program's device is then not the
 *                layer's newest object (its calls find their table the long way)
 *     free_early  after the SUBMITS, a second command buffer (the same
 *                commands) is submitted without a fence in the first of two
 *                batches, signalling a timeline semaphore; the second batch
 *                waits for another timeline semaphore that the host signals
 *                only after it has waited for the first and freed that
 *                command buffer (allowed: its execution is done), then
 *                vkQueueWaitIdle
 *     resubmit_early  the same, but the command buffer is submitted again
 *                (with the fence) instead of freed, then the host signals
 *                and waits for the fence
 *     labels     VK_EXT_debug_utils: the pipeline is named "doubler", the
 *                command buffer "work", the dispatch is inside a
 *                command-buffer label "step", the submit loop inside a queue
 *                label "loop"
 *
 * Picks the first CPU device (lavapipe), builds a compute pipeline from
 * vk_compute.comp (out[i] = in[i] * 2 + i), records one command buffer:
 * vkCmdDispatch, a pipeline barrier, vkCmdCopyBuffer(out -> readback), and
 * submits it SUBMITS times, each waited for with a fence. Checks the result
 * and prints a deterministic summary on stdout. Exits 0 on success, 1 on a
 * wrong result, 2 on a Vulkan error, 77 if there is no Vulkan device.
 *
 * Built with WITH_OPENCL as vk_ocl_mixed: before each submission the same
 * thread also runs an OpenCL kernel (ocl_step) on the first OpenCL device
 * and waits for it with clFinish.
 */
#include <vulkan/vulkan.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_common.h"
#include "vk_compute.spv.h"
#ifdef WITH_OPENCL
#include "ocl_common.h"

static const char *k_ocl_src = "__kernel void ocl_step(__global uint *a) { a[get_global_id(0)] += 1u; }";

typedef struct ocl_t {
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k;
    cl_mem buf;
} ocl_t;

static void ocl_setup(ocl_t *o)
{
    cl_device_id dev = ocl_first_device(NULL);
    cl_int err;
    o->ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    o->q = clCreateCommandQueueWithProperties(o->ctx, dev, NULL, &err);
    CHECK(err);
    o->prog = ocl_build(o->ctx, dev, k_ocl_src);
    o->k = clCreateKernel(o->prog, "ocl_step", &err);
    CHECK(err);
    o->buf = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, 1024 * sizeof(cl_uint), NULL, &err);
    CHECK(err);
    cl_uint zero = 0;
    CHECK(clEnqueueFillBuffer(o->q, o->buf, &zero, sizeof zero, 0, 1024 * sizeof(cl_uint), 0, NULL, NULL));
    CHECK(clSetKernelArg(o->k, 0, sizeof o->buf, &o->buf));
}

static void ocl_step(ocl_t *o)
{
    size_t global = 1024;
    CHECK(clEnqueueNDRangeKernel(o->q, o->k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clFinish(o->q));
}

/* Every element was incremented once per step. */
static int ocl_check(ocl_t *o, int steps)
{
    cl_uint out[1024];
    CHECK(clEnqueueReadBuffer(o->q, o->buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    int ok = 1;
    for (int i = 0; i < 1024; i++)
        ok &= out[i] == (cl_uint)steps;
    clReleaseMemObject(o->buf);
    clReleaseKernel(o->k);
    clReleaseProgram(o->prog);
    clReleaseCommandQueue(o->q);
    clReleaseContext(o->ctx);
    return ok;
}
#endif

#define COUNT 4096u
#define MANY_DISPATCHES 1000 /* with "many" */
static VkPhysicalDevice pick_device(VkInstance instance)
{
    uint32_t n = 0;
    VKC_CHECK(vkEnumeratePhysicalDevices(instance, &n, NULL));
    VkPhysicalDevice devs[16];
    if (n > 16)
        n = 16;
    if (n == 0)
        return VK_NULL_HANDLE;
    VKC_CHECK(vkEnumeratePhysicalDevices(instance, &n, devs));
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(devs[i], &props);
        if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
            return devs[i];
    }
    return devs[0];
}

static uint32_t compute_family(VkPhysicalDevice phys)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, NULL);
    VkQueueFamilyProperties fams[16];
    if (n > 16)
        n = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, fams);
    for (uint32_t i = 0; i < n; i++)
        if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            return i;
    fprintf(stderr, "vk_compute: no compute queue family\n");
    exit(2);
}

/* "many_handoff": each dispatch of record_many made by another thread. */
static int g_handoff;

typedef struct dispatch_call_t {
    VkCommandBuffer cb;
} dispatch_call_t;

static void *dispatch_elsewhere(void *arg)
{
    vkCmdDispatch(((dispatch_call_t *)arg)->cb, COUNT / 64, 1, 1);
    return NULL;
}

static void record_dispatch(VkCommandBuffer cb)
{
    dispatch_call_t call = {cb};
    pthread_t t;
    if (!g_handoff) {
        vkCmdDispatch(cb, COUNT / 64, 1, 1);
    } else if (pthread_create(&t, NULL, dispatch_elsewhere, &call) != 0 || pthread_join(t, NULL) != 0) {
        fprintf(stderr, "vk_compute: pthread_create failed\n");
        exit(1);
    }
}

/* "many": MANY_DISPATCHES dispatches, each after a barrier (the earlier reads
   and writes of out), every tenth followed by a barrier and the copy out -> back. */
static void record_many(VkCommandBuffer cb, VkBuffer out, VkBuffer back, VkDeviceSize size)
{
    VkBufferMemoryBarrier all = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                 .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT,
                                 .dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT,
                                 .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                 .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                 .buffer = out,
                                 .offset = 0,
                                 .size = VK_WHOLE_SIZE};
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkBufferCopy region = {0, 0, size};
    for (int i = 0; i < MANY_DISPATCHES; i++) {
        vkCmdPipelineBarrier(cb, stages, stages, 0, 0, NULL, 1, &all, 0, NULL);
        record_dispatch(cb);
        if (i % 10 == 9) {
            vkCmdPipelineBarrier(cb, stages, stages, 0, 0, NULL, 1, &all, 0, NULL);
            vkCmdCopyBuffer(cb, out, back, 1, &region);
        }
    }
}

/* vkBeginCommandBuffer made by another thread (the program synchronizes: pthread_join). */
typedef struct begin_call_t {
    VkCommandBuffer cb;
    const VkCommandBufferBeginInfo *info;
    VkResult r;
} begin_call_t;

static void *begin_elsewhere(void *arg)
{
    begin_call_t *c = arg;
    c->r = vkBeginCommandBuffer(c->cb, c->info);
    return NULL;
}

/* "free_early": a command buffer (dispatch, barrier, copy out -> back) submitted in the first of two
   batches, without a fence; the first signals a timeline semaphore, the second waits for another
   that the host signals only after waiting for the first and freeing the command buffer (its
   execution is done: the Vulkan spec allows that while the second batch waits). "resubmit_early"
   (fence given): submitted again instead, with fence, which the host waits for once it has
   signalled. 0 on success. */
static int run_free_early(VkDevice dev, VkQueue queue, VkCommandPool cpool, VkPipeline pipeline,
                          VkPipelineLayout layout, VkDescriptorSet set, VkBuffer out, VkBuffer back, VkDeviceSize size,
                          VkFence fence)
{
    PFN_vkWaitSemaphoresKHR wait_semaphores =
        (PFN_vkWaitSemaphoresKHR)vkGetDeviceProcAddr(dev, "vkWaitSemaphoresKHR");
    PFN_vkSignalSemaphoreKHR signal_semaphore =
        (PFN_vkSignalSemaphoreKHR)vkGetDeviceProcAddr(dev, "vkSignalSemaphoreKHR");
    if (wait_semaphores == NULL || signal_semaphore == NULL) {
        fprintf(stderr, "vk_compute: no vkWaitSemaphoresKHR or vkSignalSemaphoreKHR\n");
        return 1;
    }
    VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
    VkSemaphore done, gate;
    VKC_CHECK(vkCreateSemaphore(dev, &sci, NULL, &done));
    VKC_CHECK(vkCreateSemaphore(dev, &sci, NULL, &gate));
    VkCommandBuffer cb = vkc_begin_in(dev, cpool);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
    uint32_t count = COUNT;
    vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof count, &count);
    vkCmdDispatch(cb, COUNT / 64, 1, 1);
    VkBufferMemoryBarrier bmb = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                 .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                 .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
                                 .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                 .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                 .buffer = out,
                                 .offset = 0,
                                 .size = VK_WHOLE_SIZE};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 1,
                         &bmb, 0, NULL);
    VkBufferCopy region = {0, 0, size};
    vkCmdCopyBuffer(cb, out, back, 1, &region);
    VKC_CHECK(vkEndCommandBuffer(cb));
    uint64_t one = 1;
    VkTimelineSemaphoreSubmitInfo signal_one = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                                .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &one};
    VkTimelineSemaphoreSubmitInfo wait_one = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                              .waitSemaphoreValueCount = 1, .pWaitSemaphoreValues = &one};
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo batches[2] = {
        {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &signal_one, .commandBufferCount = 1,
         .pCommandBuffers = &cb, .signalSemaphoreCount = 1, .pSignalSemaphores = &done},
        {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &wait_one, .waitSemaphoreCount = 1,
         .pWaitSemaphores = &gate, .pWaitDstStageMask = &stage},
    };
    VKC_CHECK(vkQueueSubmit(queue, 2, batches, VK_NULL_HANDLE));
    VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                              .pSemaphores = &done, .pValues = &one};
    VkResult r = wait_semaphores(dev, &wi, 30000000000ull);
    if (r != VK_SUCCESS) {
        fprintf(stderr, "vk_compute: the first batch did not finish (%d)\n", (int)r);
        return 1;
    }
    VkSubmitInfo again = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    if (fence != VK_NULL_HANDLE)
        VKC_CHECK(vkQueueSubmit(queue, 1, &again, fence));
    else
        vkFreeCommandBuffers(dev, cpool, 1, &cb);
    VkSemaphoreSignalInfo ssi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = gate, .value = 1};
    VKC_CHECK(signal_semaphore(dev, &ssi));
    if (fence != VK_NULL_HANDLE) {
        VKC_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
        VKC_CHECK(vkResetFences(dev, 1, &fence));
    }
    VKC_CHECK(vkQueueWaitIdle(queue));
    vkDestroySemaphore(dev, done, NULL);
    vkDestroySemaphore(dev, gate, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    int submits = argc > 1 ? atoi(argv[1]) : 10;
    if (submits < 1)
        submits = 1;
    int use_submit2 = argc > 2 && strcmp(argv[2], "submit2") == 0;
    int twice = argc > 2 && strcmp(argv[2], "secondary_twice") == 0;
    int use_secondary = twice || (argc > 2 && strcmp(argv[2], "secondary") == 0);
    int use_labels = argc > 2 && strcmp(argv[2], "labels") == 0;
    int timeline_off = argc > 2 && strcmp(argv[2], "timeline_off") == 0;
    int use_timeline = timeline_off || (argc > 2 && strcmp(argv[2], "timeline") == 0);
    int simultaneous = argc > 2 && strcmp(argv[2], "many_simultaneous") == 0;
    int older_device = argc > 2 && strcmp(argv[2], "older_device") == 0;
    g_handoff = argc > 2 && strcmp(argv[2], "many_handoff") == 0;
    int many = simultaneous || g_handoff || (argc > 2 && strcmp(argv[2], "many") == 0) ||
               (argc > 3 && strcmp(argv[3], "many") == 0);
    int no_fence = argc > 3 && strcmp(argv[3], "nofence") == 0;
    int sem_wait = argc > 3 && strcmp(argv[3], "semwait") == 0;
    int free_early = argc > 2 && strcmp(argv[2], "free_early") == 0;
    int resubmit_early = argc > 2 && strcmp(argv[2], "resubmit_early") == 0;
    int timeline_dev = use_timeline || free_early || resubmit_early; /* the device has timeline semaphores */

    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "vk_compute",
                             .apiVersion = use_submit2 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_1};
    const char *debug_utils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app,
                                .enabledExtensionCount = use_labels ? 1 : 0,
                                .ppEnabledExtensionNames = &debug_utils};
    VkInstance instance;
    VkResult r = vkCreateInstance(&ici, NULL, &instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
        fprintf(stderr, "vk_compute: no Vulkan driver\n");
        return 77;
    }
    VKC_CHECK(r);
    VkPhysicalDevice phys = pick_device(instance);
    if (phys == VK_NULL_HANDLE) {
        fprintf(stderr, "vk_compute: no Vulkan device\n");
        vkDestroyInstance(instance, NULL);
        return 77;
    }
    uint32_t family = compute_family(phys);
    const vkc_t vc = {.instance = instance, .phys = phys, .family = family};
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &priority};
    VkPhysicalDeviceVulkan13Features v13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                            .synchronization2 = VK_TRUE};
    VkPhysicalDeviceTimelineSemaphoreFeatures tsf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES, .timelineSemaphore = !timeline_off};
    const char *timeline_ext = VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME;
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = use_submit2 ? (void *)&v13 : timeline_dev ? (void *)&tsf : NULL,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = timeline_dev ? 1 : 0,
                              .ppEnabledExtensionNames = &timeline_ext};
    VkDevice dev;
    VKC_CHECK(vkCreateDevice(phys, &dci, NULL, &dev));
    VkDevice newer = VK_NULL_HANDLE;
    if (older_device)
        VKC_CHECK(vkCreateDevice(phys, &dci, NULL, &newer));
    VkQueue queue;
    vkGetDeviceQueue(dev, family, 0, &queue);

    const VkDeviceSize size = COUNT * sizeof(uint32_t);
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    vkc_buffer_t in = vkc_buffer(&vc, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, host);
    vkc_buffer_t out = vkc_buffer(&vc, dev, size,
                                  VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkc_buffer_t back = vkc_buffer(&vc, dev, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, host);
    uint32_t *p;
    VKC_CHECK(vkMapMemory(dev, in.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++)
        p[i] = i * 3u + 7u;
    vkUnmapMemory(dev, in.memory);

#ifdef WITH_OPENCL
    /* OpenCL first: both layers are then loaded when the Vulkan objects are made. */
    ocl_t ocl;
    ocl_setup(&ocl);
#endif
    /* The pipeline. */
    VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                     .codeSize = sizeof vk_compute_spv,
                                     .pCode = vk_compute_spv};
    VkShaderModule module;
    VKC_CHECK(vkCreateShaderModule(dev, &smci, NULL, &module));
    VkDescriptorSetLayoutBinding bindings[2] = {
        {.binding = 0, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1,
         .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT},
        {.binding = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1,
         .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT},
    };
    VkDescriptorSetLayoutCreateInfo dslci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                             .bindingCount = 2,
                                             .pBindings = bindings};
    VkDescriptorSetLayout dsl;
    VKC_CHECK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &dsl));
    VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = 4};
    VkPipelineLayoutCreateInfo plci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                       .setLayoutCount = 1,
                                       .pSetLayouts = &dsl,
                                       .pushConstantRangeCount = 1,
                                       .pPushConstantRanges = &pcr};
    VkPipelineLayout layout;
    VKC_CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &layout));
    VkComputePipelineCreateInfo cpci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main"},
        .layout = layout};
    VkPipeline pipeline;
    VKC_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));

    PFN_vkSetDebugUtilsObjectNameEXT named_cb = NULL;
    PFN_vkCmdBeginDebugUtilsLabelEXT cmd_begin_label = NULL;
    PFN_vkCmdEndDebugUtilsLabelEXT cmd_end_label = NULL;
    PFN_vkQueueBeginDebugUtilsLabelEXT queue_begin_label = NULL;
    PFN_vkQueueEndDebugUtilsLabelEXT queue_end_label = NULL;
    if (use_labels) {
        PFN_vkSetDebugUtilsObjectNameEXT set_name =
            (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(dev, "vkSetDebugUtilsObjectNameEXT");
        cmd_begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetDeviceProcAddr(dev, "vkCmdBeginDebugUtilsLabelEXT");
        cmd_end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetDeviceProcAddr(dev, "vkCmdEndDebugUtilsLabelEXT");
        queue_begin_label =
            (PFN_vkQueueBeginDebugUtilsLabelEXT)vkGetDeviceProcAddr(dev, "vkQueueBeginDebugUtilsLabelEXT");
        queue_end_label = (PFN_vkQueueEndDebugUtilsLabelEXT)vkGetDeviceProcAddr(dev, "vkQueueEndDebugUtilsLabelEXT");
        if (set_name == NULL || cmd_begin_label == NULL || cmd_end_label == NULL || queue_begin_label == NULL ||
            queue_end_label == NULL) {
            fprintf(stderr, "vk_compute: VK_EXT_debug_utils commands missing\n");
            exit(2);
        }
        VkDebugUtilsObjectNameInfoEXT ni = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
                                            .objectType = VK_OBJECT_TYPE_PIPELINE,
                                            .objectHandle = (uint64_t)pipeline,
                                            .pObjectName = "doubler"};
        VKC_CHECK(set_name(dev, &ni));
        named_cb = set_name;
    }
    VkDebugUtilsLabelEXT step = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = "step"};
    VkDebugUtilsLabelEXT loop = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = "loop"};

    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 2};
    VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = 1,
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &ps};
    VkDescriptorPool dpool;
    VKC_CHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &dpool));
    VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                        .descriptorPool = dpool,
                                        .descriptorSetCount = 1,
                                        .pSetLayouts = &dsl};
    VkDescriptorSet set;
    VKC_CHECK(vkAllocateDescriptorSets(dev, &dsai, &set));
    VkDescriptorBufferInfo dbi[2] = {{in.buffer, 0, VK_WHOLE_SIZE}, {out.buffer, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet writes[2] = {
        {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = 0,
         .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &dbi[0]},
        {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = 1,
         .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &dbi[1]},
    };
    vkUpdateDescriptorSets(dev, 2, writes, 0, NULL);

    /* One command buffer: dispatch, barrier, copy. */
    VkCommandPoolCreateInfo cpoolci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                       .queueFamilyIndex = family};
    VkCommandPool cpool;
    VKC_CHECK(vkCreateCommandPool(dev, &cpoolci, NULL, &cpool));
    VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = cpool,
                                        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = 1};
    VkCommandBuffer cb, primary;
    VKC_CHECK(vkAllocateCommandBuffers(dev, &cbai, &primary));
    cb = primary;
    VkCommandBufferInheritanceInfo inherit = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (use_secondary) {
        cbai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
        VKC_CHECK(vkAllocateCommandBuffers(dev, &cbai, &cb));
        begin.pInheritanceInfo = &inherit;
        if (twice)
            begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    }
    if (named_cb != NULL) {
        VkDebugUtilsObjectNameInfoEXT ni = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
                                            .objectType = VK_OBJECT_TYPE_COMMAND_BUFFER,
                                            .objectHandle = (uint64_t)(uintptr_t)cb,
                                            .pObjectName = "work"};
        VKC_CHECK(named_cb(dev, &ni));
    }
    if (simultaneous)
        begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    VKC_CHECK(vkBeginCommandBuffer(cb, &begin));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
    uint32_t count = COUNT;
    vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof count, &count);
    VkBufferMemoryBarrier bmb = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                 .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                 .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
                                 .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                 .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                 .buffer = out.buffer,
                                 .offset = 0,
                                 .size = VK_WHOLE_SIZE};
    VkBufferCopy region = {0, 0, size};
    if (many) {
        record_many(cb, out.buffer, back.buffer, size);
    } else {
        if (use_labels)
            cmd_begin_label(cb, &step);
        vkCmdDispatch(cb, COUNT / 64, 1, 1);
        if (use_labels)
            cmd_end_label(cb);
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                             NULL, 1, &bmb, 0, NULL);
        vkCmdCopyBuffer(cb, out.buffer, back.buffer, 1, &region);
    }
    VKC_CHECK(vkEndCommandBuffer(cb));
    if (use_secondary) {
        VkCommandBufferBeginInfo pbegin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        VKC_CHECK(vkBeginCommandBuffer(primary, &pbegin));
        const VkCommandBuffer secondaries[2] = {cb, cb};
        vkCmdExecuteCommands(primary, twice ? 2 : 1, secondaries);
        VKC_CHECK(vkEndCommandBuffer(primary));
    }

    VkFence fence = vkc_fence(dev);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &primary};
    VkSemaphore timeline = VK_NULL_HANDLE;
    uint64_t signal_value = 0;
    VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                         .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &signal_value};
    PFN_vkGetSemaphoreCounterValueKHR counter_value = NULL;
    PFN_vkWaitSemaphoresKHR wait_semaphores = NULL;
    if (use_timeline && !timeline_off) {
        VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                         .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
        VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
        VKC_CHECK(vkCreateSemaphore(dev, &sci, NULL, &timeline));
        counter_value = (PFN_vkGetSemaphoreCounterValueKHR)vkGetDeviceProcAddr(dev, "vkGetSemaphoreCounterValueKHR");
        wait_semaphores = (PFN_vkWaitSemaphoresKHR)vkGetDeviceProcAddr(dev, "vkWaitSemaphoresKHR");
        if (counter_value == NULL || wait_semaphores == NULL) {
            fprintf(stderr, "vk_compute: no vkGetSemaphoreCounterValueKHR or vkWaitSemaphoresKHR\n");
            return 2;
        }
        si.pNext = &tsi;
        si.signalSemaphoreCount = 1;
        si.pSignalSemaphores = &timeline;
    }
    VkCommandBufferSubmitInfo cbsi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                      .commandBuffer = primary};
    VkSubmitInfo2 si2 = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2, .commandBufferInfoCount = 1,
                         .pCommandBufferInfos = &cbsi};
    if (use_labels)
        queue_begin_label(queue, &loop);
    for (int s = 0; s < submits; s++) {
#ifdef WITH_OPENCL
        ocl_step(&ocl);
#endif
        signal_value = (uint64_t)s + 1;
        VkFence submit_fence = no_fence ? VK_NULL_HANDLE : fence;
        if (use_submit2)
            VKC_CHECK(vkQueueSubmit2(queue, 1, &si2, submit_fence));
        else
            VKC_CHECK(vkQueueSubmit(queue, 1, &si, submit_fence));
        if (no_fence) {
            VKC_CHECK(vkQueueWaitIdle(queue));
        } else if (!sem_wait) {
            VKC_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
            VKC_CHECK(vkResetFences(dev, 1, &fence));
        }
        /* The semaphore's signal may land just after the fence's: waited for (5 s at most). */
        VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                                  .pSemaphores = &timeline, .pValues = &signal_value};
        uint64_t value = 0;
        if (timeline != VK_NULL_HANDLE &&
            (wait_semaphores(dev, &wi, 5000000000ull) != VK_SUCCESS ||
             counter_value(dev, timeline, &value) != VK_SUCCESS || value != signal_value)) {
            fprintf(stderr, "vk_compute: timeline semaphore at %llu after submit %d\n", (unsigned long long)value, s + 1);
            return 1;
        }
        if (sem_wait) /* the semaphore's value says the submission is done: so is its fence */
            VKC_CHECK(vkResetFences(dev, 1, &fence));
    }
    if (use_labels)
        queue_end_label(queue);
    if (many && !use_secondary) {
        /* The command buffer recorded again, then one allocated after it is freed (its handle may be the
           same), each submitted once. */
        for (int again = 0; again < 2; again++) {
            if (again == 1) {
                vkFreeCommandBuffers(dev, cpool, 1, &primary);
                VKC_CHECK(vkAllocateCommandBuffers(dev, &cbai, &primary));
            } else {
                VKC_CHECK(vkResetCommandPool(dev, cpool, 0));
            }
            cb = primary;
            if (again == 1) {
                /* Begun by another thread, recorded by this one (which recorded the freed one). */
                begin_call_t call = {cb, &begin, VK_SUCCESS};
                pthread_t t;
                if (pthread_create(&t, NULL, begin_elsewhere, &call) != 0 || pthread_join(t, NULL) != 0) {
                    fprintf(stderr, "vk_compute: pthread_create failed\n");
                    return 2;
                }
                VKC_CHECK(call.r);
            } else {
                VKC_CHECK(vkBeginCommandBuffer(cb, &begin));
            }
            vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
            vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof count, &count);
            record_many(cb, out.buffer, back.buffer, size);
            VKC_CHECK(vkEndCommandBuffer(cb));
            VKC_CHECK(vkQueueSubmit(queue, 1, &si, fence));
            VKC_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
            VKC_CHECK(vkResetFences(dev, 1, &fence));
        }
    }

    if ((free_early || resubmit_early) &&
        run_free_early(dev, queue, cpool, pipeline, layout, set, out.buffer, back.buffer, size,
                       resubmit_early ? fence : VK_NULL_HANDLE) != 0)
        return 2;

    uint64_t sum = 0;
    unsigned wrong = 0;
    VKC_CHECK(vkMapMemory(dev, back.memory, 0, size, 0, (void **)&p));
    for (uint32_t i = 0; i < COUNT; i++) {
        uint32_t want = (i * 3u + 7u) * 2u + i;
        wrong += p[i] != want;
        sum += p[i];
    }
    vkUnmapMemory(dev, back.memory);

    if (timeline != VK_NULL_HANDLE)
        vkDestroySemaphore(dev, timeline, NULL);
    vkDestroyFence(dev, fence, NULL);
    VkCommandBuffer both[2] = {primary, cb};
    vkFreeCommandBuffers(dev, cpool, use_secondary ? 2 : 1, both);
    vkDestroyCommandPool(dev, cpool, NULL);
    vkDestroyDescriptorPool(dev, dpool, NULL);
    vkDestroyPipeline(dev, pipeline, NULL);
    vkDestroyPipelineLayout(dev, layout, NULL);
    vkDestroyDescriptorSetLayout(dev, dsl, NULL);
    vkDestroyShaderModule(dev, module, NULL);
    vkc_free_buffer(dev, &in);
    vkc_free_buffer(dev, &out);
    vkc_free_buffer(dev, &back);
    if (newer != VK_NULL_HANDLE)
        vkDestroyDevice(newer, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(instance, NULL);

#ifdef WITH_OPENCL
    if (!ocl_check(&ocl, submits)) {
        printf("vk_compute: OpenCL steps WRONG\n");
        wrong++;
    } else {
        printf("vk_compute: %d OpenCL steps ok\n", submits);
    }
#endif
    printf("vk_compute: %d submits, %u values, sum %llu, %s\n", submits, COUNT, (unsigned long long)sum,
           wrong ? "WRONG" : "ok");
    return wrong ? 1 : 0;
}
