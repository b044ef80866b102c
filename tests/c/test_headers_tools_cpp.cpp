/*
 * test_headers_tools_cpp.cpp - the runtime package's other headers compile as C++11, and the
 * inline overloads of acl/acl_rt_api.h call the acl_rt.h functions CANN maps them to.
 *
 * The overloads are exercised on a real stream: a typed aclrtMalloc / aclrtMallocHost, typed
 * copies, aclrtCreateEvent(event, flag), aclrtSynchronizeStream(stream, timeout) and the other
 * timeout overloads; the data that comes back is compared with what was sent.  The structs
 * CANN gives a zero-length array or a nested union keep C's layout in C++.
 */
#include "acl/acl.h"
#include "acl/acl_rt_api.h"
#include "acl/acl_rt_memory_soma.h"
#include "acl/acl_prof.h"
#include "acl/acl_dump.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "acl/acl_platform.h"

#include <cstddef>
#include <cstdio>

static_assert(sizeof(acldumpChunk) == 4120, "acldumpChunk has CANN's size");
static_assert(offsetof(acldumpChunk, dataBuf) == 4116, "acldumpChunk::dataBuf follows flag");
static_assert(sizeof(aclprofEventAttributes) == 16, "aclprofEventAttributes has CANN's size");
static_assert(ACL_TENSOR_DATA_UNDEFINED == -1 && ACL_TENSOR_DATA_END_TENSOR == 4, "acltdtTensorType values");
static_assert(DAV_3510 == 3510 && ACL_PLATFORM_MEMORY_TYPE == 16, "acl_platform.h values");
static_assert(ACL_PROF_AICORE_SHAPE == 0x800000000ULL, "acl_prof.h 64-bit flags");

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        aclError status_ = (call);                                                                   \
        if (status_ != ACL_SUCCESS) {                                                                \
            std::printf("FAIL %s -> %d (line %d)\n", #call, status_, __LINE__);                      \
            return 1;                                                                                \
        }                                                                                            \
    } while (0)

int main()
{
    const size_t count = 256;
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream, 0, ACL_STREAM_FAST_LAUNCH)); /* -> aclrtCreateStreamWithConfig */
    aclrtEvent event = nullptr;
    CHECK(aclrtCreateEvent(&event, ACL_EVENT_SYNC)); /* -> aclrtCreateEventExWithFlag */

    float *device = nullptr;
    float *host = nullptr;
    CHECK(aclrtMalloc(&device, count * sizeof(float)));                                 /* typed, HUGE_FIRST */
    CHECK(aclrtMallocHost(&host, count * sizeof(float)));
    for (size_t i = 0; i < count; ++i)
        host[i] = 0.5f * static_cast<float>(i);
    CHECK(aclrtMemcpyAsync(device, count * sizeof(float), host, count * sizeof(float),
                           ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK(aclrtRecordEvent(event, stream));
    CHECK(aclrtSynchronizeStream(stream, 1000));       /* -> aclrtSynchronizeStreamWithTimeout */
    CHECK(aclrtSynchronizeEvent(event, 1000));         /* -> aclrtSynchronizeEventWithTimeout */
    CHECK(aclrtSynchronizeDevice(1000));               /* -> aclrtSynchronizeDeviceWithTimeout */

    float back[256];
    CHECK(aclrtMemcpy(back, sizeof back, device, count * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < count; ++i) {
        if (back[i] != 0.5f * static_cast<float>(i)) {
            std::printf("FAIL element %zu: %g\n", i, static_cast<double>(back[i]));
            return 1;
        }
    }
    aclrtPtrAttributes attributes;
    CHECK(aclrtPointerGetAttributes(device, &attributes));
    if (attributes.location.type != ACL_MEM_LOCATION_TYPE_DEVICE) {
        std::printf("FAIL aclrtPointerGetAttributes(device) location %d\n", static_cast<int>(attributes.location.type));
        return 1;
    }

    CHECK(aclrtFreeHost(host));
    CHECK(aclrtFree(device));
    CHECK(aclrtDestroyEvent(event));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::printf("test_headers_tools_cpp: OK\n");
    return 0;
}
