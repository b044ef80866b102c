/*
 * rt_reduce.c - aclrtReduceAsync: the card's SDMA reduce, a stream task that combines `count`
 * bytes of src into dst element by element (dst = dst op src).
 *
 * Checks in CANN's order: dst and src not null, reserve null, type one of the ten CANN maps
 * (ACL_ERROR_INVALID_PARAM, runtime:src/acl/aclrt_impl/memory.cpp, kMapDataType); then count
 * positive and kind in [ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ..._EQUAL] (ACL_ERROR_RT_PARAM_INVALID,
 * runtime:src/runtime/api/impl/api_error.cc, ReduceAsync).  libaclnn also asks both ranges to be
 * device memory.  The task exists on the chips CANN's samples list (A2, A3, 950); Ascend910 and
 * Ascend310P answer 207000.
 *
 * Arithmetic: SUM adds, MAX and MIN keep the larger / smaller (a NaN in src never replaces dst:
 * a comparison with NaN is false).  Floating sums are computed in float and rounded once to the
 * element type: for float16 and bfloat16 that is the correctly rounded sum (float carries more
 * than twice their precision plus two bits, so the double rounding is harmless).  Integer sums
 * wrap (the sources do not say whether the SDMA engine saturates).  INT4 holds two signed lanes
 * per byte, low nibble first.  EQUAL stays 207000: what the engine writes for it is not public.
 * Bytes past the last whole element of `count` are left alone.
 */
#include <stdlib.h>

#include "base/nn_half_impl.h"
#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

typedef struct reduce_task {
    void *dst;
    const void *src;
    uint64_t count; /* bytes */
    aclrtReduceKind kind;
    aclDataType type;
} reduce_task;

static double combine(aclrtReduceKind kind, double d, double s)
{
    if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM)
        return d + s;
    if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX)
        return s > d ? s : d;
    return s < d ? s : d;
}

static float combine_f32(aclrtReduceKind kind, float d, float s)
{
    if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM)
        return d + s;
    return (float)combine(kind, d, s);
}

/* Integer lanes: sums wrap to the type's width (done by the caller's cast). */
static int64_t combine_int(aclrtReduceKind kind, int64_t d, int64_t s)
{
    if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM)
        return d + s;
    return kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX ? (s > d ? s : d) : (s < d ? s : d);
}

static int64_t int4_lane(uint8_t byte, int lane)
{
    int v = (byte >> (4 * lane)) & 0xf;
    return v >= 8 ? v - 16 : v;
}

static void reduce_int4(aclrtReduceKind kind, uint8_t *dst, const uint8_t *src, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++) {
        uint8_t out = 0;
        for (int lane = 0; lane < 2; lane++) {
            int64_t v = combine_int(kind, int4_lane(dst[i], lane), int4_lane(src[i], lane));
            out |= (uint8_t)((v & 0xf) << (4 * lane));
        }
        dst[i] = out;
    }
}

#define REDUCE_INT(ctype)                                                                          \
    for (size_t i = 0; i < n; i++)                                                                 \
        ((ctype *)dst)[i] = (ctype)combine_int(kind, ((ctype *)dst)[i], ((const ctype *)src)[i]);

static int run_reduce(void *ctx)
{
    const reduce_task *t = ctx;
    const aclrtReduceKind kind = t->kind;
    void *dst = t->dst;
    const void *src = t->src;
    if (t->type == ACL_INT4) {
        reduce_int4(kind, dst, src, t->count);
        return 0;
    }
    const size_t n = t->count / nn_dtype_size(t->type);
    uint16_t *h = dst;
    const uint16_t *hs = src;
    switch (t->type) {
    case ACL_FLOAT:
        for (size_t i = 0; i < n; i++)
            ((float *)dst)[i] = combine_f32(kind, ((float *)dst)[i], ((const float *)src)[i]);
        break;
    case ACL_FLOAT16:
        for (size_t i = 0; i < n; i++)
            h[i] = nn_half_f32_to_f16(combine_f32(kind, nn_half_f16_to_f32(h[i]), nn_half_f16_to_f32(hs[i])));
        break;
    case ACL_BF16:
        for (size_t i = 0; i < n; i++)
            h[i] = nn_half_f32_to_bf16(combine_f32(kind, nn_half_bf16_to_f32(h[i]), nn_half_bf16_to_f32(hs[i])));
        break;
    case ACL_INT8: REDUCE_INT(int8_t) break;
    case ACL_INT16: REDUCE_INT(int16_t) break;
    case ACL_INT32: REDUCE_INT(int32_t) break;
    case ACL_UINT8: REDUCE_INT(uint8_t) break;
    case ACL_UINT16: REDUCE_INT(uint16_t) break;
    default: REDUCE_INT(uint32_t) break;
    }
    return 0;
}

static bool type_reducible(aclDataType type)
{
    switch (type) {
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16: case ACL_INT4: case ACL_INT8: case ACL_INT16:
    case ACL_INT32: case ACL_UINT8: case ACL_UINT16: case ACL_UINT32:
        return true;
    default:
        return false;
    }
}

static aclError check_device_range(const char *api, const char *param, const void *ptr, uint64_t count)
{
    void *base;
    size_t size;
    if (!nn_mem_find(ptr, (size_t)count, &base, &size))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s [%p, +%llu) is not inside device memory of this "
                           "process.", api, param, ptr, (unsigned long long)count);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count, aclrtReduceKind kind,
                                              aclDataType type, aclrtStream stream, void *reserve)
{
    static const char api[] = "aclrtReduceAsync";
    if (dst == NULL || src == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api, dst == NULL ? "dst" : "src");
    if (reserve != NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: reserve is a reserved parameter and must be nullptr.", api);
    if (!type_reducible(type))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: type %d is not supported (float, float16, bfloat16, int4, "
                           "int8, int16, int32, uint8, uint16, uint32).", api, (int)type);
    aclError err = nn_rt_require_stars(api, "reduce tasks");
    if (err != ACL_SUCCESS)
        return err;
    if (count == 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: count must be positive.", api);
    if (kind < ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM || kind > ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: kind %d must be in [10, 14).", api, (int)kind);
    if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL)
        return nn_rt_not_supported(api, "the SDMA engine's EQUAL reduce is not described in CANN's public sources");
    err = check_device_range(api, "dst", dst, count);
    if (err == ACL_SUCCESS)
        err = check_device_range(api, "src", src, count);
    nn_stream *s = NULL;
    if (err == ACL_SUCCESS)
        err = nn_stream_resolve_named(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    reduce_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    *task = (reduce_task){nn_check_lib_addr(dst), nn_check_lib_addr(src), count, kind, type};
    return nn_stream_submit_inline_ok(s, run_reduce, free, task);
}
