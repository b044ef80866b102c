/*
 * replication_pad2d_backward.cpp - aclnnReplicationPad2dBackward: the gradient of
 * ReplicationPad2d; every padded position adds its gradient to the edge value it copied.
 *
 * In the style of CANN's official aclnn samples (see replication_pad2d.cpp for the forward).
 * gradOutput [1, 2, 5, 7], self [1, 2, 3, 4], padding [2, 1, 2, 0] -> gradInput [1, 2, 3, 4].
 */
#include "aclnnop/aclnn_pad2d_backward.h"
#include "sample_common.h"

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. Inputs, attribute and output.
    std::vector<int64_t> gradOutputShape = {1, 2, 5, 7};
    std::vector<int64_t> selfShape = {1, 2, 3, 4};
    std::vector<float> gradOutputHostData = SampleData(GetShapeSize(gradOutputShape), 3);
    std::vector<float> selfHostData = SampleData(GetShapeSize(selfShape), 4);
    std::vector<float> gradInputHostData(GetShapeSize(selfShape), 0);
    std::vector<int64_t> paddingData = {2, 1, 2, 0};
    void *gradOutputDeviceAddr = nullptr;
    void *selfDeviceAddr = nullptr;
    void *gradInputDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *self = nullptr;
    aclTensor *gradInput = nullptr;
    ret = CreateAclTensor(gradOutputHostData, gradOutputShape, &gradOutputDeviceAddr, aclDataType::ACL_FLOAT,
                          &gradOutput, aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(gradInputHostData, selfShape, &gradInputDeviceAddr, aclDataType::ACL_FLOAT, &gradInput,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), paddingData.size());
    CHECK_RET(padding != nullptr, LOG_PRINT("aclCreateIntArray failed.\n"); return -1);

    // 2. Phase 1: check the arguments and size the workspace.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnReplicationPad2dBackwardGetWorkspaceSize(gradOutput, self, padding, gradInput, &workspaceSize,
                                                        &executor);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnReplicationPad2dBackwardGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 3. Phase 2 on the stream, then wait for it.
    ret = aclnnReplicationPad2dBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnReplicationPad2dBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 4. Inputs, attribute and the result copied back.
    PrintTensor("gradOutput", gradOutputShape, gradOutputHostData);
    PrintTensor("self", selfShape, selfHostData);
    PrintAttribute("padding", paddingData);
    ret = PrintResult("gradInput", gradInputDeviceAddr, selfShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 5. Release.
    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(gradInput);
    aclDestroyIntArray(padding);
    aclrtFree(gradOutputDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
