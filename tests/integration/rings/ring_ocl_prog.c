/* SPDX-License-Identifier: MIT */
/* An OpenCL program for the shared-ring agent tests (check_rings.py
 * ocl_agents, ocl_fork), traced by ring_ocl_tool through the UPTI layer:
 *
 *   ring_ocl_prog [fork]
 *
 * Lists every platform's devices and creates and releases a context on the
 * first device (the layer registers the devices as agents at the first
 * OpenCL call). fork: then forks a child that makes 3 uptx_mark("child")
 * calls and _exits (no OpenCL call), and waits for it. Last, one
 * uptx_mark("parent"). Exit status 0, or 1 if something failed.
 */
#include <CL/cl.h>
#include <uptx/uptx.h>

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int do_fork = argc > 1 && strcmp(argv[1], "fork") == 0;
    cl_platform_id platforms[8];
    cl_uint np = 0;
    if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS || np == 0) {
        fprintf(stderr, "ring_ocl_prog: no OpenCL platform\n");
        return 1;
    }
    cl_device_id first = NULL;
    for (cl_uint p = 0; p < np && p < 8; p++) {
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) == CL_SUCCESS && nd > 0 &&
            first == NULL)
            first = devs[0];
    }
    if (first == NULL) {
        fprintf(stderr, "ring_ocl_prog: no OpenCL device\n");
        return 1;
    }
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &first, NULL, NULL, &err);
    if (ctx == NULL || err != CL_SUCCESS || clReleaseContext(ctx) != CL_SUCCESS) {
        fprintf(stderr, "ring_ocl_prog: clCreateContext: %d\n", err);
        return 1;
    }
    if (do_fork) {
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            for (int i = 0; i < 3; i++)
                uptx_mark("child");
            _exit(0);
        }
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            return 1;
    }
    uptx_mark("parent");
    return 0;
}
