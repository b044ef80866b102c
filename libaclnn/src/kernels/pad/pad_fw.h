/*
 * pad_fw.h - the ReplicationPad2d forward's line kernel (pad_fw_avx512.c): the output written
 * as one flat stream of aligned 64-byte lines, each assembled in a register and stored
 * non-temporally, so no output line is read for ownership and loads and stores stay interleaved.
 *
 * The operator (ops/replication_pad2d.c) builds the line table below (per row phase: which
 * lines of a row need masks) and runs the kernel only when the CPU table allows AVX-512.
 */
#ifndef NN_KERNELS_PAD_FW_H
#define NN_KERNELS_PAD_FW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One 64-byte output line of a row that is not a plain copy of 64 source bytes: bit b of each
 * mask is byte b of the line. */
typedef struct pad_fw_edge {
    int64_t off;          /* the line's first byte, relative to the row's first byte (may be < 0) */
    uint64_t from_src;    /* bytes copied from the source row */
    uint64_t fill_first;  /* bytes of the left edge (copies of the row's first element) */
    uint64_t fill_last;   /* bytes of the right edge (copies of its last element) */
    uint64_t in_row;      /* bytes of this row (the rest belong to the rows before / after) */
} pad_fw_edge;

#define PAD_FW_MAX_PHASES 64 /* 64 / gcd(row bytes, 64) */
#define PAD_FW_MAX_EDGES 6

/* The lines of a row whose first byte lies at one offset within a 64-byte line: `head` edge
 * lines, then `full` whole lines copied from the source (the first at row byte `full_off`),
 * then `tail` edge lines (edge[head .. head+tail)). */
typedef struct pad_fw_phase {
    int32_t head, full, tail;
    int64_t full_off;
    pad_fw_edge edge[PAD_FW_MAX_EDGES];
} pad_fw_phase;

typedef struct pad_fw_lines {
    const unsigned char *in;
    unsigned char *out;
    int64_t H, W, Ho, Wo, top, left;
    size_t es;            /* element size: 1, 2, 4 or 8 */
    int64_t period;       /* rows after which the row offsets within lines repeat */
    pad_fw_phase phase[PAD_FW_MAX_PHASES]; /* phase[row % period] */
} pad_fw_lines;

/* The output rows in order, each with its (clamped) source row, stepped without a division per
 * row: (plane, i) of the next output row. */
typedef struct pad_fw_walk {
    int64_t plane, i;
} pad_fw_walk;

static inline pad_fw_walk pad_fw_walk_from(int64_t row, int64_t Ho)
{
    return (pad_fw_walk){row / Ho, row % Ho};
}

/* The source row of the walk's output row (rows of src_row_bytes), then steps to the next. */
static inline const unsigned char *pad_fw_walk_next(pad_fw_walk *w, const unsigned char *in, int64_t H, int64_t Ho,
                                                    int64_t top, int64_t src_row_bytes)
{
    int64_t src_i = w->i - top;
    src_i = src_i < 0 ? 0 : (src_i >= H ? H - 1 : src_i);
    const unsigned char *src = in + (w->plane * H + src_i) * src_row_bytes;
    if (++w->i == Ho) {
        w->i = 0;
        w->plane++;
    }
    return src;
}

/* One output row: `left` copies of src's first element (of `es` bytes: 1, 2, 4, 8 or 16), the
 * W source elements, `right` copies of its last.  The plain row loop of the other paths, built
 * twice from pad_fw_rows.inc: nn_pad_fw_row_portable (pad_fw_portable.c, baseline x86-64) and
 * nn_pad_fw_row_avx2 (pad_fw_avx2.c, only when the CPU table says avx2). */
typedef void (*nn_pad_fw_row_fn)(size_t es, const unsigned char *src, unsigned char *dst, int64_t W,
                                 int64_t left, int64_t right);
void nn_pad_fw_row_portable(size_t es, const unsigned char *src, unsigned char *dst, int64_t W, int64_t left,
                            int64_t right);
void nn_pad_fw_row_avx2(size_t es, const unsigned char *src, unsigned char *dst, int64_t W, int64_t left,
                        int64_t right);

/* Output rows [begin, end), non-temporal stores for every line whose bytes all belong to these
 * rows, masked ordinary stores for the (at most two) lines shared with other ranges; ends with
 * a store fence. */
void nn_pad_fw_rows_nt_avx512(const pad_fw_lines *t, int64_t begin, int64_t end);

/* Short rows (pad_fw_short_avx512.c): an output row of at most 64 bytes is one lane permutation
 * of its source row, loaded under a mask: lane j takes source element clamp(j - left, 0, W-1).
 * For elements of 2, 4 or 8 bytes (the permutation's lane widths), Wo * es <= 64. */
typedef struct pad_fw_short {
    const unsigned char *in;
    unsigned char *out;
    int64_t H, W, Ho, Wo, top, left;
    size_t es;
} pad_fw_short;

/* Whether the short-row kernel can write rows of Wo elements of es bytes. */
static inline bool nn_pad_fw_short_fits(size_t es, int64_t Wo)
{
    return (es == 2 || es == 4 || es == 8) && Wo * (int64_t)es <= 64;
}

/* Output rows [begin, end) with ordinary (masked) stores. */
void nn_pad_fw_rows_short_avx512(const pad_fw_short *t, int64_t begin, int64_t end);

#endif /* NN_KERNELS_PAD_FW_H */
