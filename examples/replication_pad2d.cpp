/*
 * replication_pad2d.cpp - aclnnReplicationPad2d: pad the last two dims by repeating the edges.
 *
 * Written the way CANN's official aclnn samples are: initialise the runtime, put the inputs in
 * device memory, describe them with aclTensor/aclIntArray, run the two phases, synchronize, copy
 * the result back and print it as 'result[i] is: v', then release everything.
 */
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_replication_pad2d.h"

#define CHECK_RET(cond, return_expr) \
    do {                             \
        if (!(cond)) {               \
            return_expr;             \
        }                            \
    } while (0)

#define LOG_PRINT(message, ...)         \
    do {                                \
        printf(message, ##__VA_ARGS__); \
    } while (0)

static int64_t ShapeSize(const std::vector<int64_t> &shape)
{
    int64_t size = 1;
    for (int64_t dim : shape) {
        size *= dim;
    }
    return size;
}

// Runtime set-up: aclInit, the device, one stream.
static int InitAcl(int32_t deviceId, aclrtStream *stream)
{
    aclError ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSetDevice(deviceId);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
    ret = aclrtCreateStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
    return 0;
}

// Device memory holding hostData, described by a contiguous aclTensor of `shape`.
template <typename T>
static int MakeTensor(const std::vector<T> &hostData, const std::vector<int64_t> &shape, aclDataType dtype,
                      aclFormat format, void **deviceAddr, aclTensor **tensor)
{
    size_t bytes = static_cast<size_t>(ShapeSize(shape)) * sizeof(T);
    aclError ret = aclrtMalloc(deviceAddr, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    ret = aclrtMemcpy(*deviceAddr, bytes, hostData.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    *tensor = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, format, shape.data(),
                              shape.size(), *deviceAddr);
    CHECK_RET(*tensor != nullptr, LOG_PRINT("aclCreateTensor failed.\n"); return -1);
    return 0;
}

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    int ret = InitAcl(deviceId, &stream);
    CHECK_RET(ret == 0, LOG_PRINT("InitAcl failed. ERROR: %d\n", ret); return ret);

    // self [1, 1, 2, 2] = 1..4, padding [left, right, top, bottom] = [1, 1, 1, 1] -> out [1, 1, 4, 4]
    std::vector<int64_t> selfShape = {1, 1, 2, 2};
    std::vector<int64_t> outShape = {1, 1, 4, 4};
    std::vector<float> selfHostData = {1, 2, 3, 4};
    std::vector<float> outHostData(16, 0);
    std::vector<int64_t> paddingData = {1, 1, 1, 1};
    void *selfDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *self = nullptr;
    aclTensor *out = nullptr;
    ret = MakeTensor(selfHostData, selfShape, ACL_FLOAT, ACL_FORMAT_ND, &selfDeviceAddr, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeTensor(outHostData, outShape, ACL_FLOAT, ACL_FORMAT_ND, &outDeviceAddr, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), paddingData.size());
    CHECK_RET(padding != nullptr, return -1);

    // Phase 1: check the arguments and size the workspace.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnReplicationPad2dGetWorkspaceSize(self, padding, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnReplicationPad2dGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    // Phase 2: queue the computation on the stream.
    ret = aclnnReplicationPad2d(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnReplicationPad2d failed. ERROR: %d\n", ret); return ret);

    // Wait for phase 2, then read the result back.
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
    int64_t size = ShapeSize(outShape);
    std::vector<float> resultData(size, 0);
    ret = aclrtMemcpy(resultData.data(), size * sizeof(float), outDeviceAddr, size * sizeof(float),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
    for (int64_t i = 0; i < size; i++) {
        LOG_PRINT("result[%ld] is: %f\n", static_cast<long>(i), resultData[i]);
    }

    // Release everything, in the reverse order of creation.
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyIntArray(padding);
    aclrtFree(selfDeviceAddr);
    aclrtFree(outDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
