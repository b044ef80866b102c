/*
 * rt_value.c - value tasks (aclrtValueWrite, aclrtValueWait): a stream writes a 64-bit value to
 * device memory, or blocks until a 64-bit word of device memory meets a condition.
 *
 * As CANN's runtime checks them (runtime:src/runtime/api/impl/api_error.cc, MemWriteValue and
 * MemWaitValue): devAddr must not be null and must be device memory; a write's flag is
 * reserved (0); a wait's flag is the condition, ACL_STREAM_WAIT_VALUE_* in [0, 4) (as
 * runtime:src/runtime/core/inc/stars/stars_cond_isa_define.hpp defines them):
 *   0  *addr >= value      1  *addr == value      2  (*addr & value) != 0      3  ~(*addr | value) != 0
 * The chips with these tasks are those of RT_FEATURE_TASK_VALUE_WAIT (910_B_93 and 950): on
 * Ascend910 and Ascend310P both calls answer 207000, as there.
 *
 * The word can change by any task of any stream (a copy, an operator, another value write), so
 * a wait polls it, sleeping POLL_US between looks, and gives up at aclrtSetOpWaitTimeout's
 * limit (ACL_ERROR_RT_WAIT_TIMEOUT at the next synchronize) or when its stream is aborted.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define POLL_US 100
#define WAIT_CONDITIONS (ACL_STREAM_WAIT_VALUE_NOR + 1)

aclError nn_rt_require_stars(const char *api, const char *what)
{
    const nn_soc soc = nn_soc_current();
    if (soc == NN_SOC_ASCEND910 || soc == NN_SOC_ASCEND310P)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: the selected product (%s) has no %s (CANN's "
                           "runtime offers them on Ascend910B, Ascend910_93 and Ascend950).", api,
                           nn_soc_family_name(soc), what);
    return ACL_SUCCESS;
}

typedef struct value_task {
    uint64_t *word; /* the library's view of the device word (ACLNN_CHECK maps device memory twice) */
    uint64_t value;
    uint32_t condition;
    void *dev_addr; /* as the program gave it (aclmdlRITaskGetParams answers it) */
} value_task;

static uint64_t load_word(const uint64_t *word)
{
    if (((uintptr_t)word & 7u) == 0)
        return __atomic_load_n(word, __ATOMIC_ACQUIRE);
    uint64_t v;
    memcpy(&v, (const void *)word, sizeof v); /* an unaligned word cannot be read atomically */
    return v;
}

static int run_write(void *ctx)
{
    value_task *task = ctx;
    if (((uintptr_t)task->word & 7u) == 0)
        __atomic_store_n(task->word, task->value, __ATOMIC_RELEASE);
    else
        memcpy(task->word, &task->value, sizeof task->value);
    return 0;
}

static bool condition_met(uint32_t condition, uint64_t word, uint64_t value)
{
    switch (condition) {
    case ACL_STREAM_WAIT_VALUE_GEQ:
        return word >= value;
    case ACL_STREAM_WAIT_VALUE_EQ:
        return word == value;
    case ACL_STREAM_WAIT_VALUE_AND:
        return (word & value) != 0;
    default: /* ACL_STREAM_WAIT_VALUE_NOR */
        return ~(word | value) != 0;
    }
}

/* The stream whose worker runs the wait (NULL: none): its abort ends the wait.  Looked up when the
 * wait starts rather than kept from the call: a model replays the wait on the stream it executes
 * on, and the stream that recorded it may be gone by then. */
static const nn_stream *running_stream(void)
{
    pthread_mutex_lock(&nn_rt_lock);
    const nn_stream *here = nn_stream_running_here_locked(NULL);
    pthread_mutex_unlock(&nn_rt_lock);
    return here;
}

static int run_wait(void *ctx)
{
    value_task *task = ctx;
    const nn_stream *here = running_stream();
    const uint32_t limit_s = nn_rt_op_wait_timeout_s();
    struct timespec deadline;
    if (limit_s != 0)
        nn_rt_deadline(&deadline, limit_s > INT32_MAX / 1000 ? INT32_MAX : (int32_t)(limit_s * 1000));
    const struct timespec poll = {0, POLL_US * 1000L};
    while (!condition_met(task->condition, load_word(task->word), task->value)) {
        if (here != NULL && nn_stream_aborting(here))
            return 0;
        if (limit_s != 0 && nn_shared_deadline_passed(&deadline))
            return nn_rt_error(ACL_ERROR_RT_WAIT_TIMEOUT, "aclrtValueWait: the word at %p did not meet condition "
                               "%u against %#llx within the wait timeout (%u s, aclrtSetOpWaitTimeout).",
                               (void *)task->word, task->condition, (unsigned long long)task->value, limit_s);
        nanosleep(&poll, NULL);
    }
    return 0;
}

static aclmdlRITaskType task_type(nn_task_run_fn run)
{
    return run == run_write ? ACL_MODEL_RI_TASK_VALUE_WRITE : ACL_MODEL_RI_TASK_VALUE_WAIT;
}

/* The checks of a value write (run_write) or wait (run_wait) at devAddr with flag. */
static aclError check_value_call(const char *api, void *devAddr, uint32_t flag, nn_task_run_fn run)
{
    aclError err = nn_rt_require_stars(api, "value write/wait tasks");
    if (err != ACL_SUCCESS)
        return err;
    if (devAddr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: devAddr must not be null.", api);
    if (run == run_write && flag != 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: flag %u is reserved and must be 0.", api, flag);
    if (run == run_wait && flag >= WAIT_CONDITIONS)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: flag %u must be in [0, %d) (0: >=, 1: ==, 2: AND, "
                           "3: NOR).", api, flag, WAIT_CONDITIONS);
    void *base;
    size_t size;
    if (!nn_mem_find(devAddr, sizeof(uint64_t), &base, &size))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: devAddr %p: the 8 bytes there are not device memory "
                           "(aclrtMalloc) of this process.", api, devAddr);
    return ACL_SUCCESS;
}

/* Checks the call and queues `run` with a task for it. */
static aclError queue_value_task(const char *api, void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream,
                                 nn_task_run_fn run)
{
    aclError err = check_value_call(api, devAddr, flag, run);
    if (err != ACL_SUCCESS)
        return err;
    nn_stream *s;
    err = nn_stream_resolve_named(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    value_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    *task = (value_task){nn_check_lib_addr(devAddr), value, flag, devAddr};
    return nn_stream_submit_typed(s, run, free, task, false, task_type(run));
}

ACL_FUNC_VISIBILITY aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)
{
    return queue_value_task("aclrtValueWrite", devAddr, value, flag, stream, run_write);
}

ACL_FUNC_VISIBILITY aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)
{
    return queue_value_task("aclrtValueWait", devAddr, value, flag, stream, run_wait);
}

bool nn_value_task_params(const nn_captured_task *task, aclmdlRITaskParams *params)
{
    if (task->replay != NULL || (task->run != run_write && task->run != run_wait))
        return false;
    const value_task *value = task->ctx;
    if (task->run == run_write)
        params->valueWriteTaskParams = (aclmdlRIValueWriteTaskParams){value->dev_addr, value->value};
    else
        params->valueWaitTaskParams = (aclmdlRIValueWaitTaskParams){value->dev_addr, value->value, value->condition};
    return true;
}

aclError nn_value_task_make(const char *api, const aclmdlRITaskParams *params, nn_captured_task *out)
{
    const bool write = params->type == ACL_MODEL_RI_TASK_VALUE_WRITE;
    nn_task_run_fn run = write ? run_write : run_wait;
    void *dev_addr = write ? params->valueWriteTaskParams.devAddr : params->valueWaitTaskParams.devAddr;
    uint64_t value = write ? params->valueWriteTaskParams.value : params->valueWaitTaskParams.value;
    uint32_t flag = write ? 0 : params->valueWaitTaskParams.flag;
    aclError err = check_value_call(api, dev_addr, flag, run);
    if (err != ACL_SUCCESS)
        return err;
    value_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    *task = (value_task){nn_check_lib_addr(dev_addr), value, flag, dev_addr};
    *out = (nn_captured_task){run, NULL, free, task, false, (uint8_t)task_type(run)};
    return ACL_SUCCESS;
}
