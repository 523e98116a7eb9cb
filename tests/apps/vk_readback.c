/* SPDX-License-Identifier: MIT */
/* vk_readback: a plain Vulkan program (no UPTI) that prints, value by value,
 * what it reads back from the instance, the physical device, the device it
 * makes, its queue, its query pools, fences, events and semaphores, so that
 * a test can compare a traced run with a bare one (vulkan.readback_*).
 *
 *   vk_readback 1.0|1.1|1.3
 *
 * 1.0: instance apiVersion 1.0, no extension, nothing but Vulkan 1.0 calls.
 * 1.1: apiVersion 1.1: the *2 queries too, with the feature and property
 *      structures of the extensions the UPTI layer enables for itself chained.
 * 1.3: apiVersion 1.3: the program enables hostQueryReset and turns
 *      timelineSemaphore off in its VkPhysicalDeviceVulkan12Features, resets
 *      a query pool from the host; a second device (timelineSemaphore on)
 *      signals a timeline semaphore of the program's.
 * Each run dispatches vk_vadd.comp (128 groups) between two timestamps of
 * the program's own pool and inside a pipeline-statistics query, twice.
 * Values that change from run to run (handles, timestamps) are printed as
 * relations (t1 >= t0, same queue as vkGetDeviceQueue2). Exit 0, 2 on a
 * Vulkan error, 77 without a device.
 */
#include "vk_common.h"
#include "vk_vadd.spv.h"

#define COUNT 8192u

static unsigned g_api; /* 10, 11 or 13 */

/* Prints the bytes of a feature structure after sType and pNext (every member a VkBool32). */
static void print_bools(const char *what, const void *s, size_t size, size_t from)
{
    printf("%s:", what);
    for (size_t off = from; off + sizeof(VkBool32) <= size; off += sizeof(VkBool32)) {
        VkBool32 b;
        memcpy(&b, (const char *)s + off, sizeof b);
        printf("%u", (unsigned)b);
    }
    printf("\n");
}

static void print_uuid(const char *what, const uint8_t *u, size_t n)
{
    printf("%s: ", what);
    for (size_t i = 0; i < n; i++)
        printf("%02x", u[i]);
    printf("\n");
}

static void print_instance(void)
{
    uint32_t n = 0;
    VKC_CHECK(vkEnumerateInstanceExtensionProperties(NULL, &n, NULL));
    VkExtensionProperties *e = calloc(n ? n : 1, sizeof *e);
    VKC_CHECK(vkEnumerateInstanceExtensionProperties(NULL, &n, e));
    printf("instance extensions: %u\n", n);
    for (uint32_t i = 0; i < n; i++)
        printf("  %s %u\n", e[i].extensionName, e[i].specVersion);
    free(e);
}

static void print_properties(const VkPhysicalDeviceProperties *p)
{
    const VkPhysicalDeviceLimits *l = &p->limits;
    printf("properties: api %u.%u.%u driver %u vendor %u device %u type %d name %s\n",
           VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion),
           VK_API_VERSION_PATCH(p->apiVersion), p->driverVersion, p->vendorID, p->deviceID,
           (int)p->deviceType, p->deviceName);
    print_uuid("pipelineCacheUUID", p->pipelineCacheUUID, VK_UUID_SIZE);
    printf("limits: timestampPeriod %.9g timestampComputeAndGraphics %u maxComputeWorkGroupCount %u %u %u "
           "maxComputeWorkGroupSize %u %u %u maxComputeWorkGroupInvocations %u maxComputeSharedMemorySize %u "
           "maxBoundDescriptorSets %u maxPushConstantsSize %u maxMemoryAllocationCount %u "
           "maxStorageBufferRange %u minStorageBufferOffsetAlignment %llu nonCoherentAtomSize %llu "
           "optimalBufferCopyOffsetAlignment %llu bufferImageGranularity %llu maxImageDimension2D %u "
           "discreteQueuePriorities %u\n",
           (double)l->timestampPeriod, (unsigned)l->timestampComputeAndGraphics, l->maxComputeWorkGroupCount[0],
           l->maxComputeWorkGroupCount[1], l->maxComputeWorkGroupCount[2], l->maxComputeWorkGroupSize[0],
           l->maxComputeWorkGroupSize[1], l->maxComputeWorkGroupSize[2], l->maxComputeWorkGroupInvocations,
           l->maxComputeSharedMemorySize, l->maxBoundDescriptorSets, l->maxPushConstantsSize,
           l->maxMemoryAllocationCount, l->maxStorageBufferRange,
           (unsigned long long)l->minStorageBufferOffsetAlignment, (unsigned long long)l->nonCoherentAtomSize,
           (unsigned long long)l->optimalBufferCopyOffsetAlignment, (unsigned long long)l->bufferImageGranularity,
           l->maxImageDimension2D, l->discreteQueuePriorities);
}

static void print_families(VkPhysicalDevice phys)
{
    uint32_t n = 16;
    VkQueueFamilyProperties f[16];
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, f);
    printf("queue families: %u\n", n);
    for (uint32_t i = 0; i < n; i++)
        printf("  %u: flags %#x count %u timestampValidBits %u granularity %u %u %u\n", i, f[i].queueFlags,
               f[i].queueCount, f[i].timestampValidBits, f[i].minImageTransferGranularity.width,
               f[i].minImageTransferGranularity.height, f[i].minImageTransferGranularity.depth);
    if (g_api < 11)
        return;
    VkQueueFamilyProperties2 f2[16];
    for (uint32_t i = 0; i < 16; i++)
        f2[i] = (VkQueueFamilyProperties2){.sType = VK_STRUCTURE_TYPE_QUEUE_FAMILY_PROPERTIES_2};
    uint32_t n2 = 16;
    vkGetPhysicalDeviceQueueFamilyProperties2(phys, &n2, f2);
    printf("queue families 2: %u\n", n2);
    for (uint32_t i = 0; i < n2 && i < 16; i++)
        printf("  %u: flags %#x count %u timestampValidBits %u\n", i, f2[i].queueFamilyProperties.queueFlags,
               f2[i].queueFamilyProperties.queueCount, f2[i].queueFamilyProperties.timestampValidBits);
}

static void print_memory(VkPhysicalDevice phys)
{
    VkPhysicalDeviceMemoryProperties m;
    vkGetPhysicalDeviceMemoryProperties(phys, &m);
    printf("memory: %u types, %u heaps\n", m.memoryTypeCount, m.memoryHeapCount);
    for (uint32_t i = 0; i < m.memoryTypeCount; i++)
        printf("  type %u: flags %#x heap %u\n", i, m.memoryTypes[i].propertyFlags, m.memoryTypes[i].heapIndex);
    for (uint32_t i = 0; i < m.memoryHeapCount; i++)
        printf("  heap %u: size %llu flags %#x\n", i, (unsigned long long)m.memoryHeaps[i].size,
               m.memoryHeaps[i].flags);
}

static void print_formats(VkPhysicalDevice phys)
{
    static const VkFormat formats[] = {VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_R32_SFLOAT, VK_FORMAT_D32_SFLOAT,
                                       VK_FORMAT_BC1_RGB_UNORM_BLOCK};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        VkFormatProperties fp;
        vkGetPhysicalDeviceFormatProperties(phys, formats[i], &fp);
        printf("format %d: linear %#x optimal %#x buffer %#x\n", (int)formats[i], fp.linearTilingFeatures,
               fp.optimalTilingFeatures, fp.bufferFeatures);
    }
}

static void print_device_extensions(VkPhysicalDevice phys)
{
    uint32_t n = 0;
    VKC_CHECK(vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL));
    VkExtensionProperties *e = calloc(n ? n : 1, sizeof *e);
    VKC_CHECK(vkEnumerateDeviceExtensionProperties(phys, NULL, &n, e));
    printf("device extensions: %u\n", n);
    for (uint32_t i = 0; i < n; i++)
        printf("  %s %u\n", e[i].extensionName, e[i].specVersion);
    free(e);
}

/* Vulkan 1.1: the *2 queries with the structures of the layer's extensions chained. */
static void print_features2(VkPhysicalDevice phys)
{
    VkPhysicalDeviceHostQueryResetFeatures hr = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES};
    VkPhysicalDeviceTimelineSemaphoreFeatures tl = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES, .pNext = &hr};
    VkPhysicalDeviceVulkan11Features v11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features v12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .pNext = &v11};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = g_api >= 13 ? (void *)&v12 : (void *)&tl};
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    print_bools("features2", &f2.features, sizeof f2.features, 0);
    if (g_api >= 13) {
        print_bools("vulkan12 features", &v12, sizeof v12, offsetof(VkPhysicalDeviceVulkan12Features, samplerMirrorClampToEdge));
        print_bools("vulkan11 features", &v11, sizeof v11, offsetof(VkPhysicalDeviceVulkan11Features, storageBuffer16BitAccess));
    } else {
        printf("timelineSemaphore %u hostQueryReset %u\n", (unsigned)tl.timelineSemaphore, (unsigned)hr.hostQueryReset);
    }
    VkPhysicalDeviceTimelineSemaphoreProperties tp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_PROPERTIES};
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, .pNext = &tp};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
    vkGetPhysicalDeviceProperties2(phys, &p2);
    print_properties(&p2.properties);
    print_uuid("deviceUUID", id.deviceUUID, VK_UUID_SIZE);
    print_uuid("driverUUID", id.driverUUID, VK_UUID_SIZE);
    printf("maxTimelineSemaphoreValueDifference %llu\n", (unsigned long long)tp.maxTimelineSemaphoreValueDifference);
    VkPhysicalDeviceMemoryProperties2 m2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    vkGetPhysicalDeviceMemoryProperties2(phys, &m2);
    printf("memory2: %u types, %u heaps\n", m2.memoryProperties.memoryTypeCount, m2.memoryProperties.memoryHeapCount);
}

/* Whether the device's entry points of commands the layer may use are there. */
static void print_entry_points(VkDevice dev)
{
    static const char *const names[] = {
        "vkGetSemaphoreCounterValue", "vkGetSemaphoreCounterValueKHR", "vkWaitSemaphores", "vkWaitSemaphoresKHR",
        "vkSignalSemaphore", "vkSignalSemaphoreKHR", "vkResetQueryPool", "vkResetQueryPoolEXT",
        "vkGetCalibratedTimestampsEXT", "vkCmdWriteTimestamp", "vkQueueSubmit2", "vkGetDeviceQueue2"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        printf("vkGetDeviceProcAddr %s: %s\n", names[i], vkGetDeviceProcAddr(dev, names[i]) ? "found" : "NULL");
}

/* The first device: the compute family's queues, the program's own features. */
static VkDevice make_device(const vkc_t *c, VkPhysicalDeviceFeatures *enabled, int timeline)
{
    float priorities[4] = {1, 1, 1, 1};
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = c->family,
                                   .queueCount = 1,
                                   .pQueuePriorities = priorities};
    VkPhysicalDeviceVulkan12Features v12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .hostQueryReset = VK_TRUE,
                                            .timelineSemaphore = timeline ? VK_TRUE : VK_FALSE};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = g_api >= 13 ? &v12 : NULL,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .pEnabledFeatures = enabled};
    VkDevice dev;
    VKC_CHECK(vkCreateDevice(c->phys, &dci, NULL, &dev));
    return dev;
}

static const char *result_name(VkResult r)
{
    return r == VK_SUCCESS ? "VK_SUCCESS" : r == VK_NOT_READY ? "VK_NOT_READY" : r == VK_EVENT_SET ? "VK_EVENT_SET"
         : r == VK_EVENT_RESET ? "VK_EVENT_RESET" : "other";
}

/* Reads the program's pools: timestamps (2 + availability) and the statistics (1 + availability). */
static void print_queries(VkDevice dev, VkQueryPool ts, VkQueryPool stats, uint32_t valid_bits, const char *when)
{
    uint64_t t[4] = {0};
    VkResult r = vkGetQueryPoolResults(dev, ts, 0, 2, sizeof t, t, 2 * sizeof(uint64_t),
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    uint64_t mask = valid_bits >= 64 ? ~0ull : (1ull << valid_bits) - 1;
    printf("%s: timestamps %s available %llu %llu, t1 >= t0 %d, within valid bits %d\n", when, result_name(r),
           (unsigned long long)t[1], (unsigned long long)t[3], t[2] >= t[0], (t[0] & ~mask) == 0 && (t[2] & ~mask) == 0);
    if (stats == VK_NULL_HANDLE)
        return;
    uint64_t s[2] = {0};
    r = vkGetQueryPoolResults(dev, stats, 0, 1, sizeof s, s, sizeof s,
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    printf("%s: compute invocations %s %llu available %llu\n", when, result_name(r), (unsigned long long)s[0],
           (unsigned long long)s[1]);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "1.0";
    g_api = strcmp(mode, "1.3") == 0 ? 13 : strcmp(mode, "1.1") == 0 ? 11 : 10;
    vkc_t c;
    vkc_init_version(&c, "vk_readback", g_api == 13 ? VK_API_VERSION_1_3
                                       : g_api == 11 ? VK_API_VERSION_1_1 : VK_API_VERSION_1_0);
    print_instance();
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(c.phys, &props);
    print_properties(&props);
    VkPhysicalDeviceFeatures features;
    vkGetPhysicalDeviceFeatures(c.phys, &features);
    print_bools("features", &features, sizeof features, 0);
    print_families(c.phys);
    print_memory(c.phys);
    print_formats(c.phys);
    print_device_extensions(c.phys);
    if (g_api >= 11)
        print_features2(c.phys);
    uint32_t nf = 16;
    VkQueueFamilyProperties fams[16];
    vkGetPhysicalDeviceQueueFamilyProperties(c.phys, &nf, fams);
    uint32_t valid_bits = fams[c.family].timestampValidBits;

    VkPhysicalDeviceFeatures enabled = {.pipelineStatisticsQuery = features.pipelineStatisticsQuery};
    VkDevice dev = make_device(&c, &enabled, 0);
    print_entry_points(dev);
    VkQueue queue;
    vkGetDeviceQueue(dev, c.family, 0, &queue);
    printf("vkGetDeviceQueue: %s\n", queue != VK_NULL_HANDLE ? "a queue" : "NULL");
    if (g_api >= 11) {
        VkDeviceQueueInfo2 qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_INFO_2, .queueFamilyIndex = c.family};
        VkQueue q2 = VK_NULL_HANDLE;
        vkGetDeviceQueue2(dev, &qi, &q2);
        printf("vkGetDeviceQueue2: %s\n", q2 == queue ? "the same queue" : "another queue");
    }

    const VkDeviceSize size = COUNT * sizeof(uint32_t);
    vkc_buffer_t a = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    vkc_buffer_t b = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    vkc_buffer_t sum = vkc_buffer(&c, dev, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VKC_HOST);
    vkc_buffer_t copied = vkc_buffer(&c, dev, 64, VK_BUFFER_USAGE_TRANSFER_DST_BIT, VKC_HOST);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, a.buffer, &req);
    printf("buffer requirements: size %llu alignment %llu types %#x\n", (unsigned long long)req.size,
           (unsigned long long)req.alignment, req.memoryTypeBits);
    vkc_pipeline_t pl;
    const VkBuffer bufs[3] = {a.buffer, b.buffer, sum.buffer};
    vkc_pipeline(dev, vk_vadd_spv, sizeof vk_vadd_spv, 3, bufs, sizeof(uint32_t), &pl);

    VkQueryPoolCreateInfo tsci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = 2};
    VkQueryPool ts, stats = VK_NULL_HANDLE;
    VKC_CHECK(vkCreateQueryPool(dev, &tsci, NULL, &ts));
    if (enabled.pipelineStatisticsQuery) {
        VkQueryPoolCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                     .queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS,
                                     .queryCount = 1,
                                     .pipelineStatistics = VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT};
        VKC_CHECK(vkCreateQueryPool(dev, &sci, NULL, &stats));
    }
    if (g_api >= 13) { /* the program's own hostQueryReset: the pools read as not ready */
        vkResetQueryPool(dev, ts, 0, 2);
        if (stats != VK_NULL_HANDLE)
            vkResetQueryPool(dev, stats, 0, 1);
        print_queries(dev, ts, stats, valid_bits, "after vkResetQueryPool");
    }
    VkEventCreateInfo eci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent event;
    VKC_CHECK(vkCreateEvent(dev, &eci, NULL, &event));
    printf("event before: %s\n", result_name(vkGetEventStatus(dev, event)));

    VkCommandPool pool;
    VkCommandBuffer cb = vkc_begin(&c, dev, &pool);
    vkCmdResetQueryPool(cb, ts, 0, 2);
    if (stats != VK_NULL_HANDLE)
        vkCmdResetQueryPool(cb, stats, 0, 1);
    vkc_bind(cb, &pl, COUNT);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, ts, 0);
    if (stats != VK_NULL_HANDLE)
        vkCmdBeginQuery(cb, stats, 0, 0);
    vkCmdDispatch(cb, COUNT / 64, 1, 1);
    if (stats != VK_NULL_HANDLE)
        vkCmdEndQuery(cb, stats, 0);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ts, 1);
    vkCmdCopyQueryPoolResults(cb, ts, 0, 2, copied.buffer, 0, 2 * sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    vkCmdSetEvent(cb, event, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    VKC_CHECK(vkEndCommandBuffer(cb));
    VkFence fence = vkc_fence(dev);
    printf("fence before: %s\n", result_name(vkGetFenceStatus(dev, fence)));
    for (int run = 0; run < 2; run++) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
        VKC_CHECK(vkQueueSubmit(queue, 1, &si, fence));
        VKC_CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
        printf("run %d: fence %s event %s\n", run, result_name(vkGetFenceStatus(dev, fence)),
               result_name(vkGetEventStatus(dev, event)));
        print_queries(dev, ts, stats, valid_bits, run == 0 ? "run 0" : "run 1");
        uint64_t *p;
        VKC_CHECK(vkMapMemory(dev, copied.memory, 0, 64, 0, (void **)&p));
        printf("run %d: copied timestamps available %llu %llu, t1 >= t0 %d\n", run, (unsigned long long)p[1],
               (unsigned long long)p[3], p[2] >= p[0]);
        vkUnmapMemory(dev, copied.memory);
        VKC_CHECK(vkResetFences(dev, 1, &fence));
        VKC_CHECK(vkResetEvent(dev, event));
        printf("run %d: after resets: fence %s event %s\n", run, result_name(vkGetFenceStatus(dev, fence)),
               result_name(vkGetEventStatus(dev, event)));
    }
    /* Without a fence: the program learns the end from vkQueueWaitIdle. */
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    VKC_CHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    VKC_CHECK(vkQueueWaitIdle(queue));
    print_queries(dev, ts, stats, valid_bits, "run 2, no fence");
    printf("run 2: fence %s event %s\n", result_name(vkGetFenceStatus(dev, fence)),
           result_name(vkGetEventStatus(dev, event)));

    vkDestroyFence(dev, fence, NULL);
    vkDestroyEvent(dev, event, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    vkDestroyQueryPool(dev, ts, NULL);
    if (stats != VK_NULL_HANDLE)
        vkDestroyQueryPool(dev, stats, NULL);
    vkc_destroy_pipeline(dev, &pl);
    vkc_free_buffer(dev, &a);
    vkc_free_buffer(dev, &b);
    vkc_free_buffer(dev, &sum);
    vkc_free_buffer(dev, &copied);
    vkDestroyDevice(dev, NULL);

    if (g_api >= 13) { /* a timeline semaphore of the program's, signalled by a submission without a fence */
        VkDevice dev2 = make_device(&c, NULL, 1);
        VkQueue q;
        vkGetDeviceQueue(dev2, c.family, 0, &q);
        VkSemaphoreTypeCreateInfo tci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                         .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
                                         .initialValue = 5};
        VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci};
        VkSemaphore sem;
        VKC_CHECK(vkCreateSemaphore(dev2, &sci, NULL, &sem));
        uint64_t v = 0;
        VKC_CHECK(vkGetSemaphoreCounterValue(dev2, sem, &v));
        printf("timeline semaphore: %llu\n", (unsigned long long)v);
        VkCommandPool pool2;
        VkCommandBuffer cb2 = vkc_begin(&c, dev2, &pool2);
        vkc_buffer_t fill = vkc_buffer(&c, dev2, 256, VK_BUFFER_USAGE_TRANSFER_DST_BIT, VKC_HOST);
        vkCmdFillBuffer(cb2, fill.buffer, 0, 256, 0x5a5a5a5a);
        VKC_CHECK(vkEndCommandBuffer(cb2));
        const uint64_t signal = 9;
        VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                             .signalSemaphoreValueCount = 1,
                                             .pSignalSemaphoreValues = &signal};
        VkSubmitInfo si2 = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                            .pNext = &tsi,
                            .commandBufferCount = 1,
                            .pCommandBuffers = &cb2,
                            .signalSemaphoreCount = 1,
                            .pSignalSemaphores = &sem};
        VKC_CHECK(vkQueueSubmit(q, 1, &si2, VK_NULL_HANDLE));
        VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                  .semaphoreCount = 1,
                                  .pSemaphores = &sem,
                                  .pValues = &signal};
        VKC_CHECK(vkWaitSemaphores(dev2, &wi, UINT64_MAX));
        VKC_CHECK(vkGetSemaphoreCounterValue(dev2, sem, &v));
        printf("timeline semaphore after the submission: %llu\n", (unsigned long long)v);
        VKC_CHECK(vkDeviceWaitIdle(dev2));
        vkc_free_buffer(dev2, &fill);
        vkDestroyCommandPool(dev2, pool2, NULL);
        vkDestroySemaphore(dev2, sem, NULL);
        vkDestroyDevice(dev2, NULL);
    }
    vkDestroyInstance(c.instance, NULL);
    printf("vk_readback %s: done\n", mode);
    return 0;
}
