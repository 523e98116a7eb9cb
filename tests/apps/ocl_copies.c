/* SPDX-License-Identifier: MIT */
/* Every kind of memory command, once each, on one in-order queue, with
 * byte counts the test knows: see the list printed at the end. */
#include "ocl_common.h"

#include <string.h>

#define N 4096 /* bytes of each buffer */

int main(void)
{
    cl_int err;
    cl_device_id dev = ocl_first_device(NULL);
    cl_context ctx = ocl_context(dev);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    static unsigned char host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = (unsigned char)i;
    cl_mem a = ocl_buffer(ctx, CL_MEM_READ_WRITE, N);
    cl_mem b = ocl_buffer(ctx, CL_MEM_READ_WRITE, N);
    CHECK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, N, host, 0, NULL, NULL));       /* 4096 */
    CHECK(clEnqueueCopyBuffer(q, a, b, 0, 0, N, 0, NULL, NULL));                 /* 4096 */
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, N, back, 0, NULL, NULL));        /* 4096 */
    printf("copy buffer: %s\n", memcmp(host, back, N) == 0 ? "ok" : "bad");
    size_t origin[3] = {0, 0, 0}, region[3] = {16, 8, 1};
    CHECK(clEnqueueWriteBufferRect(q, a, CL_TRUE, origin, origin, region, 64, 0, 64, 0, host, 0, NULL,
                                   NULL));                                        /* 128 */
    CHECK(clEnqueueCopyBufferRect(q, a, b, origin, origin, region, 64, 0, 64, 0, 0, NULL, NULL)); /* 128 */
    CHECK(clEnqueueReadBufferRect(q, b, CL_TRUE, origin, origin, region, 64, 0, 64, 0, back, 0, NULL,
                                  NULL));                                         /* 128 */
    int pattern = 0x01020304;
    CHECK(clEnqueueFillBuffer(q, a, &pattern, sizeof pattern, 0, N, 0, NULL, NULL)); /* 4096 */
    void *mapped = clEnqueueMapBuffer(q, a, CL_TRUE, CL_MAP_READ, 0, N, 0, NULL, NULL, &err); /* 4096 */
    CHECK(err);
    printf("fill+map: %s\n", ((int *)mapped)[7] == pattern ? "ok" : "bad");
    CHECK(clEnqueueUnmapMemObject(q, a, mapped, 0, NULL, NULL));
    CHECK(clEnqueueMigrateMemObjects(q, 1, &b, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, NULL)); /* 4096 */
    CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, NULL));
    CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));

    /* Images: 16x16 RGBA8 = 1024 bytes each. */
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = ocl_image2d_desc(16, 16);
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK(err);
    cl_mem img2 = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK(err);
    size_t iregion[3] = {16, 16, 1};
    CHECK(clEnqueueWriteImage(q, img, CL_TRUE, origin, iregion, 0, 0, host, 0, NULL, NULL)); /* 1024 */
    CHECK(clEnqueueCopyImage(q, img, img2, origin, origin, iregion, 0, NULL, NULL));       /* 1024 */
    CHECK(clEnqueueReadImage(q, img2, CL_TRUE, origin, iregion, 0, 0, back, 0, NULL, NULL)); /* 1024 */
    printf("copy image: %s\n", memcmp(host, back, 1024) == 0 ? "ok" : "bad");
    CHECK(clEnqueueCopyImageToBuffer(q, img, b, origin, iregion, 0, 0, NULL, NULL));       /* 1024 */
    CHECK(clEnqueueCopyBufferToImage(q, b, img2, 0, origin, iregion, 0, NULL, NULL));      /* 1024 */
    cl_uint4 color = {{1, 2, 3, 4}};
    CHECK(clEnqueueFillImage(q, img, &color, origin, iregion, 0, NULL, NULL));              /* 1024 */
    size_t pitch = 0;
    void *imap = clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ, origin, iregion, &pitch, NULL, 0, NULL,
                                   NULL, &err);                                             /* 1024 */
    CHECK(err);
    printf("fill+map image: %s\n", ((unsigned char *)imap)[6] == 3 ? "ok" : "bad");
    CHECK(clEnqueueUnmapMemObject(q, img, imap, 0, NULL, NULL));

    /* Shared virtual memory (coarse grain). */
    void *s1 = clSVMAlloc(ctx, CL_MEM_READ_WRITE, N, 0);
    void *s2 = clSVMAlloc(ctx, CL_MEM_READ_WRITE, N, 0);
    if (s1 == NULL || s2 == NULL) {
        printf("svm: unavailable\n");
        return 1;
    }
    CHECK(clEnqueueSVMMemFill(q, s1, &pattern, sizeof pattern, N, 0, NULL, NULL));   /* 4096 */
    CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, s2, s1, N, 0, NULL, NULL));                 /* 4096 */
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, s2, N, 0, NULL, NULL));           /* 4096 */
    printf("svm: %s\n", ((int *)s2)[100] == pattern ? "ok" : "bad");
    CHECK(clEnqueueSVMUnmap(q, s2, 0, NULL, NULL));
    CHECK(clFinish(q));
    clSVMFree(ctx, s1);
    clSVMFree(ctx, s2);
    clReleaseMemObject(img);
    clReleaseMemObject(img2);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("done\n");
    return 0;
}
