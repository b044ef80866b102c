/*
 * tdt_channel.c - channels (acl/acl_tdt.h): a named queue that carries datasets.
 *
 * CANN has two kinds.  acltdtCreateChannelWithCapacity makes a queue of `capacity` ([2, 8192])
 * messages: acltdtSendTensor with timeout 0 on a full channel returns ACL_ERROR_RT_QUEUE_FULL,
 * -1 waits for room, N waits N ms; acltdtReceiveTensor likewise returns ACL_ERROR_RT_QUEUE_EMPTY;
 * acltdtCleanChannel drops what is queued and acltdtQueryChannelSize counts it
 * (runtime:src/acl/acl_tdt_channel/tensor_data_transfer.cpp, the "V2" paths).  acltdtCreateChannel
 * is CANN's older TDT-daemon channel (send to a device program, receive with a "TF_RECEIVE_"
 * name); there is no such daemon here, so it makes the same kind of queue with the default depth
 * of CANN's queues (8), and its calls behave as above (docs/compatibility.md).
 *
 * acltdtStopChannel wakes nothing: a receiver waiting with -1 on a channel another thread stops
 * keeps waiting, as on CANN's queue channels, where stop is a no-op.  acltdtDestroyChannel
 * destroys the queue and with it what is still queued.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/tdt_internal.h"

struct acltdtChannelHandle {
    uint32_t device;
    uint32_t qid;
    char name[NN_TDT_NAME_MAX];
};

static acltdtChannelHandle *channel_new(const char *api, uint32_t deviceId, const char *name, size_t capacity)
{
    if (name == NULL) {
        nn_error(ACL_ERROR_INVALID_PARAM, "%s: name is NULL.", api);
        return NULL;
    }
    if (strnlen(name, NN_TDT_NAME_MAX) + 1 > NN_TDT_NAME_MAX) {
        nn_error(ACL_ERROR_INVALID_PARAM, "%s: name [%.32s...] length %zu cannot be larger than %d.", api, name,
                 strlen(name) + 1, NN_TDT_NAME_MAX);
        return NULL;
    }
    if (deviceId >= nn_rt_device_count()) {
        nn_error(ACL_ERROR_INVALID_PARAM, "%s: deviceId %u is not a device (%u visible).", api, deviceId,
                 nn_rt_device_count());
        return NULL;
    }
    if (capacity < NN_TDT_DEPTH_MIN || capacity > NN_TDT_DEPTH_MAX) {
        nn_error(ACL_ERROR_INVALID_PARAM, "%s: capacity %zu is outside [%d, %d].", api, capacity, NN_TDT_DEPTH_MIN,
                 NN_TDT_DEPTH_MAX);
        return NULL;
    }
    acltdtChannelHandle *channel = calloc(1, sizeof *channel);
    if (channel == NULL) {
        nn_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
        return NULL;
    }
    channel->device = deviceId;
    snprintf(channel->name, sizeof channel->name, "%s", name);
    if (nn_tdtq_create(api, name, (uint32_t)capacity, &channel->qid) != ACL_SUCCESS) {
        free(channel);
        return NULL;
    }
    return channel;
}

ACL_FUNC_VISIBILITY acltdtChannelHandle *acltdtCreateChannelWithCapacity(uint32_t deviceId, const char *name,
                                                                         size_t capacity)
{
    return channel_new("acltdtCreateChannelWithCapacity", deviceId, name, capacity);
}

ACL_FUNC_VISIBILITY acltdtChannelHandle *acltdtCreateChannel(uint32_t deviceId, const char *name)
{
    return channel_new("acltdtCreateChannel", deviceId, name, NN_TDT_DEPTH_DEFAULT);
}

ACL_FUNC_VISIBILITY aclError acltdtStopChannel(acltdtChannelHandle *handle)
{
    if (handle == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtStopChannel: handle is NULL.");
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError acltdtDestroyChannel(acltdtChannelHandle *handle)
{
    const char *api = "acltdtDestroyChannel";
    if (handle == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: handle is NULL.", api);
    aclError ret = nn_tdtq_destroy(api, handle->qid);
    if (ret == ACL_SUCCESS)
        free(handle);
    return ret;
}

ACL_FUNC_VISIBILITY aclError acltdtCleanChannel(acltdtChannelHandle *handle)
{
    if (handle == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtCleanChannel: handle is NULL.");
    return nn_tdtq_reset("acltdtCleanChannel", handle->qid);
}

ACL_FUNC_VISIBILITY aclError acltdtSendTensor(const acltdtChannelHandle *handle, const acltdtDataset *dataset,
                                              int32_t timeout)
{
    const char *api = "acltdtSendTensor";
    if (handle == NULL || dataset == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, handle == NULL ? "handle" : "dataset");
    unsigned char *bytes;
    size_t size;
    aclError ret = nn_tdt_dataset_pack(api, dataset, &bytes, &size);
    if (ret != ACL_SUCCESS)
        return ret;
    nn_tdt_segment segment = {bytes, size, NULL, 0};
    ret = nn_tdtq_push(api, handle->qid, &segment, 1, timeout);
    free(bytes);
    return ret;
}

ACL_FUNC_VISIBILITY aclError acltdtReceiveTensor(const acltdtChannelHandle *handle, acltdtDataset *dataset,
                                                 int32_t timeout)
{
    const char *api = "acltdtReceiveTensor";
    if (handle == NULL || dataset == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, handle == NULL ? "handle" : "dataset");
    aclError ret = nn_tdt_dataset_check_receivable(api, dataset); /* before anything is taken */
    if (ret != ACL_SUCCESS)
        return ret;
    nn_tdt_message message;
    size_t data_size = 0;
    ret = nn_tdtq_pop(api, handle->qid, timeout, SIZE_MAX, &data_size, &message);
    if (ret != ACL_SUCCESS)
        return ret;
    nn_tdt_segment segment;
    nn_tdt_message_segment(&message, 0, &segment);
    unsigned char *bytes = malloc(segment.len ? segment.len : 1);
    if (bytes == NULL) {
        nn_tdt_message_free(&message);
        return nn_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
    }
    memcpy(bytes, segment.data, segment.len);
    nn_tdt_message_free(&message);
    return nn_tdt_dataset_unpack(api, dataset, bytes, segment.len);
}

ACL_FUNC_VISIBILITY aclError acltdtQueryChannelSize(const acltdtChannelHandle *handle, size_t *size)
{
    const char *api = "acltdtQueryChannelSize";
    if (handle == NULL || size == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, handle == NULL ? "handle" : "size");
    return nn_tdtq_size(api, handle->qid, size);
}
