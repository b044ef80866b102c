/*
 * acl/acl_base_rt.h - the basic vocabulary of the ACL runtime.
 *
 * Introduction
 *   Every other public header builds on this one.  It holds:
 *     - the visibility / deprecation macros (ACL_FUNC_VISIBILITY, ACL_DEPRECATED, ...),
 *     - the handle typedefs (aclrtStream, aclrtEvent, aclrtContext, ... all plain `void *`),
 *     - aclError and every ACL_* status code (as `static const int`, like CANN),
 *     - the element types (aclDataType) and memory layouts (aclFormat) a tensor may have,
 *     - the system options of aclrt[Ctx]SetSysParamOpt (aclSysParamOpt),
 *     - small helpers: fp16 <-> float conversion, aclDataTypeSize, aclAppLog.
 *
 *   libaclnn is a CPU implementation of CANN's host ABI: names, values and prototypes here are
 *   those of CANN (see docs/headers.md); the header is valid C11 and C++11.
 *
 *   Status codes follow CANN's classes: 1xxxxx = the caller or the environment is wrong,
 *   2xxxxx = a resource is missing or a feature is unsupported, 3xxxxx = business state,
 *   5xxxxx = internal error.  0 (ACL_SUCCESS) is success.
 */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_RT_H_
#define INC_EXTERNAL_ACL_ACL_BASE_RT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------------------------------ */
/* Linkage macros                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Marks an exported function.  The library is built with -fvisibility=hidden -DFUNC_VISIBILITY,
 * so only names carrying this attribute are exported; for users it expands to nothing.
 * Defined once here (other headers rely on this one). */
#ifndef ACL_FUNC_VISIBILITY
#if defined(_MSC_VER)
#ifdef FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY _declspec(dllexport)
#else
#define ACL_FUNC_VISIBILITY
#endif
#else
#ifdef FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define ACL_FUNC_VISIBILITY
#endif
#endif
#endif /* ACL_FUNC_VISIBILITY */

#ifndef ACL_DEPRECATED
#if defined(__GNUC__) && (__GNUC__ >= 6)
#define ACL_DEPRECATED __attribute__((deprecated))
#define ACL_DEPRECATED_MESSAGE(message) __attribute__((deprecated(message)))
#elif defined(_MSC_VER)
#define ACL_DEPRECATED __declspec(deprecated)
#define ACL_DEPRECATED_MESSAGE(message) __declspec(deprecated(message))
#else
#define ACL_DEPRECATED
#define ACL_DEPRECATED_MESSAGE(message)
#endif
#endif /* ACL_DEPRECATED */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Handles                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* All runtime handles are untyped pointers, exactly as in CANN. */
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
typedef void *aclrtNotify;
typedef void *aclrtCntNotify;
typedef void *aclrtLabel;
typedef void *aclrtLabelList;
typedef void *aclrtMbuf;
typedef void *aclmdlRITask;
typedef void *aclrtAllocatorDesc;
typedef void *aclrtAllocator;
typedef void *aclrtAllocatorBlock;
typedef void *aclrtAllocatorAddr;
typedef void *aclrtTaskGrp;

/* Status of every runtime call: 0 = success, otherwise one of the codes below or of
 * error_codes/rt_error_codes.h. */
typedef int aclError;

/* IEEE binary16 storage type (no arithmetic; convert with aclFloat16ToFloat). */
typedef uint16_t aclFloat16;

/* Opaque buffer descriptor (model API; declared for completeness). */
typedef struct aclDataBuffer aclDataBuffer;

/* ------------------------------------------------------------------------------------------ */
/* ACL status codes                                                                            */
/* ------------------------------------------------------------------------------------------ */

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_NONE = 0; /* deprecated alias of ACL_SUCCESS */

static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_WRITE_FILE = 100004;
static const int ACL_ERROR_INVALID_FILE_SIZE = 100005;
static const int ACL_ERROR_PARSE_FILE = 100006;
static const int ACL_ERROR_FILE_MISSING_ATTR = 100007;
static const int ACL_ERROR_FILE_ATTR_INVALID = 100008;
static const int ACL_ERROR_INVALID_DUMP_CONFIG = 100009;
static const int ACL_ERROR_INVALID_PROFILING_CONFIG = 100010;
static const int ACL_ERROR_INVALID_MODEL_ID = 100011;
static const int ACL_ERROR_DESERIALIZE_MODEL = 100012;
static const int ACL_ERROR_PARSE_MODEL = 100013;
static const int ACL_ERROR_READ_MODEL_FAILURE = 100014;
static const int ACL_ERROR_MODEL_SIZE_INVALID = 100015;
static const int ACL_ERROR_MODEL_MISSING_ATTR = 100016;
static const int ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017;
static const int ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018;
static const int ACL_ERROR_MODEL_NOT_DYNAMIC = 100019;
static const int ACL_ERROR_OP_TYPE_NOT_MATCH = 100020;
static const int ACL_ERROR_OP_INPUT_NOT_MATCH = 100021;
static const int ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022;
static const int ACL_ERROR_OP_ATTR_NOT_MATCH = 100023;
static const int ACL_ERROR_OP_NOT_FOUND = 100024;
static const int ACL_ERROR_OP_LOAD_FAILED = 100025;
static const int ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026;
static const int ACL_ERROR_FORMAT_NOT_MATCH = 100027;
static const int ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED = 100028;
static const int ACL_ERROR_KERNEL_NOT_FOUND = 100029;
static const int ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030;
static const int ACL_ERROR_KERNEL_ALREADY_REGISTERED = 100031;
static const int ACL_ERROR_INVALID_QUEUE_ID = 100032;
static const int ACL_ERROR_REPEAT_SUBSCRIBE = 100033;
static const int ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034;
static const int ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035;
static const int ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;
static const int ACL_ERROR_NOT_STATIC_AIPP = 100038;
static const int ACL_ERROR_COMPILING_STUB_MODE = 100039;
static const int ACL_ERROR_GROUP_NOT_SET = 100040;
static const int ACL_ERROR_GROUP_NOT_CREATE = 100041;
static const int ACL_ERROR_PROF_ALREADY_RUN = 100042;
static const int ACL_ERROR_PROF_NOT_RUN = 100043;
static const int ACL_ERROR_DUMP_ALREADY_RUN = 100044;
static const int ACL_ERROR_DUMP_NOT_RUN = 100045;
static const int ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046;
static const int ACL_ERROR_PROF_API_CONFLICT = 148047;
static const int ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG = 148048;
static const int ACL_ERROR_INVALID_OPP_PATH = 148049;
static const int ACL_ERROR_OP_UNSUPPORTED_DYNAMIC = 148050;
static const int ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051;
static const int ACL_ERROR_UNSUPPORTED_JPEG = 148052;
static const int ACL_ERROR_INVALID_BUNDLE_MODEL_ID = 148053;

static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;
static const int ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007;

static const int ACL_ERROR_STORAGE_OVER_LIMIT = 300000;

static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_DRV_FAILURE = 500004;
static const int ACL_ERROR_PROFILING_FAILURE = 500005;

/* ------------------------------------------------------------------------------------------ */
/* Element types and layouts                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* Element type of a tensor or scalar.  Values are fixed by CANN (note the gaps: 5, 14, 15,
 * 18..26, 28, 31, 32 are unused).  Plain (unscoped) enum so that C++ code may still write
 * aclDataType::ACL_FLOAT. */
typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,
    ACL_FLOAT8_E5M2 = 35,
    ACL_FLOAT8_E4M3FN = 36,
    ACL_FLOAT8_E8M0 = 37,
    ACL_FLOAT6_E3M2 = 38,
    ACL_FLOAT6_E2M3 = 39,
    ACL_FLOAT4_E2M1 = 40,
    ACL_FLOAT4_E1M2 = 41
} aclDataType;

/* Memory layout of a tensor.  On a CPU only the "plain" formats (ND, NCHW, NHWC, HWCN, NDHWC,
 * NCDHW, NC, NCL) describe a row-major layout; the others are NPU-private tiled layouts. */
typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_NC1HWC0_C04 = 12,
    ACL_FORMAT_HWCN = 16,
    ACL_FORMAT_NDHWC = 27,
    ACL_FORMAT_FRACTAL_NZ = 29,
    ACL_FORMAT_NCDHW = 30,
    ACL_FORMAT_NDC1HWC0 = 32,
    ACL_FRACTAL_Z_3D = 33, /* sic: no FORMAT_ in CANN's name */
    ACL_FORMAT_NC = 35,
    ACL_FORMAT_NCL = 47,
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50,
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51,
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52,
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53,
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54
} aclFormat;

/* ------------------------------------------------------------------------------------------ */
/* System options, log levels and other small enums                                            */
/* ------------------------------------------------------------------------------------------ */

/* Options of aclrtSetSysParamOpt (process) and aclrtCtxSetSysParamOpt (context).
 * ACL_OPT_DETERMINISTIC takes 0 (off, default), 1 (deterministic), 2 (strong consistency),
 * 3 (batch invariant). */
typedef enum {
    ACL_OPT_DETERMINISTIC = 0,
    ACL_OPT_ENABLE_DEBUG_KERNEL = 1,
    ACL_OPT_STRONG_CONSISTENCY = 2, /* deprecated: use ACL_OPT_DETERMINISTIC = 2 */
    ACL_OPT_ENABLE_KERNEL_EARLY_START = 3
} aclSysParamOpt;

typedef enum {
    ACL_DEBUG = 0,
    ACL_INFO = 1,
    ACL_WARNING = 2,
    ACL_ERROR = 3
} aclLogLevel;

typedef enum {
    ACL_MEMTYPE_DEVICE = 0,
    ACL_MEMTYPE_HOST = 1,
    ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT = 2
} aclMemType;

typedef enum aclCannAttr {
    ACL_CANN_ATTR_UNDEFINED = -1,
    ACL_CANN_ATTR_INF_NAN = 0,
    ACL_CANN_ATTR_BF16 = 1,
    ACL_CANN_ATTR_JIT_COMPILE = 2
} aclCannAttr;

typedef enum aclDeviceInfo {
    ACL_DEVICE_INFO_UNDEFINED = -1,
    ACL_DEVICE_INFO_AI_CORE_NUM = 0,
    ACL_DEVICE_INFO_VECTOR_CORE_NUM = 1,
    ACL_DEVICE_INFO_L2_SIZE = 2
} aclDeviceInfo;

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* binary16 -> float.  Finite values are exact; as CANN documents, exponent 31 is treated like a
 * normal exponent, so Inf/NaN inputs do not come back as Inf/NaN (0x7C00 -> 65536.0f). */
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);

/* float -> binary16, round to nearest even, saturating: NaN/+Inf -> 0x7BFF, -Inf -> 0xFBFF,
 * finite overflow clamps to +/-65504. */
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);

/* Size in bytes of one element of `dataType` (0 for ACL_DT_UNDEFINED and ACL_STRING; 8 for
 * values CANN's table does not list, as CANN does). */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);

/* Writes a user message into the library's log (truncated at 1024 bytes). */
ACL_FUNC_VISIBILITY void aclAppLog(aclLogLevel logLevel, const char *func, const char *file,
                                   uint32_t line, const char *fmt, ...);

/* ACL_APP_LOG(level, "fmt", args...) logs with the caller's function, file and line.  The
 * format string is part of the variadic arguments so the macro stays ISO C (no ##__VA_ARGS__). */
#define ACL_APP_LOG(level, ...) aclAppLog((level), __func__, __FILE__, __LINE__, __VA_ARGS__)

/* ------------------------------------------------------------------------------------------ */
/* Data buffers                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* An aclDataBuffer only records an address and a size; it never owns the memory. */
ACL_FUNC_VISIBILITY aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);

ACL_FUNC_VISIBILITY aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);

ACL_FUNC_VISIBILITY aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size);

ACL_FUNC_VISIBILITY void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer);

/* The size truncated to 32 bits; aclGetDataBufferSizeV2 gives all of it. */
ACL_DEPRECATED_MESSAGE("aclGetDataBufferSize is deprecated, use aclGetDataBufferSizeV2 instead")
ACL_FUNC_VISIBILITY uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer);

ACL_FUNC_VISIBILITY size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer);

/* ------------------------------------------------------------------------------------------ */
/* The emulated product                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* The SoC name of the emulated product: a real card's name ("Ascend910B3" by default;
 * ACLNN_SOC_VERSION or aclnnCpuSetSocVersion choose another), NULL when ACLNN_SOC_VERSION names
 * no known SoC.  aclnnCpuGetSocFamily (aclnn/acl_meta.h) tells libaclnn from a card. */
ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void);

/* The CANN attributes (aclCannAttr) the emulated product supports, and whether one is. */
ACL_FUNC_VISIBILITY aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num);

ACL_FUNC_VISIBILITY aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value);

/* Core counts and L2 size of the emulated product (the same numbers as
 * aclrtGetDeviceInfo). */
ACL_FUNC_VISIBILITY aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo,
                                                    int64_t *value);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_BASE_RT_H_ */
