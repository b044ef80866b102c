/*
 * col2im_portable.c - the col2im kernel for any CPU, and what every path shares (col2im.h).
 *
 * Each image plane is accumulated in fp32 in a cache-resident buffer (the fp32 output plane
 * itself when possible) and written once; gradOutput is read exactly once, front to back, one
 * kernel row (ki, kj) after the other.  Each output element therefore receives its contributions
 * in a fixed order (ki ascending, then kj ascending) whatever the thread count; fp16/bf16 are
 * summed in fp32 and rounded once.
 *
 * The accumulator is split into sH x sW phase planes (ih mod sH, iw mod sW): within one phase
 * the contributions of a kernel offset (ki, kj) are contiguous runs of gradOutput, so every inner
 * loop is a unit-stride, vectorisable add (a single run for a whole kernel row block when it
 * covers complete phase rows); the phases are interleaved back into the image at the end (with
 * stride 1 the accumulator is the output plane itself).  For window order (col2im.h) the kernel
 * rows are visited ki descending and each group's columns kj descending: the same loops.
 */
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h" /* nn_prefetch_bytes */
#include "kernels/col2im/col2im.h"

#define COL2IM_PHASE_PLANES nn_col2im_planes_portable
#include "kernels/col2im/col2im_phase.inc"

static void build_spans(const nn_i2c_plan *p, kcol_span *spans)
{
    for (int64_t kj = 0; kj < p->kW; kj++) {
        const int64_t koff = kj * p->dW - p->pW;   /* iw = ow*sW + koff */
        int64_t r = koff % p->sW;
        if (r < 0) r += p->sW;
        const int64_t off = (r - koff) / p->sW;    /* exact: r - koff is a multiple of sW */
        const int64_t count = r < p->W ? nn_ceil_div(p->W - r, p->sW) : 0;
        int64_t lo = -off > 0 ? -off : 0;
        int64_t hi = p->OW - off < count ? p->OW - off : count;
        spans[kj].residue = r;
        spans[kj].src_off = off;
        spans[kj].t_lo = lo;
        spans[kj].t_hi = hi > lo ? hi : lo;
    }
}

/* Groups the non-empty kernel columns by residue class, kj ascending within a class (descending
 * for window order: a group adds its members in member order). */
static int64_t build_groups(const nn_i2c_plan *p, const kcol_span *spans, int64_t class_len,
                            kcol_group *groups)
{
    int64_t n = 0;
    for (int64_t r = 0; r < p->sW; r++) {
        kcol_group *g = NULL;
        for (int64_t i = 0; i < p->kW; i++) {
            const int64_t kj = p->window_order ? p->kW - 1 - i : i;
            const kcol_span *sp = &spans[kj];
            if (sp->residue != r || sp->t_lo >= sp->t_hi) continue;
            if (g == NULL || g->count == GROUP_MAX) {
                g = &groups[n++];
                g->residue = r;
                g->count = 0;
                g->common_lo = sp->t_lo;
                g->common_hi = sp->t_hi;
            }
            g->kj[g->count++] = kj;
            if (sp->t_lo > g->common_lo) g->common_lo = sp->t_lo;
            if (sp->t_hi < g->common_hi) g->common_hi = sp->t_hi;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        if (groups[i].common_lo >= groups[i].common_hi) {
            groups[i].common_lo = groups[i].common_hi = class_len;
        }
    }
    return n;
}

nn_col2im_tables *nn_col2im_tables_create(const nn_i2c_plan *p)
{
    nn_col2im_tables *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->spans = malloc((size_t)p->kW * sizeof *t->spans);
    t->groups = malloc((size_t)p->kW * sizeof *t->groups);
    if (t->spans == NULL || t->groups == NULL) {
        nn_col2im_tables_destroy(t);
        return NULL;
    }
    t->class_len = nn_ceil_div(p->W, p->sW);
    t->phase_rows = nn_ceil_div(p->H, p->sH);
    build_spans(p, t->spans);
    t->num_groups = build_groups(p, t->spans, t->class_len, t->groups);
    return t;
}

void nn_col2im_tables_destroy(nn_col2im_tables *t)
{
    if (t == NULL) return;
    free(t->spans);
    free(t->groups);
    free(t);
}

bool nn_col2im_run(nn_col2im_job *job, nn_range_fn planes_fn)
{
    const nn_i2c_plan *p = job->plan;
    /* Read volume per plane decides the grain: ~64 KiB of columns per task at least. */
    const int64_t per_plane = p->kH * p->kW * p->OH * p->OW + p->H * p->W;
    const int64_t grain = per_plane >= 16384 ? 1 : 16384 / (per_plane > 0 ? per_plane : 1);
    nn_claims_init(&job->claims, p->planes, 16, grain); /* ~1/16 of a thread's share, >= a grain */
    job->failed = 0;
    nn_parallel_for(p->planes, grain, planes_fn, job);
    return job->failed == 0;
}

/* Shared with the vector paths' table builders (col2im.h). */
void nn_col2im_fill_row_tables(const nn_i2c_plan *p, int64_t kpos_size, int64_t row_stride,
                               int64_t *row_first, int64_t *row_offset)
{
    int64_t n = 0;
    for (int64_t ih = 0; ih < p->H; ih++) {
        row_first[ih] = n;
        for (int64_t i = 0; i < p->kH; i++) {
            const int64_t ki = p->window_order ? p->kH - 1 - i : i;
            const int64_t t = ih + p->pH - ki * p->dH;
            if (t < 0 || t % p->sH != 0 || t / p->sH >= p->OH) continue;
            row_offset[n++] = ki * p->kW * kpos_size + (t / p->sH) * row_stride;
        }
    }
    row_first[p->H] = n;
}

