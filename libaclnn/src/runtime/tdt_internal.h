/*
 * tdt_internal.h - what the data channel and queue files share (tdt_item.c, tdt_message.c,
 * tdt_shared.c, tdt_buf.c, tdt_queue.c, tdt_channel.c; never used outside src/runtime).
 *
 * Every queue, including the one behind a channel, lives in one POSIX shared-memory registry of
 * the user (tdt_shared.c), so a queue id names the same queue in every process of that user.  A
 * message is a list of segments (bytes plus up to NN_TDT_USER_DATA_MAX bytes of user data): an
 * mbuf chain is one segment per buffer, acltdtEnqueueData one segment, a channel's dataset one
 * segment holding the serialized items (tdt_item.c).
 */
#ifndef NN_TDT_INTERNAL_H
#define NN_TDT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "runtime/nn_rt_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NN_TDT_NAME_MAX 128       /* CANN's RT_MQ_MAX_NAME_LEN, the terminator included */
#define NN_TDT_DEPTH_MIN 2        /* queue depth / channel capacity range of CANN's pages */
#define NN_TDT_DEPTH_MAX 8192
#define NN_TDT_DEPTH_DEFAULT 8    /* CANN's RT_MQ_DEPTH_DEFAULT */
#define NN_TDT_USER_DATA_MAX 96   /* the private area of an mbuf */
#define NN_MBUF_CHAIN_MAX 128     /* the most buffers a chain holds (CANN's aclrtAppendBufChain page) */
#define NN_TDT_PERMISSION_ALL                                                                     \
    (ACL_TDT_QUEUE_PERMISSION_MANAGE | ACL_TDT_QUEUE_PERMISSION_DEQUEUE |                         \
     ACL_TDT_QUEUE_PERMISSION_ENQUEUE)

/* CANN's acltdtQueueAttr (rtMemQueueAttr_t): the fields a program sets, and those it cannot. */
struct tagMemQueueAttr {
    char name[NN_TDT_NAME_MAX];
    uint32_t depth;
    uint32_t workMode;
    bool flowCtrlFlag;
    uint32_t flowCtrlDropTime;
    bool overWriteFlag;
};

/* One piece of a message as it is sent. */
typedef struct nn_tdt_segment {
    const void *data;
    size_t len;
    const void *user;
    size_t user_len;
} nn_tdt_segment;

/* A message as it was received: `bytes` (malloc'd, owned) holds the segments; read them with
 * nn_tdt_message_segment. */
typedef struct nn_tdt_message {
    unsigned char *bytes;
    size_t size;
    uint32_t segments;
    size_t data_total; /* the segments' bytes together */
} nn_tdt_message;

/* ---- message objects (tdt_message.c) -------------------------------------------------------- */

/* "/aclnn-tdt-<uid>-<tail>": the user's shared-memory names. */
void nn_tdt_shm_name(char *buf, size_t size, const char *tail);
/* Writes the object of message `serial` (ACL_ERROR_RT_RESOURCE_ALLOC_FAIL with a message when it
 * cannot); reads it back into *out and unlinks it; copies it to a new serial; unlinks it. */
aclError nn_tdt_message_write(const char *api, uint64_t serial, const nn_tdt_segment *segs, uint32_t count);
aclError nn_tdt_message_read(const char *api, uint64_t serial, nn_tdt_message *out);
bool nn_tdt_message_copy(uint64_t from, uint64_t to);
void nn_tdt_message_unlink(uint64_t serial);
/* Segment `index` (< message->segments) of a received message; points into its bytes. */
void nn_tdt_message_segment(const nn_tdt_message *message, uint32_t index, nn_tdt_segment *out);
void nn_tdt_message_free(nn_tdt_message *message);

/* ---- the shared registry (tdt_shared.c); every call names `api` in its messages ------------ */

/* A new queue of this process (all permissions): `name` "" gets one made from the id; a name a
 * live queue has is ACL_ERROR_INVALID_PARAM. */
aclError nn_tdtq_create(const char *api, const char *name, uint32_t depth, uint32_t *qid);
aclError nn_tdtq_destroy(const char *api, uint32_t qid);
/* Appends a message, waiting up to timeout_ms (-1: forever, 0: not at all) for room; a full
 * queue then returns ACL_ERROR_RT_QUEUE_FULL (without recording an error: an expected state). */
aclError nn_tdtq_push(const char *api, uint32_t qid, const nn_tdt_segment *segments, uint32_t count,
                      int32_t timeout_ms);
/* Takes the oldest message, waiting up to timeout_ms for one (else ACL_ERROR_RT_QUEUE_EMPTY).
 * A message whose bytes exceed max_data stays queued: ACL_ERROR_INVALID_PARAM, *data_size set. */
aclError nn_tdtq_pop(const char *api, uint32_t qid, int32_t timeout_ms, size_t max_data, size_t *data_size,
                     nn_tdt_message *out);
aclError nn_tdtq_size(const char *api, uint32_t qid, size_t *size);
aclError nn_tdtq_reset(const char *api, uint32_t qid);
aclError nn_tdtq_grant(const char *api, uint32_t qid, int32_t pid, uint32_t permission, int32_t timeout_ms);
aclError nn_tdtq_attach(const char *api, uint32_t qid, int32_t timeout_ms, uint32_t *permission);
/* Routes: bind/unbind one (status out), and list those matching a query (mode of
 * acltdtQueueRouteQueryMode); `visit` gets each and returns false to stop (out of memory). */
aclError nn_tdtq_bind(const char *api, uint32_t src, uint32_t dst, int32_t *status);
aclError nn_tdtq_unbind(const char *api, uint32_t src, uint32_t dst, int32_t *status);
aclError nn_tdtq_query_routes(const char *api, int32_t mode, uint32_t src, uint32_t dst,
                              bool (*visit)(void *ctx, uint32_t src, uint32_t dst, int32_t status), void *ctx);

/* ---- datasets on a channel (tdt_item.c) ----------------------------------------------------- */

/* The bytes a dataset's items travel as (malloc'd into *bytes). */
aclError nn_tdt_dataset_pack(const char *api, const acltdtDataset *dataset, unsigned char **bytes, size_t *size);
/* ACL_ERROR_INVALID_PARAM (with a message) when the dataset holds items the program added. */
aclError nn_tdt_dataset_check_receivable(const char *api, const acltdtDataset *dataset);
/* Replaces the received items of `dataset` by those of `bytes` (taken over: the items point into
 * them).  A dataset holding items the program added is refused, as CANN does. */
aclError nn_tdt_dataset_unpack(const char *api, acltdtDataset *dataset, unsigned char *bytes, size_t size);

/* The mbuf operations (tdt_buf.c) behind both acltdt*Buf* and aclrt*Buf* (rt_mbuf.c): one kind of
 * handle, so a buffer from either family enqueues, chains and frees with the other.  `api` names
 * the caller in error messages.  A buffer from nn_mbuf_alloc starts with a data length of its size
 * when `data_len_is_size`, else 0. */
aclError nn_mbuf_alloc(const char *api, size_t size, bool data_len_is_size, void **buf);
aclError nn_mbuf_free(const char *api, void *buf);
aclError nn_mbuf_get_data(const char *api, void *buf, void **dataPtr, size_t *size);
aclError nn_mbuf_set_data_len(const char *api, void *buf, size_t len);
aclError nn_mbuf_get_data_len(const char *api, void *buf, size_t *len);
aclError nn_mbuf_append(const char *api, void *headBuf, void *buf);
aclError nn_mbuf_chain_num(const char *api, void *headBuf, uint32_t *num);
aclError nn_mbuf_from_chain(const char *api, void *headBuf, uint32_t index, void **buf);
/* Copy [offset, offset+size) of the buffer's user data into / from dataPtr. */
aclError nn_mbuf_get_user_data(const char *api, void *buf, void *dataPtr, size_t size, size_t offset);
aclError nn_mbuf_set_user_data(const char *api, void *buf, const void *dataPtr, size_t size, size_t offset);
aclError nn_mbuf_copy_ref(const char *api, void *buf, void **newBuf);

#ifdef __cplusplus
}
#endif

#endif /* NN_TDT_INTERNAL_H */
