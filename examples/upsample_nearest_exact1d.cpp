/*
 * upsample_nearest_exact1d.cpp - aclnnUpsampleNearestExact1d: nearest-exact resize of the last
 * dim of [N, C, L] (output position i reads input floor((i + 0.5) * L / outputSize)).
 *
 * In the style of CANN's official aclnn samples: runtime set-up, inputs in device memory,
 * aclTensor/aclIntArray descriptions, phase 1 (workspace size + executor), phase 2 on a stream,
 * synchronize, copy back, print, release everything.
 * self [1, 2, 7], outputSize [11], scales 0 (derive the scale from the sizes) -> out [1, 2, 11].
 */
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"
#include "sample_common.h"

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. Inputs, attributes and output.
    std::vector<int64_t> selfShape = {1, 2, 7};
    std::vector<int64_t> outShape = {1, 2, 11};
    std::vector<float> selfHostData = SampleData(GetShapeSize(selfShape), 5);
    std::vector<float> outHostData(GetShapeSize(outShape), 0);
    std::vector<int64_t> outputSizeData = {11};
    double scales = 0.0;
    void *selfDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *self = nullptr;
    aclTensor *out = nullptr;
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self,
                          aclFormat::ACL_FORMAT_NCL);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out,
                          aclFormat::ACL_FORMAT_NCL);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *outputSize = aclCreateIntArray(outputSizeData.data(), outputSizeData.size());
    CHECK_RET(outputSize != nullptr, LOG_PRINT("aclCreateIntArray failed.\n"); return -1);

    // 2. Phase 1: check the arguments and size the workspace.
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnUpsampleNearestExact1dGetWorkspaceSize(self, outputSize, scales, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnUpsampleNearestExact1dGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 3. Phase 2 on the stream, then wait for it.
    ret = aclnnUpsampleNearestExact1d(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnUpsampleNearestExact1d failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 4. Inputs, attributes and the result copied back.
    PrintTensor("self", selfShape, selfHostData);
    PrintAttribute("outputSize", outputSizeData);
    PrintAttribute("scales", std::vector<double>{scales});
    ret = PrintResult("out", outDeviceAddr, outShape);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 5. Release.
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyIntArray(outputSize);
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
