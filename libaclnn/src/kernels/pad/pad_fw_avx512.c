/*
 * pad_fw_avx512.c - the ReplicationPad2d forward's line kernel (pad_fw.h).  Compiled with the
 * AVX-512 flags (Makefile); run only when the operator found AVX-512 in the CPU table.
 *
 * The output rows [begin, end) are one contiguous byte range.  It is written line by line on
 * the 64-byte grid: a line inside a row's interior is one unaligned load of the source row and
 * one non-temporal store; a line that holds an edge or a row boundary (the phase table says
 * which, and with which byte masks) is a masked load blended with the broadcast first / last
 * element, merged with what the row before left in a pending register, and stored once all its
 * 64 bytes are known.  So every line is written once, whole, straight from a register: no read
 * for ownership, no staging buffer (a buffer copied out in phases left the loads and the
 * non-temporal stores serialised, about twice as slow), and loads and stores interleave as in
 * a plain streaming copy.
 */
#include <stdint.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/pad/pad_fw.h"

#if NN_HAVE_X86_SIMD
/* `es` bytes at p repeated over a whole vector (es is 1, 2, 4 or 8). */
NN_AVX512 static inline __m512i broadcast_elem(const unsigned char *p, size_t es)
{
    switch (es) {
    case 1: return _mm512_set1_epi8((char)p[0]);
    case 2: { int16_t v; memcpy(&v, p, 2); return _mm512_set1_epi16(v); }
    case 4: { int32_t v; memcpy(&v, p, 4); return _mm512_set1_epi32(v); }
    default: { int64_t v; memcpy(&v, p, 8); return _mm512_set1_epi64(v); }
    }
}

/* The line being assembled across rows: its bytes known so far (`have`) and their values. */
typedef struct pending_line {
    __m512i bytes;
    uint64_t have;
    unsigned char *line; /* NULL: none */
} pending_line;

/* One edge line of the row whose first byte is `row` (source row `src`). */
NN_AVX512 static inline __attribute__((always_inline)) void edge_line(const pad_fw_edge *e, const unsigned char *src,
                                                                      unsigned char *row, int64_t left_bytes,
                                                                      __m512i first, __m512i last,
                                                                      pending_line *pend)
{
    unsigned char *line = row + e->off;
    /* masked: the bytes outside `from_src` are never read (the address may lie outside the
     * source row, even outside the tensor; a masked-off lane does not fault) */
    const void *at = (const void *)((uintptr_t)src + (uintptr_t)(e->off - left_bytes));
    __m512i v = _mm512_maskz_loadu_epi8(e->from_src, at);
    v = _mm512_mask_mov_epi8(v, e->fill_first, first);
    v = _mm512_mask_mov_epi8(v, e->fill_last, last);
    uint64_t have = e->in_row;
    if (line == pend->line) {
        v = _mm512_mask_mov_epi8(pend->bytes, e->in_row, v);
        have |= pend->have;
    } else if (pend->line != NULL) {
        /* a line begun by rows outside this range (only at its start): our bytes only */
        _mm512_mask_storeu_epi8(pend->line, pend->have, pend->bytes);
    }
    if (have == ~(uint64_t)0) {
        _mm512_stream_si512((void *)line, v);
        pend->line = NULL;
        pend->have = 0;
    } else {
        pend->bytes = v;
        pend->have = have;
        pend->line = line;
    }
}

NN_AVX512 void nn_pad_fw_rows_nt_avx512(const pad_fw_lines *t, int64_t begin, int64_t end)
{
    const size_t es = t->es;
    const int64_t row_bytes = t->Wo * (int64_t)es, left_bytes = t->left * (int64_t)es;
    const int64_t src_row_bytes = t->W * (int64_t)es;
    pending_line pend = {_mm512_setzero_si512(), 0, NULL};
    /* the source row and the phase of row `begin`, then stepped */
    pad_fw_walk walk = pad_fw_walk_from(begin, t->Ho);
    int64_t phase = begin % t->period;
    unsigned char *row = t->out + begin * row_bytes;
    for (int64_t r = begin; r < end; r++, row += row_bytes) {
        const unsigned char *src = pad_fw_walk_next(&walk, t->in, t->H, t->Ho, t->top, src_row_bytes);
        const pad_fw_phase *ph = &t->phase[phase];
        if (++phase == t->period) {
            phase = 0;
        }
        const __m512i first = broadcast_elem(src, es);
        const __m512i last = broadcast_elem(src + src_row_bytes - (int64_t)es, es);
        const pad_fw_edge *e = ph->edge;
        for (int32_t k = 0; k < ph->head; k++, e++) {
            edge_line(e, src, row, left_bytes, first, last, &pend);
        }
        unsigned char *line = row + ph->full_off;
        const unsigned char *from = src + (ph->full_off - left_bytes);
        for (int32_t k = 0; k < ph->full; k++, line += 64, from += 64) {
            _mm512_stream_si512((void *)line, _mm512_loadu_si512(from));
        }
        for (int32_t k = 0; k < ph->tail; k++, e++) {
            edge_line(e, src, row, left_bytes, first, last, &pend);
        }
    }
    if (pend.line != NULL) {
        /* the range's last line, shared with the next range (or the tensor's end) */
        _mm512_mask_storeu_epi8(pend.line, pend.have, pend.bytes);
    }
    _mm_sfence();
}
#else /* not x86-64: never chosen, defined for the link */
void nn_pad_fw_rows_nt_avx512(const pad_fw_lines *t, int64_t begin, int64_t end)
{
    (void)t, (void)begin, (void)end;
}
#endif /* NN_HAVE_X86_SIMD */
