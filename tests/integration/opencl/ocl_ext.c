/* SPDX-License-Identifier: MIT */
/* Extension functions through clGetExtensionFunctionAddress(ForPlatform):
 * cl_ext_device_fission's clRetainDeviceEXT / clReleaseDeviceEXT are dispatch
 * slots, so calls through the returned pointers are traced. */
#include "../../apps/ocl_common.h"

typedef cl_int(CL_API_CALL *device_fn)(cl_device_id);

int main(void)
{
    cl_platform_id platform;
    cl_device_id dev = ocl_first_device(&platform);
    device_fn retain = (device_fn)clGetExtensionFunctionAddressForPlatform(platform, "clRetainDeviceEXT");
    device_fn release = (device_fn)clGetExtensionFunctionAddress("clReleaseDeviceEXT");
    void *missing = clGetExtensionFunctionAddressForPlatform(platform, "clNoSuchFunctionUPTI");
    printf("found: retain=%d release=%d missing=%d\n", retain != NULL, release != NULL, missing != NULL);
    if (retain == NULL || release == NULL)
        return 0;
    CHECK(retain(dev));
    CHECK(release(dev));
    printf("called\n");
    return 0;
}
