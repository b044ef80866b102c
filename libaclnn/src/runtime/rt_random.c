/*
 * rt_random.c - aclrtRandomNumAsync: the card's built-in random-number task (a DSA task on the
 * stream) computed on the CPU.
 *
 * What follows the card: the generator is Philox4x32-10 (Salmon et al. 2011), its 128-bit counter
 * lives in the 16 bytes of device memory at randomCounterAddr (any alignment,
 * runtime:example/2_advanced_features/built_in_task/1_random_num_task/README.md), the key is the
 * 64-bit seed, and each parameter is an immediate value or the address of one
 * (runtime:src/runtime/core/src/task/task_info/random_num_task.cc).  What is libaclnn's own: how
 * Philox words become each distribution (the sources leave that to the hardware), so the numbers
 * differ from a card's.  The conversions, one Philox block (4 words) at a time:
 *   - u(w) = (w >> 8) * 2^-24, in [0, 1);
 *   - uniform float: min + u * (max - min) in float, rounded once to the element type;
 *   - uniform int32/uint32: min + w mod (max - min), one word each; int64/uint64 the same with
 *     two words (low, high); the range is taken modulo 2^width, and 0 gives min;
 *   - normal: Box-Muller on word pairs, r = sqrt(-2 ln u1'), u1' = ((w0 >> 8) + 1) * 2^-24 in (0, 1],
 *     z0 = r cos(2 pi u(w1)), z1 = r sin(2 pi u(w1)); mean + stddev * z in double, rounded to
 *     float and then to the element type;
 *   - truncated normal: the same z, those with |z| > 2 rejected;
 *   - dropout bitmask: one word per element, bit i (LSB first in byte i / 8) is 1 (kept) when
 *     u(w) >= the dropout ratio; the spare bits of the last byte are 0.
 * Every task draws whole blocks starting at the stored counter and writes back the counter plus
 * the number of blocks drawn, so consecutive tasks continue the stream.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_half_impl.h"
#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u
#define COUNTER_BYTES 16u
#define PARAM_BLOCK_BYTES 16u /* CANN writes the two 8-byte parameters to randomParaAddr */
#define TRUNCATE_AT 2.0

typedef struct random_param {
    uint64_t value; /* the immediate value, or the address of one */
    bool is_addr;
} random_param;

typedef struct random_task {
    aclrtRandomNumFuncType func;
    aclDataType type;
    size_t type_size;
    random_param first, second; /* min / max, mean / stddev, or the dropout ratio */
    random_param seed, num;
    const void *result_dev; /* the program's address, for the memory check of a num given by address */
    uint8_t *result;        /* the library's view of it (ACLNN_CHECK maps device memory twice) */
    uint8_t *counter;
    void *held; /* memcheck: the device allocations it uses (nn_check_task_hold) */
} random_task;

typedef struct philox_stream {
    uint32_t counter[4]; /* least significant word first */
    uint32_t key[2];
    uint32_t words[4];
    unsigned used; /* words of `words` handed out */
    uint64_t blocks;
} philox_stream;

/* ---- Philox4x32-10 ------------------------------------------------------------------------ */

static void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

static void philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint32_t hi0, lo0, hi1, lo1;
        mulhilo(PHILOX_M0, c[0], &hi0, &lo0);
        mulhilo(PHILOX_M1, c[2], &hi1, &lo1);
        const uint32_t next[4] = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
        memcpy(c, next, sizeof c);
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    memcpy(out, c, sizeof c);
}

static uint32_t next_word(philox_stream *ps)
{
    if (ps->used == 4) {
        philox4x32_10(ps->counter, ps->key, ps->words);
        for (int i = 0; i < 4 && ++ps->counter[i] == 0; i++) /* 128-bit increment */
            ;
        ps->used = 0;
        ps->blocks++;
    }
    return ps->words[ps->used++];
}

/* Starts a task's values on a fresh block (the leftover words of the last task are not reused). */
static void start_block(philox_stream *ps)
{
    ps->used = 4;
}

static float unit_float(uint32_t w)
{
    return (float)(w >> 8) * 0x1p-24f;
}

/* ---- parameter values ---------------------------------------------------------------------- */

static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The parameter's bits: the immediate, or `n` bytes read from its address when the task runs. */
static uint64_t param_bits(const random_param *p, size_t n)
{
    if (!p->is_addr)
        return p->value;
    return load_le(nn_check_lib_addr((const void *)(uintptr_t)p->value), n);
}

static float float_of(aclDataType type, uint64_t bits)
{
    if (type == ACL_FLOAT16)
        return nn_half_f16_to_f32((uint16_t)bits);
    if (type == ACL_BF16)
        return nn_half_bf16_to_f32((uint16_t)bits);
    float f;
    uint32_t b = (uint32_t)bits;
    memcpy(&f, &b, sizeof f);
    return f;
}

static void store_float(aclDataType type, uint8_t *out, float f)
{
    if (type == ACL_FLOAT) {
        memcpy(out, &f, sizeof f);
        return;
    }
    uint16_t h = type == ACL_FLOAT16 ? nn_half_f32_to_f16(f) : nn_half_f32_to_bf16(f);
    memcpy(out, &h, sizeof h);
}

/* ---- the distributions ----------------------------------------------------------------------- */

static void gen_uniform_float(const random_task *t, philox_stream *ps, uint64_t n)
{
    const float lo = float_of(t->type, param_bits(&t->first, t->type_size));
    const float hi = float_of(t->type, param_bits(&t->second, t->type_size));
    for (uint64_t i = 0; i < n; i++)
        store_float(t->type, t->result + i * t->type_size, lo + unit_float(next_word(ps)) * (hi - lo));
}

/* Integers of 32 or 64 bits: the difference and the sum wrap at the width, as unsigned. */
static void gen_uniform_int(const random_task *t, philox_stream *ps, uint64_t n)
{
    const bool wide = t->type_size == 8;
    const uint64_t mask = wide ? UINT64_MAX : UINT32_MAX;
    const uint64_t lo = param_bits(&t->first, t->type_size);
    const uint64_t range = (param_bits(&t->second, t->type_size) - lo) & mask;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t w = next_word(ps);
        if (wide)
            w |= (uint64_t)next_word(ps) << 32;
        uint64_t v = (lo + (range == 0 ? 0 : w % range)) & mask;
        memcpy(t->result + i * t->type_size, &v, t->type_size); /* little-endian low bytes */
    }
}

/* Two standard normals from two words (Box-Muller). */
static void box_muller(philox_stream *ps, double z[2])
{
    const double u1 = ((next_word(ps) >> 8) + 1) * 0x1p-24;
    const double u2 = (next_word(ps) >> 8) * 0x1p-24;
    const double r = sqrt(-2.0 * log(u1));
    const double angle = 2.0 * M_PI * u2;
    z[0] = r * cos(angle);
    z[1] = r * sin(angle);
}

static void gen_normal(const random_task *t, philox_stream *ps, uint64_t n, bool truncated)
{
    const double mean = float_of(t->type, param_bits(&t->first, t->type_size));
    const double stddev = float_of(t->type, param_bits(&t->second, t->type_size));
    uint64_t i = 0;
    while (i < n) {
        double z[2];
        box_muller(ps, z);
        for (int k = 0; k < 2 && i < n; k++) {
            if (truncated && fabs(z[k]) > TRUNCATE_AT)
                continue;
            store_float(t->type, t->result + i * t->type_size, (float)(mean + stddev * z[k]));
            i++;
        }
    }
}

static void gen_dropout(const random_task *t, philox_stream *ps, uint64_t n)
{
    const float ratio = float_of(t->type, param_bits(&t->first, t->type_size));
    memset(t->result, 0, (size_t)((n + 7) / 8));
    for (uint64_t i = 0; i < n; i++)
        if (unit_float(next_word(ps)) >= ratio)
            t->result[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* Bytes the task writes for `n` values. */
static uint64_t result_bytes(const random_task *t, uint64_t n)
{
    if (n > UINT64_MAX / 8)
        return UINT64_MAX; /* no memory holds it */
    return t->func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK ? (n + 7) / 8 : n * t->type_size;
}

static void load_counter(philox_stream *ps, const uint8_t *counter)
{
    for (int i = 0; i < 4; i++)
        ps->counter[i] = (uint32_t)load_le(counter + 4 * i, 4);
}

static void store_counter(const philox_stream *ps, uint8_t *counter)
{
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 4; b++)
            counter[4 * i + b] = (uint8_t)(ps->counter[i] >> (8 * b));
}

static int run_random(void *ctx)
{
    const random_task *t = ctx;
    const uint64_t n = param_bits(&t->num, sizeof(uint64_t));
    const uint64_t bytes = result_bytes(t, n);
    if (t->num.is_addr && (bytes > SIZE_MAX || !nn_mem_find(t->result_dev, (size_t)bytes, NULL, NULL)))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtRandomNumAsync: %llu values (%llu bytes) do not fit in "
                           "the device memory at randomResultAddr.", (unsigned long long)n, (unsigned long long)bytes);
    const uint64_t seed = param_bits(&t->seed, sizeof(uint64_t));
    philox_stream ps = {.key = {(uint32_t)seed, (uint32_t)(seed >> 32)}};
    load_counter(&ps, t->counter);
    start_block(&ps);
    switch (t->func) {
    case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK: gen_dropout(t, &ps, n); break;
    case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
        if (t->type == ACL_FLOAT || t->type == ACL_FLOAT16 || t->type == ACL_BF16)
            gen_uniform_float(t, &ps, n);
        else
            gen_uniform_int(t, &ps, n);
        break;
    default: gen_normal(t, &ps, n, t->func == ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS); break;
    }
    store_counter(&ps, t->counter);
    return 0;
}

/* ---- checks --------------------------------------------------------------------------------- */

/* The element size of the types CANN maps (runtime:src/acl/aclrt_impl/kernel.cpp, kMapDataType). */
static size_t random_type_size(aclDataType type)
{
    switch (type) {
    case ACL_FLOAT16: case ACL_BF16: return 2;
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_INT64: case ACL_UINT64: return 8;
    default: return 0;
    }
}

static bool type_allowed(aclrtRandomNumFuncType func, aclDataType type)
{
    const bool floating = type == ACL_FLOAT || type == ACL_FLOAT16 || type == ACL_BF16;
    return floating || func == ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS;
}

/* isAddr 0 or 1, size in [1, limit] (8 for an address); the value is the first `size` bytes. */
static aclError read_param(const char *api, const char *name, const aclrtRandomParaInfo *info, size_t limit,
                           random_param *out)
{
    if (info->isAddr > 1)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s.isAddr is %u; it must be 0 (a value) or 1 (an "
                           "address).", api, name, (unsigned)info->isAddr);
    if (info->isAddr)
        limit = sizeof(uint64_t);
    if (info->size == 0 || info->size > limit)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s.size is %u; it must be in [1, %zu].", api, name,
                           (unsigned)info->size, limit);
    *out = (random_param){load_le(info->valueOrAddr, info->size), info->isAddr == 1};
    return ACL_SUCCESS;
}

static aclError check_device_range(const char *api, const char *name, const void *ptr, uint64_t bytes)
{
    if (bytes > SIZE_MAX || !nn_mem_find(ptr, (size_t)bytes, NULL, NULL))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s [%p, +%llu) is not inside device memory of this "
                           "process.", api, name, ptr, (unsigned long long)bytes);
    return ACL_SUCCESS;
}

/* A parameter given by address must point at `bytes` of device memory. */
static aclError check_param_addr(const char *api, const char *name, const random_param *p, size_t bytes)
{
    return p->is_addr ? check_device_range(api, name, (const void *)(uintptr_t)p->value, bytes) : ACL_SUCCESS;
}

/* CANN's CheckRandomNumTaskInfo, in its order. */
static aclError read_task(const char *api, const aclrtRandomNumTaskInfo *info, random_task *t)
{
    const aclrtRandomNumFuncParaInfo *fp = &info->randomNumFuncParaInfo;
    if (fp->funcType < ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK ||
        fp->funcType > ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: funcType %d must be in [0, 4).", api, (int)fp->funcType);
    if (!type_allowed(fp->funcType, info->dataType))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: dataType %d is not supported by funcType %d (bf16, "
                           "fp16, fp32).", api, (int)info->dataType, (int)fp->funcType);
    if (info->randomCounterAddr == NULL || info->randomResultAddr == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s must not be null.", api,
                           info->randomCounterAddr == NULL ? "randomCounterAddr" : "randomResultAddr");
    *t = (random_task){.func = fp->funcType, .type = info->dataType, .type_size = random_type_size(info->dataType)};
    aclError err = read_param(api, "randomSeed", &info->randomSeed, sizeof(uint64_t), &t->seed);
    if (err == ACL_SUCCESS)
        err = read_param(api, "randomNum", &info->randomNum, sizeof(uint64_t), &t->num);
    if (err != ACL_SUCCESS)
        return err;
    if (t->func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK)
        return read_param(api, "dropoutRation", &fp->paramInfo.dropoutBitmaskInfo.dropoutRation, t->type_size,
                          &t->first);
    const bool uniform = t->func == ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS;
    const aclrtRandomParaInfo *first = uniform ? &fp->paramInfo.uniformDisInfo.min : &fp->paramInfo.normalDisInfo.mean;
    const aclrtRandomParaInfo *second = uniform ? &fp->paramInfo.uniformDisInfo.max : &fp->paramInfo.normalDisInfo.stddev;
    err = read_param(api, uniform ? "min" : "mean", first, t->type_size, &t->first);
    if (err == ACL_SUCCESS)
        err = read_param(api, uniform ? "max" : "stddev", second, t->type_size, &t->second);
    return err;
}

/* libaclnn's own checks: every address the task reads or writes is device memory. */
static aclError check_addresses(const char *api, const aclrtRandomNumTaskInfo *info, const random_task *t)
{
    aclError err = check_device_range(api, "randomCounterAddr", info->randomCounterAddr, COUNTER_BYTES);
    if (err == ACL_SUCCESS && !t->num.is_addr)
        err = check_device_range(api, "randomResultAddr", info->randomResultAddr, result_bytes(t, t->num.value));
    if (err == ACL_SUCCESS && info->randomParaAddr != NULL)
        err = check_device_range(api, "randomParaAddr", info->randomParaAddr, PARAM_BLOCK_BYTES);
    if (err == ACL_SUCCESS)
        err = check_param_addr(api, "randomSeed", &t->seed, sizeof(uint64_t));
    if (err == ACL_SUCCESS)
        err = check_param_addr(api, "randomNum", &t->num, sizeof(uint64_t));
    if (err == ACL_SUCCESS)
        err = check_param_addr(api, "the first parameter", &t->first, t->type_size);
    if (err == ACL_SUCCESS && t->func != ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK)
        err = check_param_addr(api, "the second parameter", &t->second, t->type_size);
    return err;
}

/* The checking mode sees the task as a fill of the result and the counter (initcheck marks their
 * bytes written; a result sized by a count given by address is not marked, its size being unknown
 * here), racecheck orders it against other streams' tasks, and memcheck keeps the allocations it
 * uses until it ran. */
static void check_mode_task(const char *api, nn_stream *s, const aclrtRandomNumTaskInfo *info, random_task *t)
{
    const uint64_t bytes = t->num.is_addr ? 0 : result_bytes(t, t->num.value);
    nn_check_copy_args result = {api, info->randomResultAddr, NULL, (size_t)bytes, true, NULL, NULL};
    nn_check_copy_args counter = {api, info->randomCounterAddr, NULL, COUNTER_BYTES, true, NULL, NULL};
    if (bytes > 0)
        (void)nn_check_copy(&result); /* the ranges are live device memory: checked above */
    (void)nn_check_copy(&counter);
    const void *const touched[2] = {info->randomResultAddr, info->randomCounterAddr};
    t->held = nn_check_task_hold(touched, 2);
    const nn_check_access accesses[2] = {{info->randomResultAddr, bytes, true, "randomResultAddr", -1},
                                         {info->randomCounterAddr, COUNTER_BYTES, true, "randomCounterAddr", -1}};
    if (nn_check_on(NN_CHECK_RACECHECK) && !nn_stream_records(s))
        nn_check_race_task(s, api, accesses, 2);
}

static void release_random(void *ctx)
{
    random_task *t = ctx;
    nn_check_task_release(t->held);
    free(t);
}

/* CANN copies the two parameters (values or addresses) to randomParaAddr when it is given. */
static void write_param_block(void *para_addr, const random_task *t)
{
    if (para_addr == NULL)
        return;
    const uint64_t block[2] = {t->first.value, t->second.value};
    memcpy(nn_check_lib_addr(para_addr), block, sizeof block);
}

ACL_FUNC_VISIBILITY aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo, const aclrtStream stream,
                                                 void *reserve)
{
    static const char api[] = "aclrtRandomNumAsync";
    if (taskInfo == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: taskInfo must not be null.", api);
    if (random_type_size(taskInfo->dataType) == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: dataType %d is not supported (float, float16, bfloat16, "
                           "int32, int64, uint32, uint64).", api, (int)taskInfo->dataType);
    const nn_soc soc = nn_soc_current();
    if (soc != NN_SOC_ASCEND910B && soc != NN_SOC_ASCEND910_93)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: the selected product (%s) has no random-number "
                           "tasks (CANN's runtime offers them on Ascend910B and Ascend910_93 only).", api,
                           nn_soc_family_name(soc));
    nn_stream *s = NULL;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    if (reserve != NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: reserve is a reserved parameter and must be nullptr.", api);
    random_task task;
    err = read_task(api, taskInfo, &task);
    if (err == ACL_SUCCESS)
        err = check_addresses(api, taskInfo, &task);
    if (err != ACL_SUCCESS)
        return err;
    write_param_block(taskInfo->randomParaAddr, &task);
    random_task *queued = malloc(sizeof *queued);
    if (queued == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    *queued = task;
    queued->result_dev = taskInfo->randomResultAddr;
    queued->result = nn_check_lib_addr(taskInfo->randomResultAddr);
    queued->counter = nn_check_lib_addr(taskInfo->randomCounterAddr);
    check_mode_task(api, s, taskInfo, queued);
    return nn_stream_submit_inline_ok(s, run_random, release_random, queued);
}
