/*
 * replication_pad2d.cpp - aclnnReplicationPad2d: pads the last two dims by repeating the edge
 * values; padding is [left, right, top, bottom].
 *
 * In the style of CANN's official aclnn samples: runtime set-up, inputs in device memory,
 * aclTensor/aclIntArray descriptions, phase 1 (workspace size + executor), phase 2 on a stream,
 * synchronize, copy back, print, release everything.
 * self [1, 2, 3, 4], padding [2, 1, 2, 0] -> out [1, 2, 5, 7].
 */
#include "aclnnop/aclnn_replication_pad2d.h"
#include "sample_common.h"

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. Inputs, attribute and output.
    std::vector<int64_t> selfShape = {1, 2, 3, 4};
    std::vector<int64_t> outShape = {1, 2, 5, 7};
    std::vector<float> selfHostData = SampleData(GetShapeSize(selfShape), 2);
    std::vector<float> outHostData(GetShapeSize(outShape), 0);
    std::vector<int64_t> paddingData = {2, 1, 2, 0};
    void *selfDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *self = nullptr;
    aclTensor *out = nullptr;
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), paddingData.size());
    CHECK_RET(padding != nullptr, LOG_PRINT("aclCreateIntArray failed.\n"); return -1);

    // 2. Phase 1: check the arguments and size the workspace.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnReplicationPad2dGetWorkspaceSize(self, padding, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnReplicationPad2dGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 3. Phase 2 on the stream, then wait for it.
    ret = aclnnReplicationPad2d(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnReplicationPad2d failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 4. Inputs, attribute and the result copied back.
    PrintTensor("self", selfShape, selfHostData);
    PrintAttribute("padding", paddingData);
    ret = PrintResult("out", outDeviceAddr, outShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 5. Release.
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
