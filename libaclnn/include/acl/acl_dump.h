/*
 * acl/acl_dump.h - operator data dumps and exception dumps.
 *
 * Introduction
 *   A program asks for the inputs and outputs of operator launches to be written to files
 *   (aclopStartDumpArgs / aclopStopDumpArgs, and the model dump of acl_rt.h's aclmdlInitDump),
 *   learns where a kind of dump goes (acldumpGetPath), receives the dump data itself through a
 *   callback (acldumpRegCallback), or saves tensors of its own next to an exception dump
 *   (acldumpSaveExceptionInfo).  CANN's library of this header is libascend_dump.so.  Types and
 *   values are CANN's; docs/runtime.md says what libaclnn does with them.
 */
#ifndef INC_EXTERNAL_ACL_DUMP_H_
#define INC_EXTERNAL_ACL_DUMP_H_

#include <stdint.h>
#include "acl_base.h"

#if (defined(_WIN32) || defined(_WIN64) || defined(_MSC_VER))
#define ACL_DUMP_API __declspec(dllexport)
#define ACL_DUMP_WEAK
#else
#define ACL_DUMP_API __attribute__((visibility("default")))
#define ACL_DUMP_WEAK __attribute__((weak))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_DUMP_MAX_FILE_PATH_LENGTH 4096

/* One piece of dump data handed to the callback of acldumpRegCallback. */
typedef struct acldumpChunk {
    char fileName[ACL_DUMP_MAX_FILE_PATH_LENGTH]; /* the dump file it belongs to, absolute path */
    uint32_t bufLen;                              /* bytes in dataBuf */
    uint32_t isLastChunk;                         /* 1 for the file's last chunk, else 0 */
    int64_t offset;                               /* where it goes in the file; -1: append */
    int32_t flag;                                 /* reserved: no flag is defined */
#ifdef __cplusplus
    __extension__ uint8_t dataBuf[0];             /* the data (CANN's zero-length array) */
#else
    uint8_t dataBuf[];                            /* the data */
#endif
} acldumpChunk;

/* Dump data goes to messageCallback instead of files; flag is reserved (0). */
ACL_DUMP_API aclError acldumpRegCallback(int32_t (*const messageCallback)(const acldumpChunk *, int32_t),
                                         int32_t flag);

ACL_DUMP_API void acldumpUnregCallback(void);

/* aclopStartDumpArgs' dumpType: the arguments of AI Core operator launches. */
#define ACL_OP_DUMP_OP_AICORE_ARGS 0x00000001U

ACL_FUNC_VISIBILITY aclError aclopStartDumpArgs(uint32_t dumpType, const char *path);

ACL_FUNC_VISIBILITY aclError aclopStopDumpArgs(uint32_t dumpType);

typedef enum acldumpType {
    AIC_ERR_BRIEF_DUMP = 1,  /* exception dump, brief */
    AIC_ERR_NORM_DUMP = 2,   /* exception dump with shapes, dtypes, formats and attributes */
    AIC_ERR_DETAIL_DUMP = 3, /* exception dump with the AI Core's memory, registers and stack */
    DATA_DUMP = 4,           /* model or single-operator data dump */
    OVERFLOW_DUMP = 5        /* overflowing operators */
} acldumpType;

/* The directory the dumps of dumpType are written to (NULL when that dump is off). */
ACL_FUNC_VISIBILITY const char *acldumpGetPath(acldumpType dumpType);

#define ACL_DUMP_MAX_SHAPE_NUM 25

typedef enum acldumpTensorType {
    ACL_DUMP_TENSOR_INPUT = 0,
    ACL_DUMP_TENSOR_OUTPUT,
    ACL_DUMP_TENSOR_WORKSPACE
} acldumpTensorType;

typedef enum acldumpTensorAddressType {
    ACL_DUMP_ADDR_PTR = 0, /* one dereference gives the data address */
    ACL_DUMP_ADDR_PTR_PTR, /* two dereferences give the data address */
    ACL_DUMP_ADDR_RAW      /* the data address itself */
} acldumpTensorAddressType;

typedef enum acldumpTensorPlacement {
    ACL_DUMP_PLACEMENT_DEVICE = 0,
    ACL_DUMP_PLACEMENT_HOST,
    ACL_DUMP_PLACEMENT_END /* boundary, not a placement */
} acldumpTensorPlacement;

/* One tensor saved by acldumpSaveExceptionInfo. */
typedef struct acldumpTensorInfo {
    acldumpTensorType type;
    size_t tensorSize; /* bytes */
    int32_t format;
    int32_t dataType;
    int64_t *tensorAddr;
    acldumpTensorAddressType addrType;
    acldumpTensorPlacement placement;
    uint32_t argsOffset;     /* offset of the tensor within the operator's arguments */
    uint32_t shapeNum;       /* dims used in shape, <= ACL_DUMP_MAX_SHAPE_NUM */
    uint32_t originShapeNum; /* dims used in originShape, <= ACL_DUMP_MAX_SHAPE_NUM */
    uint64_t shape[ACL_DUMP_MAX_SHAPE_NUM];
    uint64_t originShape[ACL_DUMP_MAX_SHAPE_NUM];
} acldumpTensorInfo;

/* Weak, as in CANN: a program can test the address before calling on an older library. */
ACL_DUMP_WEAK ACL_FUNC_VISIBILITY aclError acldumpSaveExceptionInfo(const char *fileName, const char *userTag,
                                                                    const acldumpTensorInfo *tensors,
                                                                    size_t tensorCount);

ACL_DUMP_WEAK ACL_FUNC_VISIBILITY aclError acldumpGetExceptionInfoPath(char *path, size_t maxLen);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_DUMP_H_ */
