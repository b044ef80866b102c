/*
 * tdt_buf.c - mbufs (acltdtAllocBuf & co., acl/acl_tdt_queue.h; the same operations back
 * aclrtAllocBuf & co. in rt_mbuf.c) and their trip through a queue (acltdtEnqueue / acltdtDequeue).
 *
 * An mbuf is a handle onto a block: the block holds the bytes, the data length (the allocated
 * size until acltdtSetBufDataLen) and NN_TDT_USER_DATA_MAX bytes of user data (the mbuf's private
 * area).  acltdtCopyBufRef makes a second handle onto the same block (a reference count), as
 * CANN's halMbufCopyRef does.  acltdtAppendBufChain hangs a buffer behind a chain's head; the
 * chain then belongs to the head: acltdtFreeBuf(head) frees every buffer of it, and a member
 * cannot be freed alone.  Handles are checked against the set of live ones, so a freed or foreign
 * pointer is refused instead of read.
 *
 * acltdtEnqueue sends the chain (one message segment per buffer: its data length of bytes and its
 * user data) and, once queued, frees it: the queue owns it, as on CANN.  acltdtDequeue rebuilds a
 * chain of new buffers the program frees.  When the queue stays full (empty) past the timeout
 * both return ACL_ERROR_FAILURE, as CANN's acltdtEnqueue/acltdtDequeue do after their retry loop
 * (runtime:src/acl/acl_tdt_queue/queue_process.cpp), where acltdtEnqueueData/acltdtDequeueData
 * return ACL_ERROR_RT_QUEUE_FULL/_EMPTY.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/tdt_internal.h"

typedef struct tdt_block {
    atomic_int refs;
    size_t capacity;
    size_t data_len;
    unsigned char user[NN_TDT_USER_DATA_MAX];
    unsigned char bytes[];
} tdt_block;

typedef struct tdt_buf {
    tdt_block *block;
    struct tdt_buf *next; /* the chain behind a head */
    bool in_chain;        /* a member behind some head */
} tdt_buf;

static pthread_mutex_t bufs_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_ptrset live_bufs;

/* The live buffer `handle`, else NULL with an ACL_ERROR_INVALID_PARAM message naming `what`. */
static tdt_buf *buf_get(const char *api, const char *what, acltdtBuf handle, aclError *err)
{
    pthread_mutex_lock(&bufs_lock);
    bool live = handle != NULL && nn_ptrset_has(&live_bufs, handle);
    pthread_mutex_unlock(&bufs_lock);
    if (handle == NULL)
        *err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, what);
    else if (!live)
        *err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s %p is not a live mbuf (aclrtAllocBuf, acltdtAllocBuf, "
                        "acltdtDequeue, a CopyBufRef).", api, what, handle);
    return live ? handle : NULL;
}

static tdt_buf *buf_new(tdt_block *block)
{
    tdt_buf *buf = calloc(1, sizeof *buf);
    if (buf == NULL)
        return NULL;
    buf->block = block;
    pthread_mutex_lock(&bufs_lock);
    bool added = nn_ptrset_add(&live_bufs, buf);
    pthread_mutex_unlock(&bufs_lock);
    if (!added) {
        free(buf);
        return NULL;
    }
    atomic_fetch_add(&block->refs, 1);
    return buf;
}

static tdt_block *block_new(size_t size)
{
    tdt_block *block = calloc(1, sizeof *block + size);
    if (block != NULL) {
        block->capacity = size;
        block->data_len = size;
    }
    return block;
}

static void block_unref(tdt_block *block)
{
    if (atomic_fetch_sub(&block->refs, 1) == 1)
        free(block);
}

/* Frees `buf` and the chain behind it. */
static void chain_free(tdt_buf *buf)
{
    while (buf != NULL) {
        tdt_buf *next = buf->next;
        pthread_mutex_lock(&bufs_lock);
        nn_ptrset_remove(&live_bufs, buf);
        pthread_mutex_unlock(&bufs_lock);
        block_unref(buf->block);
        free(buf);
        buf = next;
    }
}

/* A new buffer of `size` bytes, or NULL. */
static tdt_buf *buf_alloc(size_t size)
{
    tdt_block *block = block_new(size);
    tdt_buf *buf = block ? buf_new(block) : NULL;
    if (buf == NULL)
        free(block);
    return buf;
}

/* ---- the mbuf operations, shared by acltdt*Buf* and aclrt*Buf* (rt_mbuf.c) ------------------- */

aclError nn_mbuf_alloc(const char *api, size_t size, bool data_len_is_size, void **buf)
{
    if (buf == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: buf is NULL.", api);
    tdt_buf *made = buf_alloc(size);
    if (made == NULL)
        return nn_error(ACL_ERROR_BAD_ALLOC, "%s: cannot allocate a buffer of %zu bytes.", api, size);
    if (!data_len_is_size)
        made->block->data_len = 0;
    *buf = made;
    return ACL_SUCCESS;
}

aclError nn_mbuf_free(const char *api, void *buf)
{
    aclError err = ACL_SUCCESS;
    tdt_buf *b = buf_get(api, "buf", buf, &err);
    if (b == NULL)
        return err;
    if (b->in_chain)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: buf %p belongs to a chain: free the chain's head.", api, buf);
    chain_free(b);
    return ACL_SUCCESS;
}

aclError nn_mbuf_get_data(const char *api, void *buf, void **dataPtr, size_t *size)
{
    aclError err = ACL_SUCCESS;
    tdt_buf *b = buf_get(api, "buf", buf, &err);
    if (b != NULL && (dataPtr == NULL || size == NULL))
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, dataPtr == NULL ? "dataPtr" : "size");
    if (err != ACL_SUCCESS)
        return err;
    *dataPtr = b->block->bytes;
    *size = b->block->capacity;
    return ACL_SUCCESS;
}

aclError nn_mbuf_set_data_len(const char *api, void *buf, size_t len)
{
    aclError err = ACL_SUCCESS;
    tdt_buf *b = buf_get(api, "buf", buf, &err);
    if (b != NULL && len > b->block->capacity)
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: len %zu exceeds the buffer's %zu bytes.", api, len,
                       b->block->capacity);
    if (err == ACL_SUCCESS)
        b->block->data_len = len;
    return err;
}

aclError nn_mbuf_get_data_len(const char *api, void *buf, size_t *len)
{
    aclError err = ACL_SUCCESS;
    tdt_buf *b = buf_get(api, "buf", buf, &err);
    if (b != NULL && len == NULL)
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: len is NULL.", api);
    if (err == ACL_SUCCESS)
        *len = b->block->data_len;
    return err;
}

static uint32_t chain_length(const tdt_buf *head)
{
    uint32_t count = 0;
    for (const tdt_buf *b = head; b != NULL; b = b->next)
        count++;
    return count;
}

aclError nn_mbuf_append(const char *api, void *headBuf, void *buf)
{
    aclError err = ACL_SUCCESS;
    tdt_buf *head = buf_get(api, "headBuf", headBuf, &err);
    tdt_buf *member = head ? buf_get(api, "buf", buf, &err) : NULL;
    if (member != NULL && (member == head || member->in_chain || member->next != NULL || head->in_chain))
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: buf %p must be a lone buffer and headBuf %p a chain's head "
                       "(a buffer is in one chain at most).", api, buf, headBuf);
    else if (member != NULL && chain_length(head) >= NN_MBUF_CHAIN_MAX)
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: headBuf %p already chains %d buffers, the most a chain holds.",
                       api, headBuf, NN_MBUF_CHAIN_MAX);
    if (err != ACL_SUCCESS)
        return err;
    tdt_buf *last = head;
    while (last->next != NULL)
        last = last->next;
    last->next = member;
    member->in_chain = true;
    return ACL_SUCCESS;
}

aclError nn_mbuf_chain_num(const char *api, void *headBuf, uint32_t *num)
{
    aclError err = ACL_SUCCESS;
    tdt_buf *head = buf_get(api, "headBuf", headBuf, &err);
    if (head != NULL && num == NULL)
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: num is NULL.", api);
    if (err == ACL_SUCCESS)
        *num = chain_length(head);
    return err;
}

aclError nn_mbuf_from_chain(const char *api, void *headBuf, uint32_t index, void **buf)
{
    aclError err = ACL_SUCCESS;
    tdt_buf *b = buf_get(api, "headBuf", headBuf, &err);
    if (b != NULL && buf == NULL)
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: buf is NULL.", api);
    if (err != ACL_SUCCESS)
        return err;
    for (uint32_t i = 0; i < index && b != NULL; i++)
        b = b->next;
    if (b == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: index %u is past the chain's end.", api, index);
    *buf = b;
    return ACL_SUCCESS;
}

/* The user-data range [offset, offset+size) of `buf`, checked; NULL with *err set. */
static unsigned char *user_range(const char *api, void *buf, const void *dataPtr, size_t size, size_t offset,
                                 aclError *err)
{
    tdt_buf *b = buf_get(api, "buf", buf, err);
    if (b != NULL && dataPtr == NULL)
        *err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: dataPtr is NULL.", api);
    else if (b != NULL && (offset > NN_TDT_USER_DATA_MAX || size > NN_TDT_USER_DATA_MAX - offset))
        *err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: offset %zu + size %zu exceeds the %d bytes of user data.",
                        api, offset, size, NN_TDT_USER_DATA_MAX);
    return *err == ACL_SUCCESS ? b->block->user + offset : NULL;
}

aclError nn_mbuf_get_user_data(const char *api, void *buf, void *dataPtr, size_t size, size_t offset)
{
    aclError err = ACL_SUCCESS;
    const unsigned char *user = user_range(api, buf, dataPtr, size, offset, &err);
    if (user != NULL)
        memcpy(dataPtr, user, size);
    return err;
}

aclError nn_mbuf_set_user_data(const char *api, void *buf, const void *dataPtr, size_t size, size_t offset)
{
    aclError err = ACL_SUCCESS;
    unsigned char *user = user_range(api, buf, dataPtr, size, offset, &err);
    if (user != NULL)
        memcpy(user, dataPtr, size);
    return err;
}

aclError nn_mbuf_copy_ref(const char *api, void *buf, void **newBuf)
{
    aclError err = ACL_SUCCESS;
    tdt_buf *b = buf_get(api, "buf", buf, &err);
    if (b != NULL && newBuf == NULL)
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: newBuf is NULL.", api);
    if (err != ACL_SUCCESS)
        return err;
    tdt_buf *copy = buf_new(b->block);
    if (copy == NULL)
        return nn_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
    *newBuf = copy;
    return ACL_SUCCESS;
}

/* ---- acl_tdt_queue.h's names ------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError acltdtAllocBuf(size_t size, uint32_t type, acltdtBuf *buf)
{
    if (type != ACL_TDT_NORMAL_MEM && type != ACL_TDT_DVPP_MEM)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtAllocBuf: param type must be equal to 0 or 1 currently, "
                        "got %u.", type);
    return nn_mbuf_alloc("acltdtAllocBuf", size, true, buf);
}

ACL_FUNC_VISIBILITY aclError acltdtFreeBuf(acltdtBuf buf)
{
    return nn_mbuf_free("acltdtFreeBuf", buf);
}

ACL_FUNC_VISIBILITY aclError acltdtGetBufData(const acltdtBuf buf, void **dataPtr, size_t *size)
{
    return nn_mbuf_get_data("acltdtGetBufData", buf, dataPtr, size);
}

ACL_FUNC_VISIBILITY aclError acltdtSetBufDataLen(acltdtBuf buf, size_t len)
{
    return nn_mbuf_set_data_len("acltdtSetBufDataLen", buf, len);
}

ACL_FUNC_VISIBILITY aclError acltdtGetBufDataLen(acltdtBuf buf, size_t *len)
{
    return nn_mbuf_get_data_len("acltdtGetBufDataLen", buf, len);
}

ACL_FUNC_VISIBILITY aclError acltdtAppendBufChain(acltdtBuf headBuf, acltdtBuf buf)
{
    return nn_mbuf_append("acltdtAppendBufChain", headBuf, buf);
}

ACL_FUNC_VISIBILITY aclError acltdtGetBufChainNum(acltdtBuf headBuf, uint32_t *num)
{
    return nn_mbuf_chain_num("acltdtGetBufChainNum", headBuf, num);
}

ACL_FUNC_VISIBILITY aclError acltdtGetBufFromChain(acltdtBuf headBuf, uint32_t index, acltdtBuf *buf)
{
    return nn_mbuf_from_chain("acltdtGetBufFromChain", headBuf, index, buf);
}

ACL_FUNC_VISIBILITY aclError acltdtGetBufUserData(const acltdtBuf buf, void *dataPtr, size_t size, size_t offset)
{
    return nn_mbuf_get_user_data("acltdtGetBufUserData", buf, dataPtr, size, offset);
}

ACL_FUNC_VISIBILITY aclError acltdtSetBufUserData(acltdtBuf buf, const void *dataPtr, size_t size, size_t offset)
{
    return nn_mbuf_set_user_data("acltdtSetBufUserData", buf, dataPtr, size, offset);
}

ACL_FUNC_VISIBILITY aclError acltdtCopyBufRef(const acltdtBuf buf, acltdtBuf *newBuf)
{
    return nn_mbuf_copy_ref("acltdtCopyBufRef", buf, newBuf);
}

/* ---- through a queue ------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError acltdtEnqueue(uint32_t qid, acltdtBuf buf, int32_t timeout)
{
    const char *api = "acltdtEnqueue";
    aclError err = ACL_SUCCESS;
    tdt_buf *head = buf_get(api, "buf", buf, &err);
    if (head != NULL && head->in_chain)
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: buf %p is a chain member: enqueue its head.", api, buf);
    if (err != ACL_SUCCESS)
        return err;
    uint32_t count = chain_length(head);
    nn_tdt_segment *segments = calloc(count, sizeof *segments);
    if (segments == NULL)
        return nn_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
    uint32_t i = 0;
    for (const tdt_buf *b = head; b != NULL; b = b->next, i++)
        segments[i] = (nn_tdt_segment){b->block->bytes, b->block->data_len, b->block->user, NN_TDT_USER_DATA_MAX};
    err = nn_tdtq_push(api, qid, segments, count, timeout);
    free(segments);
    if (err == ACL_ERROR_RT_QUEUE_FULL)
        return nn_error(ACL_ERROR_FAILURE, "%s: queue %u stayed full for %d ms.", api, qid, (int)timeout);
    if (err == ACL_SUCCESS)
        chain_free(head);
    return err;
}

/* A chain of new buffers holding the segments of `message`, or NULL. */
static tdt_buf *chain_from_message(const nn_tdt_message *message)
{
    tdt_buf *head = NULL, *last = NULL;
    for (uint32_t i = 0; i < message->segments; i++) {
        nn_tdt_segment seg;
        nn_tdt_message_segment(message, i, &seg);
        tdt_buf *b = buf_alloc(seg.len);
        if (b == NULL) {
            chain_free(head);
            return NULL;
        }
        memcpy(b->block->bytes, seg.data, seg.len);
        memcpy(b->block->user, seg.user, seg.user_len < NN_TDT_USER_DATA_MAX ? seg.user_len : NN_TDT_USER_DATA_MAX);
        b->in_chain = head != NULL;
        if (head == NULL)
            head = b;
        else
            last->next = b;
        last = b;
    }
    return head;
}

ACL_FUNC_VISIBILITY aclError acltdtDequeue(uint32_t qid, acltdtBuf *buf, int32_t timeout)
{
    const char *api = "acltdtDequeue";
    if (buf == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: buf is NULL.", api);
    nn_tdt_message message;
    size_t data_size = 0;
    aclError err = nn_tdtq_pop(api, qid, timeout, SIZE_MAX, &data_size, &message);
    if (err == ACL_ERROR_RT_QUEUE_EMPTY)
        return nn_error(ACL_ERROR_FAILURE, "%s: queue %u stayed empty for %d ms.", api, qid, (int)timeout);
    if (err != ACL_SUCCESS)
        return err;
    tdt_buf *head = message.segments ? chain_from_message(&message) : buf_alloc(0);
    nn_tdt_message_free(&message);
    if (head == NULL)
        return nn_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory rebuilding a message of %zu bytes.", api, data_size);
    *buf = head;
    return ACL_SUCCESS;
}
