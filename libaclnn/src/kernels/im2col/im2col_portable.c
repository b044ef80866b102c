/*
 * im2col_portable.c - the im2col gather for any CPU (im2col.h): each kernel row (ki, kj) of a
 * plane's column block copied from the image in the input's element type (memcpy for sW == 1),
 * padding as zeros; with a dtype cast, one row at a time through fp32 (one rounding per value).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/im2col/im2col.h"

/* Gathers row (ki, kj) of one plane's column block (L = OH*OW values) in the input's element
 * type: for every window position the source pixel, or 0 where it falls into the padding. */
#define DEFINE_IM2COL_ROW(NAME, T)                                                                \
    static void NAME(const nn_i2c_plan *p, const T *restrict plane, T *restrict row, int64_t ki,   \
                     int64_t kj)                                                                 \
    {                                                                                            \
        const int64_t W = p->W, OW = p->OW;                                                      \
        const int64_t col_off = kj * p->dW - p->pW;                                              \
        int64_t ow_lo, ow_hi;                                                                    \
        nn_i2c_valid_range(W, OW, p->sW, col_off, &ow_lo, &ow_hi);                                \
        for (int64_t oh = 0; oh < p->OH; oh++) {                                                 \
            T *restrict dst = row + oh * OW;                                                     \
            const int64_t ih = oh * p->sH - p->pH + ki * p->dH;                                  \
            if (ih < 0 || ih >= p->H || ow_lo >= ow_hi) {                                        \
                memset(dst, 0, (size_t)OW * sizeof(T));                                          \
                continue;                                                                        \
            }                                                                                    \
            const T *restrict src = plane + ih * W + col_off;                                    \
            memset(dst, 0, (size_t)ow_lo * sizeof(T));                                           \
            if (p->sW == 1) {                                                                    \
                memcpy(dst + ow_lo, src + ow_lo, (size_t)(ow_hi - ow_lo) * sizeof(T));           \
            } else {                                                                             \
                const int64_t sW = p->sW;                                                        \
                for (int64_t ow = ow_lo; ow < ow_hi; ow++) {                                     \
                    dst[ow] = src[ow * sW];                                                      \
                }                                                                                \
            }                                                                                    \
            memset(dst + ow_hi, 0, (size_t)(OW - ow_hi) * sizeof(T));                            \
        }                                                                                        \
    }

DEFINE_IM2COL_ROW(im2col_row_u8, uint8_t)
DEFINE_IM2COL_ROW(im2col_row_u16, uint16_t)
DEFINE_IM2COL_ROW(im2col_row_u32, uint32_t)
DEFINE_IM2COL_ROW(im2col_row_u64, uint64_t)

/* Any element size of the products' lists (1, 2, 4 or 8 bytes: Ascend950 gathers its integer,
 * bool, double and complex dtypes too); zero bits are every dtype's padding value. */
static void im2col_row(const nn_i2c_plan *p, size_t esz, const void *plane, void *row,
                       int64_t ki, int64_t kj)
{
    switch (esz) {
    case 1: im2col_row_u8(p, (const uint8_t *)plane, (uint8_t *)row, ki, kj); break;
    case 2: im2col_row_u16(p, (const uint16_t *)plane, (uint16_t *)row, ki, kj); break;
    case 4: im2col_row_u32(p, (const uint32_t *)plane, (uint32_t *)row, ki, kj); break;
    default: im2col_row_u64(p, (const uint64_t *)plane, (uint64_t *)row, ki, kj); break;
    }
}

/* Claimed chunks instead of fixed ranges: a pool worker that wakes late, or shares its core
 * on a busy host, does not leave the call waiting for its fixed half. */
void nn_im2col_planes_claimed(void *vctx, int64_t begin, int64_t end)
{
    nn_im2col_ctx *ctx = (nn_im2col_ctx *)vctx;
    (void)begin, (void)end;
    int64_t first, last;
    while (nn_claim_next(&ctx->claims, &first, &last)) ctx->planes(vctx, first, last);
}

void nn_im2col_planes_portable(void *vctx, int64_t begin, int64_t end)
{
    nn_im2col_ctx *ctx = (nn_im2col_ctx *)vctx;
    const nn_i2c_plan *p = ctx->plan;
    const size_t in_esz = nn_dtype_size(p->in_dtype);
    const size_t out_esz = nn_dtype_size(p->out_dtype);
    const int64_t L = p->OH * p->OW;
    const int64_t rows = p->kH * p->kW;
    const bool cast = p->in_dtype != p->out_dtype;
    unsigned char *gathered = NULL;
    float *widened = NULL;

    if (cast) {
        /* One row in the input type, then the same row widened to fp32. */
        gathered = malloc((size_t)L * in_esz);
        widened = malloc((size_t)L * sizeof(float));
        if (gathered == NULL || widened == NULL) {
            __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
            free(gathered);
            free(widened);
            return;
        }
    }
    for (int64_t plane = begin; plane < end; plane++) {
        const unsigned char *src = ctx->in + (size_t)(plane * p->H * p->W) * in_esz;
        unsigned char *dst_block = ctx->out + (size_t)(plane * rows * L) * out_esz;
        for (int64_t ki = 0; ki < p->kH; ki++) {
            for (int64_t kj = 0; kj < p->kW; kj++) {
                unsigned char *dst = dst_block + (size_t)((ki * p->kW + kj) * L) * out_esz;
                if (!cast) {
                    im2col_row(p, in_esz, src, dst, ki, kj);
                    continue;
                }
                im2col_row(p, in_esz, src, gathered, ki, kj);
                nn_to_f32_n(p->in_dtype, gathered, widened, (size_t)L);
                nn_from_f32_n(p->out_dtype, widened, dst, (size_t)L);
            }
        }
    }
    free(gathered);
    free(widened);
}
