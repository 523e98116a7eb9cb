/* SPDX-License-Identifier: MIT */
/* An NVTX v3 program for the NVTX capture test: every kind of annotation once.
 * Expected records are checked by test_cli.py (case nvtx). */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *worker(void *arg)
{
    (void)arg;
    nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "nvtx worker");
    nvtxRangePushA("worker push");
    nvtxMarkA("worker mark");
    nvtxRangePop();
    return NULL;
}

int main(void)
{
    nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "nvtx main");
    nvtxNameCategoryA(3, "category three");
    int d0 = nvtxRangePushA("outer");
    int d1 = nvtxRangePushA("inner");
    nvtxMarkA("plain mark");
    int p1 = nvtxRangePop();
    int p0 = nvtxRangePop();

    nvtxDomainHandle_t dom = nvtxDomainCreateA("my domain");
    nvtxDomainNameCategoryA(dom, 5, "domain category five");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered \"string\", with comma");
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = 5;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF00FF00u;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = 42;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = reg;
    nvtxDomainRangePushEx(dom, &a);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "domain mark";
    a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    a.payload.iValue = -7;
    nvtxDomainMarkEx(dom, &a);
    nvtxDomainRangePop(dom);

    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"wide \u00fc\u20ac";
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    a.payload.dValue = 1.5;
    nvtxRangeId_t r = nvtxRangeStartEx(&a);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    nvtxRangeEnd(r);
    nvtxDomainDestroy(dom);
    printf("depths %d %d %d %d\n", d0, d1, p1, p0);
    return (d0 == 0 && d1 == 1 && p1 == 1 && p0 == 0) ? 0 : 1;
}
