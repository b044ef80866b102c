/*
 * aclnn/acl_meta.h - the aclnn meta API: descriptors of the arguments operators take.
 *
 * Introduction
 *   An aclnn operator never takes raw pointers; it takes small descriptor objects:
 *     aclTensor      a view of "device" memory: shape, strides and offset (in elements), dtype,
 *                    format, plus the shape of the storage it views.  It does not own the memory.
 *     aclIntArray    a host array of int64 values (sizes, paddings, strides, ...), copied at creation
 *     aclFloatArray, aclBoolArray   the same for float / bool
 *     aclScalar      one host value of a given dtype, copied at creation
 *     aclTensorList, aclScalarList  lists that take ownership of their elements
 *     aclOpExecutor  the plan phase 1 of an operator returns and phase 2 consumes
 *
 *   Every aclCreateXxx returns NULL on failure and has an aclDestroyXxx that accepts NULL.
 *   Every other function returns an aclnnStatus: 0 (ACLNN_SUCCESS / OK) or a code of
 *   aclnn/opdev/op_errno.h (161001 NULL argument, 161002 invalid argument, 561xxx internal).
 *
 *   aclGetViewShape, aclGetStorageShape and aclGetViewStrides return arrays allocated by the
 *   library; C++ callers release them with `delete[]` as CANN documents, C callers (and Python)
 *   with aclnnCpuFreeArray().
 *
 *   Unlike CANN's C++-only original, this header is valid C11 and C++11.
 */
#ifndef OP_API_INC_ACL_META_H_
#define OP_API_INC_ACL_META_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque descriptor types.  The guard keeps the typedefs single even if another header (such as
 * older acl_base.h copies) also declares them; repeating a typedef is an error before C11. */
#ifndef ACLNN_META
#define ACLNN_META
typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclScalarList aclScalarList;
#endif /* ACLNN_META */

/* Status of every aclnn call (0 = success). */
typedef int32_t aclnnStatus;

#ifdef __cplusplus
constexpr aclnnStatus OK = 0;
#else
static const aclnnStatus OK = 0;
#endif

/* ------------------------------------------------------------------------------------------ */
/* Creation and destruction                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Describes a tensor.
 *   viewDims[viewDimsNum]   logical shape (viewDimsNum 0 = a 0-d tensor)
 *   stride                  per-dimension step in elements; NULL = contiguous row-major
 *   offset                  first element, in elements from tensorData
 *   format                  layout tag (ND, NCHW, NCL, ...)
 *   storageDims[storageDimsNum]  shape of the memory behind the view (usually = viewDims)
 *   tensorData              "device" address from aclrtMalloc (may be NULL for now)
 * Returns NULL on invalid arguments (see aclGetRecentErrMsg). */
ACL_FUNC_VISIBILITY aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                                               aclDataType dataType, const int64_t *stride,
                                               int64_t offset, aclFormat format,
                                               const int64_t *storageDims, uint64_t storageDimsNum,
                                               void *tensorData);
/* Copies one value of `dataType` from host memory. */
ACL_FUNC_VISIBILITY aclScalar *aclCreateScalar(void *value, aclDataType dataType);
/* The array creators copy `size` values from host memory (NULL/0 gives an empty array). */
ACL_FUNC_VISIBILITY aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
ACL_FUNC_VISIBILITY aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size);
ACL_FUNC_VISIBILITY aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
/* The list creators take ownership of the elements: destroying the list destroys them. */
ACL_FUNC_VISIBILITY aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size);
ACL_FUNC_VISIBILITY aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size);

/* All destroy functions accept NULL (no-op, returns 0). */
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor *tensor);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalar(const aclScalar *scalar);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyIntArray(const aclIntArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyFloatArray(const aclFloatArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensorList(const aclTensorList *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalarList(const aclScalarList *array);

/* ------------------------------------------------------------------------------------------ */
/* Queries                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* The three array getters allocate *viewDims / *storageDims / *stridesValue; release them with
 * `delete[]` (C++) or aclnnCpuFreeArray (C, Python). */
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims,
                                                uint64_t *viewDimsNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                                                   uint64_t *storageDimsNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                                                  uint64_t *stridesNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset);
ACL_FUNC_VISIBILITY aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format);
ACL_FUNC_VISIBILITY aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType);
ACL_FUNC_VISIBILITY aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetFloatArraySize(const aclFloatArray *array, uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetBoolArraySize(const aclBoolArray *array, uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size);

/* ------------------------------------------------------------------------------------------ */
/* Re-use of descriptors and executors                                                         */
/* ------------------------------------------------------------------------------------------ */

/* Re-initialises an existing tensor in place (same meaning as aclCreateTensor; NULL/0 fields
 * are left unchanged, a NULL address keeps the old one). */
ACL_FUNC_VISIBILITY aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims,
                                              uint64_t viewDimsNum, aclDataType dataType,
                                              const int64_t *stride, int64_t offset,
                                              aclFormat format, const int64_t *storageDims,
                                              uint64_t storageDimsNum, void *tensorDataAddr);
/* Call right after phase 1: the executor then survives phase 2 (run it many times) and must be
 * freed with aclDestroyAclOpExecutor. */
ACL_FUNC_VISIBILITY aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);
/* Re-point the index-th input / output / overall (inputs first) tensor of a repeatable executor
 * at new memory. */
ACL_FUNC_VISIBILITY aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index,
                                                      aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index,
                                                       aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index,
                                                 aclTensor *tensor, void *addr);
/* Same for element `relativeIndex` of the tensor-list argument at IR position `irIndex`. */
ACL_FUNC_VISIBILITY aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                             const size_t relativeIndex,
                                                             aclTensorList *tensors, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                              const size_t relativeIndex,
                                                              aclTensorList *tensors, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                        const size_t relativeIndex,
                                                        aclTensorList *tensors, void *addr);
/* Set / get the base address stored in a tensor (only outside a phase 1 .. phase 2 window). */
ACL_FUNC_VISIBILITY aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr);
/* Dumps tensors (inputs first) when dumping is enabled by the aclInit configuration. */
ACL_FUNC_VISIBILITY aclnnStatus aclDumpOpTensors(const char *opType, const char *opName,
                                                 aclTensor **tensors, size_t inputTensorNum,
                                                 size_t outputTensorNum, aclrtStream stream);

/* Reserved duplicates with a capital A: same parameters, same behaviour. */
ACL_FUNC_VISIBILITY aclnnStatus AclSetInputTensorAddr(aclOpExecutor *executor, const size_t index,
                                                      aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index,
                                                       aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetTensorAddr(aclOpExecutor *executor, const size_t index,
                                                 aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                             const size_t relativeIndex,
                                                             aclTensorList *tensors, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                              const size_t relativeIndex,
                                                              aclTensorList *tensors, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus AclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                        const size_t relativeIndex,
                                                        aclTensorList *tensors, void *addr);

/* ------------------------------------------------------------------------------------------ */
/* libaclnn extensions (not part of CANN; exported under the aclnnCpu prefix)                   */
/* ------------------------------------------------------------------------------------------ */

/* Frees an array returned by aclGetViewShape, aclGetStorageShape or aclGetViewStrides (the
 * library allocates them the way C++ `delete[]` expects; C code cannot call delete[]).
 * NULL is a no-op. */
ACL_FUNC_VISIBILITY void aclnnCpuFreeArray(int64_t *array);

/* Selects the emulated product (SoC) for the whole process, as ACLNN_SOC_VERSION does at start:
 * a family name (Ascend310P, Ascend910, Ascend910B, Ascend910_93, Ascend950) or a card's name
 * (Ascend910B2, Ascend310P3, Ascend950PR_9599, ...).  Operators follow the new product from their
 * next phase 1; executors already built keep the behaviour they were planned with.  NULL or ""
 * restores the process default.  An unknown name returns ACLNN_ERR_PARAM_INVALID and changes
 * nothing. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuSetSocVersion(const char *socName);

/* Selects the emulated product for the calling thread only, over the process's selection
 * (aclnnCpuSetSocVersion / ACLNN_SOC_VERSION): the thread's phase 1 calls and aclrtGetSocName
 * follow it, other threads are unaffected.  Names as for aclnnCpuSetSocVersion; NULL or ""
 * makes the thread follow the process's selection again.  An unknown name returns
 * ACLNN_ERR_PARAM_INVALID and changes nothing. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuSetThreadSocVersion(const char *socName);

/* The family the emulated product belongs to, as the calling thread sees it: "Ascend910",
 * "Ascend910B", "Ascend910_93", "Ascend950" or "Ascend310P" (NULL when ACLNN_SOC_VERSION names
 * no product).  aclrtGetSocName reports a real card's name (Ascend910B3 for the default A2), as
 * CANN does; a program that must know it runs on libaclnn looks for this function (or any
 * aclnnCpu* export: CANN has none). */
ACL_FUNC_VISIBILITY const char *aclnnCpuGetSocFamily(void);

/* The number of errors the checking mode (ACLNN_CHECK, docs/checking.md) has reported in this
 * process so far; 0 when checking is off. Warnings are not counted. */
ACL_FUNC_VISIBILITY uint64_t aclnnCpuCheckErrorCount(void);

/* The checking mode's tools in this process, as bits: 1 memcheck, 2 initcheck, 4 racecheck,
 * 8 leakcheck (ACLNN_CHECK, read once at load); 0 when checking is off.  A binding reads it to
 * keep its own hands off device memory under memcheck. */
ACL_FUNC_VISIBILITY uint32_t aclnnCpuCheckTools(void);

/* Runs an operator's phase 2 and waits for it, in one call: launch(workspace, workspaceSize,
 * executor, stream) - `launch` is the operator's aclnnXxx function - then, when it returned 0,
 * aclrtSynchronizeStream(stream), whose aclError goes to *waited (0 otherwise).  Returns
 * launch's status, or ACLNN_ERR_RUNTIME_ERROR when the wait failed (*waited then says how), so
 * that 0 means both succeeded.  For a binding that pays for each foreign call (pyaclnn's eager
 * lane): one call where the two-phase API takes two.  A NULL launch or waited returns
 * ACLNN_ERR_PARAM_NULLPTR without launching. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuLaunchAndSynchronize(
    aclnnStatus (*launch)(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                          aclrtStream stream),
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream,
    aclError *waited);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_ACL_META_H_ */
