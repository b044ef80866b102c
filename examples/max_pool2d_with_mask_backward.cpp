/*
 * max_pool2d_with_mask_backward.cpp - aclnnMaxPool2dWithMaskBackward: each output gradient goes
 * to the input position that won its window, as recorded in the mask.
 *
 * In the style of CANN's official aclnn samples. As in training, the mask comes from the forward
 * (aclnnMaxPool2dWithMask, see max_pool2d_with_mask.cpp), run first on the same stream.
 * self [1, 2, 5, 6], gradOutput [1, 2, 3, 4], kernel 3x3, stride 2, padding 1, dilation 1,
 * ceilMode -> gradInput [1, 2, 5, 6].
 */
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
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
    std::vector<int64_t> indicesShape = {1, 2, 9, 64};  // [N, C, kH*kW, 32*(ceil(Ho*Wo/16)+1)]
    std::vector<float> selfHostData = SampleData(GetShapeSize(selfShape), 8);
    std::vector<float> outHostData(GetShapeSize(outShape), 0);
    std::vector<int8_t> indicesHostData(GetShapeSize(indicesShape), 0);
    std::vector<float> gradOutputHostData = SampleData(GetShapeSize(outShape), 9);
    std::vector<float> gradInputHostData(GetShapeSize(selfShape), 0);
    std::vector<int64_t> kernelSizeData = {3, 3};
    std::vector<int64_t> stridesData = {2, 2};
    std::vector<int64_t> paddingData = {1, 1};
    std::vector<int64_t> dilationData = {1, 1};
    const bool ceilMode = true;
    void *selfDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    void *indicesDeviceAddr = nullptr;
    void *gradOutputDeviceAddr = nullptr;
    void *gradInputDeviceAddr = nullptr;
    aclTensor *self = nullptr;
    aclTensor *out = nullptr;
    aclTensor *indices = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *gradInput = nullptr;
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(indicesHostData, indicesShape, &indicesDeviceAddr, aclDataType::ACL_INT8, &indices,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(gradOutputHostData, outShape, &gradOutputDeviceAddr, aclDataType::ACL_FLOAT, &gradOutput,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(gradInputHostData, selfShape, &gradInputDeviceAddr, aclDataType::ACL_FLOAT, &gradInput,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *kernelSize = aclCreateIntArray(kernelSizeData.data(), kernelSizeData.size());
    aclIntArray *strides = aclCreateIntArray(stridesData.data(), stridesData.size());
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), paddingData.size());
    aclIntArray *dilation = aclCreateIntArray(dilationData.data(), dilationData.size());
    CHECK_RET(kernelSize && strides && padding && dilation, LOG_PRINT("aclCreateIntArray failed.\n"); return -1);

    // 2. The forward fills the mask (both phases; no need to synchronize before the backward,
    //    which runs after it on the same stream).
    uint64_t forwardWorkspaceSize = 0;
    aclOpExecutor *forwardExecutor = nullptr;
    ret = aclnnMaxPool2dWithMaskGetWorkspaceSize(self, kernelSize, strides, padding, dilation, ceilMode, out, indices,
                                                 &forwardWorkspaceSize, &forwardExecutor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMaskGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *forwardWorkspaceAddr = nullptr;
    if (forwardWorkspaceSize > 0) {
        ret = aclrtMalloc(&forwardWorkspaceAddr, forwardWorkspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnMaxPool2dWithMask(forwardWorkspaceAddr, forwardWorkspaceSize, forwardExecutor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMask failed. ERROR: %d\n", ret); return ret);

    // 3. Backward: phase 1.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(gradOutput, self, indices, kernelSize, strides, padding,
                                                         dilation, ceilMode, gradInput, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 4. Backward: phase 2 and synchronize.
    ret = aclnnMaxPool2dWithMaskBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMaskBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 5. Inputs, attributes and the result copied back.
    PrintTensor("self", selfShape, selfHostData);
    PrintTensor("gradOutput", outShape, gradOutputHostData);
    PrintAttribute("kernelSize", kernelSizeData);
    PrintAttribute("strides", stridesData);
    PrintAttribute("padding", paddingData);
    PrintAttribute("dilation", dilationData);
    PrintAttribute("ceilMode", std::vector<int>{ceilMode ? 1 : 0});
    ret = PrintResult("gradInput", gradInputDeviceAddr, selfShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 6. Release.
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyTensor(indices);
    aclDestroyTensor(gradOutput);
    aclDestroyTensor(gradInput);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(strides);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
    aclrtFree(selfDeviceAddr);
    aclrtFree(outDeviceAddr);
    aclrtFree(indicesDeviceAddr);
    aclrtFree(gradOutputDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
    if (forwardWorkspaceSize > 0) {
        aclrtFree(forwardWorkspaceAddr);
    }
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
