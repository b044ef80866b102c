/*
 * sample_common.h - the helpers every official CANN aclnn sample repeats at its top, written once.
 *
 * Each official sample starts with the same few pieces before its main(): the CHECK_RET and
 * LOG_PRINT macros, GetShapeSize, Init (aclInit -> aclrtSetDevice -> aclrtCreateStream),
 * CreateAclTensor (copy host data to fresh device memory and describe it with a contiguous
 * aclTensor) and a loop that copies a result back and prints it. The examples in this directory
 * include this header instead of repeating them, so each example file holds only its operator's
 * own main(): the two-phase call and everything around it stays visible there.
 *
 * Output format (read by tests/test_compat.py, which recomputes every result with PyTorch):
 *     <name> shape: [d0, d1, ...]
 *     <name>[i] is: v
 * for every input, attribute and result.
 *
 * C++11, header-only; every function is static inline so an example may leave some unused.
 */
#ifndef ACLNN_EXAMPLES_SAMPLE_COMMON_H
#define ACLNN_EXAMPLES_SAMPLE_COMMON_H

#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"

#define CHECK_RET(cond, return_expr) \
    do {                             \
        if (!(cond)) {               \
            return_expr;             \
        }                            \
    } while (0)

#define LOG_PRINT(message, ...)         \
    do {                                \
        printf(message, ##__VA_ARGS__); \
    } while (0)

static inline int64_t GetShapeSize(const std::vector<int64_t> &shape)
{
    int64_t shapeSize = 1;
    for (auto dim : shape) {
        shapeSize *= dim;
    }
    return shapeSize;
}

// Runtime set-up every sample does first: initialise, pick device 0, create the stream.
static inline int Init(int32_t deviceId, aclrtStream *stream)
{
    auto ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSetDevice(deviceId);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
    ret = aclrtCreateStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
    return 0;
}

// Copies hostData to freshly allocated device memory and describes it with a contiguous
// (row-major strides) aclTensor of the given format.
template <typename T>
static inline int CreateAclTensor(const std::vector<T> &hostData, const std::vector<int64_t> &shape,
                                  void **deviceAddr, aclDataType dataType, aclTensor **tensor,
                                  aclFormat format = aclFormat::ACL_FORMAT_ND)
{
    auto size = GetShapeSize(shape) * sizeof(T);
    auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, format, shape.data(),
                              shape.size(), *deviceAddr);
    CHECK_RET(*tensor != nullptr, LOG_PRINT("aclCreateTensor failed.\n"); return -1);
    return 0;
}

// Deterministic sample inputs: multiples of 1/16 in [-6.25, 6.1875], exact in float, so a
// reference computed from the printed values is bit-identical.
static inline std::vector<float> SampleData(int64_t size, int64_t seed)
{
    std::vector<float> data(size);
    for (int64_t i = 0; i < size; i++) {
        data[i] = static_cast<float>((i * 7919 + seed * 104729) % 200 - 100) / 16.0f;
    }
    return data;
}

// Prints host values as "<name> shape: [..]" and one "<name>[i] is: v" line per element.
template <typename T>
static inline void PrintTensor(const char *name, const std::vector<int64_t> &shape, const std::vector<T> &data)
{
    LOG_PRINT("%s shape: [", name);
    for (size_t i = 0; i < shape.size(); i++) {
        LOG_PRINT(i == 0 ? "%ld" : ", %ld", static_cast<long>(shape[i]));
    }
    LOG_PRINT("]\n");
    for (size_t i = 0; i < data.size(); i++) {
        LOG_PRINT("%s[%zu] is: %.9g\n", name, i, static_cast<double>(data[i]));
    }
}

// An attribute (aclIntArray contents or a scalar) printed like a 1-D tensor.
template <typename T>
static inline void PrintAttribute(const char *name, const std::vector<T> &values)
{
    PrintTensor(name, std::vector<int64_t>{static_cast<int64_t>(values.size())}, values);
}

// Copies a float result from the device and prints it with PrintTensor.
static inline int PrintResult(const char *name, void *deviceAddr, const std::vector<int64_t> &shape)
{
    std::vector<float> resultData(GetShapeSize(shape), 0);
    auto bytes = resultData.size() * sizeof(resultData[0]);
    auto ret = aclrtMemcpy(resultData.data(), bytes, deviceAddr, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
    PrintTensor(name, shape, resultData);
    return 0;
}

#endif  // ACLNN_EXAMPLES_SAMPLE_COMMON_H
