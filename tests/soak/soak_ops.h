/*
 * soak_ops.h - the soak's operator cases (tests/soak/soak.c): for each of the ten operators and
 * MaxPool2dWithIndices(Backward), random shapes, attributes, dtypes and layouts; the launches
 * (two chained ones for max-pool, forward then backward on another stream behind an event); and
 * the reference each result is checked against, computed on the host from the operator's
 * definition (docs/operators.md), independently of the library's kernels.
 *
 * Exact operators (gathers, selections, Prelu's one product) must match bit for bit after
 * rounding to the dtype; sums (the backward operators, Prelu's weight gradient) within a bound
 * proportional to the sum of the magnitudes of their terms.
 */
#ifndef TESTS_SOAK_OPS_H
#define TESTS_SOAK_OPS_H

#include <math.h>
#include <stdio.h>

#include "aclnnop/aclnn_im2col.h"
#include "aclnnop/aclnn_im2col_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnnop/aclnn_prelu_backward.h"
#include "aclnnop/aclnn_replication_pad2d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"
#include "soak_tensor.h"

enum {
    OP_PRELU, OP_PRELU_BW, OP_PAD, OP_PAD_BW, OP_UP, OP_UP_BW, OP_MP_MASK, OP_MP_INDICES, OP_IM2COL,
    OP_IM2COL_BW, OP_COUNT
};
static const char *const OP_NAMES[OP_COUNT] = {
    "Prelu", "PreluBackward", "ReplicationPad2d", "ReplicationPad2dBackward", "UpsampleNearestExact1d",
    "UpsampleNearestExact1dBackward", "MaxPool2dWithMask+Backward", "MaxPool2dWithIndices+Backward", "Im2col",
    "Im2colBackward"};

#define JOB_TENSORS 6
#define JOB_ARRAYS 5
#define JOB_WORKSPACES 2

typedef struct soak_job {
    int op;
    aclDataType dtype;
    const char *product;
    soak_tensor t[JOB_TENSORS];
    int nt;
    aclIntArray *arr[JOB_ARRAYS];
    int narr;
    int64_t k[2], s[2], p[4], d[2], lout; /* attributes, as the case drew them */
    int ceil_mode;
    int big_every; /* Prelu rounds with blocks of 2 MiB and more: one in big_every (0: none) */
    void *ws[JOB_WORKSPACES];
    int nws;
    int launches;
    int wrong;    /* values that differ from the reference, bytes outside a view that changed */
    int verified; /* set by verify_job (in a callback or host function, or after the wait) */
} soak_job;

static aclIntArray *job_array(soak_job *job, const int64_t *v, uint64_t n)
{
    return job->arr[job->narr++] = aclCreateIntArray(v, n);
}

/* A tensor of the job: inputs get random values, outputs keep SENTINEL. */
static soak_tensor *job_tensor(soak_job *job, aclDataType dtype, int rank, const int64_t *shape, soak_rng *r,
                               int dense, int is_output)
{
    soak_tensor *t = &job->t[job->nt++];
    if (make_tensor(t, dtype, rank, shape, r, dense, is_output) != 0)
        return NULL;
    if (!is_output)
        fill_random(t, r);
    return t;
}

/* ---- the check of one output against its reference ------------------------------------------ */

static double dtype_eps(aclDataType dtype)
{
    return dtype == ACL_FLOAT16 ? 0x1p-10 : dtype == ACL_BF16 ? 0x1p-7 : 0x1p-23;
}

/* The job's tensors (shape, strides, offset) and attributes, for a report of a wrong value. */
static void describe_job(const soak_job *job)
{
    fprintf(stderr, "soak:   attributes k %lld,%lld s %lld,%lld p %lld,%lld,%lld,%lld d %lld,%lld ceil %d lout %lld\n",
            (long long)job->k[0], (long long)job->k[1], (long long)job->s[0], (long long)job->s[1],
            (long long)job->p[0], (long long)job->p[1], (long long)job->p[2], (long long)job->p[3],
            (long long)job->d[0], (long long)job->d[1], job->ceil_mode, (long long)job->lout);
    for (int i = 0; i < job->nt; i++) {
        const soak_tensor *t = &job->t[i];
        fprintf(stderr, "soak:   tensor %d (%s):", i, t->is_output ? "out" : "in");
        for (int d = 0; d < t->rank; d++)
            fprintf(stderr, " %lld/%lld", (long long)t->shape[d], (long long)t->strides[d]);
        fprintf(stderr, " offset %lld\n", (long long)t->offset);
    }
}

/* Compares every element of output `t` with ref (sums: within 8 eps of mag, the sum of the
 * terms' magnitudes; mag NULL: exact) and every storage byte outside the view with SENTINEL. */
static int check_output(const soak_job *job, const soak_tensor *t, const double *ref, const double *mag)
{
    int64_t n = tensor_numel(t);
    unsigned char *covered = calloc((size_t)t->storage, 1);
    int wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t pos = storage_pos(t, i);
        covered[pos] = 1;
        double got = load_elem(t, pos), want = t->dtype == ACL_INT32 || t->dtype == ACL_INT64 ? ref[i] : round_to(t->dtype, ref[i]);
        double tol = mag == NULL ? 0.0 : 8.0 * dtype_eps(t->dtype) * (mag[i] + fabs(want));
        if (got != want && !(fabs(got - want) <= tol) && wrong++ < 3) /* (equal infinities pass) */
            fprintf(stderr, "soak: %s %s on %s: element %lld is %.9g, reference %.9g\n", OP_NAMES[job->op],
                    t->dtype == ACL_FLOAT ? "float" : t->dtype == ACL_FLOAT16 ? "float16" : "bf16/int",
                    job->product, (long long)i, got, want);
    }
    const unsigned char *bytes = t->host;
    for (int64_t pos = 0; pos < t->storage; pos++)
        for (size_t b = 0; !covered[pos] && b < t->elem; b++)
            if (bytes[(size_t)pos * t->elem + b] != SENTINEL && wrong++ < 3)
                fprintf(stderr, "soak: %s on %s wrote storage element %lld outside its view\n", OP_NAMES[job->op],
                        job->product, (long long)pos);
    free(covered);
    if (wrong)
        describe_job(job);
    return wrong;
}

/* The value of an input's flat element. */
static double in_at(const soak_job *job, int index, int64_t flat)
{
    return load_elem(&job->t[index], storage_pos(&job->t[index], flat));
}

/* ---- Prelu and PreluBackward: t0 self, t1 weight ([1] or [C]), outputs after ------------------ */

static int64_t prelu_channel(const soak_tensor *x, int64_t flat, int64_t wnum)
{
    if (wnum == 1)
        return 0;
    int64_t inner = 1;
    for (int i = 2; i < x->rank; i++)
        inner *= x->shape[i];
    return (flat / inner) % x->shape[1];
}

static int setup_prelu(soak_job *job, soak_rng *r, int backward)
{
    /* one round in job->big_every (SOAK_BIG_EVERY; 0: none) is [<= 3, <= 2^19]: blocks of 2 MiB
     * and more, which the checking mode places apart (huge pages for the library's view) */
    const int big = job->big_every > 0 && rng_range(r, 1, job->big_every) == 1;
    int64_t shape[4], rank = big ? rng_range(r, 1, 2) : rng_range(r, 1, 4);
    for (int i = 0; i < rank; i++)
        shape[i] = i == rank - 1 ? rng_range(r, 1, big ? 1 << 19 : 40) : rng_range(r, 1, big ? 3 : 5);
    int64_t wnum = rank >= 2 && rng_range(r, 0, 1) ? shape[1] : 1;
    int ok = job_tensor(job, job->dtype, (int)rank, shape, r, 0, 0) && job_tensor(job, job->dtype, 1, &wnum, r, 1, 0);
    if (backward) /* t2 gradOutput, t3 gradInput, t4 gradWeight */
        ok = ok && job_tensor(job, job->dtype, (int)rank, shape, r, 0, 0) &&
             job_tensor(job, job->dtype, (int)rank, shape, r, 0, 1) && job_tensor(job, job->dtype, 1, &wnum, r, 0, 1);
    else /* t2 out */
        ok = ok && job_tensor(job, job->dtype, (int)rank, shape, r, 0, 1);
    return ok ? 0 : -1;
}

static int verify_prelu(const soak_job *job, int backward)
{
    const soak_tensor *x = &job->t[0];
    int64_t n = tensor_numel(x), wnum = job->t[1].shape[0];
    double *ref = calloc((size_t)n, sizeof *ref), *gw = calloc((size_t)wnum, sizeof *gw);
    double *gmag = calloc((size_t)wnum, sizeof *gmag);
    for (int64_t i = 0; i < n; i++) {
        double xv = in_at(job, 0, i), w = in_at(job, 1, prelu_channel(x, i, wnum));
        double g = backward ? in_at(job, 2, i) : xv;
        ref[i] = xv > 0 ? g : w * g;
        if (backward && xv <= 0) {
            int64_t c = prelu_channel(x, i, wnum);
            gw[c] += xv * g;
            gmag[c] += fabs(xv * g);
        }
    }
    int wrong = check_output(job, &job->t[backward ? 3 : 2], ref, NULL);
    if (backward)
        wrong += check_output(job, &job->t[4], gw, gmag);
    free(ref);
    free(gw);
    free(gmag);
    return wrong;
}

/* ---- ReplicationPad2d(Backward): t0 self (or gradOutput), t1 out (or self, then t2 gradInput) */

static int setup_pad(soak_job *job, soak_rng *r, int backward)
{
    int rank = (int)rng_range(r, 3, 4);
    int64_t in[4], out[4];
    for (int i = 0; i < rank; i++)
        in[i] = out[i] = rng_range(r, 1, i >= rank - 2 ? 12 : 3);
    int64_t h = in[rank - 2], w = in[rank - 1];
    for (int i = 0; i < 4; i++) /* left, right, top, bottom; each below its dimension */
        job->p[i] = rng_range(r, 0, (i < 2 ? w : h) - 1 < 3 ? (i < 2 ? w : h) - 1 : 3);
    out[rank - 2] = h + job->p[2] + job->p[3];
    out[rank - 1] = w + job->p[0] + job->p[1];
    job_array(job, job->p, 4);
    int ok = backward ? job_tensor(job, job->dtype, rank, out, r, 0, 0) && job_tensor(job, job->dtype, rank, in, r, 0, 0) &&
                            job_tensor(job, job->dtype, rank, in, r, 0, 1)
                      : job_tensor(job, job->dtype, rank, in, r, 0, 0) && job_tensor(job, job->dtype, rank, out, r, 0, 1);
    return ok ? 0 : -1;
}

/* Maps each element of the padded shape to the input element it replicates. */
static int64_t pad_source(const soak_tensor *small, const soak_tensor *big, const int64_t *p, int64_t flat)
{
    int rank = big->rank;
    int64_t wo = big->shape[rank - 1], ho = big->shape[rank - 2];
    int64_t h = small->shape[rank - 2], w = small->shape[rank - 1];
    int64_t j = flat % wo, i = (flat / wo) % ho, plane = flat / (wo * ho);
    int64_t si = i - p[2] < 0 ? 0 : i - p[2] > h - 1 ? h - 1 : i - p[2];
    int64_t sj = j - p[0] < 0 ? 0 : j - p[0] > w - 1 ? w - 1 : j - p[0];
    return (plane * h + si) * w + sj;
}

static int verify_pad(const soak_job *job, int backward)
{
    const soak_tensor *small = &job->t[backward ? 2 : 0], *big = &job->t[backward ? 0 : 1];
    int64_t nbig = tensor_numel(big), nsmall = tensor_numel(small);
    double *ref = calloc((size_t)(backward ? nsmall : nbig), sizeof *ref), *mag = calloc((size_t)nsmall, sizeof *mag);
    for (int64_t i = 0; i < nbig; i++) {
        int64_t src = pad_source(small, big, job->p, i);
        if (backward) {
            ref[src] += in_at(job, 0, i);
            mag[src] += fabs(in_at(job, 0, i));
        } else {
            ref[i] = in_at(job, 0, src);
        }
    }
    int wrong = check_output(job, backward ? small : big, ref, backward ? mag : NULL);
    free(ref);
    free(mag);
    return wrong;
}

/* ---- UpsampleNearestExact1d(Backward): t0 self [N,C,L] (or gradOutput [N,C,Lout]), t1 out ---- */

static int setup_upsample(soak_job *job, soak_rng *r, int backward)
{
    int64_t in[3] = {rng_range(r, 1, 3), rng_range(r, 1, 4), rng_range(r, 1, 16)}, out[3];
    job->lout = rng_range(r, 1, 48);
    memcpy(out, in, sizeof in);
    out[2] = job->lout;
    job_array(job, &job->lout, 1);
    if (backward)
        job_array(job, in, 3);
    int ok = backward ? job_tensor(job, job->dtype, 3, out, r, 0, 0) && job_tensor(job, job->dtype, 3, in, r, 0, 1)
                      : job_tensor(job, job->dtype, 3, in, r, 0, 0) && job_tensor(job, job->dtype, 3, out, r, 0, 1);
    return ok ? 0 : -1;
}

/* CANN's nearest-exact source index: min(floor(fl32((d + 0.5) * fl32(L / Lout))), L - 1). */
static int64_t upsample_source(int64_t d, int64_t l, int64_t lout)
{
    float scale = (float)l / (float)lout, pos = ((float)d + 0.5f) * scale;
    int64_t s = (int64_t)floorf(pos);
    return s < l - 1 ? s : l - 1;
}

/* The backward's map on A2/A3 and Ascend950 (CANN's gather form): input i owns the outputs
 * [first(i), first(i + 1)), first(i) = min(ceil(fl32(fl32(i * s) - 0.5)), Lout) with
 * s = fl32(Lout) / fl32(L); it differs from the forward's map on a boundary that rounding moves. */
static int64_t upsample_owner(int64_t d, int64_t l, int64_t lout)
{
    float s = (float)lout / (float)l;
    int64_t i = 0;
    while (i + 1 < l) {
        float first = ceilf((float)(i + 1) * s - 0.5f);
        if ((int64_t)first > d)
            break;
        i++;
    }
    return i;
}

static int verify_upsample(const soak_job *job, int backward)
{
    const soak_tensor *small = &job->t[backward ? 1 : 0];
    int64_t l = small->shape[2], lout = job->lout, rows = small->shape[0] * small->shape[1];
    int64_t n = rows * (backward ? l : lout);
    double *ref = calloc((size_t)n, sizeof *ref), *mag = calloc((size_t)n, sizeof *mag);
    for (int64_t row = 0; row < rows; row++)
        for (int64_t d = 0; d < lout; d++) {
            int64_t dst = row * lout + d;
            int64_t src = row * l + (backward ? upsample_owner(d, l, lout) : upsample_source(d, l, lout));
            if (backward) {
                ref[src] += in_at(job, 0, dst);
                mag[src] += fabs(in_at(job, 0, dst));
            } else {
                ref[dst] = in_at(job, 0, src);
            }
        }
    int wrong = check_output(job, &job->t[1], ref, backward ? mag : NULL);
    free(ref);
    free(mag);
    return wrong;
}

/* ---- Max pooling, forward then backward: t0 self, t1 out, t2 mask or indices, t3 gradOutput,
 *      t4 gradInput.  Values are distinct in each plane, so every window has one maximum. ---- */

static int64_t pool_size(int64_t in, int64_t k, int64_t s, int64_t p, int ceil_mode)
{
    int64_t o = (in + 2 * p - (k - 1) - 1 + (ceil_mode ? s - 1 : 0)) / s + 1;
    if (ceil_mode && (o - 1) * s >= in + p)
        o--;
    return o;
}

static void fill_distinct_planes(soak_tensor *t, soak_rng *r)
{
    int64_t plane = t->shape[t->rank - 1] * t->shape[t->rank - 2], n = tensor_numel(t);
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)plane);
    for (int64_t base = 0; base < n; base += plane) {
        for (int64_t i = 0; i < plane; i++)
            perm[i] = i;
        for (int64_t i = plane - 1; i > 0; i--) {
            int64_t j = rng_range(r, 0, i), tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        for (int64_t i = 0; i < plane; i++) /* at most 144 values: exact in bf16 */
            store_elem(t, storage_pos(t, base + i), (double)(perm[i] - plane / 2) / 8.0);
    }
    free(perm);
}

static int setup_max_pool(soak_job *job, soak_rng *r, int with_indices, int int64_indices)
{
    int rank = (int)rng_range(r, 3, 4);
    int64_t in[4], out[4], idx[4];
    job->ceil_mode = (int)rng_range(r, 0, 1);
    for (int a = 0; a < 2; a++) {
        job->k[a] = rng_range(r, 1, 3);
        job->s[a] = rng_range(r, 1, 3);
        job->p[a] = rng_range(r, 0, job->k[a] / 2);
        job->d[a] = 1;
    }
    for (int i = 0; i < rank; i++)
        in[i] = out[i] = rng_range(r, 1, 3);
    for (int a = 0; a < 2; a++) {
        in[rank - 2 + a] = rng_range(r, job->k[a], 12);
        out[rank - 2 + a] = pool_size(in[rank - 2 + a], job->k[a], job->s[a], job->p[a], job->ceil_mode);
    }
    memcpy(idx, out, sizeof out);
    if (!with_indices) { /* the mask: [.., kH*kW, (ceil(Ho*Wo/16) + 1) * 32] int8 */
        int64_t cells = out[rank - 2] * out[rank - 1];
        idx[rank - 2] = job->k[0] * job->k[1];
        idx[rank - 1] = ((cells + 15) / 16 + 1) * 32;
    }
    job_array(job, job->k, 2);
    job_array(job, job->s, 2);
    job_array(job, job->p, 2);
    job_array(job, job->d, 2);
    aclDataType idx_type = !with_indices ? ACL_INT8 : int64_indices ? ACL_INT64 : ACL_INT32;
    soak_tensor *x = job_tensor(job, job->dtype, rank, in, r, 0, 0);
    if (x == NULL)
        return -1;
    fill_distinct_planes(x, r);
    int ok = job_tensor(job, job->dtype, rank, out, r, 0, 1) && job_tensor(job, idx_type, rank, idx, r, 1, 1) &&
             job_tensor(job, job->dtype, rank, out, r, 0, 0) && job_tensor(job, job->dtype, rank, in, r, 0, 1);
    return ok ? 0 : -1;
}

static int verify_max_pool(const soak_job *job, int with_indices)
{
    const soak_tensor *x = &job->t[0], *out = &job->t[1];
    int rank = x->rank;
    int64_t h = x->shape[rank - 2], w = x->shape[rank - 1], ho = out->shape[rank - 2], wo = out->shape[rank - 1];
    int64_t planes = tensor_numel(x) / (h * w), nout = tensor_numel(out), nin = tensor_numel(x);
    double *ref = calloc((size_t)nout, sizeof *ref), *arg = calloc((size_t)nout, sizeof *arg);
    double *grad = calloc((size_t)nin, sizeof *grad), *mag = calloc((size_t)nin, sizeof *mag);
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oh = 0; oh < ho; oh++)
            for (int64_t ow = 0; ow < wo; ow++) {
                int64_t best = -1, o = (pl * ho + oh) * wo + ow;
                for (int64_t i = oh * job->s[0] - job->p[0]; i < oh * job->s[0] - job->p[0] + job->k[0]; i++)
                    for (int64_t j = ow * job->s[1] - job->p[1]; j < ow * job->s[1] - job->p[1] + job->k[1]; j++)
                        if (i >= 0 && i < h && j >= 0 && j < w &&
                            (best < 0 || in_at(job, 0, pl * h * w + i * w + j) > in_at(job, 0, pl * h * w + best)))
                            best = i * w + j;
                ref[o] = in_at(job, 0, pl * h * w + best);
                arg[o] = (double)best;
                grad[pl * h * w + best] += in_at(job, 3, o);
                mag[pl * h * w + best] += fabs(in_at(job, 3, o));
            }
    int wrong = check_output(job, out, ref, NULL) + check_output(job, &job->t[4], grad, mag);
    if (with_indices)
        wrong += check_output(job, &job->t[2], arg, NULL);
    free(ref);
    free(arg);
    free(grad);
    free(mag);
    return wrong;
}

/* ---- Im2col(Backward): t0 self [N,C,H,W] (or cols), t1 cols (or gradInput) ------------------ */

static int setup_im2col(soak_job *job, soak_rng *r, int backward)
{
    int rank = (int)rng_range(r, 3, 4), b = rank - 3; /* b: 1 with a batch dimension */
    int64_t img[4], cols[3], oh[2];
    for (int i = 0; i < rank - 2; i++)
        img[i] = rng_range(r, 1, 3);
    for (int a = 0; a < 2; a++)
        do {
            job->k[a] = rng_range(r, 1, 3);
            job->d[a] = rng_range(r, 1, 2);
            job->p[a] = rng_range(r, 0, 2);
            job->s[a] = rng_range(r, 1, 2);
            img[rank - 2 + a] = rng_range(r, 1, 10);
            oh[a] = (img[rank - 2 + a] + 2 * job->p[a] - (job->d[a] * (job->k[a] - 1) + 1)) / job->s[a] + 1;
        } while (img[rank - 2 + a] + 2 * job->p[a] < job->d[a] * (job->k[a] - 1) + 1);
    if (b)
        cols[0] = img[0];
    cols[b] = img[b] * job->k[0] * job->k[1];
    cols[b + 1] = oh[0] * oh[1];
    if (backward)
        job_array(job, &img[rank - 2], 2);
    job_array(job, job->k, 2);
    job_array(job, job->d, 2);
    job_array(job, job->p, 2);
    job_array(job, job->s, 2);
    int ok = backward ? job_tensor(job, job->dtype, rank - 1, cols, r, 0, 0) && job_tensor(job, job->dtype, rank, img, r, 0, 1)
                      : job_tensor(job, job->dtype, rank, img, r, 0, 0) && job_tensor(job, job->dtype, rank - 1, cols, r, 0, 1);
    return ok ? 0 : -1;
}

static int verify_im2col(const soak_job *job, int backward)
{
    const soak_tensor *img = &job->t[backward ? 1 : 0], *cols = &job->t[backward ? 0 : 1];
    int rank = img->rank;
    int64_t h = img->shape[rank - 2], w = img->shape[rank - 1], planes = tensor_numel(img) / (h * w);
    int64_t ow = (w + 2 * job->p[1] - (job->d[1] * (job->k[1] - 1) + 1)) / job->s[1] + 1;
    int64_t l = cols->shape[cols->rank - 1], ncols = tensor_numel(cols), nimg = tensor_numel(img);
    double *ref = calloc((size_t)(backward ? nimg : ncols), sizeof *ref), *mag = calloc((size_t)nimg, sizeof *mag);
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t ki = 0; ki < job->k[0]; ki++)
            for (int64_t kj = 0; kj < job->k[1]; kj++)
                for (int64_t pos = 0; pos < l; pos++) {
                    int64_t i = pos / ow * job->s[0] - job->p[0] + ki * job->d[0];
                    int64_t j = pos % ow * job->s[1] - job->p[1] + kj * job->d[1];
                    int64_t c = ((pl * job->k[0] + ki) * job->k[1] + kj) * l + pos, src = (pl * h + i) * w + j;
                    int inside = i >= 0 && i < h && j >= 0 && j < w;
                    if (backward && inside) {
                        ref[src] += in_at(job, 0, c);
                        mag[src] += fabs(in_at(job, 0, c));
                    } else if (!backward) {
                        ref[c] = inside ? in_at(job, 0, src) : 0.0;
                    }
                }
    int wrong = check_output(job, &job->t[1], ref, backward ? mag : NULL);
    free(ref);
    free(mag);
    return wrong;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

static int setup_job(soak_job *job, soak_rng *r)
{
    switch (job->op) {
    case OP_PRELU: case OP_PRELU_BW: return setup_prelu(job, r, job->op == OP_PRELU_BW);
    case OP_PAD: case OP_PAD_BW: return setup_pad(job, r, job->op == OP_PAD_BW);
    case OP_UP: case OP_UP_BW: return setup_upsample(job, r, job->op == OP_UP_BW);
    case OP_MP_MASK: return setup_max_pool(job, r, 0, 0);
    case OP_MP_INDICES:
        return setup_max_pool(job, r, 1, strcmp(job->product, "Ascend950") == 0 && rng_range(r, 0, 1));
    default: return setup_im2col(job, r, job->op == OP_IM2COL_BW);
    }
}

static int verify_job_values(const soak_job *job)
{
    switch (job->op) {
    case OP_PRELU: case OP_PRELU_BW: return verify_prelu(job, job->op == OP_PRELU_BW);
    case OP_PAD: case OP_PAD_BW: return verify_pad(job, job->op == OP_PAD_BW);
    case OP_UP: case OP_UP_BW: return verify_upsample(job, job->op == OP_UP_BW);
    case OP_MP_MASK: case OP_MP_INDICES: return verify_max_pool(job, job->op == OP_MP_INDICES);
    default: return verify_im2col(job, job->op == OP_IM2COL_BW);
    }
}

#endif /* TESTS_SOAK_OPS_H */
