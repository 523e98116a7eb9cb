/* SPDX-License-Identifier: MIT */
/* libupti-vulkan: the Vulkan layer VK_LAYER_UPTI_trace, its loader
 * interface and its registration with UPTI.
 *
 * Loader interface (Vulkan-Loader docs/LoaderLayerInterface.md, version 2):
 * vkNegotiateLoaderLayerInterfaceVersion hands the loader this layer's
 * vkGetInstanceProcAddr and vkGetDeviceProcAddr. vkCreateInstance and
 * vkCreateDevice take the next layer's proc-addr functions from the chain
 * info in pNext, advance the chain, call down and fill the object's table of
 * next entries (objects.c).
 *
 * Tables:
 *   per object       the next layer's entries (uvk_object_t.next)
 *   uvk_registered   the wrappers; registered with UPTI ("vulkan"), so tools
 *                    may chain its entries
 *   trampolines      what vk*GetProcAddr hands out: each calls the entry
 *                    uvk_registered holds at the time of the call
 * With no tool, vk*GetProcAddr hands out the next layer's entries (the layer
 * is then out of the way), but for the commands that keep its tables.
 */
#include "layer.h"
#include "devtime.h"
#include "subscribers.h"

#include "env.h"

#include <upti/buffer_tracing.h>
#include <upti/marker.h>
#include <upti/register.h>
#include <upti/registration.h>

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UVK_EXPORT __attribute__((visibility("default")))

upti_vulkan_dispatch_t uvk_registered;
static const upti_operation_plan_t *const g_no_plans[UPTI_VULKAN_API_LAST + 1];
const upti_operation_plan_t *const *uvk_api_plans = g_no_plans;
int uvk_tracing;
_Atomic int uvk_reg_state;

/* The trampolines jump through uvk_registered from the first call on. The
   loader unloads a layer when its last instance is destroyed: the layer
   stays loaded instead (RTLD_NODELETE), so that its registration with UPTI,
   the table tools chained, its exit handler and what it still tracks
   outlive the instance, and a later instance finds them. */
__attribute__((constructor)) static void fill_registered(void)
{
    uvk_fill_wrappers(&uvk_registered);
    Dl_info self;
    if (dladdr((void *)fill_registered, &self) != 0 && self.dli_fname != NULL)
        dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* --- registration --- */

#define UVK_MAX_AGENTS 32
static struct {
    VkPhysicalDevice phys;
    upti_agent_id_t id;
} g_agents[UVK_MAX_AGENTS];
static _Atomic unsigned g_num_agents;

upti_agent_id_t uvk_agent_of(VkPhysicalDevice phys)
{
    unsigned n = atomic_load_explicit(&g_num_agents, memory_order_acquire);
    for (unsigned i = 0; i < n; i++)
        if (g_agents[i].phys == phys)
            return g_agents[i].id;
    upti_agent_id_t none = {0};
    return none;
}

/* Registers physical device phys (props) as UPTI agent number node; its id, 0 if refused. */
static upti_agent_id_t add_agent(const upti_vulkan_dispatch_t *n, VkPhysicalDevice phys,
                                 const VkPhysicalDeviceProperties *props, unsigned node)
{
    uint64_t memory = 0;
    if (n->vkGetPhysicalDeviceMemoryProperties != NULL) {
        VkPhysicalDeviceMemoryProperties mp;
        n->vkGetPhysicalDeviceMemoryProperties(phys, &mp);
        for (uint32_t h = 0; h < mp.memoryHeapCount; h++)
            if (mp.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
                memory += mp.memoryHeaps[h].size;
    }
    char vendor[16], driver[32];
    snprintf(vendor, sizeof vendor, "0x%04x", props->vendorID);
    snprintf(driver, sizeof driver, "%u.%u.%u", VK_API_VERSION_MAJOR(props->driverVersion),
             VK_API_VERSION_MINOR(props->driverVersion), VK_API_VERSION_PATCH(props->driverVersion));
    upti_agent_t agent;
    memset(&agent, 0, sizeof agent);
    agent.size = sizeof agent;
    agent.type = props->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? UPTI_AGENT_TYPE_CPU
                 : (props->deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                    props->deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
                    props->deviceType == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU)
                     ? UPTI_AGENT_TYPE_GPU
                     : UPTI_AGENT_TYPE_ACCELERATOR;
    agent.runtime = "vulkan";
    agent.name = props->deviceName;
    agent.vendor = vendor;
    agent.driver_version = driver;
    agent.global_memory_bytes = memory;
    agent.runtime_handle = (uint64_t)(uintptr_t)phys;
    agent.node_id = node;
    upti_agent_id_t id = {0};
    if (upti_runtime_add_agent(&agent, &id) != UPTI_STATUS_SUCCESS)
        id.handle = 0;
    return id;
}

/* The physical devices the program enumerated become agents, each once, numbered in the order
   they first came: those of the first instance that enumerated (a later instance's handles of
   the same devices are other handles: not agents again). The layer enumerates none itself:
   each vkEnumeratePhysicalDevices runs the drivers' and implicit layers' probes again, and some
   say so (Mesa's device selection layer prints "XDG_RUNTIME_DIR is invalid" once per call: two
   more lines on the program's stderr when the layer enumerated at vkCreateInstance).
   n: the instance's next entries. */
static pthread_mutex_t g_agents_lock = PTHREAD_MUTEX_INITIALIZER;
static VkInstance g_agents_instance;

static void add_agents(const upti_vulkan_dispatch_t *n, VkInstance instance, const VkPhysicalDevice *devs,
                       uint32_t count)
{
    if (!uvk_tracing || devs == NULL || n->vkGetPhysicalDeviceProperties == NULL)
        return;
    pthread_mutex_lock(&g_agents_lock);
    if (g_agents_instance == VK_NULL_HANDLE)
        g_agents_instance = instance;
    for (uint32_t i = 0; i < count && instance == g_agents_instance; i++) {
        unsigned have = atomic_load(&g_num_agents), j = 0;
        while (j < have && g_agents[j].phys != devs[i])
            j++;
        if (j < have || devs[i] == VK_NULL_HANDLE || have == UVK_MAX_AGENTS)
            continue;
        VkPhysicalDeviceProperties props;
        n->vkGetPhysicalDeviceProperties(devs[i], &props);
        g_agents[have].id = add_agent(n, devs[i], &props, have);
        g_agents[have].phys = devs[i];
        atomic_store_explicit(&g_num_agents, have + 1, memory_order_release);
    }
    pthread_mutex_unlock(&g_agents_lock);
}

VkResult uvk_dt_vkEnumeratePhysicalDevices(const upti_vulkan_dispatch_t *n, VkInstance instance,
                                           uint32_t *pPhysicalDeviceCount, VkPhysicalDevice *pPhysicalDevices)
{
    VkResult r = n->vkEnumeratePhysicalDevices(instance, pPhysicalDeviceCount, pPhysicalDevices);
    if ((r == VK_SUCCESS || r == VK_INCOMPLETE) && pPhysicalDeviceCount != NULL)
        add_agents(n, instance, pPhysicalDevices, *pPhysicalDeviceCount);
    return r;
}

/* The devices of the groups the program enumerated (a program may never call
   vkEnumeratePhysicalDevices). */
static VkResult enumerate_groups(PFN_vkEnumeratePhysicalDeviceGroups next, const upti_vulkan_dispatch_t *n,
                                 VkInstance instance, uint32_t *count, VkPhysicalDeviceGroupProperties *groups)
{
    VkResult r = next(instance, count, groups);
    if ((r == VK_SUCCESS || r == VK_INCOMPLETE) && count != NULL && groups != NULL)
        for (uint32_t g = 0; g < *count; g++)
            add_agents(n, instance, groups[g].physicalDevices,
                       groups[g].physicalDeviceCount < VK_MAX_DEVICE_GROUP_SIZE ? groups[g].physicalDeviceCount
                                                                                : VK_MAX_DEVICE_GROUP_SIZE);
    return r;
}

VkResult uvk_dt_vkEnumeratePhysicalDeviceGroups(const upti_vulkan_dispatch_t *n, VkInstance instance,
                                                uint32_t *pPhysicalDeviceGroupCount,
                                                VkPhysicalDeviceGroupProperties *pPhysicalDeviceGroupProperties)
{
    return enumerate_groups(n->vkEnumeratePhysicalDeviceGroups, n, instance, pPhysicalDeviceGroupCount,
                            pPhysicalDeviceGroupProperties);
}

VkResult uvk_dt_vkEnumeratePhysicalDeviceGroupsKHR(const upti_vulkan_dispatch_t *n, VkInstance instance,
                                                   uint32_t *pPhysicalDeviceGroupCount,
                                                   VkPhysicalDeviceGroupProperties *pPhysicalDeviceGroupProperties)
{
    return enumerate_groups(n->vkEnumeratePhysicalDeviceGroupsKHR, n, instance, pPhysicalDeviceGroupCount,
                            pPhysicalDeviceGroupProperties);
}

/* *out = UPTI's plans of kind, if it has at least last entries. */
static void load_plans(upti_tracing_kind_t kind, uint32_t last, const upti_operation_plan_t *const **out)
{
    const upti_operation_plan_t *const *plans = NULL;
    uint32_t count = 0;
    if (upti_runtime_get_operation_plans(kind, &plans, &count) == UPTI_STATUS_SUCCESS && plans != NULL &&
        count >= last)
        __atomic_store_n(out, plans, __ATOMIC_RELEASE);
}

void uvk_register_slow(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&uvk_reg_state, &expected, 1))
        return; /* in progress (a tool's initialize using Vulkan): this call goes on untraced */
    /* A program linked with libupti may subscribe at any time (callback.h). */
    void *global = dlopen(NULL, RTLD_LAZY);
    int subscriber = global != NULL && dlsym(global, "upti_callback_subscribe") != NULL;
    if (global != NULL)
        dlclose(global);
    upti_register_library_id_t id;
    void *tables[1] = {&uvk_registered};
    upti_status_t st =
        upti_register_library_api_table("vulkan", UPTI_VULKAN_REGISTRY_VERSION, tables, 1, &id);
    if (st == UPTI_STATUS_ERROR_DEADLOCK) {
        /* Tools are being discovered by this thread or for it: a later call registers. */
        atomic_store_explicit(&uvk_reg_state, 0, memory_order_release);
        return;
    }
    if (st == UPTI_STATUS_SUCCESS) {
        int initialized = 0, tools = 0;
        upti_is_initialized(&initialized);
        upti_runtime_tools_present(&tools);
        if (initialized && (tools || subscriber)) {
            load_plans(UPTI_TRACING_KIND_VULKAN_API, UPTI_VULKAN_API_LAST, &uvk_api_plans);
            load_plans(UPTI_TRACING_KIND_KERNEL_DISPATCH, UPTI_KERNEL_DISPATCH_LAST, &uvk_kernel_plans);
            load_plans(UPTI_TRACING_KIND_MEMORY_COPY, UPTI_MEMORY_COPY_LAST, &uvk_copy_plans);
            load_plans(UPTI_TRACING_KIND_MEMORY_ALLOCATION, UPTI_MEMORY_ALLOCATION_LAST, &uvk_alloc_plans);
            load_plans(UPTI_TRACING_KIND_CODE_OBJECT, UPTI_CODE_OBJECT_LAST, &uvk_code_plans);
            load_plans(UPTI_TRACING_KIND_MARKER_API, UPTI_MARKER_API_LAST, &uvk_marker_plans);
            uvk_sub_init();
            uvk_tracing = 1;
            /* Registered after UPTI's own exit handler, so it runs before it:
               pending dispatches reach the buffers before they are flushed. */
            atexit(uvk_dt_drain_all);
        }
    } else {
        upti_runtime_warn("vulkan: registration with UPTI failed; Vulkan is not traced");
    }
    atomic_store_explicit(&uvk_reg_state, 2, memory_order_release);
}

/* --- chain info --- */

/* The loader's structure of type (VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO:
   a VkLayerInstanceCreateInfo, else a VkLayerDeviceCreateInfo) in chain that
   holds function, NULL if none. */
static void *loader_info(const void *chain, VkStructureType type, VkLayerFunction function)
{
    for (const VkBaseInStructure *s = chain; s != NULL; s = s->pNext) {
        if (s->sType != type)
            continue;
        VkLayerFunction f = type == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO
                                ? ((const VkLayerInstanceCreateInfo *)(const void *)s)->function
                                : ((const VkLayerDeviceCreateInfo *)(const void *)s)->function;
        if (f == function)
            return (void *)(uintptr_t)s;
    }
    return NULL;
}

static VkLayerInstanceCreateInfo *instance_link(const VkInstanceCreateInfo *ci)
{
    return loader_info(ci->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO, VK_LAYER_LINK_INFO);
}

static VkLayerDeviceCreateInfo *device_link(const VkDeviceCreateInfo *ci)
{
    return loader_info(ci->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO, VK_LAYER_LINK_INFO);
}

/* The loader's callback that makes a dispatchable object the layer gets
   from below (a queue, a command buffer) usable by the layers under it. */
static PFN_vkSetDeviceLoaderData device_loader_data(const VkDeviceCreateInfo *ci)
{
    const VkLayerDeviceCreateInfo *l =
        loader_info(ci->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO, VK_LOADER_DATA_CALLBACK);
    return l != NULL ? l->u.pfnSetDeviceLoaderData : NULL;
}

/* Fills t with the next layer's entries of one level. */
static void fill_next(upti_vulkan_dispatch_t *t, uvk_level_t level, PFN_vkGetInstanceProcAddr gipa,
                      VkInstance instance, PFN_vkGetDeviceProcAddr gdpa, VkDevice device)
{
    for (size_t i = 0;; i++) {
        const uvk_command_t *c = uvk_command_at(i);
        if (c == NULL)
            break;
        if (c->level != level)
            continue;
        PFN_vkVoidFunction f = level == UVK_DEVICE ? gdpa(device, c->name) : gipa(instance, c->name);
        memcpy((char *)t + c->offset, &f, sizeof f);
    }
}

/* --- the commands the layer handles itself (called by the generated wrappers) --- */

VKAPI_ATTR VkResult VKAPI_CALL uvk_impl_vkCreateInstance(const VkInstanceCreateInfo *pCreateInfo,
                                                         const VkAllocationCallbacks *pAllocator,
                                                         VkInstance *pInstance)
{
    VkLayerInstanceCreateInfo *link = pCreateInfo != NULL ? instance_link(pCreateInfo) : NULL;
    if (link == NULL || link->u.pLayerInfo == NULL)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(VK_NULL_HANDLE, "vkCreateInstance");
    if (create == NULL)
        return VK_ERROR_INITIALIZATION_FAILED;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext; /* for the layers beneath */
    uvk_object_t *o = uvk_object_add();
    if (o == NULL) {
        upti_runtime_warn("vulkan: too many instances and devices; this one is created without the layer's tables");
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    VkResult r = create(pCreateInfo, pAllocator, pInstance);
    if (r != VK_SUCCESS)
        return r;
    o->instance = *pInstance;
    o->next_gipa = gipa;
    const VkApplicationInfo *app = pCreateInfo->pApplicationInfo;
    o->api_version = app != NULL && app->apiVersion != 0 ? app->apiVersion : VK_API_VERSION_1_0;
    for (uint32_t i = 0; i < pCreateInfo->enabledExtensionCount; i++)
        if (strcmp(pCreateInfo->ppEnabledExtensionNames[i], VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME) == 0)
            o->properties2 = 1;
    fill_next(&o->next, UVK_INSTANCE, gipa, *pInstance, NULL, VK_NULL_HANDLE);
    uvk_object_publish(o, uvk_key(*pInstance));
    return r;
}

VKAPI_ATTR void VKAPI_CALL uvk_impl_vkDestroyInstance(VkInstance instance, const VkAllocationCallbacks *pAllocator)
{
    void *key = instance != VK_NULL_HANDLE ? uvk_key(instance) : NULL; /* read before the handle is freed */
    uvk_object_t *o = key != NULL ? uvk_object_find(key) : NULL;
    if (o != NULL && o->next.vkDestroyInstance != NULL) {
        o->next.vkDestroyInstance(instance, pAllocator);
        uvk_object_remove(key);
    }
}

/* The device extensions the layer may enable for itself, and their
   commands: where the program did not enable one, vkGetDeviceProcAddr
   answers NULL for them, as it does without the layer. */
static const struct {
    const char *name;
    const char *commands[3];
} k_layer_extensions[] = {
    {VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME, {"vkGetCalibratedTimestampsEXT"}},
    {VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME,
     {"vkGetSemaphoreCounterValueKHR", "vkWaitSemaphoresKHR", "vkSignalSemaphoreKHR"}},
    {VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME, {"vkResetQueryPoolEXT"}},
};
#define N_LAYER_EXTENSIONS (sizeof k_layer_extensions / sizeof k_layer_extensions[0])

/* The bits (one per k_layer_extensions entry) of names[0..n). */
static unsigned layer_extension_bits(const char *const *names, uint32_t n)
{
    unsigned bits = 0;
    for (uint32_t i = 0; i < n; i++)
        for (unsigned e = 0; e < N_LAYER_EXTENSIONS; e++)
            if (strcmp(names[i], k_layer_extensions[e].name) == 0)
                bits |= 1u << e;
    return bits;
}

/* Whether name is a command of an extension in bits. */
static int command_of(unsigned bits, const char *name)
{
    for (unsigned e = 0; e < N_LAYER_EXTENSIONS; e++)
        for (unsigned c = 0; (bits & (1u << e)) && c < 3 && k_layer_extensions[e].commands[c] != NULL; c++)
            if (strcmp(name, k_layer_extensions[e].commands[c]) == 0)
                return 1;
    return 0;
}

/* Whether the physical device offers the device extension name. */
static int has_extension(const upti_vulkan_dispatch_t *inst, VkPhysicalDevice phys, const char *name)
{
    uint32_t n = 0;
    if (inst->vkEnumerateDeviceExtensionProperties == NULL ||
        inst->vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return 0;
    VkExtensionProperties *props = calloc(n, sizeof *props);
    int found = 0;
    if (props != NULL && inst->vkEnumerateDeviceExtensionProperties(phys, NULL, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(props[i].extensionName, name) == 0;
    free(props);
    return found;
}

/* Adds the device extension name to names (*n of them) unless it is there;
   1 if it is enabled then (0: the device does not offer it). */
static int enable_extension(const upti_vulkan_dispatch_t *inst, VkPhysicalDevice phys, const char **names,
                            uint32_t *n, const char *name)
{
    for (uint32_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    if (!has_extension(inst, phys, name))
        return 0;
    names[(*n)++] = name;
    return 1;
}

/* Enables a Vulkan 1.2 feature on ci where the device has it and the
   program's features allow it: a program that set the feature in its
   VkPhysicalDeviceVulkan12Features (v12: the member's offset there) or in
   the feature's own structure (ours->sType; member at offset 16 in it) keeps
   its choice; otherwise ours (the feature set, pNext free) is chained to ci
   and the extension that offers it enabled. 1 if the feature is enabled.
   Both features the layer uses (timelineSemaphore, hostQueryReset) are
   required of every device that offers their extension. */
static int enable_feature(const upti_vulkan_dispatch_t *inst, VkPhysicalDevice phys, VkDeviceCreateInfo *ci,
                          const char **names, uint32_t *n, size_t v12, const char *extension, VkBaseOutStructure *ours)
{
    for (const VkBaseInStructure *b = ci->pNext; b != NULL; b = b->pNext) {
        if (b->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
            return *(const VkBool32 *)((const char *)b + v12) == VK_TRUE;
        if (b->sType == ours->sType)
            return *(const VkBool32 *)((const char *)b + sizeof(VkBaseInStructure)) == VK_TRUE;
    }
    if (!enable_extension(inst, phys, names, n, extension))
        return 0;
    ours->pNext = (VkBaseOutStructure *)ci->pNext;
    ci->pNext = ours;
    return 1;
}

/* Whether device times may be wanted of a device made now: some context
   wants KERNEL_DISPATCH or MEMORY_COPY operations (or a subscriber the
   GPU_OPERATION domains), or no context wants anything of Vulkan yet (a
   tool's contexts that start later, in a capture window, may want them
   then). With VULKAN_API alone the layer enables nothing on the device. */
static int device_times_may_be_wanted(void)
{
    for (uint32_t op = 1; op < UPTI_KERNEL_DISPATCH_LAST; op++)
        if (uvk_dt_wanted(UPTI_TRACING_KIND_KERNEL_DISPATCH, op))
            return 1;
    for (uint32_t op = 1; op < UPTI_MEMORY_COPY_LAST; op++)
        if (uvk_dt_wanted(UPTI_TRACING_KIND_MEMORY_COPY, op))
            return 1;
    const upti_operation_plan_t *const *const kinds[] = {uvk_api_plans, uvk_alloc_plans, uvk_code_plans,
                                                         uvk_marker_plans};
    const uint32_t lasts[] = {UPTI_VULKAN_API_LAST, UPTI_MEMORY_ALLOCATION_LAST, UPTI_CODE_OBJECT_LAST,
                              UPTI_MARKER_API_LAST};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (uint32_t op = 1; kinds[k] != NULL && op < lasts[k]; op++)
            if (upti_runtime_plan(kinds[k], op) != NULL)
                return 0;
    return 1;
}

/* Whether the program's instance lets the device enable the extensions the
   layer uses (VK_EXT_calibrated_timestamps, VK_KHR_timeline_semaphore,
   VK_EXT_host_query_reset): each requires Vulkan 1.1 (the version of the
   instance and of the device both) or VK_KHR_get_physical_device_properties2
   on the instance. A Vulkan 1.0 program without it gets none of them. */
static int extensions_allowed(const uvk_object_t *inst, VkPhysicalDevice phys)
{
    if (inst->properties2)
        return 1;
    VkPhysicalDeviceProperties props;
    inst->next.vkGetPhysicalDeviceProperties(phys, &props);
    uint32_t version = props.apiVersion < inst->api_version ? props.apiVersion : inst->api_version;
    return VK_API_VERSION_MAJOR(version) > 1 || VK_API_VERSION_MINOR(version) >= 1;
}

VKAPI_ATTR VkResult VKAPI_CALL uvk_impl_vkCreateDevice(VkPhysicalDevice physicalDevice,
                                                       const VkDeviceCreateInfo *pCreateInfo,
                                                       const VkAllocationCallbacks *pAllocator, VkDevice *pDevice)
{
    VkLayerDeviceCreateInfo *link = pCreateInfo != NULL ? device_link(pCreateInfo) : NULL;
    uvk_object_t *inst = uvk_object_find(uvk_key(physicalDevice));
    if (link == NULL || link->u.pLayerInfo == NULL || inst == NULL)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(inst->instance, "vkCreateDevice");
    if (create == NULL)
        return VK_ERROR_INITIALIZATION_FAILED;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    uvk_object_t *o = uvk_object_add();
    if (o == NULL) {
        upti_runtime_warn("vulkan: too many instances and devices; this one is created without the layer's tables");
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    /* Device times need VK_EXT_calibrated_timestamps, and are cheapest with a
       timeline semaphore (signalled at the end of the program's own
       submissions), and host query reset (for command buffers of queue
       families without graphics or compute, which can neither reset nor
       copy queries): all enabled on a copy of the program's create info
       where the device has them and the program's instance allows them. */
    VkDeviceCreateInfo ci = *pCreateInfo;
    const char *names_buf[64 + 3];
    const char **names = NULL;
    int calibrated = 0, timeline = 0, host_reset = 0;
    VkPhysicalDeviceTimelineSemaphoreFeatures tl_features = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES, .timelineSemaphore = VK_TRUE};
    VkPhysicalDeviceHostQueryResetFeatures hr_features = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES, .hostQueryReset = VK_TRUE};
    int wanted = uvk_tracing && device_times_may_be_wanted();
    if (wanted && ci.enabledExtensionCount <= 64 && extensions_allowed(inst, physicalDevice)) {
        names = names_buf;
        for (uint32_t i = 0; i < ci.enabledExtensionCount; i++)
            names[i] = ci.ppEnabledExtensionNames[i];
        uint32_t nnames = ci.enabledExtensionCount;
        /* UPTI_VK_DISABLE_CALIBRATED=1 (for testing): the clock is measured as
           on a device without the extension (clock_probe.c). */
        if (upti_env_get(UPTI_ENV_VK_DISABLE_CALIBRATED) == 0)
            calibrated = enable_extension(&inst->next, physicalDevice, names, &nnames,
                                          VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
        timeline = enable_feature(&inst->next, physicalDevice, &ci, names, &nnames,
                                  offsetof(VkPhysicalDeviceVulkan12Features, timelineSemaphore),
                                  VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME, (VkBaseOutStructure *)&tl_features);
        host_reset = enable_feature(&inst->next, physicalDevice, &ci, names, &nnames,
                                    offsetof(VkPhysicalDeviceVulkan12Features, hostQueryReset),
                                    VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME, (VkBaseOutStructure *)&hr_features);
        o->added_extensions = layer_extension_bits(names + ci.enabledExtensionCount, nnames - ci.enabledExtensionCount);
        ci.ppEnabledExtensionNames = names;
        ci.enabledExtensionCount = nnames;
    }
    VkResult r = create(physicalDevice, &ci, pAllocator, pDevice);
    if (r != VK_SUCCESS)
        return r;
    o->is_device = 1;
    o->instance = inst->instance;
    o->device = *pDevice;
    o->next_gipa = gipa;
    o->next_gdpa = gdpa;
    fill_next(&o->next, UVK_DEVICE, NULL, VK_NULL_HANDLE, gdpa, *pDevice);
    if (uvk_tracing)
        uvk_dt_device_created(o, physicalDevice, &inst->next, pCreateInfo, device_loader_data(pCreateInfo),
                              wanted, calibrated, timeline, host_reset);
    uvk_object_publish(o, uvk_key(*pDevice));
    return r;
}

VKAPI_ATTR void VKAPI_CALL uvk_impl_vkDestroyDevice(VkDevice device, const VkAllocationCallbacks *pAllocator)
{
    void *key = device != VK_NULL_HANDLE ? uvk_key(device) : NULL; /* read before the handle is freed */
    uvk_object_t *o = key != NULL ? uvk_object_find(key) : NULL;
    if (o == NULL || o->next.vkDestroyDevice == NULL)
        return;
    if (uvk_tracing)
        uvk_dt_device_destroying(o);
    o->next.vkDestroyDevice(device, pAllocator);
    uvk_object_remove(key);
}

/* The layer adds no device extension; other layers' and the driver's lists pass through. */
VKAPI_ATTR VkResult VKAPI_CALL uvk_impl_vkEnumerateDeviceExtensionProperties(VkPhysicalDevice physicalDevice,
                                                                             const char *pLayerName,
                                                                             uint32_t *pPropertyCount,
                                                                             VkExtensionProperties *pProperties)
{
    if (pLayerName != NULL && strcmp(pLayerName, UVK_LAYER_NAME) == 0) {
        *pPropertyCount = 0;
        return VK_SUCCESS;
    }
    const upti_vulkan_dispatch_t *n = uvk_instance_table(physicalDevice);
    if (n->vkEnumerateDeviceExtensionProperties == NULL)
        return VK_ERROR_INITIALIZATION_FAILED;
    return n->vkEnumerateDeviceExtensionProperties(physicalDevice, pLayerName, pPropertyCount, pProperties);
}

VKAPI_ATTR VkResult VKAPI_CALL uvk_impl_vkEnumerateDeviceLayerProperties(VkPhysicalDevice physicalDevice,
                                                                         uint32_t *pPropertyCount,
                                                                         VkLayerProperties *pProperties)
{
    const upti_vulkan_dispatch_t *n = uvk_instance_table(physicalDevice);
    if (n->vkEnumerateDeviceLayerProperties != NULL)
        return n->vkEnumerateDeviceLayerProperties(physicalDevice, pPropertyCount, pProperties);
    *pPropertyCount = 0;
    return VK_SUCCESS;
}

/* --- proc-addr entry points --- */

/* Commands that must reach the layer even when nothing is traced: they keep its tables. */
static int keeps_tables(const uvk_command_t *c)
{
    return c->op == UPTI_VULKAN_API_vkCreateInstance || c->op == UPTI_VULKAN_API_vkDestroyInstance ||
           c->op == UPTI_VULKAN_API_vkCreateDevice || c->op == UPTI_VULKAN_API_vkDestroyDevice ||
           c->op == UPTI_VULKAN_API_vkEnumerateDeviceExtensionProperties;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL uvk_GetDeviceProcAddr(VkDevice device, const char *pName);

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL uvk_GetInstanceProcAddr(VkInstance instance, const char *pName)
{
    if (pName == NULL)
        return NULL;
    if (strcmp(pName, "vkGetInstanceProcAddr") == 0)
        return (PFN_vkVoidFunction)uvk_GetInstanceProcAddr;
    if (strcmp(pName, "vkGetDeviceProcAddr") == 0)
        return (PFN_vkVoidFunction)uvk_GetDeviceProcAddr;
    const uvk_command_t *c = uvk_command_find(pName);
    if (c != NULL && c->level == UVK_GLOBAL)
        return c->trampoline;
    if (instance == VK_NULL_HANDLE)
        return NULL;
    uvk_object_t *o = uvk_object_find(uvk_key(instance));
    if (o == NULL)
        return NULL;
    PFN_vkVoidFunction next = o->next_gipa(o->instance, pName);
    if (c == NULL || next == NULL)
        return next;
    return uvk_tracing || keeps_tables(c) ? c->trampoline : next;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL uvk_GetDeviceProcAddr(VkDevice device, const char *pName)
{
    if (pName == NULL || device == VK_NULL_HANDLE)
        return NULL;
    if (strcmp(pName, "vkGetDeviceProcAddr") == 0)
        return (PFN_vkVoidFunction)uvk_GetDeviceProcAddr;
    uvk_object_t *o = uvk_object_find(uvk_key(device));
    if (o == NULL || o->next_gdpa == NULL || (o->added_extensions != 0 && command_of(o->added_extensions, pName)))
        return NULL;
    PFN_vkVoidFunction next = o->next_gdpa(o->device, pName);
    const uvk_command_t *c = uvk_command_find(pName);
    if (c == NULL || next == NULL || c->level != UVK_DEVICE)
        return next;
    return uvk_tracing || keeps_tables(c) ? c->trampoline : next;
}

/* Loaders older than interface 2 look these up by name. */
UVK_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance, const char *pName)
{
    return uvk_GetInstanceProcAddr(instance, pName);
}

UVK_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char *pName)
{
    return uvk_GetDeviceProcAddr(device, pName);
}

UVK_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *pVersionStruct)
{
    if (pVersionStruct == NULL || pVersionStruct->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT)
        return VK_ERROR_INITIALIZATION_FAILED;
    if (pVersionStruct->loaderLayerInterfaceVersion >= 2) {
        pVersionStruct->pfnGetInstanceProcAddr = uvk_GetInstanceProcAddr;
        pVersionStruct->pfnGetDeviceProcAddr = uvk_GetDeviceProcAddr;
        pVersionStruct->pfnGetPhysicalDeviceProcAddr = NULL;
        pVersionStruct->loaderLayerInterfaceVersion = 2;
    }
    return VK_SUCCESS;
}
