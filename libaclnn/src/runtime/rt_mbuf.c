/*
 * rt_mbuf.c - acl_rt.h's mbuf functions (aclrtAllocBuf & co.): CANN's shared buffers.
 *
 * They drive the same buffers as acl_tdt_queue.h's acltdt*Buf* (tdt_buf.c), as both families call
 * the same rtMbuf* functions in CANN's runtime (runtime:src/acl/aclrt_impl/memory.cpp): a buffer
 * from aclrtAllocBuf enqueues with acltdtEnqueue, and one from acltdtDequeue reads with
 * aclrtGetBufData.  What differs is what aclrt*'s own checks add (memory.cpp):
 *   - aclrtAllocBuf refuses a size of 0 (ACL_REQUIRES_POSITIVE_REPORT) and its buffer starts with a
 *     data length of 0 (CANN's aclrtGetBufDataLen page: 0 until aclrtSetBufDataLen), where
 *     acltdtAllocBuf's starts at its size;
 *   - aclrtGet/SetBufUserData check offset + size against the 96 bytes of user data before they
 *     look at the buffer, and name `size` in the message.
 * CANN's aclrtAllocBuf page caps the data area at 4 GB, a limit its driver (halMbufAlloc, not
 * public) enforces; a larger size is refused here as a bad runtime parameter (107000).
 */
#include "runtime/tdt_internal.h"

#define MBUF_DATA_MAX_BYTES (UINT64_C(4) << 30) /* CANN's aclrtAllocBuf page: "cannot exceed 4 GB" */

ACL_FUNC_VISIBILITY aclError aclrtAllocBuf(aclrtMbuf *buf, size_t size)
{
    if (buf != NULL && size == 0)
        return nn_error(ACL_ERROR_INVALID_PARAM, "aclrtAllocBuf: size must be greater than 0, got 0.");
    if (buf != NULL && (uint64_t)size > MBUF_DATA_MAX_BYTES)
        return nn_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtAllocBuf: size %zu is over the 4 GB a shared buffer's "
                        "data area may hold.", size);
    return nn_mbuf_alloc("aclrtAllocBuf", size, false, buf);
}

ACL_FUNC_VISIBILITY aclError aclrtFreeBuf(aclrtMbuf buf)
{
    return nn_mbuf_free("aclrtFreeBuf", buf);
}

ACL_FUNC_VISIBILITY aclError aclrtGetBufData(const aclrtMbuf buf, void **dataPtr, size_t *size)
{
    return nn_mbuf_get_data("aclrtGetBufData", buf, dataPtr, size);
}

ACL_FUNC_VISIBILITY aclError aclrtGetBufDataLen(aclrtMbuf buf, size_t *len)
{
    return nn_mbuf_get_data_len("aclrtGetBufDataLen", buf, len);
}

ACL_FUNC_VISIBILITY aclError aclrtSetBufDataLen(aclrtMbuf buf, size_t len)
{
    return nn_mbuf_set_data_len("aclrtSetBufDataLen", buf, len);
}

/* CANN checks the user-data range first, on the sum (memory.cpp's MEM_SIZE_MAX, 96 bytes). */
static aclError check_user_range(const char *api, size_t size, size_t offset)
{
    if (offset > NN_TDT_USER_DATA_MAX || size > NN_TDT_USER_DATA_MAX - offset)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: param size: the sum of size and offset is greater than %d, "
                        "size=%zu, offset=%zu.", api, NN_TDT_USER_DATA_MAX, size, offset);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetBufUserData(const aclrtMbuf buf, void *dataPtr, size_t size, size_t offset)
{
    const char *api = "aclrtGetBufUserData";
    aclError err = check_user_range(api, size, offset);
    return err != ACL_SUCCESS ? err : nn_mbuf_get_user_data(api, buf, dataPtr, size, offset);
}

ACL_FUNC_VISIBILITY aclError aclrtSetBufUserData(aclrtMbuf buf, const void *dataPtr, size_t size, size_t offset)
{
    const char *api = "aclrtSetBufUserData";
    aclError err = check_user_range(api, size, offset);
    return err != ACL_SUCCESS ? err : nn_mbuf_set_user_data(api, buf, dataPtr, size, offset);
}

ACL_FUNC_VISIBILITY aclError aclrtCopyBufRef(const aclrtMbuf buf, aclrtMbuf *newBuf)
{
    return nn_mbuf_copy_ref("aclrtCopyBufRef", buf, newBuf);
}

ACL_FUNC_VISIBILITY aclError aclrtAppendBufChain(aclrtMbuf headBuf, aclrtMbuf buf)
{
    return nn_mbuf_append("aclrtAppendBufChain", headBuf, buf);
}

ACL_FUNC_VISIBILITY aclError aclrtGetBufChainNum(aclrtMbuf headBuf, uint32_t *num)
{
    return nn_mbuf_chain_num("aclrtGetBufChainNum", headBuf, num);
}

ACL_FUNC_VISIBILITY aclError aclrtGetBufFromChain(aclrtMbuf headBuf, uint32_t index, aclrtMbuf *buf)
{
    return nn_mbuf_from_chain("aclrtGetBufFromChain", headBuf, index, buf);
}
