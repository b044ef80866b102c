/*
 * upsample_nearest_exact1d_backward.cpp - aclnnUpsampleNearestExact1dBackward: every input
 * position receives the sum of the output gradients that read it in the forward.
 *
 * In the style of CANN's official aclnn samples (see upsample_nearest_exact1d.cpp).
 * gradOutput [1, 2, 4], outputSize [4], inputSize [1, 2, 8], scales 0.5 (output = input * 0.5,
 * given explicitly) -> out [1, 2, 8].
 */
#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"
#include "sample_common.h"

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. Inputs, attributes and output.
    std::vector<int64_t> gradOutputShape = {1, 2, 4};
    std::vector<int64_t> outShape = {1, 2, 8};
    std::vector<float> gradOutputHostData = SampleData(GetShapeSize(gradOutputShape), 6);
    std::vector<float> outHostData(GetShapeSize(outShape), 0);
    std::vector<int64_t> outputSizeData = {4};
    std::vector<int64_t> inputSizeData = {1, 2, 8};
    double scales = 0.5;
    void *gradOutputDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *out = nullptr;
    ret = CreateAclTensor(gradOutputHostData, gradOutputShape, &gradOutputDeviceAddr, aclDataType::ACL_FLOAT,
                          &gradOutput, aclFormat::ACL_FORMAT_NCL);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out,
                          aclFormat::ACL_FORMAT_NCL);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *outputSize = aclCreateIntArray(outputSizeData.data(), outputSizeData.size());
    aclIntArray *inputSize = aclCreateIntArray(inputSizeData.data(), inputSizeData.size());
    CHECK_RET(outputSize && inputSize, LOG_PRINT("aclCreateIntArray failed.\n"); return -1);

    // 2. Phase 1: check the arguments and size the workspace.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(gradOutput, outputSize, inputSize, scales, out,
                                                              &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 3. Phase 2 on the stream, then wait for it.
    ret = aclnnUpsampleNearestExact1dBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnUpsampleNearestExact1dBackward failed. ERROR: %d\n", ret);
              return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 4. Inputs, attributes and the result copied back.
    PrintTensor("gradOutput", gradOutputShape, gradOutputHostData);
    PrintAttribute("outputSize", outputSizeData);
    PrintAttribute("inputSize", inputSizeData);
    PrintAttribute("scales", std::vector<double>{scales});
    ret = PrintResult("out", outDeviceAddr, outShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 5. Release.
    aclDestroyTensor(gradOutput);
    aclDestroyTensor(out);
    aclDestroyIntArray(outputSize);
    aclDestroyIntArray(inputSize);
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
