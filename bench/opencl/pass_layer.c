/* SPDX-License-Identifier: MIT */
/* A do-nothing OpenCL layer: returns the loader's own table, so each call
 * costs exactly the loader's layer hop. run_bench.sh compares it with no
 * layer and with libupti-opencl to split (a) between ocl-icd and UPTI.
 * It shares no code with libupti-opencl, the layer it is compared with. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT cl_int clGetLayerInfo(cl_uint name, size_t size, void *value, size_t *size_ret)
{
    static const cl_uint version = 100; /* CL_LAYER_API_VERSION_100 */
    static const char layer_name[] = "pass-through";
    const void *src = name == 0x4240 ? (const void *)&version : (const void *)layer_name;
    size_t n = name == 0x4240 ? sizeof version : sizeof layer_name;
    if (name != 0x4240 && name != 0x4241)
        return CL_INVALID_VALUE;
    if (value != NULL) {
        if (size < n)
            return CL_INVALID_VALUE;
        memcpy(value, src, n);
    }
    if (size_ret != NULL)
        *size_ret = n;
    return CL_SUCCESS;
}

static struct _cl_icd_dispatch g_table;

EXPORT cl_int clInitLayer(cl_uint num_entries, const struct _cl_icd_dispatch *target, cl_uint *num_entries_ret,
                          const struct _cl_icd_dispatch **layer_dispatch_ret)
{
    size_t n = num_entries * sizeof(void *) < sizeof g_table ? num_entries * sizeof(void *) : sizeof g_table;
    memcpy(&g_table, target, n);
    *num_entries_ret = (cl_uint)(n / sizeof(void *));
    *layer_dispatch_ret = &g_table;
    return CL_SUCCESS;
}
