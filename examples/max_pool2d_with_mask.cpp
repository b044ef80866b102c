/*
 * max_pool2d_with_mask.cpp - aclnnMaxPool2dWithMask: max pooling that also writes a mask the
 * backward uses. The mask is INT8 [N, C, kH*kW, 32 * (ceil(Ho*Wo / 16) + 1)]; its first
 * 4*N*C*Ho*Wo bytes are the little-endian int32 argmax of every output (flat ih*W+iw, like
 * PyTorch's indices) and the rest is zero.
 *
 * In the style of CANN's official aclnn samples: runtime set-up, inputs in device memory,
 * aclTensor/aclIntArray descriptions, phase 1 (workspace size + executor), phase 2 on a stream,
 * synchronize, copy back, print, release everything.
 * self [1, 2, 5, 6], kernel 3x3, stride 2, padding 1, dilation 1, ceilMode -> out [1, 2, 3, 4],
 * mask [1, 2, 9, 64]. Prints out, argmax (read from the mask) and maskTailNonZero (always 0).
 */
#include <cstring>

#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "sample_common.h"

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. Inputs, attributes and outputs.
    std::vector<int64_t> selfShape = {1, 2, 5, 6};
    std::vector<int64_t> outShape = {1, 2, 3, 4};
    std::vector<int64_t> indicesShape = {1, 2, 9, 64};
    std::vector<float> selfHostData = SampleData(GetShapeSize(selfShape), 7);
    std::vector<float> outHostData(GetShapeSize(outShape), 0);
    std::vector<int8_t> indicesHostData(GetShapeSize(indicesShape), 0x5A);  // garbage: the op writes every byte
    std::vector<int64_t> kernelSizeData = {3, 3};
    std::vector<int64_t> stridesData = {2, 2};
    std::vector<int64_t> paddingData = {1, 1};
    std::vector<int64_t> dilationData = {1, 1};
    const bool ceilMode = true;
    void *selfDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    void *indicesDeviceAddr = nullptr;
    aclTensor *self = nullptr;
    aclTensor *out = nullptr;
    aclTensor *indices = nullptr;
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(indicesHostData, indicesShape, &indicesDeviceAddr, aclDataType::ACL_INT8, &indices,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *kernelSize = aclCreateIntArray(kernelSizeData.data(), kernelSizeData.size());
    aclIntArray *strides = aclCreateIntArray(stridesData.data(), stridesData.size());
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), paddingData.size());
    aclIntArray *dilation = aclCreateIntArray(dilationData.data(), dilationData.size());
    CHECK_RET(kernelSize && strides && padding && dilation, LOG_PRINT("aclCreateIntArray failed.\n"); return -1);

    // 2. Phase 1.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnMaxPool2dWithMaskGetWorkspaceSize(self, kernelSize, strides, padding, dilation, ceilMode, out, indices,
                                                 &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMaskGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 3. Phase 2 and synchronize.
    ret = aclnnMaxPool2dWithMask(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMask failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 4. Inputs, attributes, the pooled values and what the mask holds.
    PrintTensor("self", selfShape, selfHostData);
    PrintAttribute("kernelSize", kernelSizeData);
    PrintAttribute("strides", stridesData);
    PrintAttribute("padding", paddingData);
    PrintAttribute("dilation", dilationData);
    PrintAttribute("ceilMode", std::vector<int>{ceilMode ? 1 : 0});
    ret = PrintResult("out", outDeviceAddr, outShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<int8_t> maskData(GetShapeSize(indicesShape), 0);
    ret = aclrtMemcpy(maskData.data(), maskData.size(), indicesDeviceAddr, maskData.size(), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy mask from device to host failed. ERROR: %d\n", ret); return ret);
    auto outSize = GetShapeSize(outShape);
    std::vector<int32_t> argmax(outSize);
    std::memcpy(argmax.data(), maskData.data(), outSize * sizeof(int32_t));  // little-endian int32 stream
    PrintTensor("argmax", outShape, argmax);
    int maskTailNonZero = 0;
    for (size_t i = outSize * sizeof(int32_t); i < maskData.size(); i++) {
        maskTailNonZero += maskData[i] != 0;
    }
    PrintAttribute("maskTailNonZero", std::vector<int>{maskTailNonZero});

    // 5. Release.
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyTensor(indices);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(strides);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
    aclrtFree(selfDeviceAddr);
    aclrtFree(outDeviceAddr);
    aclrtFree(indicesDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
