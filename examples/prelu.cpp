/*
 * prelu.cpp - aclnnPrelu: out = self where self > 0, weight[c] * self elsewhere (one slope per
 * channel, dim 1).
 *
 * In the style of CANN's official aclnn samples: runtime set-up, inputs in device memory,
 * aclTensor descriptions, phase 1 (workspace size + executor), phase 2 on a stream, synchronize,
 * copy back, print, release everything.
 * self [1, 4, 2, 3], weight [4] = {0.25, -0.5, 1.5, 0} -> out [1, 4, 2, 3].
 */
#include "aclnnop/aclnn_prelu.h"
#include "sample_common.h"

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. Inputs and output.
    std::vector<int64_t> selfShape = {1, 4, 2, 3};
    std::vector<int64_t> weightShape = {4};
    std::vector<int64_t> outShape = {1, 4, 2, 3};
    std::vector<float> selfHostData = SampleData(GetShapeSize(selfShape), 1);
    std::vector<float> weightHostData = {0.25f, -0.5f, 1.5f, 0.0f};
    std::vector<float> outHostData(GetShapeSize(outShape), 0);
    void *selfDeviceAddr = nullptr;
    void *weightDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *self = nullptr;
    aclTensor *weight = nullptr;
    aclTensor *out = nullptr;
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(weightHostData, weightShape, &weightDeviceAddr, aclDataType::ACL_FLOAT, &weight);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out,
                          aclFormat::ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 2. Phase 1.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnPreluGetWorkspaceSize(self, weight, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnPreluGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 3. Phase 2 and synchronize.
    ret = aclnnPrelu(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnPrelu failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 4. Inputs and the result copied back.
    PrintTensor("self", selfShape, selfHostData);
    PrintTensor("weight", weightShape, weightHostData);
    ret = PrintResult("out", outDeviceAddr, outShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 5. Release.
    aclDestroyTensor(self);
    aclDestroyTensor(weight);
    aclDestroyTensor(out);
    aclrtFree(selfDeviceAddr);
    aclrtFree(weightDeviceAddr);
    aclrtFree(outDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
