/*
 * im2col_backward.cpp - aclnnIm2colBackward ("fold"): the columns of an im2col result are added
 * back into the image they came from (overlapping windows sum).
 *
 * In the style of CANN's official aclnn samples (see im2col.cpp for the forward).
 * gradOutput [1, 12, 9], inputSize [4, 7], kernelSize [2, 3], dilation [1, 2], padding [1, 0],
 * stride [2, 1] -> out [1, 2, 4, 7].
 */
#include "aclnnop/aclnn_im2col_backward.h"
#include "sample_common.h"

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. Inputs, attributes and output.
    std::vector<int64_t> gradOutputShape = {1, 12, 9};
    std::vector<int64_t> outShape = {1, 2, 4, 7};
    std::vector<float> gradOutputHostData = SampleData(GetShapeSize(gradOutputShape), 11);
    std::vector<float> outHostData(GetShapeSize(outShape), 0);
    std::vector<int64_t> inputSizeData = {4, 7};
    std::vector<int64_t> kernelSizeData = {2, 3};
    std::vector<int64_t> dilationData = {1, 2};
    std::vector<int64_t> paddingData = {1, 0};
    std::vector<int64_t> strideData = {2, 1};
    void *gradOutputDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *out = nullptr;
    ret = CreateAclTensor(gradOutputHostData, gradOutputShape, &gradOutputDeviceAddr, aclDataType::ACL_FLOAT,
                          &gradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *inputSize = aclCreateIntArray(inputSizeData.data(), inputSizeData.size());
    aclIntArray *kernelSize = aclCreateIntArray(kernelSizeData.data(), kernelSizeData.size());
    aclIntArray *dilation = aclCreateIntArray(dilationData.data(), dilationData.size());
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), paddingData.size());
    aclIntArray *stride = aclCreateIntArray(strideData.data(), strideData.size());
    CHECK_RET(inputSize && kernelSize && dilation && padding && stride,
              LOG_PRINT("aclCreateIntArray failed.\n"); return -1);

    // 2. Phase 1.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnIm2colBackwardGetWorkspaceSize(gradOutput, inputSize, kernelSize, dilation, padding, stride, out,
                                              &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnIm2colBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 3. Phase 2 and synchronize.
    ret = aclnnIm2colBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnIm2colBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 4. Inputs, attributes and the result copied back.
    PrintTensor("gradOutput", gradOutputShape, gradOutputHostData);
    PrintAttribute("inputSize", inputSizeData);
    PrintAttribute("kernelSize", kernelSizeData);
    PrintAttribute("dilation", dilationData);
    PrintAttribute("padding", paddingData);
    PrintAttribute("stride", strideData);
    ret = PrintResult("out", outDeviceAddr, outShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 5. Release.
    aclDestroyTensor(gradOutput);
    aclDestroyTensor(out);
    aclDestroyIntArray(inputSize);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(stride);
    aclrtFree(gradOutputDeviceAddr);
    aclrtFree(outDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
