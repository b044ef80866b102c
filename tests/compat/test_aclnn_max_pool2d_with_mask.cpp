/**
 * aclnnMaxPool2dWithMask, written like CANN's official aclnn samples (init -> device -> stream -> device
 * memory -> aclTensor/aclIntArray -> phase 1 -> workspace -> phase 2 -> synchronize -> copy back
 * -> release). self [2,3,7,8], kernel 3, stride 2, padding 1, ceilMode.
 * Prints every tensor as one line "tensor <name> <d0,d1,...> : v v v ..." (and every attribute
 * as "param <name> : v ...") so that tests/test_compat.py can recompute the result with PyTorch.
 */
#include <iostream>
#include <vector>
#include "acl/acl.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"

#define CHECK_RET(cond, return_expr) \
  do {                               \
    if (!(cond)) {                   \
      return_expr;                   \
    }                                \
  } while (0)

#define LOG_PRINT(message, ...)     \
  do {                              \
    printf(message, ##__VA_ARGS__); \
  } while (0)

int64_t GetShapeSize(const std::vector<int64_t>& shape) {
  int64_t shapeSize = 1;
  for (auto i : shape) {
    shapeSize *= i;
  }
  return shapeSize;
}

template <typename T>
void PrintTensor(const char* name, const std::vector<int64_t>& shape, const std::vector<T>& data) {
  LOG_PRINT("tensor %s ", name);
  for (size_t i = 0; i < shape.size(); i++) {
    LOG_PRINT(i == 0 ? "%ld" : ",%ld", static_cast<long>(shape[i]));
  }
  LOG_PRINT(" :");
  for (auto v : data) {
    LOG_PRINT(" %.9g", static_cast<double>(v));
  }
  LOG_PRINT("\n");
}

// Deterministic test data: multiples of 1/16 in [-6.25, 6.1875], exact in float.
std::vector<float> MakeData(int64_t size, int64_t seed) {
  std::vector<float> data(size);
  for (int64_t i = 0; i < size; i++) {
    data[i] = static_cast<float>((i * 7919 + seed * 104729) % 200 - 100) / 16.0f;
  }
  return data;
}

int Init(int32_t deviceId, aclrtStream* stream) {
  auto ret = aclInit(nullptr);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSetDevice(deviceId);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
  ret = aclrtCreateStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
  return 0;
}

template <typename T>
int CreateAclTensor(const std::vector<T>& hostData, const std::vector<int64_t>& shape, void** deviceAddr,
                    aclDataType dataType, aclTensor** tensor) {
  auto size = GetShapeSize(shape) * sizeof(T);
  auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
  ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = shape.size() - 2; i >= 0; i--) {
    strides[i] = shape[i + 1] * strides[i + 1];
  }
  *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, aclFormat::ACL_FORMAT_ND,
                            shape.data(), shape.size(), *deviceAddr);
  return 0;
}

int main() {
  int32_t deviceId = 0;
  aclrtStream stream;
  auto ret = Init(deviceId, &stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> selfShape = {2, 3, 7, 8};
  std::vector<int64_t> outShape = {2, 3, 4, 5};
  std::vector<int64_t> indicesShape = {2, 3, 9, 96};
  void* selfDeviceAddr = nullptr;
  aclTensor* self = nullptr;
  void* outDeviceAddr = nullptr;
  aclTensor* out = nullptr;
  void* indicesDeviceAddr = nullptr;
  aclTensor* indices = nullptr;
  std::vector<float> selfHostData = MakeData(GetShapeSize(selfShape), 7);
  std::vector<float> outHostData = std::vector<float>(GetShapeSize(outShape), 0);
  std::vector<int8_t> indicesHostData = std::vector<int8_t>(GetShapeSize(indicesShape), 0);
  ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self);
  CHECK_RET(ret == ACL_SUCCESS && self != nullptr, return ret);
  ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT, &out);
  CHECK_RET(ret == ACL_SUCCESS && out != nullptr, return ret);
  ret = CreateAclTensor(indicesHostData, indicesShape, &indicesDeviceAddr, aclDataType::ACL_INT8, &indices);
  CHECK_RET(ret == ACL_SUCCESS && indices != nullptr, return ret);
  std::vector<int64_t> kernelSizeData = {3, 3};
  aclIntArray* kernelSize = aclCreateIntArray(kernelSizeData.data(), kernelSizeData.size());
  CHECK_RET(kernelSize != nullptr, return ACL_ERROR_BAD_ALLOC);
  PrintTensor("param kernelSize", std::vector<int64_t>{static_cast<int64_t>(kernelSizeData.size())}, kernelSizeData);
  std::vector<int64_t> stridesData = {2, 2};
  aclIntArray* strides = aclCreateIntArray(stridesData.data(), stridesData.size());
  CHECK_RET(strides != nullptr, return ACL_ERROR_BAD_ALLOC);
  PrintTensor("param strides", std::vector<int64_t>{static_cast<int64_t>(stridesData.size())}, stridesData);
  std::vector<int64_t> paddingData = {1, 1};
  aclIntArray* padding = aclCreateIntArray(paddingData.data(), paddingData.size());
  CHECK_RET(padding != nullptr, return ACL_ERROR_BAD_ALLOC);
  PrintTensor("param padding", std::vector<int64_t>{static_cast<int64_t>(paddingData.size())}, paddingData);
  std::vector<int64_t> dilationData = {1, 1};
  aclIntArray* dilation = aclCreateIntArray(dilationData.data(), dilationData.size());
  CHECK_RET(dilation != nullptr, return ACL_ERROR_BAD_ALLOC);
  PrintTensor("param dilation", std::vector<int64_t>{static_cast<int64_t>(dilationData.size())}, dilationData);
  bool ceilMode = true;
  PrintTensor("param ceilMode", std::vector<int64_t>{1}, std::vector<int>{ceilMode ? 1 : 0});

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor;
  ret = aclnnMaxPool2dWithMaskGetWorkspaceSize(self, kernelSize, strides, padding, dilation, ceilMode, out, indices, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMaskGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
  }
  ret = aclnnMaxPool2dWithMask(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxPool2dWithMask failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

  std::vector<float> resultData(GetShapeSize(outShape), 0);
  ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(float), outDeviceAddr, resultData.size() * sizeof(float),
                    ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);

  std::vector<int8_t> maskData(GetShapeSize(indicesShape), 0);
  ret = aclrtMemcpy(maskData.data(), maskData.size() * sizeof(int8_t), indicesDeviceAddr, maskData.size() * sizeof(int8_t),
                    ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
  // A2/A3 mask layout: little-endian int32 argmax (ih * W + iw) per output, N, C, Ho, Wo order.
  std::vector<int32_t> argmax(resultData.size(), 0);
  for (size_t i = 0; i < argmax.size(); i++) {
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(maskData.data()) + 4 * i;
    argmax[i] = static_cast<int32_t>(bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (static_cast<uint32_t>(bytes[3]) << 24));
  }
  int64_t nonZeroTail = 0;
  for (size_t i = 4 * argmax.size(); i < maskData.size(); i++) {
    nonZeroTail += maskData[i] != 0;
  }
  PrintTensor("self", selfShape, selfHostData);
  PrintTensor("out", outShape, resultData);
  PrintTensor("argmax", outShape, argmax);
  PrintTensor("maskTailNonZero", std::vector<int64_t>{1}, std::vector<int64_t>{nonZeroTail});

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
