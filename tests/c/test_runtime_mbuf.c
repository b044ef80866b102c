/*
 * test_runtime_mbuf.c - acl_rt.h's mbuf functions (rt_mbuf.c over tdt_buf.c):
 *   - aclrtAllocBuf gives a block of the asked size whose data length is 0 until
 *     aclrtSetBufDataLen (CANN's aclrtGetBufDataLen page); the bytes written stay there;
 *   - user data: 96 bytes, written and read at an offset; offset + size past 96 is refused
 *     (naming size), as are NULL pointers (naming them), a size of 0 at allocation and one over
 *     the 4 GB CANN's page allows;
 *   - aclrtCopyBufRef: a second handle onto the same bytes and user data that outlives the first;
 *   - chains: aclrtAppendBufChain / GetBufChainNum / GetBufFromChain, at most 128 buffers, a
 *     member cannot be freed alone nor take members, freeing the head frees the chain;
 *   - the same buffers go through a queue: an aclrt chain enqueued with acltdtEnqueue comes back
 *     from acltdtDequeue with its bytes (its data length of them) and user data, read with aclrt*.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_tdt_queue.h"

#include "test_util.h"

#define CHAIN_MAX 128
#define USER_MAX 96

static void fill(aclrtMbuf buf, unsigned char seed, size_t len)
{
    void *data = NULL;
    size_t size = 0;
    EXPECT_OK(aclrtGetBufData(buf, &data, &size));
    CHECK(data != NULL && size >= len, "buffer of %zu bytes for %zu", size, len);
    for (size_t i = 0; i < len; i++)
        ((unsigned char *)data)[i] = (unsigned char)(seed + i);
    EXPECT_OK(aclrtSetBufDataLen(buf, len));
}

static int holds(aclrtMbuf buf, unsigned char seed, size_t len)
{
    void *data = NULL;
    size_t size = 0, data_len = 0;
    EXPECT_OK(aclrtGetBufData(buf, &data, &size));
    EXPECT_OK(aclrtGetBufDataLen(buf, &data_len));
    if (data == NULL || data_len != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char *)data)[i] != (unsigned char)(seed + i))
            return 0;
    return 1;
}

static void test_one_buffer(void)
{
    aclrtMbuf buf = NULL;
    EXPECT(aclrtAllocBuf(NULL, 64), ACL_ERROR_INVALID_PARAM, "buf");
    EXPECT(aclrtAllocBuf(&buf, 0), ACL_ERROR_INVALID_PARAM, "size");
    if (sizeof(size_t) > 4) /* the data area is capped at 4 GB (CANN's page) */
        EXPECT(aclrtAllocBuf(&buf, (size_t)((UINT64_C(4) << 30) + 1)), ACL_ERROR_RT_PARAM_INVALID, "4 GB");
    EXPECT_OK(aclrtAllocBuf(&buf, 64));
    void *data = NULL;
    size_t size = 0, len = 99;
    EXPECT_OK(aclrtGetBufData(buf, &data, &size));
    CHECK(size == 64, "data area of %zu bytes", size);
    EXPECT_OK(aclrtGetBufDataLen(buf, &len));
    CHECK(len == 0, "a new buffer's data length is %zu", len);
    fill(buf, 7, 40);
    CHECK(holds(buf, 7, 40), "the buffer lost its bytes");
    EXPECT(aclrtSetBufDataLen(buf, 65), ACL_ERROR_INVALID_PARAM, "len");
    EXPECT(aclrtGetBufData(buf, NULL, &size), ACL_ERROR_INVALID_PARAM, "dataPtr");
    EXPECT(aclrtGetBufData(buf, &data, NULL), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT(aclrtGetBufDataLen(buf, NULL), ACL_ERROR_INVALID_PARAM, "len");
    EXPECT(aclrtGetBufDataLen(NULL, &len), ACL_ERROR_INVALID_PARAM, "buf");

    unsigned char user[USER_MAX], back[USER_MAX];
    for (int i = 0; i < USER_MAX; i++)
        user[i] = (unsigned char)(200 - i);
    EXPECT_OK(aclrtSetBufUserData(buf, user, 16, 80));
    memset(back, 0, sizeof back);
    EXPECT_OK(aclrtGetBufUserData(buf, back, 16, 80));
    CHECK(memcmp(back, user, 16) == 0, "user data at offset 80 did not come back");
    EXPECT_OK(aclrtGetBufUserData(buf, back, 8, 0));
    CHECK(back[0] == 0 && back[7] == 0, "user data starts zeroed");
    EXPECT(aclrtSetBufUserData(buf, user, 10, 90), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT(aclrtGetBufUserData(buf, back, 97, 0), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT(aclrtGetBufUserData(buf, back, 1, SIZE_MAX), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT(aclrtSetBufUserData(buf, NULL, 4, 0), ACL_ERROR_INVALID_PARAM, "dataPtr");

    aclrtMbuf copy = NULL;
    EXPECT(aclrtCopyBufRef(buf, NULL), ACL_ERROR_INVALID_PARAM, "newBuf");
    EXPECT_OK(aclrtCopyBufRef(buf, &copy));
    void *copy_data = NULL;
    EXPECT_OK(aclrtGetBufData(copy, &copy_data, &size));
    CHECK(copy != buf && copy_data == data, "a reference copy shares the data area");
    EXPECT_OK(aclrtFreeBuf(buf));
    EXPECT(aclrtFreeBuf(buf), ACL_ERROR_INVALID_PARAM, "live");
    CHECK(holds(copy, 7, 40), "the copy lost the bytes when the first handle was freed");
    EXPECT_OK(aclrtGetBufUserData(copy, back, 16, 80));
    CHECK(memcmp(back, user, 16) == 0, "the copy has other user data");
    EXPECT_OK(aclrtFreeBuf(copy));
    EXPECT(aclrtFreeBuf(NULL), ACL_ERROR_INVALID_PARAM, "buf");
}

static void test_chain(void)
{
    aclrtMbuf head = NULL, second = NULL, third = NULL, got = NULL;
    EXPECT_OK(aclrtAllocBuf(&head, 8));
    EXPECT_OK(aclrtAllocBuf(&second, 8));
    EXPECT_OK(aclrtAllocBuf(&third, 8));
    EXPECT_OK(aclrtAppendBufChain(head, second));
    EXPECT_OK(aclrtAppendBufChain(head, third));
    uint32_t num = 0;
    EXPECT_OK(aclrtGetBufChainNum(head, &num));
    CHECK(num == 3, "a chain of 3 counts %u", num);
    EXPECT_OK(aclrtGetBufFromChain(head, 0, &got));
    CHECK(got == head, "index 0 is the head");
    EXPECT_OK(aclrtGetBufFromChain(head, 2, &got));
    CHECK(got == third, "index 2 is the third buffer");
    EXPECT(aclrtGetBufFromChain(head, 3, &got), ACL_ERROR_INVALID_PARAM, "index");
    EXPECT(aclrtGetBufFromChain(head, 0, NULL), ACL_ERROR_INVALID_PARAM, "buf");
    EXPECT(aclrtGetBufChainNum(head, NULL), ACL_ERROR_INVALID_PARAM, "num");
    EXPECT(aclrtAppendBufChain(head, second), ACL_ERROR_INVALID_PARAM, "chain");
    EXPECT(aclrtAppendBufChain(NULL, second), ACL_ERROR_INVALID_PARAM, "headBuf");
    EXPECT(aclrtFreeBuf(second), ACL_ERROR_INVALID_PARAM, "chain");
    EXPECT_OK(aclrtFreeBuf(head)); /* frees all three (valgrind sees no leak) */
    EXPECT(aclrtGetBufChainNum(third, &num), ACL_ERROR_INVALID_PARAM, "live");

    EXPECT_OK(aclrtAllocBuf(&head, 1));
    for (int i = 1; i < CHAIN_MAX; i++) {
        aclrtMbuf member = NULL;
        EXPECT_OK(aclrtAllocBuf(&member, 1));
        EXPECT_OK(aclrtAppendBufChain(head, member));
    }
    aclrtMbuf extra = NULL;
    EXPECT_OK(aclrtAllocBuf(&extra, 1));
    EXPECT(aclrtAppendBufChain(head, extra), ACL_ERROR_INVALID_PARAM, "128");
    EXPECT_OK(aclrtGetBufChainNum(head, &num));
    CHECK(num == CHAIN_MAX, "a full chain counts %u", num);
    EXPECT_OK(aclrtFreeBuf(extra));
    EXPECT_OK(aclrtFreeBuf(head));
}

static uint32_t make_queue(void)
{
    char name[96];
    snprintf(name, sizeof name, "test_mbuf_%d", (int)getpid());
    const char *name_ptr = name;
    uint32_t depth = 4, qid = 0;
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    EXPECT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof name_ptr, &name_ptr));
    EXPECT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof depth, &depth));
    EXPECT_OK(acltdtCreateQueue(attr, &qid));
    EXPECT_OK(acltdtDestroyQueueAttr(attr));
    return qid;
}

static void test_through_queue(void)
{
    uint32_t qid = make_queue();
    aclrtMbuf head = NULL, tail = NULL;
    EXPECT_OK(aclrtAllocBuf(&head, 32));
    EXPECT_OK(aclrtAllocBuf(&tail, 100));
    fill(head, 1, 20); /* only the data length travels */
    fill(tail, 50, 100);
    const char tag[] = "frame-17";
    EXPECT_OK(aclrtSetBufUserData(tail, tag, sizeof tag, 8));
    EXPECT_OK(aclrtAppendBufChain(head, tail));
    EXPECT_OK(acltdtEnqueue(qid, head, 1000));

    acltdtBuf got = NULL;
    EXPECT_OK(acltdtDequeue(qid, &got, 1000));
    uint32_t num = 0;
    EXPECT_OK(aclrtGetBufChainNum(got, &num));
    CHECK(num == 2, "the dequeued chain has %u buffers", num);
    CHECK(holds(got, 1, 20), "the head's 20 bytes did not travel");
    aclrtMbuf second = NULL;
    EXPECT_OK(aclrtGetBufFromChain(got, 1, &second));
    CHECK(second != NULL && holds(second, 50, 100), "the tail's 100 bytes did not travel");
    char back[sizeof tag] = {0};
    EXPECT_OK(aclrtGetBufUserData(second, back, sizeof back, 8));
    CHECK(memcmp(back, tag, sizeof tag) == 0, "the tail's user data did not travel");
    EXPECT_OK(aclrtFreeBuf(got));
    EXPECT_OK(acltdtDestroyQueue(qid));
}

int main(void)
{
    if (tu_open_device() != 0)
        return 2;
    test_one_buffer();
    test_chain();
    test_through_queue();
    tu_close_device();
    return tu_finish("test_runtime_mbuf");
}
