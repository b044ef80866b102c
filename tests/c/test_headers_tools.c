/*
 * test_headers_tools.c - the runtime package's other headers (acl_prof.h, acl_dump.h, acl_tdt.h,
 * acl_tdt_queue.h, acl_platform.h, acl_rt_memory_soma.h, acl_rt_api.h) compile as C11 and hold
 * CANN's exact values, layouts and prototypes.
 *
 * The values and prototypes below were written from hicann/runtime's include/external/acl (commit
 * 681ef7610), not from our headers: every enum value and flag macro is compared with CANN's, every
 * function is assigned to a pointer of CANN's prototype (a mismatch fails to compile under
 * -Werror) and linked (a missing export fails to link), and the structs a program fills have
 * CANN's sizes and offsets.  acl_rt_api.h is C++ only: from C it must be empty and harmless.
 */
#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"
#include "acl/acl_prof.h"
#include "acl/acl_dump.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "acl/acl_platform.h"
#include "acl/acl_rt_api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "header_tables.h"

#if !defined(MSVP_PROF_API) || !defined(ACL_DUMP_API) || !defined(ACL_DUMP_WEAK)
#error "the export macros of acl_prof.h and acl_dump.h must be defined"
#endif
#if !defined(ACL_PROF_TENSOR_INFO_DEFINED)
#error "acl_prof.h must define ACL_PROF_TENSOR_INFO_DEFINED with its tensor-info structs"
#endif

#define NUM_FUNCTIONS 114

static const value_row VALUES[] = {
    {"ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES", (long long)(ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES), 1LL},
    {"ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC", (long long)(ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC), 2LL},
    {"ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES", (long long)(ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES), 3LL},
    {"ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD", (long long)(ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD), 4LL},
    {"ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT", (long long)(ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 5LL},
    {"ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH", (long long)(ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 6LL},
    {"ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT", (long long)(ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 7LL},
    {"ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH", (long long)(ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), 8LL},
    {"ACL_PROF_ACL_API", (long long)(ACL_PROF_ACL_API), 0x0001LL},
    {"ACL_PROF_TASK_TIME", (long long)(ACL_PROF_TASK_TIME), 0x0002LL},
    {"ACL_PROF_AICORE_METRICS", (long long)(ACL_PROF_AICORE_METRICS), 0x0004LL},
    {"ACL_PROF_AICPU", (long long)(ACL_PROF_AICPU), 0x0008LL},
    {"ACL_PROF_L2CACHE", (long long)(ACL_PROF_L2CACHE), 0x0010LL},
    {"ACL_PROF_HCCL_TRACE", (long long)(ACL_PROF_HCCL_TRACE), 0x0020LL},
    {"ACL_PROF_TRAINING_TRACE", (long long)(ACL_PROF_TRAINING_TRACE), 0x0040LL},
    {"ACL_PROF_MSPROFTX", (long long)(ACL_PROF_MSPROFTX), 0x0080LL},
    {"ACL_PROF_RUNTIME_API", (long long)(ACL_PROF_RUNTIME_API), 0x0100LL},
    {"ACL_PROF_GE_API_L0", (long long)(ACL_PROF_GE_API_L0), 0x0200LL},
    {"ACL_PROF_TASK_TIME_L0", (long long)(ACL_PROF_TASK_TIME_L0), 0x0800LL},
    {"ACL_PROF_TASK_MEMORY", (long long)(ACL_PROF_TASK_MEMORY), 0x1000LL},
    {"ACL_PROF_GE_API_L1", (long long)(ACL_PROF_GE_API_L1), 0x01000000LL},
    {"ACL_PROF_TASK_TIME_L2", (long long)(ACL_PROF_TASK_TIME_L2), 0x2000LL},
    {"ACL_PROF_OP_ATTR", (long long)(ACL_PROF_OP_ATTR), 0x4000LL},
    {"ACL_PROF_TASK_TIME_L3", (long long)(ACL_PROF_TASK_TIME_L3), 0x8000LL},
    {"ACL_PROF_API_STATS", (long long)(ACL_PROF_API_STATS), 0x400000000LL},
    {"ACL_PROF_AICORE_SHAPE", (long long)(ACL_PROF_AICORE_SHAPE), 0x800000000LL},
    {"ACL_PROF_MAX_OP_NAME_LEN", (long long)(ACL_PROF_MAX_OP_NAME_LEN), 257LL},
    {"ACL_PROF_MAX_OP_TYPE_LEN", (long long)(ACL_PROF_MAX_OP_TYPE_LEN), 65LL},
    {"ACL_PROF_TENSOR_DATA_SHAPE_LEN", (long long)(ACL_PROF_TENSOR_DATA_SHAPE_LEN), 8LL},
    {"ACL_PROF_EVENT_ATTR_VERSION", (long long)(ACL_PROF_EVENT_ATTR_VERSION), 1LL},
    {"ACL_AICORE_ARITHMETIC_UTILIZATION", (long long)(ACL_AICORE_ARITHMETIC_UTILIZATION), 0LL},
    {"ACL_AICORE_PIPE_UTILIZATION", (long long)(ACL_AICORE_PIPE_UTILIZATION), 1LL},
    {"ACL_AICORE_MEMORY_BANDWIDTH", (long long)(ACL_AICORE_MEMORY_BANDWIDTH), 2LL},
    {"ACL_AICORE_L0B_AND_WIDTH", (long long)(ACL_AICORE_L0B_AND_WIDTH), 3LL},
    {"ACL_AICORE_RESOURCE_CONFLICT_RATIO", (long long)(ACL_AICORE_RESOURCE_CONFLICT_RATIO), 4LL},
    {"ACL_AICORE_MEMORY_UB", (long long)(ACL_AICORE_MEMORY_UB), 5LL},
    {"ACL_AICORE_L2_CACHE", (long long)(ACL_AICORE_L2_CACHE), 6LL},
    {"ACL_AICORE_PIPE_EXECUTE_UTILIZATION", (long long)(ACL_AICORE_PIPE_EXECUTE_UTILIZATION), 7LL},
    {"ACL_AICORE_MEMORY_ACCESS", (long long)(ACL_AICORE_MEMORY_ACCESS), 8LL},
    {"ACL_AICORE_NONE", (long long)(ACL_AICORE_NONE), 255LL},
    {"ACL_STEP_START", (long long)(ACL_STEP_START), 0LL},
    {"ACL_STEP_END", (long long)(ACL_STEP_END), 1LL},
    {"ACL_SUBSCRIBE_OP", (long long)(ACL_SUBSCRIBE_OP), 0LL},
    {"ACL_SUBSCRIBE_SUBGRAPH", (long long)(ACL_SUBSCRIBE_SUBGRAPH), 1LL},
    {"ACL_SUBSCRIBE_OP_THREAD", (long long)(ACL_SUBSCRIBE_OP_THREAD), 2LL},
    {"ACL_SUBSCRIBE_NONE", (long long)(ACL_SUBSCRIBE_NONE), 255LL},
    {"ACL_SUBSCRIBE_ATTRI_THREADID", (long long)(ACL_SUBSCRIBE_ATTRI_THREADID), 0LL},
    {"ACL_SUBSCRIBE_ATTRI_NONE", (long long)(ACL_SUBSCRIBE_ATTRI_NONE), 1LL},
    {"ACL_PROF_ARGS_MIN", (long long)(ACL_PROF_ARGS_MIN), 0LL},
    {"ACL_PROF_STORAGE_LIMIT", (long long)(ACL_PROF_STORAGE_LIMIT), 1LL},
    {"ACL_PROF_SYS_HARDWARE_MEM_FREQ", (long long)(ACL_PROF_SYS_HARDWARE_MEM_FREQ), 3LL},
    {"ACL_PROF_LLC_MODE", (long long)(ACL_PROF_LLC_MODE), 4LL},
    {"ACL_PROF_SYS_IO_FREQ", (long long)(ACL_PROF_SYS_IO_FREQ), 5LL},
    {"ACL_PROF_SYS_INTERCONNECTION_FREQ", (long long)(ACL_PROF_SYS_INTERCONNECTION_FREQ), 6LL},
    {"ACL_PROF_DVPP_FREQ", (long long)(ACL_PROF_DVPP_FREQ), 7LL},
    {"ACL_PROF_HOST_SYS", (long long)(ACL_PROF_HOST_SYS), 8LL},
    {"ACL_PROF_HOST_SYS_USAGE", (long long)(ACL_PROF_HOST_SYS_USAGE), 9LL},
    {"ACL_PROF_HOST_SYS_USAGE_FREQ", (long long)(ACL_PROF_HOST_SYS_USAGE_FREQ), 10LL},
    {"ACL_PROF_LOW_POWER_FREQ", (long long)(ACL_PROF_LOW_POWER_FREQ), 11LL},
    {"ACL_PROF_SYS_MEM_SERVICEFLOW", (long long)(ACL_PROF_SYS_MEM_SERVICEFLOW), 12LL},
    {"ACL_PROF_SYS_CPU_FREQ", (long long)(ACL_PROF_SYS_CPU_FREQ), 13LL},
    {"ACL_PROF_OPTYPE", (long long)(ACL_PROF_OPTYPE), 14LL},
    {"ACL_PROF_NTS_METRICS", (long long)(ACL_PROF_NTS_METRICS), 15LL},
    {"ACL_PROF_PATH", (long long)(ACL_PROF_PATH), 16LL},
    {"ACL_PROF_ARGS_MAX", (long long)(ACL_PROF_ARGS_MAX), 17LL},
    {"ACL_PROF_MESSAGE_TYPE_TENSOR_INFO", (long long)(ACL_PROF_MESSAGE_TYPE_TENSOR_INFO), 0LL},
    {"ACL_DUMP_MAX_FILE_PATH_LENGTH", (long long)(ACL_DUMP_MAX_FILE_PATH_LENGTH), 4096LL},
    {"ACL_OP_DUMP_OP_AICORE_ARGS", (long long)(ACL_OP_DUMP_OP_AICORE_ARGS), 0x00000001LL},
    {"ACL_DUMP_MAX_SHAPE_NUM", (long long)(ACL_DUMP_MAX_SHAPE_NUM), 25LL},
    {"AIC_ERR_BRIEF_DUMP", (long long)(AIC_ERR_BRIEF_DUMP), 1LL},
    {"AIC_ERR_NORM_DUMP", (long long)(AIC_ERR_NORM_DUMP), 2LL},
    {"AIC_ERR_DETAIL_DUMP", (long long)(AIC_ERR_DETAIL_DUMP), 3LL},
    {"DATA_DUMP", (long long)(DATA_DUMP), 4LL},
    {"OVERFLOW_DUMP", (long long)(OVERFLOW_DUMP), 5LL},
    {"ACL_DUMP_TENSOR_INPUT", (long long)(ACL_DUMP_TENSOR_INPUT), 0LL},
    {"ACL_DUMP_TENSOR_OUTPUT", (long long)(ACL_DUMP_TENSOR_OUTPUT), 1LL},
    {"ACL_DUMP_TENSOR_WORKSPACE", (long long)(ACL_DUMP_TENSOR_WORKSPACE), 2LL},
    {"ACL_DUMP_ADDR_PTR", (long long)(ACL_DUMP_ADDR_PTR), 0LL},
    {"ACL_DUMP_ADDR_PTR_PTR", (long long)(ACL_DUMP_ADDR_PTR_PTR), 1LL},
    {"ACL_DUMP_ADDR_RAW", (long long)(ACL_DUMP_ADDR_RAW), 2LL},
    {"ACL_DUMP_PLACEMENT_DEVICE", (long long)(ACL_DUMP_PLACEMENT_DEVICE), 0LL},
    {"ACL_DUMP_PLACEMENT_HOST", (long long)(ACL_DUMP_PLACEMENT_HOST), 1LL},
    {"ACL_DUMP_PLACEMENT_END", (long long)(ACL_DUMP_PLACEMENT_END), 2LL},
    {"ACL_TENSOR_DATA_UNDEFINED", (long long)(ACL_TENSOR_DATA_UNDEFINED), -1LL},
    {"ACL_TENSOR_DATA_TENSOR", (long long)(ACL_TENSOR_DATA_TENSOR), 0LL},
    {"ACL_TENSOR_DATA_END_OF_SEQUENCE", (long long)(ACL_TENSOR_DATA_END_OF_SEQUENCE), 1LL},
    {"ACL_TENSOR_DATA_ABNORMAL", (long long)(ACL_TENSOR_DATA_ABNORMAL), 2LL},
    {"ACL_TENSOR_DATA_SLICE_TENSOR", (long long)(ACL_TENSOR_DATA_SLICE_TENSOR), 3LL},
    {"ACL_TENSOR_DATA_END_TENSOR", (long long)(ACL_TENSOR_DATA_END_TENSOR), 4LL},
    {"ACL_TDT_QUEUE_PERMISSION_MANAGE", (long long)(ACL_TDT_QUEUE_PERMISSION_MANAGE), 1LL},
    {"ACL_TDT_QUEUE_PERMISSION_DEQUEUE", (long long)(ACL_TDT_QUEUE_PERMISSION_DEQUEUE), 2LL},
    {"ACL_TDT_QUEUE_PERMISSION_ENQUEUE", (long long)(ACL_TDT_QUEUE_PERMISSION_ENQUEUE), 4LL},
    {"ACL_TDT_QUEUE_ROUTE_UNBIND", (long long)(ACL_TDT_QUEUE_ROUTE_UNBIND), 0LL},
    {"ACL_TDT_QUEUE_ROUTE_BIND", (long long)(ACL_TDT_QUEUE_ROUTE_BIND), 1LL},
    {"ACL_TDT_QUEUE_ROUTE_BIND_ABNORMAL", (long long)(ACL_TDT_QUEUE_ROUTE_BIND_ABNORMAL), 2LL},
    {"ACL_TDT_QUEUE_NAME_PTR", (long long)(ACL_TDT_QUEUE_NAME_PTR), 0LL},
    {"ACL_TDT_QUEUE_DEPTH_UINT32", (long long)(ACL_TDT_QUEUE_DEPTH_UINT32), 1LL},
    {"ACL_TDT_QUEUE_ROUTE_SRC_UINT32", (long long)(ACL_TDT_QUEUE_ROUTE_SRC_UINT32), 0LL},
    {"ACL_TDT_QUEUE_ROUTE_DST_UINT32", (long long)(ACL_TDT_QUEUE_ROUTE_DST_UINT32), 1LL},
    {"ACL_TDT_QUEUE_ROUTE_STATUS_INT32", (long long)(ACL_TDT_QUEUE_ROUTE_STATUS_INT32), 2LL},
    {"ACL_TDT_QUEUE_ROUTE_QUERY_SRC", (long long)(ACL_TDT_QUEUE_ROUTE_QUERY_SRC), 0LL},
    {"ACL_TDT_QUEUE_ROUTE_QUERY_DST", (long long)(ACL_TDT_QUEUE_ROUTE_QUERY_DST), 1LL},
    {"ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST", (long long)(ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST), 2LL},
    {"ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL", (long long)(ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL), 100LL},
    {"ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM", (long long)(ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM), 0LL},
    {"ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32", (long long)(ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32), 1LL},
    {"ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32", (long long)(ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32), 2LL},
    {"ACL_TDT_NORMAL_MEM", (long long)(ACL_TDT_NORMAL_MEM), 0LL},
    {"ACL_TDT_DVPP_MEM", (long long)(ACL_TDT_DVPP_MEM), 1LL},
    {"ACL_PLATFORM_AICORE_CNT", (long long)(ACL_PLATFORM_AICORE_CNT), 0LL},
    {"ACL_PLATFORM_AICORE_UB_SIZE", (long long)(ACL_PLATFORM_AICORE_UB_SIZE), 1LL},
    {"ACL_PLATFORM_CUBE_CORE_CNT", (long long)(ACL_PLATFORM_CUBE_CORE_CNT), 2LL},
    {"ACL_PLATFORM_VECTOR_CORE_CNT", (long long)(ACL_PLATFORM_VECTOR_CORE_CNT), 3LL},
    {"ACL_PLATFORM_L2_SIZE", (long long)(ACL_PLATFORM_L2_SIZE), 4LL},
    {"ACL_PLATFORM_MEMORY_SIZE", (long long)(ACL_PLATFORM_MEMORY_SIZE), 5LL},
    {"ACL_PLATFORM_CUBE_FREQ", (long long)(ACL_PLATFORM_CUBE_FREQ), 6LL},
    {"ACL_PLATFORM_VEC_FREQ", (long long)(ACL_PLATFORM_VEC_FREQ), 7LL},
    {"ACL_PLATFORM_BT_SIZE", (long long)(ACL_PLATFORM_BT_SIZE), 8LL},
    {"ACL_PLATFORM_L0_A_SIZE", (long long)(ACL_PLATFORM_L0_A_SIZE), 9LL},
    {"ACL_PLATFORM_L0_B_SIZE", (long long)(ACL_PLATFORM_L0_B_SIZE), 10LL},
    {"ACL_PLATFORM_L0_C_SIZE", (long long)(ACL_PLATFORM_L0_C_SIZE), 11LL},
    {"ACL_PLATFORM_L1_SIZE", (long long)(ACL_PLATFORM_L1_SIZE), 12LL},
    {"ACL_PLATFORM_SOC_VERSION", (long long)(ACL_PLATFORM_SOC_VERSION), 13LL},
    {"ACL_PLATFORM_AIC_VERSION", (long long)(ACL_PLATFORM_AIC_VERSION), 14LL},
    {"ACL_PLATFORM_NPU_ARCH", (long long)(ACL_PLATFORM_NPU_ARCH), 15LL},
    {"ACL_PLATFORM_MEMORY_TYPE", (long long)(ACL_PLATFORM_MEMORY_TYPE), 16LL},
    {"ACL_PLATFORM_CORE_TYPE_AI_CORE", (long long)(ACL_PLATFORM_CORE_TYPE_AI_CORE), 0LL},
    {"ACL_PLATFORM_CORE_TYPE_VECTOR_CORE", (long long)(ACL_PLATFORM_CORE_TYPE_VECTOR_CORE), 1LL},
    {"DAV_1001", (long long)(DAV_1001), 1001LL},
    {"DAV_2002", (long long)(DAV_2002), 2002LL},
    {"DAV_2102", (long long)(DAV_2102), 2102LL},
    {"DAV_2201", (long long)(DAV_2201), 2201LL},
    {"DAV_3002", (long long)(DAV_3002), 3002LL},
    {"DAV_3003", (long long)(DAV_3003), 3003LL},
    {"DAV_3004", (long long)(DAV_3004), 3004LL},
    {"DAV_3102", (long long)(DAV_3102), 3102LL},
    {"DAV_3113", (long long)(DAV_3113), 3113LL},
    {"DAV_3505", (long long)(DAV_3505), 3505LL},
    {"DAV_3510", (long long)(DAV_3510), 3510LL},
    {"DAV_5102", (long long)(DAV_5102), 5102LL},
    {"DAV_5162", (long long)(DAV_5162), 5162LL},
    {"DAV_RESV", (long long)(DAV_RESV), 65535LL},
    {"L0_A", (long long)(L0_A), 0LL},
    {"L0_B", (long long)(L0_B), 1LL},
    {"L0_C", (long long)(L0_C), 2LL},
    {"L1", (long long)(L1), 3LL},
    {"L2", (long long)(L2), 4LL},
    {"UB", (long long)(UB), 5LL},
    {"HBM", (long long)(HBM), 6LL},
};

static int check_values(void)
{
    return count_value_mismatches(VALUES, sizeof VALUES / sizeof VALUES[0]);
}

/* Layouts, worked out by hand from CANN's field lists on LP64. */
static int check_layouts(void)
{
    const struct {
        const char *what;
        size_t actual, expected;
    } rows[] = {
        {"sizeof(acldumpChunk)", sizeof(acldumpChunk), 4120},
        {"offsetof(acldumpChunk, offset)", offsetof(acldumpChunk, offset), 4104},
        {"offsetof(acldumpChunk, dataBuf)", offsetof(acldumpChunk, dataBuf), 4116},
        {"sizeof(acldumpTensorInfo)", sizeof(acldumpTensorInfo), 456},
        {"offsetof(acldumpTensorInfo, shape)", offsetof(acldumpTensorInfo, shape), 56},
        {"sizeof(aclprofTensor)", sizeof(aclprofTensor), 48},
        {"sizeof(aclprofTensorInfo)", sizeof(aclprofTensorInfo), 48},
        {"sizeof(aclprofEventAttributes)", sizeof(aclprofEventAttributes), 16},
        {"offsetof(aclprofEventAttributes, message)", offsetof(aclprofEventAttributes, message), 8},
        {"sizeof(aclrtMemPoolProps)", sizeof(aclrtMemPoolProps), 56},
        {"offsetof(aclrtMemPoolProps, maxSize)", offsetof(aclrtMemPoolProps, maxSize), 16},
        {"sizeof(acltdtBuf)", sizeof(acltdtBuf), sizeof(void *)},
        {"sizeof(aclrtMemPool)", sizeof(aclrtMemPool), sizeof(void *)},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        if (rows[i].actual != rows[i].expected) {
            printf("FAIL %s = %zu, CANN has %zu\n", rows[i].what, rows[i].actual, rows[i].expected);
            ++failures;
        }
    }
    return failures;
}

static int check_symbols(void)
{
    int failures = 0;
    aclError (*p0)(aclrtMemPool* memPool, const aclrtMemPoolProps* poolProps) = aclrtMemPoolCreate;
    aclError (*p1)(const aclrtMemPool memPool) = aclrtMemPoolDestroy;
    aclError (*p2)(aclrtMemPool memPool, aclrtMemPoolAttr attr, void* value) = aclrtMemPoolSetAttr;
    aclError (*p3)(aclrtMemPool memPool, aclrtMemPoolAttr attr, void* value) = aclrtMemPoolGetAttr;
    aclError (*p4)(void** ptr, size_t size, aclrtMemPool memPool, aclrtStream stream) = aclrtMemPoolMallocAsync;
    aclError (*p5)(void* ptr, aclrtStream stream) = aclrtMemPoolFreeAsync;
    aclError (*p6)(aclrtMemPool memPool, size_t minBytesToKeep) = aclrtMemPoolTrimTo;
    aclError (*p7)(const char* profilerResultPath, size_t length) = aclprofInit;
    aclError (*p8)(void) = aclprofFinalize;
    aclError (*p9)(const aclprofConfig* profilerConfig) = aclprofStart;
    aclprofConfig* (*p10)(uint32_t* deviceIdList, uint32_t deviceNums, aclprofAicoreMetrics aicoreMetrics, const aclprofAicoreEvents* aicoreEvents, uint64_t dataTypeConfig) = aclprofCreateConfig;
    aclError (*p11)(const aclprofConfig* profilerConfig) = aclprofDestroyConfig;
    aclError (*p12)(const aclprofConfig* profilerConfig) = aclprofStop;
    aclError (*p13)(aclprofConfigType configType, const char* config, size_t configLength) = aclprofSetConfig;
    aclError (*p14)(uint32_t modelId, const aclprofSubscribeConfig* profSubscribeConfig) = aclprofModelSubscribe;
    aclError (*p15)(uint32_t modelId) = aclprofModelUnSubscribe;
    aclprofSubscribeConfig* (*p16)(int8_t timeInfoSwitch, aclprofAicoreMetrics aicoreMetrics, void* fd) = aclprofCreateSubscribeConfig;
    aclError (*p17)(const aclprofSubscribeConfig* profSubscribeConfig) = aclprofDestroySubscribeConfig;
    aclError (*p18)(size_t* opDescSize) = aclprofGetOpDescSize;
    aclError (*p19)(const void* opInfo, size_t opInfoLen, uint32_t* opNumber) = aclprofGetOpNum;
    aclError (*p20)(const void* opInfo, size_t opInfoLen, uint32_t index, size_t* opTypeLen) = aclprofGetOpTypeLen;
    aclError (*p21)(const void* opInfo, size_t opInfoLen, uint32_t index, char* opType, size_t opTypeLen) = aclprofGetOpType;
    aclError (*p22)(const void* opInfo, size_t opInfoLen, uint32_t index, size_t* opNameLen) = aclprofGetOpNameLen;
    aclError (*p23)(const void* opInfo, size_t opInfoLen, uint32_t index, char* opName, size_t opNameLen) = aclprofGetOpName;
    uint64_t (*p24)(const void* opInfo, size_t opInfoLen, uint32_t index) = aclprofGetOpStart;
    uint64_t (*p25)(const void* opInfo, size_t opInfoLen, uint32_t index) = aclprofGetOpEnd;
    uint64_t (*p26)(const void* opInfo, size_t opInfoLen, uint32_t index) = aclprofGetOpDuration;
    size_t (*p27)(const void* opInfo, size_t opInfoLen, uint32_t index) = aclprofGetModelId;
    aclprofSubscribeOpFlag (*p28)(const void* opInfo, size_t opInfoLen, uint32_t index) = aclprofGetOpFlag;
    const char* (*p29)(const void* opInfo, size_t opInfoLen, uint32_t index, aclprofSubscribeOpAttri attri) = aclprofGetOpAttriValue;
    aclError (*p30)(aclprofStepInfo* stepInfo, aclprofStepTag tag, aclrtStream stream) = aclprofGetStepTimestamp;
    aclprofStepInfo* (*p31)(void) = aclprofCreateStepInfo;
    void (*p32)(aclprofStepInfo* stepinfo) = aclprofDestroyStepInfo;
    void* (*p33)(void) = aclprofCreateStamp;
    void (*p34)(void* stamp) = aclprofDestroyStamp;
    aclError (*p35)(void* stamp) = aclprofPush;
    aclError (*p36)(void) = aclprofPop;
    aclError (*p37)(void* stamp, uint32_t* rangeId) = aclprofRangeStart;
    aclError (*p38)(uint32_t rangeId) = aclprofRangeStop;
    aclError (*p39)(void* stamp, const char* msg, uint32_t msgLen) = aclprofSetStampTraceMessage;
    aclError (*p40)(void* stamp) = aclprofMark;
    aclError (*p41)(const char* msg, size_t msgLen, aclrtStream stream) = aclprofMarkEx;
    uint64_t (*p42)(const char* message) = aclprofStr2Id;
    aclError (*p43)(aclprofEventAttributes* attr) = aclprofRangePushEx;
    aclError (*p44)(void) = aclprofRangePop;
    aclError (*p45)(int32_t (*const messageCallback)(const acldumpChunk*, int32_t), int32_t flag) = acldumpRegCallback;
    void (*p46)(void) = acldumpUnregCallback;
    aclError (*p47)(uint32_t dumpType, const char* path) = aclopStartDumpArgs;
    aclError (*p48)(uint32_t dumpType) = aclopStopDumpArgs;
    const char* (*p49)(acldumpType dumpType) = acldumpGetPath;
    aclError (*p50)(const char* fileName, const char* userTag, const acldumpTensorInfo* tensors, size_t tensorCount) = acldumpSaveExceptionInfo;
    aclError (*p51)(char* path, size_t maxLen) = acldumpGetExceptionInfoPath;
    acltdtTensorType (*p52)(const acltdtDataItem* dataItem) = acltdtGetTensorTypeFromItem;
    aclDataType (*p53)(const acltdtDataItem* dataItem) = acltdtGetDataTypeFromItem;
    void* (*p54)(const acltdtDataItem* dataItem) = acltdtGetDataAddrFromItem;
    size_t (*p55)(const acltdtDataItem* dataItem) = acltdtGetDataSizeFromItem;
    size_t (*p56)(const acltdtDataItem* dataItem) = acltdtGetDimNumFromItem;
    aclError (*p57)(const acltdtDataItem* dataItem, size_t* sliceNum, size_t* sliceId) = acltdtGetSliceInfoFromItem;
    aclError (*p58)(const acltdtDataItem* dataItem, int64_t* dims, size_t dimNum) = acltdtGetDimsFromItem;
    acltdtDataItem* (*p59)(acltdtTensorType tdtType, const int64_t* dims, size_t dimNum, aclDataType dataType, void* data, size_t size) = acltdtCreateDataItem;
    aclError (*p60)(acltdtDataItem* dataItem) = acltdtDestroyDataItem;
    acltdtDataset* (*p61)(void) = acltdtCreateDataset;
    aclError (*p62)(acltdtDataset* dataset) = acltdtDestroyDataset;
    acltdtDataItem* (*p63)(const acltdtDataset* dataset, size_t index) = acltdtGetDataItem;
    aclError (*p64)(acltdtDataset* dataset, acltdtDataItem* dataItem) = acltdtAddDataItem;
    size_t (*p65)(const acltdtDataset* dataset) = acltdtGetDatasetSize;
    const char* (*p66)(const acltdtDataset* dataset) = acltdtGetDatasetName;
    aclError (*p67)(acltdtChannelHandle* handle) = acltdtStopChannel;
    acltdtChannelHandle* (*p68)(uint32_t deviceId, const char* name) = acltdtCreateChannel;
    acltdtChannelHandle* (*p69)(uint32_t deviceId, const char* name, size_t capacity) = acltdtCreateChannelWithCapacity;
    aclError (*p70)(acltdtChannelHandle* handle) = acltdtDestroyChannel;
    aclError (*p71)(acltdtChannelHandle* handle) = acltdtCleanChannel;
    aclError (*p72)(const acltdtChannelHandle* handle, const acltdtDataset* dataset, int32_t timeout) = acltdtSendTensor;
    aclError (*p73)(const acltdtChannelHandle* handle, acltdtDataset* dataset, int32_t timeout) = acltdtReceiveTensor;
    aclError (*p74)(const acltdtChannelHandle* handle, size_t* size) = acltdtQueryChannelSize;
    aclError (*p75)(const acltdtQueueAttr* attr, uint32_t* qid) = acltdtCreateQueue;
    aclError (*p76)(uint32_t qid) = acltdtDestroyQueue;
    aclError (*p77)(uint32_t qid, acltdtBuf buf, int32_t timeout) = acltdtEnqueue;
    aclError (*p78)(uint32_t qid, acltdtBuf* buf, int32_t timeout) = acltdtDequeue;
    aclError (*p79)(uint32_t qid, const void* data, size_t dataSize, const void* userData, size_t userDataSize, int32_t timeout, uint32_t rsv) = acltdtEnqueueData;
    aclError (*p80)(uint32_t qid, void* data, size_t dataSize, size_t* retDataSize, void* userData, size_t userDataSize, int32_t timeout) = acltdtDequeueData;
    aclError (*p81)(uint32_t qid, int32_t pid, uint32_t permission, int32_t timeout) = acltdtGrantQueue;
    aclError (*p82)(uint32_t qid, int32_t timeout, uint32_t* permission) = acltdtAttachQueue;
    aclError (*p83)(acltdtQueueRouteList* qRouteList) = acltdtBindQueueRoutes;
    aclError (*p84)(acltdtQueueRouteList* qRouteList) = acltdtUnbindQueueRoutes;
    aclError (*p85)(const acltdtQueueRouteQueryInfo* queryInfo, acltdtQueueRouteList* qRouteList) = acltdtQueryQueueRoutes;
    aclError (*p86)(size_t size, uint32_t type, acltdtBuf* buf) = acltdtAllocBuf;
    aclError (*p87)(acltdtBuf buf) = acltdtFreeBuf;
    aclError (*p88)(const acltdtBuf buf, void** dataPtr, size_t* size) = acltdtGetBufData;
    aclError (*p89)(acltdtBuf buf, size_t len) = acltdtSetBufDataLen;
    aclError (*p90)(acltdtBuf buf, size_t* len) = acltdtGetBufDataLen;
    aclError (*p91)(acltdtBuf headBuf, acltdtBuf buf) = acltdtAppendBufChain;
    aclError (*p92)(acltdtBuf headBuf, uint32_t* num) = acltdtGetBufChainNum;
    aclError (*p93)(acltdtBuf headBuf, uint32_t index, acltdtBuf* buf) = acltdtGetBufFromChain;
    aclError (*p94)(const acltdtBuf buf, void* dataPtr, size_t size, size_t offset) = acltdtGetBufUserData;
    aclError (*p95)(acltdtBuf buf, const void* dataPtr, size_t size, size_t offset) = acltdtSetBufUserData;
    aclError (*p96)(const acltdtBuf buf, acltdtBuf* newBuf) = acltdtCopyBufRef;
    acltdtQueueAttr* (*p97)(void) = acltdtCreateQueueAttr;
    aclError (*p98)(const acltdtQueueAttr* attr) = acltdtDestroyQueueAttr;
    aclError (*p99)(acltdtQueueAttr* attr, acltdtQueueAttrType type, size_t len, const void* param) = acltdtSetQueueAttr;
    aclError (*p100)(const acltdtQueueAttr* attr, acltdtQueueAttrType type, size_t len, size_t* paramRetSize, void* param) = acltdtGetQueueAttr;
    acltdtQueueRoute* (*p101)(uint32_t srcId, uint32_t dstId) = acltdtCreateQueueRoute;
    aclError (*p102)(const acltdtQueueRoute* route) = acltdtDestroyQueueRoute;
    aclError (*p103)(const acltdtQueueRoute* route, acltdtQueueRouteParamType type, size_t len, size_t* paramRetSize, void* param) = acltdtGetQueueRouteParam;
    acltdtQueueRouteList* (*p104)(void) = acltdtCreateQueueRouteList;
    aclError (*p105)(const acltdtQueueRouteList* routeList) = acltdtDestroyQueueRouteList;
    aclError (*p106)(acltdtQueueRouteList* routeList, const acltdtQueueRoute* route) = acltdtAddQueueRoute;
    aclError (*p107)(const acltdtQueueRouteList* routeList, size_t index, acltdtQueueRoute* route) = acltdtGetQueueRoute;
    size_t (*p108)(const acltdtQueueRouteList* routeList) = acltdtGetQueueRouteNum;
    acltdtQueueRouteQueryInfo* (*p109)(void) = acltdtCreateQueueRouteQueryInfo;
    aclError (*p110)(const acltdtQueueRouteQueryInfo* info) = acltdtDestroyQueueRouteQueryInfo;
    aclError (*p111)(acltdtQueueRouteQueryInfo* param, acltdtQueueRouteQueryInfoParamType type, size_t len, const void* value) = acltdtSetQueueRouteQueryInfo;
    aclError (*p112)(aclplatformDevInfo infoType, char* value, uint32_t maxLen) = aclplatformGetDeviceInfo;
    aclError (*p113)(aclplatformCoreType type, const char* instruction, char* value, uint32_t maxLen) = aclplatformGetInstructionInfo;
    const symbol_row symbols[] = {
        {"aclrtMemPoolCreate", (const void *)(uintptr_t)p0},
        {"aclrtMemPoolDestroy", (const void *)(uintptr_t)p1},
        {"aclrtMemPoolSetAttr", (const void *)(uintptr_t)p2},
        {"aclrtMemPoolGetAttr", (const void *)(uintptr_t)p3},
        {"aclrtMemPoolMallocAsync", (const void *)(uintptr_t)p4},
        {"aclrtMemPoolFreeAsync", (const void *)(uintptr_t)p5},
        {"aclrtMemPoolTrimTo", (const void *)(uintptr_t)p6},
        {"aclprofInit", (const void *)(uintptr_t)p7},
        {"aclprofFinalize", (const void *)(uintptr_t)p8},
        {"aclprofStart", (const void *)(uintptr_t)p9},
        {"aclprofCreateConfig", (const void *)(uintptr_t)p10},
        {"aclprofDestroyConfig", (const void *)(uintptr_t)p11},
        {"aclprofStop", (const void *)(uintptr_t)p12},
        {"aclprofSetConfig", (const void *)(uintptr_t)p13},
        {"aclprofModelSubscribe", (const void *)(uintptr_t)p14},
        {"aclprofModelUnSubscribe", (const void *)(uintptr_t)p15},
        {"aclprofCreateSubscribeConfig", (const void *)(uintptr_t)p16},
        {"aclprofDestroySubscribeConfig", (const void *)(uintptr_t)p17},
        {"aclprofGetOpDescSize", (const void *)(uintptr_t)p18},
        {"aclprofGetOpNum", (const void *)(uintptr_t)p19},
        {"aclprofGetOpTypeLen", (const void *)(uintptr_t)p20},
        {"aclprofGetOpType", (const void *)(uintptr_t)p21},
        {"aclprofGetOpNameLen", (const void *)(uintptr_t)p22},
        {"aclprofGetOpName", (const void *)(uintptr_t)p23},
        {"aclprofGetOpStart", (const void *)(uintptr_t)p24},
        {"aclprofGetOpEnd", (const void *)(uintptr_t)p25},
        {"aclprofGetOpDuration", (const void *)(uintptr_t)p26},
        {"aclprofGetModelId", (const void *)(uintptr_t)p27},
        {"aclprofGetOpFlag", (const void *)(uintptr_t)p28},
        {"aclprofGetOpAttriValue", (const void *)(uintptr_t)p29},
        {"aclprofGetStepTimestamp", (const void *)(uintptr_t)p30},
        {"aclprofCreateStepInfo", (const void *)(uintptr_t)p31},
        {"aclprofDestroyStepInfo", (const void *)(uintptr_t)p32},
        {"aclprofCreateStamp", (const void *)(uintptr_t)p33},
        {"aclprofDestroyStamp", (const void *)(uintptr_t)p34},
        {"aclprofPush", (const void *)(uintptr_t)p35},
        {"aclprofPop", (const void *)(uintptr_t)p36},
        {"aclprofRangeStart", (const void *)(uintptr_t)p37},
        {"aclprofRangeStop", (const void *)(uintptr_t)p38},
        {"aclprofSetStampTraceMessage", (const void *)(uintptr_t)p39},
        {"aclprofMark", (const void *)(uintptr_t)p40},
        {"aclprofMarkEx", (const void *)(uintptr_t)p41},
        {"aclprofStr2Id", (const void *)(uintptr_t)p42},
        {"aclprofRangePushEx", (const void *)(uintptr_t)p43},
        {"aclprofRangePop", (const void *)(uintptr_t)p44},
        {"acldumpRegCallback", (const void *)(uintptr_t)p45},
        {"acldumpUnregCallback", (const void *)(uintptr_t)p46},
        {"aclopStartDumpArgs", (const void *)(uintptr_t)p47},
        {"aclopStopDumpArgs", (const void *)(uintptr_t)p48},
        {"acldumpGetPath", (const void *)(uintptr_t)p49},
        {"acldumpSaveExceptionInfo", (const void *)(uintptr_t)p50},
        {"acldumpGetExceptionInfoPath", (const void *)(uintptr_t)p51},
        {"acltdtGetTensorTypeFromItem", (const void *)(uintptr_t)p52},
        {"acltdtGetDataTypeFromItem", (const void *)(uintptr_t)p53},
        {"acltdtGetDataAddrFromItem", (const void *)(uintptr_t)p54},
        {"acltdtGetDataSizeFromItem", (const void *)(uintptr_t)p55},
        {"acltdtGetDimNumFromItem", (const void *)(uintptr_t)p56},
        {"acltdtGetSliceInfoFromItem", (const void *)(uintptr_t)p57},
        {"acltdtGetDimsFromItem", (const void *)(uintptr_t)p58},
        {"acltdtCreateDataItem", (const void *)(uintptr_t)p59},
        {"acltdtDestroyDataItem", (const void *)(uintptr_t)p60},
        {"acltdtCreateDataset", (const void *)(uintptr_t)p61},
        {"acltdtDestroyDataset", (const void *)(uintptr_t)p62},
        {"acltdtGetDataItem", (const void *)(uintptr_t)p63},
        {"acltdtAddDataItem", (const void *)(uintptr_t)p64},
        {"acltdtGetDatasetSize", (const void *)(uintptr_t)p65},
        {"acltdtGetDatasetName", (const void *)(uintptr_t)p66},
        {"acltdtStopChannel", (const void *)(uintptr_t)p67},
        {"acltdtCreateChannel", (const void *)(uintptr_t)p68},
        {"acltdtCreateChannelWithCapacity", (const void *)(uintptr_t)p69},
        {"acltdtDestroyChannel", (const void *)(uintptr_t)p70},
        {"acltdtCleanChannel", (const void *)(uintptr_t)p71},
        {"acltdtSendTensor", (const void *)(uintptr_t)p72},
        {"acltdtReceiveTensor", (const void *)(uintptr_t)p73},
        {"acltdtQueryChannelSize", (const void *)(uintptr_t)p74},
        {"acltdtCreateQueue", (const void *)(uintptr_t)p75},
        {"acltdtDestroyQueue", (const void *)(uintptr_t)p76},
        {"acltdtEnqueue", (const void *)(uintptr_t)p77},
        {"acltdtDequeue", (const void *)(uintptr_t)p78},
        {"acltdtEnqueueData", (const void *)(uintptr_t)p79},
        {"acltdtDequeueData", (const void *)(uintptr_t)p80},
        {"acltdtGrantQueue", (const void *)(uintptr_t)p81},
        {"acltdtAttachQueue", (const void *)(uintptr_t)p82},
        {"acltdtBindQueueRoutes", (const void *)(uintptr_t)p83},
        {"acltdtUnbindQueueRoutes", (const void *)(uintptr_t)p84},
        {"acltdtQueryQueueRoutes", (const void *)(uintptr_t)p85},
        {"acltdtAllocBuf", (const void *)(uintptr_t)p86},
        {"acltdtFreeBuf", (const void *)(uintptr_t)p87},
        {"acltdtGetBufData", (const void *)(uintptr_t)p88},
        {"acltdtSetBufDataLen", (const void *)(uintptr_t)p89},
        {"acltdtGetBufDataLen", (const void *)(uintptr_t)p90},
        {"acltdtAppendBufChain", (const void *)(uintptr_t)p91},
        {"acltdtGetBufChainNum", (const void *)(uintptr_t)p92},
        {"acltdtGetBufFromChain", (const void *)(uintptr_t)p93},
        {"acltdtGetBufUserData", (const void *)(uintptr_t)p94},
        {"acltdtSetBufUserData", (const void *)(uintptr_t)p95},
        {"acltdtCopyBufRef", (const void *)(uintptr_t)p96},
        {"acltdtCreateQueueAttr", (const void *)(uintptr_t)p97},
        {"acltdtDestroyQueueAttr", (const void *)(uintptr_t)p98},
        {"acltdtSetQueueAttr", (const void *)(uintptr_t)p99},
        {"acltdtGetQueueAttr", (const void *)(uintptr_t)p100},
        {"acltdtCreateQueueRoute", (const void *)(uintptr_t)p101},
        {"acltdtDestroyQueueRoute", (const void *)(uintptr_t)p102},
        {"acltdtGetQueueRouteParam", (const void *)(uintptr_t)p103},
        {"acltdtCreateQueueRouteList", (const void *)(uintptr_t)p104},
        {"acltdtDestroyQueueRouteList", (const void *)(uintptr_t)p105},
        {"acltdtAddQueueRoute", (const void *)(uintptr_t)p106},
        {"acltdtGetQueueRoute", (const void *)(uintptr_t)p107},
        {"acltdtGetQueueRouteNum", (const void *)(uintptr_t)p108},
        {"acltdtCreateQueueRouteQueryInfo", (const void *)(uintptr_t)p109},
        {"acltdtDestroyQueueRouteQueryInfo", (const void *)(uintptr_t)p110},
        {"acltdtSetQueueRouteQueryInfo", (const void *)(uintptr_t)p111},
        {"aclplatformGetDeviceInfo", (const void *)(uintptr_t)p112},
        {"aclplatformGetInstructionInfo", (const void *)(uintptr_t)p113},
    };
    return failures + count_missing_symbols(symbols, sizeof symbols / sizeof symbols[0]);
}

int main(void)
{
    int failures = check_values() + check_layouts() + check_symbols();
    if (failures) {
        printf("test_headers_tools: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_headers_tools: %zu values, %zu functions OK\n", sizeof VALUES / sizeof VALUES[0], (size_t)NUM_FUNCTIONS);
    return 0;
}
