/*
 * prelu_backward.cpp - aclnnPreluBackward: gradients of prelu with respect to its input
 * (gradInput) and its per-channel slopes (gradWeight, summed over every element of a channel).
 *
 * In the style of CANN's official aclnn samples (see prelu.cpp for the forward).
 * gradOutput, self [1, 4, 2, 3], weight [4] -> gradInput [1, 4, 2, 3], gradWeight [4].
 */
#include "aclnnop/aclnn_prelu_backward.h"
#include "sample_common.h"

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. Inputs and outputs.
    std::vector<int64_t> selfShape = {1, 4, 2, 3};
    std::vector<int64_t> weightShape = {4};
    std::vector<float> gradOutputHostData = SampleData(GetShapeSize(selfShape), 12);
    std::vector<float> selfHostData = SampleData(GetShapeSize(selfShape), 13);
    std::vector<float> weightHostData = {0.25f, -0.5f, 1.5f, 0.0f};
    std::vector<float> gradInputHostData(GetShapeSize(selfShape), 0);
    std::vector<float> gradWeightHostData(GetShapeSize(weightShape), 0);
    void *gradOutputDeviceAddr = nullptr;
    void *selfDeviceAddr = nullptr;
    void *weightDeviceAddr = nullptr;
    void *gradInputDeviceAddr = nullptr;
    void *gradWeightDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *self = nullptr;
    aclTensor *weight = nullptr;
    aclTensor *gradInput = nullptr;
    aclTensor *gradWeight = nullptr;
    ret = CreateAclTensor(gradOutputHostData, selfShape, &gradOutputDeviceAddr, aclDataType::ACL_FLOAT, &gradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(weightHostData, weightShape, &weightDeviceAddr, aclDataType::ACL_FLOAT, &weight);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(gradInputHostData, selfShape, &gradInputDeviceAddr, aclDataType::ACL_FLOAT, &gradInput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(gradWeightHostData, weightShape, &gradWeightDeviceAddr, aclDataType::ACL_FLOAT,
                          &gradWeight);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 2. Phase 1.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnPreluBackwardGetWorkspaceSize(gradOutput, self, weight, gradInput, gradWeight, &workspaceSize,
                                             &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnPreluBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 3. Phase 2 and synchronize.
    ret = aclnnPreluBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnPreluBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 4. Inputs and both results copied back.
    PrintTensor("gradOutput", selfShape, gradOutputHostData);
    PrintTensor("self", selfShape, selfHostData);
    PrintTensor("weight", weightShape, weightHostData);
    ret = PrintResult("gradInput", gradInputDeviceAddr, selfShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = PrintResult("gradWeight", gradWeightDeviceAddr, weightShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 5. Release.
    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(weight);
    aclDestroyTensor(gradInput);
    aclDestroyTensor(gradWeight);
    aclrtFree(gradOutputDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(weightDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
    aclrtFree(gradWeightDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
