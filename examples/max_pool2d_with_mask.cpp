/*
 * aclnnMaxPool2dWithMask in the style of CANN's official sample: 2x2 max pooling of a [1,1,4,3]
 * tensor.  Prints the pooled values ("out[i] is: v"), the int32 argmax stream at the head of the
 * INT8 mask ("argmax[i] is: v", flat ih*W+iw like PyTorch's indices) and how many bytes of the
 * mask tail are non-zero ("mask_tail_nonzero is: n", always 0).
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"

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

    // Input [1,1,4,3]; kernel 2x2, stride 2, no padding -> out [1,1,2,1], mask [1,1,4,64].
    std::vector<int64_t> selfShape = {1, 1, 4, 3};
    std::vector<int64_t> outShape = {1, 1, 2, 1};
    std::vector<int64_t> indicesShape = {1, 1, 4, 64};
    std::vector<float> selfHostData = {0.0850f, -0.5147f, -0.0212f, -0.5654f, -0.3222f, 0.5847f,
                                       1.7510f, 0.9954f,  0.1842f,  0.8392f,  0.4835f,  0.9213f};
    std::vector<float> outHostData(2, 0.0f);
    std::vector<int8_t> indicesHostData(256, 0x5A); // garbage on purpose: the op writes every byte
    std::vector<int64_t> kernelSizeData = {2, 2};
    std::vector<int64_t> strideData = {2, 2};
    std::vector<int64_t> paddingData = {0, 0};
    std::vector<int64_t> dilationData = {1, 1};
    void *selfDeviceAddr = nullptr, *outDeviceAddr = nullptr, *indicesDeviceAddr = nullptr;
    aclTensor *self = nullptr, *out = nullptr, *indices = nullptr;

    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(indicesHostData, indicesShape, &indicesDeviceAddr, aclDataType::ACL_INT8, &indices);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *kernelSize = aclCreateIntArray(kernelSizeData.data(), 2);
    aclIntArray *stride = aclCreateIntArray(strideData.data(), 2);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), 2);
    aclIntArray *dilation = aclCreateIntArray(dilationData.data(), 2);
    const bool ceilMode = false;

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnMaxPool2dWithMaskGetWorkspaceSize(self, kernelSize, stride, padding, dilation, ceilMode, out, indices,
                                                 &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMaskGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnMaxPool2dWithMask(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMask failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    auto outSize = ShapeSize(outShape);
    std::vector<float> resultData(outSize, 0);
    ret = aclrtMemcpy(resultData.data(), outSize * sizeof(float), outDeviceAddr, outSize * sizeof(float),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy out failed. ERROR: %d\n", ret); return ret);
    for (int64_t i = 0; i < outSize; i++) LOG_PRINT("out[%ld] is: %f\n", static_cast<long>(i), resultData[i]);

    auto maskSize = ShapeSize(indicesShape);
    std::vector<int8_t> maskData(maskSize, 0);
    ret = aclrtMemcpy(maskData.data(), maskSize, indicesDeviceAddr, maskSize, ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy indices failed. ERROR: %d\n", ret); return ret);
    // The first 4*N*C*Ho*Wo bytes are little-endian int32 argmax values, the rest is zero.
    for (int64_t i = 0; i < outSize; i++) {
        int32_t argmax;
        std::memcpy(&argmax, maskData.data() + 4 * i, 4);
        LOG_PRINT("argmax[%ld] is: %d\n", static_cast<long>(i), argmax);
    }
    int64_t tailNonzero = 0;
    for (int64_t i = 4 * outSize; i < maskSize; i++) tailNonzero += maskData[i] != 0;
    LOG_PRINT("mask_tail_nonzero is: %ld\n", static_cast<long>(tailNonzero));

    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyTensor(indices);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
    aclrtFree(selfDeviceAddr);
    aclrtFree(outDeviceAddr);
    aclrtFree(indicesDeviceAddr);
    if (workspaceSize > 0) aclrtFree(workspaceAddr);
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
