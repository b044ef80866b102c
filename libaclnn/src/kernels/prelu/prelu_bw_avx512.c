/*
 * prelu_bw_avx512.c - the PreluBackward kernel for AVX-512 CPUs (prelu.h), compiled with the
 * AVX-512 flags (Makefile); chosen when nn_cpu_avx512() and the plan's rule has vector loops
 * (ops/prelu_backward.c).
 * The blocks of prelu_bw_fused.inc on 16-lane loops: one zmm of fp32 lanes is exactly the 16
 * interleaved lanes of the portable loop (lane k sums the elements i % 16 == k of a run, in
 * order), the tail is one masked step into lanes 0.., and the narrowing is one vcvtneps2bf16
 * (AVX512-BF16; the integer RNE of the AVX2 loops otherwise) or vcvtps2ph per 16 elements - so
 * the bytes and the partial sums are the portable loops'.  Why a separate tier: the AVX2 bf16
 * loop widens with vpmovzxwd and narrows with an integer rounding, vpackusdw and an extract per
 * 8 elements, 2.5x the fp32 loop's instructions per element; on an Intel Xeon that made it
 * compute-bound (docs/kernels_im2col_prelu.md).
 */
#include <stdint.h>
#include <string.h>

#include "kernels/prelu/prelu_avx512.h"

#if NN_HAVE_X86_SIMD
/* 16 elements as fp32 (lanes outside m read nothing and give +0.0); the narrowing store, whole
 * (streamed when nt: 32-byte aligned) or masked.  KIND: f32, f16, bf16 (integer rounding),
 * pbf16 (AVX512-BF16). */
P512_TARGET static inline __attribute__((always_inline)) __m512 b512_ld_f32(const float *p, __mmask16 m)
{
    return _mm512_maskz_loadu_ps(m, p);
}
P512_TARGET static inline __attribute__((always_inline)) void b512_st_f32(float *p, __m512 v, __mmask16 m, bool nt)
{
    if (m != 0xffff) _mm512_mask_storeu_ps(p, m, v);
    else if (!nt) _mm512_storeu_ps(p, v);
    else {
        _mm256_stream_ps(p, _mm512_castps512_ps256(v));
        _mm256_stream_ps(p + 8, _mm512_extractf32x8_ps(v, 1));
    }
}
/* rt: v rounded to the dtype and read back (the values a tensor of the dtype holds). */
P512_TARGET static inline __attribute__((always_inline)) __m512 b512_rt_f32(__m512 v) { return v; }

/* An update term rounded to bf16 in its fp32 lane (RNE: add 0x7fff and the kept part's lowest
 * bit, clear the low 16 bits).  Without the NaN check of nn_half_f32_to_bf16: every NaN a term can
 * be is quiet with its low 16 bits clear (a bf16 input's, or the default NaN), and stays itself. */
P512_TARGET static inline __attribute__((always_inline)) __m512 b512_rt_bf16_lanes(__m512 v)
{
    const __m512i u = _mm512_castps_si512(v);
    const __mmask16 odd = _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x10000));
    __m512i r = _mm512_add_epi32(u, _mm512_set1_epi32(0x7fff));
    r = _mm512_mask_add_epi32(r, odd, r, _mm512_set1_epi32(1));
    return _mm512_castsi512_ps(_mm512_and_si512(r, _mm512_set1_epi32((int)0xffff0000u)));
}

#define B512_HALF_IO(KIND, TARGET, NARROW, BF16)                                                      \
TARGET static inline __attribute__((always_inline)) __m512 b512_ld_##KIND(const uint16_t *p, __mmask16 m) \
{                                                                                                     \
    return p512_load(p, m, BF16);                                                                     \
}                                                                                                     \
TARGET static inline __attribute__((always_inline)) void b512_st_##KIND(uint16_t *p, __m512 v, __mmask16 m, \
                                                                        bool nt)                      \
{                                                                                                     \
    const __m256i h = NARROW(v, BF16);                                                                \
    if (m != 0xffff) _mm256_mask_storeu_epi16(p, m, h);                                               \
    else if (nt) _mm256_stream_si256((__m256i *)p, h);                                                \
    else _mm256_storeu_si256((__m256i *)p, h);                                                        \
}                                                                                                     \
TARGET static inline __attribute__((always_inline)) __m512 b512_rt_##KIND(__m512 v)                   \
{                                                                                                     \
    return BF16 ? b512_rt_bf16_lanes(v) : _mm512_cvtph_ps(NARROW(v, BF16));                           \
}
B512_HALF_IO(f16, P512_TARGET, p512_narrow, false)
B512_HALF_IO(bf16, P512_TARGET, p512_narrow, true)
B512_HALF_IO(pbf16, PBF_TARGET, pbf_narrow, true)

/*
 * The two loops per KIND and rule (prelu.h), pf / nf the dx factors of x > 0 / x <= 0
 * (ctx->pos_factor / neg_factor):
 *   sel: gi = x > 0 ? g : nf*g (nf = w); term = x > 0 ? +0.0 : x*g (maskz_mul), in the dtype
 *   tbe: dx = (x > 0 ? pf : nf) * g; term = ((x > 0 ? 0 : 1) * x) * g + 0 * dx, dx and term in
 *        the dtype, formed as the sel term with NaN where the card's 0 * inf makes one: where the
 *        stored dx is not finite (|dx| >= NN_PRELU_DX_LIMIT or NaN) and where x = +inf (0 * x), both
 *        found by one compare of max(x, |dx|) (a NaN |dx| wins vmaxps as its second operand; a
 *        finite x of the dtype is below the limit; a NaN x makes the term NaN anyway); the card's
 *        other terms differ from the sel term only in the sign of a zero, which no sum starting
 *        from +0 can show
 * so the sums have the portable loops' bits.
 *   sw: a run sharing weight w; returns the folded sum of the 16 lanes (the portable tree).
 *       Streams only when gi is 32-byte aligned at the start of the run (the lanes must stay in
 *       phase with the run, so there is no head).
 *   vw: a channel-last run, weight and sum per element; a masked head reaches 32-byte alignment.
 */
/* The main loops prefetch self and gradOutput this many bytes ahead.  On an Intel Xeon the loops
 * otherwise overlapped too little of their compute with the reads at 1 thread: the bf16 2-D
 * 4096x1024 case took about its in-cache compute time plus its DRAM time (2.4 ms); 2 KiB ahead
 * took it to 1.8 ms, N32 C64 112x112 bf16 from 11.5 to 9.8 ms, fp32 2-5 % less
 * (docs/kernels_im2col_prelu.md). */
enum { PREFETCH_BYTES = 2048 };

/* Called at element i of a run with 16 elements per step: every 64 bytes of the run (so once
 * per line whatever the run's alignment), the line PREFETCH_BYTES past x[i] and g[i]. */
#define B512_PREFETCH(T, x, g, i)                                                                   \
    do {                                                                                            \
        if ((((i) * (int64_t)sizeof(T)) & 63) == 0) {                                               \
            _mm_prefetch((const char *)(x + (i)) + PREFETCH_BYTES, _MM_HINT_T0);                    \
            _mm_prefetch((const char *)(g + (i)) + PREFETCH_BYTES, _MM_HINT_T0);                    \
        }                                                                                           \
    } while (0)

#define B512_STEPS(KIND, T, TARGET)                                                                   \
TARGET static inline __attribute__((always_inline)) __m512 b512_step_sel_##KIND(                      \
    const T *x, const T *g, T *gi, __m512 pf, __m512 nf, __mmask16 m, bool nt)                        \
{                                                                                                     \
    (void)pf;                                                                                         \
    const __m512 xv = b512_ld_##KIND(x, m), gv = b512_ld_##KIND(g, m);                                \
    const __mmask16 pos = _mm512_cmp_ps_mask(xv, _mm512_setzero_ps(), _CMP_GT_OQ);                   \
    b512_st_##KIND(gi, _mm512_mask_blend_ps(pos, _mm512_mul_ps(nf, gv), gv), m, nt);                 \
    return b512_rt_##KIND(_mm512_maskz_mul_ps((__mmask16)~pos, xv, gv));                              \
}                                                                                                     \
TARGET static inline __attribute__((always_inline)) __m512 b512_step_tbe_##KIND(                      \
    const T *x, const T *g, T *gi, __m512 pf, __m512 nf, __mmask16 m, bool nt)                        \
{                                                                                                     \
    const __m512 xv = b512_ld_##KIND(x, m), gv = b512_ld_##KIND(g, m);                                \
    const __mmask16 pos = _mm512_cmp_ps_mask(xv, _mm512_setzero_ps(), _CMP_GT_OQ);                   \
    const __m512 dx = _mm512_mul_ps(_mm512_mask_blend_ps(pos, nf, pf), gv);                           \
    b512_st_##KIND(gi, dx, m, nt);                                                                    \
    const __mmask16 spread = _mm512_cmp_ps_mask(_mm512_max_ps(xv, _mm512_abs_ps(dx)),                 \
                                                _mm512_set1_ps(NN_PRELU_DX_LIMIT_##KIND), _CMP_NLT_UQ);   \
    const __m512 term = b512_rt_##KIND(_mm512_maskz_mul_ps((__mmask16)~pos, xv, gv));                 \
    return _mm512_mask_mov_ps(term, spread, _mm512_set1_ps(NAN));                                     \
}

#define B512_BACKWARD(KIND, T, TARGET, RULE)                                                          \
TARGET __attribute__((noinline)) static float b512_sw_##RULE##_##KIND(const T *x, const T *g, T *gi,  \
                                                                      float pf, float nf, int64_t n,  \
                                                                      bool nt)                        \
{                                                                                                     \
    nt = nt && ((uintptr_t)gi & 31u) == 0;                                                            \
    const __m512 pfv = _mm512_set1_ps(pf), nfv = _mm512_set1_ps(nf);                                  \
    __m512 acc = _mm512_setzero_ps();                                                                 \
    int64_t i = 0;                                                                                    \
    for (; i + 16 <= n; i += 16) {                                                                    \
        B512_PREFETCH(T, x, g, i);                                                                    \
        acc = _mm512_add_ps(acc, b512_step_##RULE##_##KIND(x + i, g + i, gi + i, pfv, nfv, 0xffff, nt)); \
    }                                                                                                 \
    if (i < n) {                                                                                      \
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                                        \
        acc = _mm512_mask_add_ps(acc, m, acc,                                                         \
                                 b512_step_##RULE##_##KIND(x + i, g + i, gi + i, pfv, nfv, m, false)); \
    }                                                                                                 \
    float lanes[16], s8[8], s4[4];                                                                    \
    _mm512_storeu_ps(lanes, acc);                                                                     \
    for (int k = 0; k < 8; k++) s8[k] = lanes[k] + lanes[k + 8];                                      \
    for (int k = 0; k < 4; k++) s4[k] = s8[k] + s8[k + 4];                                            \
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);                                                         \
}                                                                                                     \
TARGET static inline __attribute__((always_inline)) void b512_vw_step_##RULE##_##KIND(                \
    const T *x, const T *g, T *gi, const float *pf, const float *nf, float *sums, __mmask16 m, bool nt) \
{                                                                                                     \
    const __m512 term = b512_step_##RULE##_##KIND(x, g, gi, _mm512_maskz_loadu_ps(m, pf),             \
                                                  _mm512_maskz_loadu_ps(m, nf), m, nt);               \
    _mm512_mask_storeu_ps(sums, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, sums), term));              \
}                                                                                                     \
TARGET __attribute__((noinline)) static void b512_vw_##RULE##_##KIND(const T *x, const T *g, T *gi,   \
                                                                     const float *pf, const float *nf, \
                                                                     float *sums, int64_t n, bool nt) \
{                                                                                                     \
    int64_t head = nn_prelu_head(gi, sizeof(T), n, nt);                                               \
    if (head >= 16) { /* an odd address cannot be aligned (never for real tensors) */                 \
        head = 0;                                                                                     \
        nt = false;                                                                                   \
    }                                                                                                 \
    int64_t i = 0;                                                                                    \
    if (head > 0) {                                                                                   \
        b512_vw_step_##RULE##_##KIND(x, g, gi, pf, nf, sums, (__mmask16)((1u << head) - 1u), false);  \
        i = head;                                                                                     \
    }                                                                                                 \
    for (; i + 16 <= n; i += 16) {                                                                    \
        B512_PREFETCH(T, x, g, i);                                                                    \
        b512_vw_step_##RULE##_##KIND(x + i, g + i, gi + i, pf + i, nf + i, sums + i, 0xffff, nt);     \
    }                                                                                                 \
    if (i < n)                                                                                        \
        b512_vw_step_##RULE##_##KIND(x + i, g + i, gi + i, pf + i, nf + i, sums + i,                  \
                                     (__mmask16)((1u << (n - i)) - 1u), false);                       \
}
#define B512_KIND(KIND, T, TARGET)                                                                    \
    B512_STEPS(KIND, T, TARGET)                                                                       \
    B512_BACKWARD(KIND, T, TARGET, sel)                                                               \
    B512_BACKWARD(KIND, T, TARGET, tbe)
B512_KIND(f32, float, P512_TARGET)
B512_KIND(f16, uint16_t, P512_TARGET)
B512_KIND(bf16, uint16_t, P512_TARGET)
B512_KIND(pbf16, uint16_t, PBF_TARGET)

/* fp16 on a CPU with AVX512-FP16 (nn_cpu_avx512fp16): the term's x*g is one vmulph on the fp16
 * words - the exact product rounded once to fp16, as the fp32 product (exact for two fp16 values)
 * rounded by vcvtps2ph is - widened with the x > 0 lanes zeroed, instead of vmulps, vcvtps2ph and
 * vcvtph2ps.  gradInput, dx and the NaN check are the f16 steps'. */
#define PFP16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c,avx2")))
/* vmulph of 16 fp16 words, written as an instruction, as max_pool_fw_avx512.h writes vcmpph: not
 * every compiler this builds with has AVX512-FP16's intrinsics (clang 14 has no __m256h); the
 * assemblers know the instruction, and it runs only where nn_cpu_avx512fp16() says so. */
PFP16_TARGET static inline __attribute__((always_inline)) __m256i mul_ph16(__m256i a, __m256i b)
{
    __m256i product;
    __asm__("vmulph %2, %1, %0" : "=v"(product) : "v"(a), "v"(b));
    return product;
}
PFP16_TARGET static inline __attribute__((always_inline)) __m512 h16_term(__m256i xr, __m256i gr, __mmask16 pos)
{
    return _mm512_maskz_cvtph_ps((__mmask16)~pos, mul_ph16(xr, gr));
}
PFP16_TARGET static inline __attribute__((always_inline)) __m512 b512_step_sel_h16(
    const uint16_t *x, const uint16_t *g, uint16_t *gi, __m512 pf, __m512 nf, __mmask16 m, bool nt)
{
    (void)pf;
    const __m256i xr = _mm256_maskz_loadu_epi16(m, x), gr = _mm256_maskz_loadu_epi16(m, g);
    const __m512 xv = _mm512_cvtph_ps(xr), gv = _mm512_cvtph_ps(gr);
    const __mmask16 pos = _mm512_cmp_ps_mask(xv, _mm512_setzero_ps(), _CMP_GT_OQ);
    b512_st_f16(gi, _mm512_mask_blend_ps(pos, _mm512_mul_ps(nf, gv), gv), m, nt);
    return h16_term(xr, gr, pos);
}
PFP16_TARGET static inline __attribute__((always_inline)) __m512 b512_step_tbe_h16(
    const uint16_t *x, const uint16_t *g, uint16_t *gi, __m512 pf, __m512 nf, __mmask16 m, bool nt)
{
    const __m256i xr = _mm256_maskz_loadu_epi16(m, x), gr = _mm256_maskz_loadu_epi16(m, g);
    const __m512 xv = _mm512_cvtph_ps(xr), gv = _mm512_cvtph_ps(gr);
    const __mmask16 pos = _mm512_cmp_ps_mask(xv, _mm512_setzero_ps(), _CMP_GT_OQ);
    const __m512 dx = _mm512_mul_ps(_mm512_mask_blend_ps(pos, nf, pf), gv);
    b512_st_f16(gi, dx, m, nt);
    const __mmask16 spread = _mm512_cmp_ps_mask(_mm512_max_ps(xv, _mm512_abs_ps(dx)),
                                                _mm512_set1_ps(NN_PRELU_DX_LIMIT_f16), _CMP_NLT_UQ);
    return _mm512_mask_mov_ps(h16_term(xr, gr, pos), spread, _mm512_set1_ps(NAN));
}
B512_BACKWARD(h16, uint16_t, PFP16_TARGET, sel)
B512_BACKWARD(h16, uint16_t, PFP16_TARGET, tbe)

/* One run of the plan's dtype and rule (prelu_bw_fused.inc); the dx factors of one weight value
 * are prelu_backward.c's pos_factor / neg_factor formulas. */
#define B512_ARGS(T, at) (const T *)ctx->self + (at), (const T *)ctx->grad + (at), (T *)ctx->grad_input + (at)
static float fused_sw(const nn_prelu_bw_ctx *ctx, int64_t at, int64_t len, float w)
{
    const nn_prelu_bw_plan *p = ctx->plan;
    const bool tbe = p->rule == NN_PRELU_BW_TBE, nt = ctx->streaming;
    const float pf = 1.0f + 0.0f * w, nf = tbe ? 0.0f + w : w;
    if (p->dtype == ACL_FLOAT)
        return tbe ? b512_sw_tbe_f32(B512_ARGS(float, at), pf, nf, len, nt)
                   : b512_sw_sel_f32(B512_ARGS(float, at), pf, nf, len, nt);
    if (p->dtype == ACL_FLOAT16 && ctx->avx512fp16)
        return tbe ? b512_sw_tbe_h16(B512_ARGS(uint16_t, at), pf, nf, len, nt)
                   : b512_sw_sel_h16(B512_ARGS(uint16_t, at), pf, nf, len, nt);
    if (p->dtype == ACL_FLOAT16)
        return tbe ? b512_sw_tbe_f16(B512_ARGS(uint16_t, at), pf, nf, len, nt)
                   : b512_sw_sel_f16(B512_ARGS(uint16_t, at), pf, nf, len, nt);
    if (ctx->avx512bf16)
        return tbe ? b512_sw_tbe_pbf16(B512_ARGS(uint16_t, at), pf, nf, len, nt)
                   : b512_sw_sel_pbf16(B512_ARGS(uint16_t, at), pf, nf, len, nt);
    return tbe ? b512_sw_tbe_bf16(B512_ARGS(uint16_t, at), pf, nf, len, nt)
               : b512_sw_sel_bf16(B512_ARGS(uint16_t, at), pf, nf, len, nt);
}

static void fused_vw(const nn_prelu_bw_ctx *ctx, int64_t first, int64_t n, const float *w, float *sums)
{
    const nn_prelu_bw_plan *p = ctx->plan;
    const bool tbe = p->rule == NN_PRELU_BW_TBE, nt = ctx->streaming;
    const int64_t c0 = w - ctx->weight;
    const float *pf = ctx->pos_factor + c0, *nf = ctx->neg_factor + c0;
    if (p->dtype == ACL_FLOAT) {
        if (tbe) b512_vw_tbe_f32(B512_ARGS(float, first), pf, nf, sums, n, nt);
        else b512_vw_sel_f32(B512_ARGS(float, first), pf, nf, sums, n, nt);
    } else if (p->dtype == ACL_FLOAT16 && ctx->avx512fp16) {
        if (tbe) b512_vw_tbe_h16(B512_ARGS(uint16_t, first), pf, nf, sums, n, nt);
        else b512_vw_sel_h16(B512_ARGS(uint16_t, first), pf, nf, sums, n, nt);
    } else if (p->dtype == ACL_FLOAT16) {
        if (tbe) b512_vw_tbe_f16(B512_ARGS(uint16_t, first), pf, nf, sums, n, nt);
        else b512_vw_sel_f16(B512_ARGS(uint16_t, first), pf, nf, sums, n, nt);
    } else if (ctx->avx512bf16) {
        if (tbe) b512_vw_tbe_pbf16(B512_ARGS(uint16_t, first), pf, nf, sums, n, nt);
        else b512_vw_sel_pbf16(B512_ARGS(uint16_t, first), pf, nf, sums, n, nt);
    } else {
        if (tbe) b512_vw_tbe_bf16(B512_ARGS(uint16_t, first), pf, nf, sums, n, nt);
        else b512_vw_sel_bf16(B512_ARGS(uint16_t, first), pf, nf, sums, n, nt);
    }
}

#define PRELU_BW_BLOCKS nn_prelu_bw_blocks_avx512
#include "kernels/prelu/prelu_bw_fused.inc"
#else
void nn_prelu_bw_blocks_avx512(void *vctx, int64_t begin, int64_t end)
{
    nn_prelu_bw_blocks_portable(vctx, begin, end); /* never chosen: no AVX-512 tier on this target */
}
#endif
