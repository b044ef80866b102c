/*
 * im2col.cpp - aclnnIm2col ("unfold"): every kH x kW window of the image becomes one column.
 *
 * In the style of CANN's official aclnn samples: runtime set-up, inputs in device memory,
 * aclTensor/aclIntArray descriptions, phase 1 (workspace size + executor), phase 2 on a stream,
 * synchronize, copy back, print, release everything.
 * self [1, 2, 4, 7], kernelSize [2, 3], dilation [1, 2], padding [1, 0], stride [2, 1]
 * -> out [1, 12, 9] (C*kH*kW rows, one column per window position).
 */
#include "aclnnop/aclnn_im2col.h"
#include "sample_common.h"

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. Inputs, attributes and output.
    std::vector<int64_t> selfShape = {1, 2, 4, 7};
    std::vector<int64_t> outShape = {1, 12, 9};
    std::vector<float> selfHostData = SampleData(GetShapeSize(selfShape), 10);
    std::vector<float> outHostData(GetShapeSize(outShape), 0);
    std::vector<int64_t> kernelSizeData = {2, 3};
    std::vector<int64_t> dilationData = {1, 2};
    std::vector<int64_t> paddingData = {1, 0};
    std::vector<int64_t> strideData = {2, 1};
    void *selfDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *self = nullptr;
    aclTensor *out = nullptr;
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *kernelSize = aclCreateIntArray(kernelSizeData.data(), kernelSizeData.size());
    aclIntArray *dilation = aclCreateIntArray(dilationData.data(), dilationData.size());
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), paddingData.size());
    aclIntArray *stride = aclCreateIntArray(strideData.data(), strideData.size());
    CHECK_RET(kernelSize && dilation && padding && stride, LOG_PRINT("aclCreateIntArray failed.\n"); return -1);

    // 2. Phase 1: validate, plan, workspace size. Note the order kernelSize, dilation, padding, stride.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnIm2colGetWorkspaceSize(self, kernelSize, dilation, padding, stride, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnIm2colGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 3. Phase 2 on the stream, then wait for it.
    ret = aclnnIm2col(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnIm2col failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 4. Inputs, attributes and the result copied back.
    PrintTensor("self", selfShape, selfHostData);
    PrintAttribute("kernelSize", kernelSizeData);
    PrintAttribute("dilation", dilationData);
    PrintAttribute("padding", paddingData);
    PrintAttribute("stride", strideData);
    ret = PrintResult("out", outDeviceAddr, outShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 5. Release.
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(stride);
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
