/* SPDX-License-Identifier: MIT */
/* A Vulkan device's clock: its timestamp properties, and the mapping of its
 * ticks onto UPTI's clock.
 *
 * Device ticks x timestampPeriod, modulo 2^timestampValidBits (tick_map.h),
 * are mapped onto UPTI's clock in one of two ways, the "method" recorded in
 * the trace's metadata (vulkan.calibration_method):
 *   calibrated_timestamps  VK_EXT_calibrated_timestamps (enabled by the layer
 *       on devices that have it) maps them onto CLOCK_MONOTONIC, then onto
 *       UPTI's clock by reading both host clocks back to back; recalibrated
 *       at a read of a submission's queries once the last calibration is
 *       UPTI_VK_CALIBRATE_INTERVAL_MS old (default 10 ms; 0: at every read), so the mapping follows the
 *       clocks' drift through a long run (10 ms at 100 ppm: 1 us), or a quarter of the device counter's
 *       range if that is less (a counter of few valid bits wraps: tick_map.h). Its
 *       uncertainty: the driver's maxDeviation plus half the window of the
 *       host-clock read.
 *   measured_offset  a device without the extension (or any device, with
 *       UPTI_VK_DISABLE_CALIBRATED=1, for testing): the layer measures the
 *       offset itself (clock_probe.c), a timestamp written by the device
 *       between two reads of UPTI's clock; its uncertainty: half the
 *       window, plus a tick.
 * The largest uncertainty of any mapping and the number of mappings go into
 * the trace's metadata (upti_runtime_set_metadata).
 * A device whose clock can be mapped neither way gets its operations traced
 * without device times (0) and one "upti:" line.
 */
#include "devtime.h"

#include <string.h>
#include <time.h>

/* --- device state --- */

void uvk_dt_device_created(uvk_object_t *o, VkPhysicalDevice phys, const upti_vulkan_dispatch_t *inst,
                           const VkDeviceCreateInfo *ci, PFN_vkSetDeviceLoaderData set_loader_data, int wanted,
                           int calibrated, int timeline, int host_reset)
{
    uvk_device_state_t *s = &o->dt;
    memset(s, 0, sizeof *s);
    VkPhysicalDeviceProperties props;
    inst->vkGetPhysicalDeviceProperties(phys, &props);
    s->period = props.limits.timestampPeriod;
    s->phys = phys;
    s->agent = uvk_agent_of(phys);
    uint32_t nf = 0;
    inst->vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, NULL);
    VkQueueFamilyProperties fams[32];
    if (nf > 32)
        nf = 32;
    inst->vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, fams);
    s->cpu = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    s->nfamilies = nf;
    for (uint32_t i = 0; i < nf; i++) {
        s->family_flags[i] = fams[i].queueFlags;
        s->family_valid_bits[i] = fams[i].timestampValidBits;
    }
    s->valid_bits = 64;
    s->timestamps = props.limits.timestampComputeAndGraphics ? 1 : 0;
    for (uint32_t i = 0; i < nf; i++)
        if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
            if (fams[i].timestampValidBits == 0)
                s->timestamps = 0;
            else if (fams[i].timestampValidBits < s->valid_bits)
                s->valid_bits = fams[i].timestampValidBits;
        }
    s->calibrated = calibrated && o->next.vkGetCalibratedTimestampsEXT != NULL;
    inst->vkGetPhysicalDeviceMemoryProperties(phys, &s->memory);
    if (host_reset)
        s->reset_pool = o->next.vkResetQueryPoolEXT != NULL ? o->next.vkResetQueryPoolEXT : o->next.vkResetQueryPool;
    if (timeline) {
        s->get_counter = o->next.vkGetSemaphoreCounterValueKHR != NULL ? o->next.vkGetSemaphoreCounterValueKHR
                                                                        : o->next.vkGetSemaphoreCounterValue;
        s->wait_semaphores = o->next.vkWaitSemaphoresKHR != NULL ? o->next.vkWaitSemaphoresKHR
                                                                 : o->next.vkWaitSemaphores;
        if (s->wait_semaphores == NULL)
            s->get_counter = NULL;
    }
    if (!wanted)
        return;
    if (!s->timestamps)
        upti_runtime_warn("vulkan: a compute queue family of this device has no timestamps; "
                          "its dispatches are traced without device times");
    else if (!s->calibrated && !(s->measured = uvk_probe_create(o, ci, set_loader_data, fams, nf)))
        upti_runtime_warn("vulkan: the device has no VK_EXT_calibrated_timestamps and the layer could not "
                          "measure its clock; its dispatches are traced without device times");
}

/* The decimal text of v (snprintf costs some 350 instructions: this runs at every read). */
static void u64_text(char out[21], uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
}

/* The largest uncertainty of any mapping so far, how many there were and by
   which methods: metadata of the trace (vulkan.calibration_max_deviation_ns,
   vulkan.calibrations, vulkan.calibration_method). */
static void record_deviation(uint64_t deviation, int measured)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t max_deviation, calibrations;
    static unsigned methods;
    static const char *const method_names[] = {"", "calibrated_timestamps", "measured_offset",
                                               "calibrated_timestamps,measured_offset"};
    char text[21];
    unsigned method = measured ? 2u : 1u;
    pthread_mutex_lock(&lock);
    calibrations++;
    if ((methods | method) != methods) {
        methods |= method;
        upti_runtime_set_metadata("vulkan.calibration_method", method_names[methods]);
    }
    if (deviation > max_deviation || calibrations == 1) {
        if (deviation > max_deviation)
            max_deviation = deviation;
        u64_text(text, max_deviation);
        upti_runtime_set_metadata("vulkan.calibration_max_deviation_ns", text);
    }
    u64_text(text, calibrations);
    upti_runtime_set_metadata("vulkan.calibrations", text);
    pthread_mutex_unlock(&lock);
}

/* How long a calibration is reused, ns (UPTI_VK_CALIBRATE_INTERVAL_MS, read once). */
static uint64_t calibrate_interval(void)
{
    static _Atomic int64_t ms = -1;
    return uvk_env_once(UPTI_ENV_VK_CALIBRATE_INTERVAL_MS, &ms) * 1000000;
}

int uvk_dt_calibrate(uvk_object_t *o, uvk_tick_map_t *map)
{
    uvk_device_state_t *s = &o->dt;
    if (s->measured) {
        *map = s->probe.map;
        s->deviation = s->probe.bound;
        if (s->probe.measurements != s->mapped_measurements) {
            s->mapped_measurements = s->probe.measurements;
            record_deviation(s->deviation, 1);
        }
        return 1;
    }
    if (!s->calibrated)
        return 0;
    /* A recent calibration is reused: one costs a driver call, six clock reads
       and the metadata (some 800 instructions, at every submission read before). */
    upti_timestamp_t now = uvk_now();
    if (s->map_at != 0 &&
        now - s->map_at < uvk_tick_map_reuse_ns(uvk_tick_mask(s->valid_bits), s->period, calibrate_interval())) {
        *map = s->map;
        return 1;
    }
    VkCalibratedTimestampInfoEXT info[2] = {
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_DEVICE_EXT},
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT},
    };
    uint64_t ts[2], deviation = 0;
    if (o->next.vkGetCalibratedTimestampsEXT(o->device, 2, info, ts, &deviation) != VK_SUCCESS)
        return 0;
    /* CLOCK_MONOTONIC -> UPTI's clock (CLOCK_MONOTONIC_RAW): the closest of a few back-to-back reads. */
    int64_t best = 0;
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        upti_timestamp_t u = uvk_now();
        clock_gettime(CLOCK_MONOTONIC, &b);
        uint64_t an = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
        uint64_t bn = (uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec;
        if (bn - an < best_gap) {
            best_gap = bn - an;
            best = (int64_t)u - (int64_t)(an + (bn - an) / 2);
        }
    }
    *map = uvk_tick_map_make(uvk_tick_mask(s->valid_bits), s->period, ts[0], (int64_t)ts[1] + best);
    s->map = *map;
    s->map_at = now;
    /* The mapping's uncertainty: the driver's, plus half the window of our host-clock read. */
    s->deviation = deviation + best_gap / 2;
    record_deviation(s->deviation, 0);
    return 1;
}
