"""The expected values of the operator tests, each reference written once, with NumPy alone.

Nothing here calls pyaclnn: a reference that shared the library's code would share its bugs.
Each function states the arithmetic it performs; the tests compare the library with it bit for
bit (and, in their own files, with PyTorch where PyTorch rounds the same way).

    im2col / col2im                  the window gather, and the sum of the columns back into
                                     the image in fp32 in the card's order on a product,
                                     rounded to the columns' dtype, then to out's
    max_pool_argmax, max_pool_mask   PyTorch's selection rule; the INT8 mask container
    max_pool_backward                the fp32 sum of the gradients in output order, rounded once
    prelu, prelu_backward            one multiply; the per-channel sum in float64
    replication_pad2d[_backward]     the clamped gather; its sum in gradOutput order
    replication_pad2d_backward_a2    the same sums as Atlas A2/A3's kernels order and round them
    upsample_nearest_exact1d[...]    the float32 source index; the backward as the card's kernel
                                     on a product computes it (gather map, A2/A3's slide product)

The three backward sums (max-pool, pad, upsample) are one scatter: `scatter_sum`.
"""
import numpy as np

from op_helpers import pooled_size, windows


# The products that only have saturation mode (docs/precision.md, "Overflow mode").
SATURATION_ONLY = ("Ascend910", "Ascend310P")


def saturation_mode(values):
    """Saturation mode's rule on computed fp16/bf16 results: +-Inf -> the largest finite value of
    its sign, NaN -> +0; other dtypes (fp32 stays IEEE) and finite values unchanged."""
    values = np.asarray(values)
    if values.dtype.itemsize != 2 or values.dtype.kind not in "fV":
        return values
    biggest = np.float32(float(np.finfo(np.float16).max) if values.dtype == np.float16 else 3.3895313892515355e38)
    wide = values.astype(np.float32)
    wide = np.where(np.isinf(wide), np.copysign(biggest, wide), wide)
    return np.where(np.isnan(wide), np.float32(0.0), wide).astype(values.dtype)


def pair(v):
    """An attribute given as one value or two, as a pair."""
    return (v, v) if np.ndim(v) == 0 else tuple(v)


def scatter_sum(values, targets, size, acc_dtype=np.float32):
    """out[p, t] = the sum, from +0 in acc_dtype, of values[p, j] over the j with targets[p, j]
    == t, added in increasing j; not rounded.  values is (planes, m); targets is (planes, m) or
    (m,) for every plane alike."""
    values = np.asarray(values)
    planes = values.shape[0]
    targets = np.broadcast_to(targets, values.shape)
    out = np.zeros(planes * size, dtype=acc_dtype)
    flat = (np.arange(planes)[:, None] * size + targets).reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):      # inf and NaN inputs are test cases
        np.add.at(out, flat, values.astype(acc_dtype).reshape(-1))
    return out.reshape(planes, size)


# ---------------------------------------------------------------------------------------------
# Im2col and Im2colBackward (col2im)
# ---------------------------------------------------------------------------------------------
def im2col(x, k, d, p, s):
    """The gather in x's own dtype: slices of the zero-padded image, (ki, kj) rows per channel.
    x is (C, H, W) or (N, C, H, W); k, d, p, s are pairs."""
    batched = x.ndim == 4
    xb = x if batched else x[None]
    n, c, h, w = xb.shape
    oh, ow = windows(h, k[0], d[0], p[0], s[0]), windows(w, k[1], d[1], p[1], s[1])
    xp = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), dtype=x.dtype)
    xp[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = xb
    out = np.empty((n, c, k[0], k[1], oh * ow), dtype=x.dtype)
    for ki in range(k[0]):
        for kj in range(k[1]):
            r0, c0 = ki * d[0], kj * d[1]
            patch = xp[:, :, r0:r0 + s[0] * (oh - 1) + 1:s[0], c0:c0 + s[1] * (ow - 1) + 1:s[1]]
            out[:, :, ki, kj, :] = patch.reshape(n, c, oh * ow)
    out = out.reshape(n, c * k[0] * k[1], oh * ow)
    return out if batched else out[0]


def col2im_order(soc, p):
    """The order the card adds an image cell's contributions in on `soc`, from CANN's kernels:
    "window" (increasing window position oh, then ow) for Ascend950's SIMT Col2im
    (ops-cv:image/col2im/op_kernel/arch35/col2im_simt.h) and for the A2/A3 TBE Col2im's
    atomic-add path, taken when both paddings are 0 (TBE impl/dynamic/col2im.py,
    _compute_each_task_with_atomic_add); "kernel" ((ki, kj) ascending) for its padded path
    (_compute_each_task: one kernel position after another) and on Ascend910/310P (no source:
    the library keeps kernel order)."""
    p = pair(p)
    if soc == "Ascend950" or (soc in ("Ascend910B", "Ascend910_93") and p == (0, 0)):
        return "window"
    return "kernel"


def col2im(cols, size, k, d, p, s, out_dtype=None, soc="Ascend910B"):
    """The card's Im2colBackward on `soc`: every image cell's contributions summed in fp32 from
    +0.0 in the card's order (col2im_order), rounded once to cols' dtype (the card's Col2im
    writes gradOutput's dtype), then converted to out_dtype (default: cols' dtype; l0 Cast, round
    to nearest even).  cols is (C*kH*kW, L) or (N, C*kH*kW, L); size is (H, W); k, d, p, s are
    pairs or single values."""
    k, d, p, s = pair(k), pair(d), pair(p), pair(s)
    batched = cols.ndim == 3
    cb = (cols if batched else cols[None]).astype(np.float32)
    n, ckk, _ = cb.shape
    c = ckk // (k[0] * k[1])
    h, w = size
    oh, ow = windows(h, k[0], d[0], p[0], s[0]), windows(w, k[1], d[1], p[1], s[1])
    cb = cb.reshape(n, c, k[0], k[1], oh, ow)
    acc = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), dtype=np.float32)
    rows, cols_at = np.arange(k[0]) * d[0], np.arange(k[1]) * d[1]
    with np.errstate(over="ignore", invalid="ignore"):      # inf and NaN inputs are test cases
        if col2im_order(soc, p) == "window":
            # one window after the other, each adding its kH x kW patch (distinct cells)
            for i in range(oh):
                for j in range(ow):
                    patch = np.ix_(rows + i * s[0], cols_at + j * s[1])
                    acc[:, :, patch[0], patch[1]] += cb[:, :, :, :, i, j]
        else:
            # one kernel position after the other, each adding its value in every window
            for ki in range(k[0]):
                for kj in range(k[1]):
                    r0, c0 = ki * d[0], kj * d[1]
                    acc[:, :, r0:r0 + s[0] * (oh - 1) + 1:s[0], c0:c0 + s[1] * (ow - 1) + 1:s[1]] += cb[:, :, ki, kj]
        out = acc[:, :, p[0]:p[0] + h, p[1]:p[1] + w].astype(cols.dtype).astype(out_dtype or cols.dtype)
    return out if batched else out[0]


# ---------------------------------------------------------------------------------------------
# MaxPool2dWithMask and its backward
# ---------------------------------------------------------------------------------------------
def pooled_shape(shape, k, s, p, ceil_mode):
    """The forward's output shape for an input of `shape` (k, s, p pairs)."""
    return tuple(shape[:-2]) + (pooled_size(shape[-2], k[0], s[0], p[0], ceil_mode),
                                pooled_size(shape[-1], k[1], s[1], p[1], ceil_mode))


def mask_shape(out_shape, k):
    """The INT8 mask container: (..., kH*kW, (ceil(Ho*Wo / 16) + 1) * 32)."""
    k = pair(k)
    ho, wo = out_shape[-2:]
    return tuple(out_shape[:-2]) + (k[0] * k[1], (-(-(ho * wo) // 16) + 1) * 32)


def max_pool_argmax(x, k, s, p, ceil_mode):
    """PyTorch's selection rule (start at -inf with the first in-range cell, take a value when it
    is greater or NaN), vectorised over (n, c, oh, ow), looping over the window cells; returns
    the plane-local flat index of each output."""
    xb = (x if x.ndim == 4 else x[None]).astype(np.float32)
    n, c, h, w = xb.shape
    ho, wo = pooled_size(h, k[0], s[0], p[0], ceil_mode), pooled_size(w, k[1], s[1], p[1], ceil_mode)
    best = np.full((n, c, ho, wo), -np.inf, dtype=np.float32)
    index = np.full((n, c, ho, wo), -1, dtype=np.int64)
    oh, ow = np.arange(ho), np.arange(wo)
    for a in range(k[0]):
        ih = oh * s[0] - p[0] + a
        for b in range(k[1]):
            iw = ow * s[1] - p[1] + b
            valid = ((ih >= 0) & (ih < h))[:, None] & ((iw >= 0) & (iw < w))[None, :]
            v = xb[:, :, np.clip(ih, 0, h - 1)][:, :, :, np.clip(iw, 0, w - 1)]
            flat = ih[:, None] * w + iw[None, :]
            index = np.where(valid & (index < 0), flat, index)
            take = valid & ((v > best) | np.isnan(v))
            best = np.where(take, v, best)
            index = np.where(take, flat, index)
    return index if x.ndim == 4 else index[0]


def max_pool_values(x, index):
    """The input values (raw, bit-exact) at the plane-local indices."""
    xb = x.reshape(-1, x.shape[-2] * x.shape[-1])
    ib = index.reshape(xb.shape[0], -1)
    return np.take_along_axis(xb, ib, axis=1).reshape(index.shape)


def max_pool_mask(index, k):
    """The mask container as CANN's own test harness builds it: the indices as a little-endian
    int32 stream from byte 0, zeros after."""
    mask = np.zeros(mask_shape(index.shape, k), dtype=np.int8)
    stream = np.frombuffer(np.asarray(index).astype("<i4").tobytes(), dtype=np.int8)
    mask.reshape(-1)[:stream.size] = stream
    return mask


def mask_indices(mask, count):
    """The first `count` indices of a mask's int32 stream (the inverse of max_pool_mask)."""
    return mask.view(np.uint8).reshape(-1)[:4 * count].view("<i4").astype(np.int64)


def legacy_mask(out_shape, k):
    """The 1x1 kernel's legacy mask (docs/compatibility.md, MaxPool2dWithMask): per (n, C/16 group), `groups` blocks of
    32 bytes of 0xFF and one of zeros."""
    mask = np.zeros(mask_shape(out_shape, k), dtype=np.uint8)
    batch = out_shape[0] if len(out_shape) == 4 else 1
    channels = out_shape[-3]
    groups = -(-(out_shape[-2] * out_shape[-1]) // 16)
    flat = mask.reshape(-1)
    for n in range(batch):
        for c1 in range(-(-channels // 16)):
            start = (n * (-(-channels // 16)) + c1) * (groups + 1) * 32
            flat[start:start + groups * 32] = 0xFF
    return mask.view(np.int8)


def max_pool_backward(grad, index, in_shape, dtype):
    """gradInput: per plane, the fp32 sum in output order of the gradients whose index names a
    cell, rounded once to dtype."""
    planes = int(np.prod(in_shape[:-2]))
    acc = scatter_sum(grad.reshape(planes, -1), index.reshape(planes, -1), in_shape[-2] * in_shape[-1])
    return acc.reshape(in_shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Prelu and PreluBackward
# ---------------------------------------------------------------------------------------------
def promote(a, b):
    """The dtype Prelu computes in: the common dtype, fp32 when they differ."""
    a, b = np.dtype(a), np.dtype(b)
    return a if a == b else np.dtype(np.float32)


def channel_view(x_shape, w):
    """w viewed so that it broadcasts along axis 1 (a 0-d array for one value or rank <= 1)."""
    flat = w.reshape(-1)
    if flat.size == 1 or len(x_shape) <= 1:
        return flat.reshape(())
    return flat.reshape((1, flat.size) + (1,) * (len(x_shape) - 2))


def prelu(x, w, out_dtype=None, soc="Ascend910B"):
    """Prelu as the card of `soc` computes it, in the promoted dtype (op_api casts both inputs to
    it), then cast to out_dtype.  Every product but the Ascend910 selects x > 0 ? x : x*w (the
    950's AscendC kernel, the TBE PRelu's after_v200 branch); the Ascend910 (TBE, pre-v200) adds
    vmaxs(x, 0) + vmul(vmins(x, 0), w), each op in the compute dtype (a NumPy fp16 op rounds its
    exact result once, as a native fp16 op does), with the documented choices for the vector
    max/min: max(-0, 0) = +0, min(-0, 0) = -0, NaN propagates."""
    compute = promote(x.dtype, w.dtype)
    xc = x.astype(compute)
    wc = np.asarray(channel_view(x.shape, w.astype(compute)), dtype=compute)
    with np.errstate(invalid="ignore", over="ignore"):     # 0 * inf: NaN, as on the card
        if soc == "Ascend910":
            zero = np.zeros((), compute)
            upper = np.where(xc <= 0, zero, xc).astype(compute)
            lower = np.where(xc > 0, zero, xc).astype(compute)
            y = (upper + (lower * wc).astype(compute)).astype(compute)
        else:
            y = np.where(xc > 0, xc, (wc * xc).astype(compute)).astype(compute)
    return y.astype(out_dtype or compute)


def in_dtype(v, dtype, saturate=False):
    """fp32 values as a tensor of `dtype` holds them, read back as fp32: rounded to nearest even;
    with `saturate` (Ascend910/310P) a finite fp16 overflow gives +-65504."""
    v = np.asarray(v, np.float32)
    if np.dtype(dtype) == np.float16 and saturate:
        with np.errstate(invalid="ignore"):
            big = np.isfinite(v) & (np.abs(v) > 65504)
        v = np.where(big, np.copysign(np.float32(65504), v), v).astype(np.float32)
    with np.errstate(over="ignore"):
        return v.astype(dtype).astype(np.float32)


def prelu_backward_terms(g, x, w, soc="Ascend910B"):
    """(gradInput in x's dtype, the fp32 update terms as the card's update tensor holds them),
    written from the sources' arithmetic, every op an fp32 NumPy op:
      Ascend950 (ops-nn:activation/p_relu_grad_update/op_kernel/arch35/prelu_grad_update_dag.h):
        dx = Select(x > 0, g, w*g), update = Select(x > 0, 0, x*g), both in the dtype;
      TBE prelu_grad_update (A2/A3/310P: after_v200; Ascend910: the other branch):
        pos = x > 0 as 1/0 (Ascend910: min(x, 2^-126), max(., 0), * 2^38 * 2^44 * 2^44),
        neg = 1 - pos (Ascend910: |pos - 1|), dx = (pos + neg*w) * g rounded to the dtype,
        update = (neg*x)*g + 0*dx rounded to the dtype; Ascend910/310P saturate fp16."""
    dtype = x.dtype
    saturate = soc in ("Ascend910", "Ascend310P")
    gb = np.broadcast_to(g, x.shape).astype(np.float32)
    xf = x.astype(np.float32)
    wf = np.asarray(channel_view(x.shape, w.astype(np.float32)), dtype=np.float32)
    f32 = np.float32
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        if soc == "Ascend950":
            dx = np.where(xf > 0, gb, wf * gb).astype(f32)
            terms = np.where(xf > 0, f32(0), in_dtype(xf * gb, dtype, saturate)).astype(f32)
            return dx.astype(dtype), terms
        if soc == "Ascend910":
            smallest_normal = f32(2.0 ** -126)
            clamped = np.where(xf > smallest_normal, smallest_normal, np.where(xf > 0, xf, f32(0)))
            clamped = np.where(np.isnan(xf), xf, clamped).astype(f32)
            pos = (clamped * f32(2.0 ** 38) * f32(2.0 ** 44) * f32(2.0 ** 44)).astype(f32)
            neg = np.abs(pos + f32(-1)).astype(f32)
        else:
            pos = np.where(xf > 0, f32(1), f32(0)).astype(f32)
            neg = np.where(xf > 0, f32(0), f32(1)).astype(f32)
        dx = ((pos + neg * wf) * gb).astype(f32)
        update = ((neg * xf) * gb + f32(0) * in_dtype(dx, dtype, saturate)).astype(f32)
        return dx.astype(dtype), in_dtype(update, dtype, saturate)


def prelu_backward(g, x, w, soc="Ascend910B"):
    """(gradInput, gradWeight in float64, the float64 sum of |term| per weight value): gradWeight
    is the per-channel sum of the card's update terms (prelu_backward_terms); the library's fp32
    sum (an order the sources leave open) is checked against the float64 one with a bound."""
    gi, terms = prelu_backward_terms(g, x, w, soc)
    if w.size == 1 or x.ndim <= 1:
        axes = tuple(range(x.ndim))
    else:
        axes = (0,) + tuple(range(2, x.ndim))
    terms = terms.astype(np.float64)
    gw = terms.sum(axis=axes).reshape(-1)
    mag = np.abs(terms).sum(axis=axes).reshape(-1)
    return gi, gw, mag


# ---------------------------------------------------------------------------------------------
# ReplicationPad2d and its backward
# ---------------------------------------------------------------------------------------------
def clamped_indices(size, before, after):
    """The source index of every padded position along one axis."""
    return np.clip(np.arange(-before, size + after), 0, size - 1)


def padded_shape(shape, pad):
    """The forward's output shape; pad is [left, right, top, bottom]."""
    return tuple(shape[:-2]) + (shape[-2] + pad[2] + pad[3], shape[-1] + pad[0] + pad[1])


def replication_pad2d(x, pad):
    """The clamped gather (a copy: any dtype)."""
    left, right, top, bottom = pad
    rows = clamped_indices(x.shape[-2], top, bottom)
    cols = clamped_indices(x.shape[-1], left, right)
    return x[..., rows, :][..., :, cols]


def replication_pad2d_backward(g, x_shape, pad, acc_dtype):
    """gradInput: every gradOutput value added to its source cell in gradOutput row-major order,
    in acc_dtype from +0; not rounded."""
    left, right, top, bottom = pad
    h, w = x_shape[-2], x_shape[-1]
    rows = clamped_indices(h, top, bottom)
    cols = clamped_indices(w, left, right)
    targets = (rows[:, None] * w + cols[None, :]).reshape(-1)
    planes = int(np.prod(x_shape[:-2]))
    return scatter_sum(g.reshape(planes, -1), targets, h * w, acc_dtype).reshape(x_shape)


def f32_to_f16(x, ties_away=False):
    """fp32 -> fp16 rounding, written out: to nearest, ties to even (AscendC CAST_RINT, and
    CAST_NONE where it rounds) or ties away from zero (CAST_ROUND).  Overflow gives Inf (the
    A2/A3 default INF/NaN mode); NaN stays NaN."""
    x = np.asarray(x, np.float32)
    mag = np.abs(x.astype(np.float64))
    finite = np.isfinite(mag) & (mag > 0)
    safe = np.where(finite, mag, 1.0)
    _, e = np.frexp(safe)                                # safe = m * 2**e, m in [0.5, 1)
    ulp = np.ldexp(1.0, np.maximum(e - 1, -14) - 10)     # fp16 spacing there (subnormals: 2**-24)
    q = safe / ulp                                       # exact: a power-of-two division
    low = np.floor(q)
    frac = q - low
    if ties_away:
        up = frac >= 0.5
    else:
        up = (frac > 0.5) | ((frac == 0.5) & (np.fmod(low, 2) == 1))
    rounded = (low + up) * ulp
    rounded = np.where(rounded > 65504.0, np.inf, rounded)
    out = np.where(finite, rounded, mag)                 # 0, Inf and NaN pass through
    return np.copysign(out, x.astype(np.float64)).astype(np.float16)


def replication_pad2d_backward_a2(g, x_shape, pad):
    """gradInput as Atlas A2/A3 compute it (PadV3GradReplicate, ops-math:conversion/
    pad_v3_grad_replicate), in g's dtype, for fp32/fp16/bf16 with AI-Core pads (no H padding,
    or every pad <= 7).  bf16 is widened to fp32 (op_api's Cast), summed as fp32 and rounded to
    nearest even.  The tiling key (H, W of gradOutput) picks the kernel:
      W unpadded (_h.h): an edge row is +0 + the rows from the outermost to the edge row
        (bottom: from the last row upwards; one gradInput row: +0 + every row downwards);
      H unpadded (_w.h): an edge column is the edge column + the left pad columns from 0
        inward, + the right pad columns from the last inward; fp16 edges round ties away;
      else (_h_w_mini.h when H, W <= 64; the small-H, large-H and large kernels otherwise): the
        rows as _w.h does the columns, then the columns of the result; fp16 row sums are
        rounded to fp16 (ties to even) before the column pass except in the mini kernel.
    Every sum in fp32, fp16 rounded to nearest even at the end unless said; elements that no
    addition touches are copied bit for bit (-0 stays -0)."""
    with np.errstate(over="ignore", invalid="ignore"):   # fp32/fp16 overflow gives Inf, as on the card
        left, right, top, bottom = pad
        dtype = g.dtype
        fp16 = dtype == np.float16
        Ho, Wo = g.shape[-2], g.shape[-1]
        H, W = Ho - top - bottom, Wo - left - right
        v = g.reshape(-1, Ho, Wo).astype(np.float32)
        touched = np.zeros((H, W), bool)

        def edge_first(a, axis, lo, hi, n_out):
            # a[..., lo] += a[..., i] for i < lo, then a[..., last - hi] += a[..., last - i], in the
            # kernels' statement order (each Add(dst, src_i, dst) is src_i + dst, the same bits)
            a = np.moveaxis(a.copy(), axis, -1)
            n_in = a.shape[-1]
            for i in range(lo):
                a[..., lo] = a[..., i] + a[..., lo]
            for i in range(hi):
                a[..., n_in - 1 - hi] = a[..., n_in - 1 - i] + a[..., n_in - 1 - hi]
            return np.moveaxis(a[..., lo:lo + n_out], -1, axis)

        if left == right == 0 and (top or bottom):              # W unpadded
            out = v[:, top:top + H, :].copy()
            zero = np.zeros_like(v[:, 0, :])
            if H == 1:
                acc = zero
                for r in range(Ho):
                    acc = acc + v[:, r, :]
                out[:, 0, :] = acc
            else:
                acc = zero
                for r in range(top + 1):
                    acc = acc + v[:, r, :]
                out[:, 0, :] = acc
                acc = zero
                for i in range(bottom + 1):
                    acc = acc + v[:, Ho - 1 - i, :]
                out[:, H - 1, :] = acc
            touched[[0, H - 1], :] = True
            narrowed = f32_to_f16(out) if fp16 else out.astype(dtype)
        elif top == bottom == 0 and (left or right):            # H unpadded
            out = edge_first(v, 2, left, right, W)
            touched[:, [0, W - 1]] = True
            narrowed = f32_to_f16(out, ties_away=True) if fp16 else out.astype(dtype)
        else:                                                   # both padded (or none)
            rows = edge_first(v, 1, top, bottom, H)
            mini = Ho <= 64 and Wo <= 64
            if fp16 and not mini:
                rows = f32_to_f16(rows).astype(np.float32)
            out = edge_first(rows, 2, left, right, W)
            touched[[0, H - 1], :] = True
            touched[:, [0, W - 1]] = True
            narrowed = f32_to_f16(out) if fp16 else out.astype(dtype)
        copied = g.reshape(-1, Ho, Wo)[:, top:top + H, left:left + W]
        return np.where(touched, narrowed, copied).reshape(tuple(x_shape))


def a2_runs_on_ai_core(pad, dtype):
    """Whether A2/A3 run PadV3GradReplicate (else AI-CPU, whose source is not public)."""
    left, right, top, bottom = pad
    ai_core_pads = (top == 0 and bottom == 0) or max(pad) <= 7
    return ai_core_pads and np.dtype(dtype).name in ("float32", "float16", "bfloat16")


# ---------------------------------------------------------------------------------------------
# UpsampleNearestExact1d and its backward
# ---------------------------------------------------------------------------------------------
def nearest_exact_source(L, Lout, scales):
    """min(floor(float32((d + 0.5) * scale)), L - 1) with a float32 scale: float(1 / scales)
    when scales > 0, else float(L) / float(Lout)."""
    scale = np.float32(1.0 / scales) if scales > 0 else np.float32(L) / np.float32(Lout)
    position = ((np.arange(Lout, dtype=np.float64) + 0.5) * np.float64(scale)).astype(np.float32)
    return np.minimum(np.floor(position).astype(np.int64), L - 1)


def upsample_nearest_exact1d(x, Lout, scales):
    """The gather along the last axis (a copy: any dtype)."""
    return x[..., nearest_exact_source(x.shape[-1], Lout, scales)]


def upsample_backward_scale(L, Lout, scales):
    """The card's scale, outputs per input: float32(scales), or float32(Lout) / float32(L) when
    that is not positive (CANN's op_api and both tilings)."""
    given = np.float32(scales) if scales > 0 else np.float32(0)
    return given if given > 0 else np.float32(Lout) / np.float32(L)


def upsample_backward_first_owned(L, Lout, scales):
    """first[i] for i = 0 .. L: input i owns gradients [first[i], first[i + 1]) in CANN's gather
    kernels - min(ceil(float32(float32(i * s) - 0.5)), Lout), each step in float32 (A2/A3: Muls,
    Adds, Ceil, Mins; Ascend950: ComputeOrig)."""
    s = upsample_backward_scale(L, Lout, scales)
    at = np.arange(L + 1, dtype=np.float32) * s
    first = np.ceil(at - np.float32(0.5))
    return np.minimum(first, np.float32(Lout)).astype(np.int64)


def upsample_backward_owner(L, Lout, scales):
    """owner[d]: the input cell whose gradient d is in CANN's gather kernels, -1 for a gradient
    no cell owns (dropped)."""
    first = upsample_backward_first_owned(L, Lout, scales)
    owner = np.full(Lout, -1, np.int64)
    for i in range(L):
        owner[first[i]:first[i + 1]] = i
    return owner


def a2_slide(scale):
    """The A2/A3 tiling's slide of gradInput cells per matrix product (getSlideSize)."""
    most = max(np.float32(1), scale)
    return 64 if most <= 5 else 48 if most <= 8 else 32 if most <= 20 else 16


def upsample_nearest_exact1d_backward(g, L, scales, soc="Ascend910B"):
    """gradInput as (rows, L), in fp32 (float64 for float64), not rounded, as the card computes it
    on `soc`:
      Ascend910/310P  (no kernel in the sources: the library's choice) every gradient added to its
                      forward source cell in increasing d order from +0 (PyTorch's scatter)
      Ascend950       the SIMT kernel: each cell i sums the gradients it owns
                      (upsample_backward_first_owned) in increasing d from +0; Lin == Lout with a
                      scale of 1 (within 1e-8) is a copy
      A2/A3           the Cube kernel: per slide of cells [c0, c1) (a2_slide), the product of
                      gradOutput[:, K] (K = [first[c0], first[c1]), or the single column first[c0]
                      (0 past the row) when that is empty) with the 0/1 matrix R[j][i] = cell i owns
                      j, each dot product added in increasing j from +0 (the Cube's own order is not
                      in the sources: this is the library's choice); a scale within 1e-6 of 1 is
                      gradOutput times 1"""
    rows = g.reshape(-1, g.shape[-1])
    Lout = rows.shape[1]
    acc_t = np.float32 if g.dtype != np.float64 else np.float64
    if soc in ("Ascend910", "Ascend310P"):
        return scatter_sum(rows, nearest_exact_source(L, Lout, scales), L, acc_t)
    first = upsample_backward_first_owned(L, Lout, scales)
    scale = upsample_backward_scale(L, Lout, scales)
    wide = rows.astype(acc_t)
    if soc == "Ascend950" and L == Lout and abs(scale - np.float32(1)) <= np.float32(1e-8):
        return wide
    owner = upsample_backward_owner(L, Lout, scales)
    if soc == "Ascend950" or abs(scale - np.float32(1)) < np.float32(1e-6):
        keep = owner >= 0
        return scatter_sum(rows[:, keep], owner[keep], L, acc_t)
    out = np.zeros((rows.shape[0], L), acc_t)
    size = a2_slide(scale)
    with np.errstate(invalid="ignore", over="ignore"):
        for c0 in range(0, L, size):
            c1 = min(c0 + size, L)
            k = list(range(first[c0], first[c1])) or [first[c0] if first[c0] < Lout else 0]
            ratio = np.array([[owner[j] == i for i in range(c0, c1)] for j in k], acc_t)
            for r, j in enumerate(k):
                out[:, c0:c1] += wide[:, j:j + 1] * ratio[r]
    return out
