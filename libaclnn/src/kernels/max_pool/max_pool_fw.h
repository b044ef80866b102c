/*
 * max_pool_fw.h - the MaxPool2dWithMask / MaxPool2dWithIndices forward kernel (portable C; the
 * compiler vectorises its inner loop for the build's baseline):
 *
 *   max_pool_fw_portable.c  per plane: widen fp16/bf16 to fp32, pool a whole output row per
 *                           window cell, gather the winners bit for bit, store the argmax in the
 *                           form the plan asks (mask stream, int32, int64); the 1x1 legacy mask
 *   max_pool_fw_avx512.c    AVX-512: the plane kernel for strides 1 and 2 along the row: 2x2
 *                           stride-2 windows from the loaded rows (the paired path) or key rows
 *                           (planes without NaN) or straight from fp32/fp16/bf16 (the cell path)
 *   max_pool_fw_rows_avx512.c  AVX-512: fp32/bf16 3x3 stride-2 planes without NaN, each input row
 *                           pooled along the row once, then down (the pooled-rows path)
 *   max_pool_fw_general.c   one output at a time, for what the above does not take (mp_is_plain
 *                           false: dilation > 1, NHWC, planes of 2^31 cells or more)
 *
 * Selection follows PyTorch's CPU kernel: the first maximum in window order wins, a NaN always
 * wins (so the last NaN of a window does), and a window with nothing above -inf keeps its first
 * in-range cell.
 */
#ifndef NN_KERNELS_MAX_POOL_FW_H
#define NN_KERNELS_MAX_POOL_FW_H

#include <stdbool.h>
#include <stdint.h>

#include "base/nn_base.h"
#include "kernels/max_pool/max_pool.h"

/* How the argmax leaves the kernel. */
enum mp_index_kind {
    MP_INDEX_MASK_STREAM, /* int32 stream at the head of the INT8 container, tail zeroed */
    MP_INDEX_MASK_LEGACY, /* 1x1 kernel: legacy bit-mask pattern */
    MP_INDEX_INT32,       /* aclnnMaxPool2dWithIndices: one int32 per output */
    MP_INDEX_INT64,       /* aclnnMaxPool2dWithIndices: one int64 per output */
    MP_INDEX_MASK_V1,     /* Ascend910/310P: the V1 uint16 bit mask (mask_v1.h) */
};

/* The forward plan (ops/max_pool2d_with_mask.c fills it at phase 1). */
typedef struct fw_plan {
    mp_geometry g;
    aclDataType dtype;
    int index_kind;
    int64_t index_bytes;   /* bytes of the indices tensor */
    int64_t chunks;        /* plane runs; each owns one fp32 scratch plane (fp16/bf16 only) */
    int64_t scratch_floats; /* per chunk */
    int64_t keys_offset;    /* floats into a chunk's scratch of the keyed path's rows (0: none) */
    bool fp16_compute;     /* FLOAT computed as FLOAT16 (Ascend910 mask path; mask_v1.h) */
    bool v1_groups;        /* run by nn_mp_fw_v1_chunks: chunks of 16-channel groups */
    bool plane_avx512;     /* nn_mp_fw_plane_avx512 pools the planes (AVX-512, stride_w 1 or 2) */
    bool stream_stores;    /* out, indices and the mask's zero tail written with streaming stores */
} fw_plan;

/* One launch. */
typedef struct fw_ctx {
    const fw_plan *plan;
    const unsigned char *self;
    unsigned char *out;
    unsigned char *indices;
    float *scratch;
    nn_claims claims; /* nn_mp_fw_chunks: planes, claimed in chunks by the threads */
} fw_ctx;

/* The thread pool's range function over plan->chunks scratch areas: each call pools the planes it
 * claims from c->claims with the scratch of its first chunk index (plan->scratch_floats floats:
 * the widened plane, the argmax plane, a row of running maxima, the values, the key rows). */
void nn_mp_fw_chunks(void *ctx, int64_t chunk_begin, int64_t chunk_end);

/* Pools one plane of fp32 values: argmax_out[o] = plane-local ih*W+iw of output o's winner
 * (`best`: a row of Wo floats of room).  The selection rule is the one above. */
void nn_mp_fw_pool_plane(const float *vals, const mp_geometry *g, float *best, int32_t *argmax_out);
/* One plane for the AVX-512 plane kernel (max_pool_fw_avx512.c). */
typedef struct fw_plane_io {
    const unsigned char *in;   /* the plane (the plan's dtype) */
    const unsigned char *next; /* the plane to prefetch meanwhile, or NULL */
    int32_t *argmax;           /* out: each output's plane-local index (int32) */
    unsigned char *values;     /* out: each output's value, the winner's bits */
    unsigned char *zeros;      /* zero_lines 64-byte lines to zero with streaming stores meanwhile */
    int64_t zero_lines;
    unsigned char *out_nt;     /* streamed outputs: where values and argmax go as their lines fill */
    unsigned char *indices_nt; /* (the keyed path only; NULL: the caller copies them) */
    void *keys;                /* the keyed path's rows (nn_mp_fw_keys_bytes, 64-byte aligned), or NULL */
} fw_plane_io;

enum { MP_PLANE_NOT_TAKEN, MP_PLANE_POOLED, MP_PLANE_WRITTEN };

/* Pools the plane: when io->keys is given and no window holds a NaN, the paired path (2x2
 * windows, stride 2, no padding, no window past the edge), the pooled-rows path (fp32 or bf16, 3x3
 * windows, stride 2) or the keyed path, else the cell path.  Returns MP_PLANE_WRITTEN when
 * values and argmax also went out to io->out_nt and io->indices_nt, MP_PLANE_POOLED when they
 * are only in io->values and io->argmax, and MP_PLANE_NOT_TAKEN (nothing written) for a
 * stride_w other than 1 or 2 or a kernel_w over 16: the plan checks both. */
int nn_mp_fw_plane_avx512(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype);
/* Bytes of the keyed path's key rows for one plane, or of the pooled-rows path's rows if more
 * (0: the geometry has neither); `keys` above, 64-byte aligned, or NULL for the cell path only. */
int64_t nn_mp_fw_keys_bytes(const mp_geometry *g, aclDataType dtype);
/* The general kernel (max_pool_fw_general.c, int32/int64 indices only): the thread pool's range
 * function over nn_mp_fw_general_units(g) units (NCHW: planes; NHWC: output rows (n, oh)). */
int64_t nn_mp_fw_general_units(const mp_geometry *g);
void nn_mp_fw_general(void *ctx, int64_t unit_begin, int64_t unit_end);

/* The 1x1 kernel's legacy bit-mask pattern over the whole indices container. */
void nn_mp_fw_legacy_mask(const fw_plan *plan, unsigned char *mask);

#endif /* NN_KERNELS_MAX_POOL_FW_H */
