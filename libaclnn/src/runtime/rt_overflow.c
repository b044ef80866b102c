/*
 * rt_overflow.c - overflow detection: the per-stream switch (aclrtSetStreamOverflowSwitch /
 * aclrtGetStreamOverflowSwitch) and the device's overflow status (aclrtGetOverflowStatus /
 * aclrtResetOverflowStatus and their aclrt*FloatOverflowStatus twins).
 *
 * As CANN's runtime has it (runtime:src/runtime/api/impl/api_impl.cc, GetDeviceSatStatus): the
 * status is one 64-byte block per context (OVERFLOW_OUTPUT_SIZE, task_base.hpp) that tasks of any
 * stream whose switch is on mark; the get queues a copy of it to `outputAddr` (exactly 64 bytes)
 * on the stream, the reset queues its clearing.  Its first 32-bit word is the flag (CANN's
 * overflow_detection sample reads it so); libaclnn writes 1 there and zeros elsewhere.  One block
 * per device here: libaclnn's contexts of a device share it.
 *
 * What marks it: an operator launch on a stream whose switch is on, when one of its computed
 * floating outputs holds Inf or NaN before the overflow mode's post-pass - in INF/NaN mode the
 * value stays, in saturation mode it is what saturates (exec/executor.c asks
 * nn_stream_overflow_device at launch and calls nn_rt_note_overflow).  Copies are no launches.
 *
 * The switch takes 0 or 1 (CANN: [RT_OVERFLOW_MODE_SATURATION, RT_OVERFLOW_MODE_UNDEF)) and is
 * refused on a capturing stream (107027), as the status calls are; a stream starts with it off.
 * On chips without stars (Ascend910, Ascend310P) CANN's get reports 1 whatever was set: their
 * tasks always report.
 */
#include <stdlib.h>
#include <string.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define STATUS_BYTES 64 /* CANN's OVERFLOW_OUTPUT_SIZE */

static _Atomic uint32_t g_device_overflow[NN_RT_MAX_DEVICES];

int32_t nn_stream_overflow_device(const nn_stream *stream)
{
    const bool watched = nn_stream_attr_get(stream, NN_STREAM_ATTR_OVERFLOW_SWITCH) != 0; /* rt_stream_attr.c */
    return watched || nn_overflow_saturation_only() ? nn_stream_context(stream)->device : -1;
}

void nn_rt_note_overflow(int32_t device)
{
    if (device >= 0 && device < NN_RT_MAX_DEVICES)
        atomic_store(&g_device_overflow[device], 1u);
}

/* The stream (NULL: the default) if it is not capturing; else an error naming `api`. */
static aclError resolve_not_capturing(const char *api, aclrtStream stream, nn_stream **out)
{
    aclError err = nn_stream_resolve_named(api, stream, out);
    if (err == ACL_SUCCESS && nn_stream_records(*out))
        err = nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURED, "%s: the stream is being captured into a model; "
                          "overflow detection is not supported during capture.", api);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag)
{
    static const char api[] = "aclrtSetStreamOverflowSwitch";
    if (flag >= ACL_RT_OVERFLOW_MODE_UNDEF)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: flag %u must be 0 (off) or 1 (on).", api, flag);
    nn_stream *s;
    aclError err = resolve_not_capturing(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    if (!nn_stream_attr_set(s, NN_STREAM_ATTR_OVERFLOW_SWITCH, flag))
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag)
{
    static const char api[] = "aclrtGetStreamOverflowSwitch";
    if (flag == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: flag must not be null.", api);
    nn_stream *s;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    if (err == ACL_SUCCESS)
        *flag = nn_stream_overflow_device(s) >= 0 ? 1u : 0u;
    return err;
}

typedef struct status_task {
    int32_t device;
    void *output; /* NULL: a reset */
} status_task;

static int run_status(void *ctx)
{
    const status_task *task = ctx;
    _Atomic uint32_t *flag = &g_device_overflow[task->device];
    if (task->output == NULL) {
        atomic_store(flag, 0u);
        return 0;
    }
    uint8_t block[STATUS_BYTES] = {0};
    const uint32_t value = atomic_load(flag);
    memcpy(block, &value, sizeof value);
    memcpy(task->output, block, sizeof block);
    return 0;
}

static aclError queue_status(const char *api, void *outputAddr, uint64_t outputSize, aclrtStream stream,
                             bool reset)
{
    if (!reset) {
        void *base;
        size_t size;
        if (outputAddr == NULL)
            return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: outputAddr must not be null.", api);
        if (outputSize != STATUS_BYTES)
            return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: outputSize %llu is invalid; only %d bytes are "
                               "supported.", api, (unsigned long long)outputSize, STATUS_BYTES);
        if (!nn_mem_find(outputAddr, STATUS_BYTES, &base, &size))
            return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: outputAddr %p: the %d bytes there are not device "
                               "memory of this process.", api, outputAddr, STATUS_BYTES);
    }
    nn_stream *s;
    aclError err = resolve_not_capturing(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    status_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    task->device = nn_stream_context(s)->device;
    task->output = reset ? NULL : nn_check_lib_addr(outputAddr);
    return nn_stream_submit_inline_ok(s, run_status, free, task);
}

ACL_FUNC_VISIBILITY aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize, aclrtStream stream)
{
    return queue_status("aclrtGetOverflowStatus", outputAddr, outputSize, stream, false);
}

ACL_FUNC_VISIBILITY aclError aclrtResetOverflowStatus(aclrtStream stream)
{
    return queue_status("aclrtResetOverflowStatus", NULL, 0, stream, true);
}

ACL_FUNC_VISIBILITY aclError aclrtGetFloatOverflowStatus(void *outputAddr, uint64_t outputSize, aclrtStream stream)
{
    return queue_status("aclrtGetFloatOverflowStatus", outputAddr, outputSize, stream, false);
}

ACL_FUNC_VISIBILITY aclError aclrtResetFloatOverflowStatus(aclrtStream stream)
{
    return queue_status("aclrtResetFloatOverflowStatus", NULL, 0, stream, true);
}
