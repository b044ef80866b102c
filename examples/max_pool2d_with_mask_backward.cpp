/*
 * aclnnMaxPool2dWithMaskBackward in the style of CANN's official sample: the gradient of a 3x3,
 * stride 1, padding 1 max pooling of a [1,1,4,4] input whose mask (the INT8 container holding
 * the int32 argmax stream that aclnnMaxPool2dWithMask writes) is built here from known argmax
 * values.  Overlapping windows accumulate: input cell 7 is the argmax of six outputs.
 * Prints "result[i] is: v" for the 16 gradInput values.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"

#define CHECK_RET(cond, return_expr) \
    do {                             \
        if (!(cond)) {               \
            return_expr;             \
        }                            \
    } while (0)

#define LOG_PRINT(message, ...) printf(message, ##__VA_ARGS__)

static int64_t ShapeSize(const std::vector<int64_t> &shape)
{
    int64_t size = 1;
    for (int64_t d : shape) size *= d;
    return size;
}

static int Init(int32_t deviceId, aclrtStream *stream)
{
    auto ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSetDevice(deviceId);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
    ret = aclrtCreateStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
    return 0;
}

template <typename T>
static int CreateAclTensor(const std::vector<T> &hostData, const std::vector<int64_t> &shape, void **deviceAddr,
                           aclDataType dataType, aclTensor **tensor)
{
    auto size = ShapeSize(shape) * sizeof(T);
    auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) strides[i] = shape[i + 1] * strides[i + 1];
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, aclFormat::ACL_FORMAT_NCHW,
                              shape.data(), shape.size(), *deviceAddr);
    return 0;
}

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    std::vector<int64_t> selfShape = {1, 1, 4, 4};
    std::vector<int64_t> gradOutputShape = {1, 1, 4, 4};
    std::vector<int64_t> indicesShape = {1, 1, 9, 64}; // [N, C, kH*kW, 32*(ceil(Ho*Wo/16)+1)]
    std::vector<float> selfHostData = {1, 5, 2, 2, 3, 5, 0, 9, 4, 1, 6, 6, 7, 7, 8, 0};
    std::vector<float> gradOutputHostData(16);
    for (int i = 0; i < 16; i++) gradOutputHostData[i] = static_cast<float>(i + 1);
    // argmax (ih*W+iw) of every output, as aclnnMaxPool2dWithMask writes it for selfHostData
    const int32_t argmax[16] = {1, 1, 7, 7, 1, 10, 7, 7, 12, 14, 7, 7, 12, 14, 14, 14};
    std::vector<int8_t> indicesHostData(ShapeSize(indicesShape), 0);
    std::memcpy(indicesHostData.data(), argmax, sizeof argmax); // little-endian int32 stream
    std::vector<float> gradInputHostData(16, 0.0f);
    std::vector<int64_t> kernelSizeData = {3, 3};
    std::vector<int64_t> strideData = {1, 1};
    std::vector<int64_t> paddingData = {1, 1};
    std::vector<int64_t> dilationData = {1, 1};

    void *gradOutputDeviceAddr = nullptr, *selfDeviceAddr = nullptr, *indicesDeviceAddr = nullptr,
         *gradInputDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr, *self = nullptr, *indices = nullptr, *gradInput = nullptr;
    ret = CreateAclTensor(gradOutputHostData, gradOutputShape, &gradOutputDeviceAddr, aclDataType::ACL_FLOAT,
                          &gradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(indicesHostData, indicesShape, &indicesDeviceAddr, aclDataType::ACL_INT8, &indices);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(gradInputHostData, selfShape, &gradInputDeviceAddr, aclDataType::ACL_FLOAT, &gradInput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *kernelSize = aclCreateIntArray(kernelSizeData.data(), 2);
    aclIntArray *stride = aclCreateIntArray(strideData.data(), 2);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), 2);
    aclIntArray *dilation = aclCreateIntArray(dilationData.data(), 2);
    const bool ceilMode = false;

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(gradOutput, self, indices, kernelSize, stride, padding,
                                                         dilation, ceilMode, gradInput, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnMaxPool2dWithMaskBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMaskBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    auto size = ShapeSize(selfShape);
    std::vector<float> resultData(size, 0);
    ret = aclrtMemcpy(resultData.data(), size * sizeof(float), gradInputDeviceAddr, size * sizeof(float),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result failed. ERROR: %d\n", ret); return ret);
    for (int64_t i = 0; i < size; i++) LOG_PRINT("result[%ld] is: %f\n", static_cast<long>(i), resultData[i]);

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(indices);
    aclDestroyTensor(gradInput);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
    aclrtFree(gradOutputDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(indicesDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
    if (workspaceSize > 0) aclrtFree(workspaceAddr);
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
