/*
 * pad_fw_short_avx512.c - the ReplicationPad2d forward's short-row kernel (pad_fw.h).  Compiled
 * with the AVX-512 flags (Makefile); run only when the operator found AVX-512 in the CPU table.
 *
 * A row of at most 64 bytes (fp32 W + pads <= 16, fp16/bf16 <= 32) is one register: the
 * source row loaded under a mask (bytes past it are never read, so no fault at the tensor's
 * end), its lanes permuted so that lane j takes element clamp(j - left, 0, W - 1), and stored.
 * The row loop of the other paths spends most of such a row on per-row overhead (the left and
 * right fills element by element, a copy of a few bytes); here a row costs a load, a
 * permutation and a store, and the rows repeated at the top and bottom reuse the register.
 */
#include <stdint.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/pad/pad_fw.h"

#if NN_HAVE_X86_SIMD
/* The permutation: lane j (of es bytes) holds clamp(j - left, 0, W - 1). */
NN_AVX512 static __m512i clamp_index(const pad_fw_short *t, size_t es)
{
    union {
        uint16_t w[32];
        uint32_t d[16];
        uint64_t q[8];
    } idx;
    memset(&idx, 0, sizeof idx);
    for (int64_t j = 0; j < 64 / (int64_t)es; j++) {
        int64_t from = j - t->left;
        from = from < 0 ? 0 : (from >= t->W ? t->W - 1 : from);
        switch (es) {
        case 2: idx.w[j] = (uint16_t)from; break;
        case 4: idx.d[j] = (uint32_t)from; break;
        default: idx.q[j] = (uint64_t)from; break;
        }
    }
    return _mm512_loadu_si512((const void *)&idx);
}

/* Rows [begin, end) for elements of es bytes (a constant once inlined: one loop per width). */
NN_AVX512 static inline __attribute__((always_inline)) void short_rows(const pad_fw_short *t, int64_t begin,
                                                                       int64_t end, size_t es)
{
    const __m512i idx = clamp_index(t, es);
    const int64_t row_bytes = t->Wo * (int64_t)es, src_row_bytes = t->W * (int64_t)es;
    const uint64_t load_mask = nn_low_bits64(src_row_bytes), store_mask = nn_low_bits64(row_bytes);
    pad_fw_walk walk = pad_fw_walk_from(begin, t->Ho);
    unsigned char *dst = t->out + begin * row_bytes;
    const unsigned char *loaded = NULL;
    __m512i row = _mm512_setzero_si512();
    for (int64_t r = begin; r < end; r++, dst += row_bytes) {
        const unsigned char *src = pad_fw_walk_next(&walk, t->in, t->H, t->Ho, t->top, src_row_bytes);
        if (src != loaded) { /* the top and bottom rows repeat the register */
            row = nn512_permute_lanes(es, idx, _mm512_maskz_loadu_epi8(load_mask, (const void *)src));
            loaded = src;
        }
        if (row_bytes == 64) {
            _mm512_storeu_si512((void *)dst, row);
        } else {
            _mm512_mask_storeu_epi8((void *)dst, store_mask, row);
        }
    }
}

NN_AVX512 void nn_pad_fw_rows_short_avx512(const pad_fw_short *t, int64_t begin, int64_t end)
{
    switch (t->es) {
    case 2: short_rows(t, begin, end, 2); break;
    case 4: short_rows(t, begin, end, 4); break;
    default: short_rows(t, begin, end, 8); break;
    }
}
#else /* not x86-64: never chosen, defined for the link */
void nn_pad_fw_rows_short_avx512(const pad_fw_short *t, int64_t begin, int64_t end)
{
    (void)t, (void)begin, (void)end;
}
#endif /* NN_HAVE_X86_SIMD */
