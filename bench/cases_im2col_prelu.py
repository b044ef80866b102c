"""Benchmarks: aclnnIm2colBackward (col2im), aclnnIm2col, aclnnPreluBackward and aclnnPrelu
against PyTorch CPU, outputs preallocated on both sides (see harness.py).

PyTorch references:
  col2im / im2col  torch.ops.aten.col2im.out / im2col.out
  prelu backward   torch.ops.aten._prelu_kernel_backward + the channel reduction autograd
                   performs to produce the same per-channel gradWeight (sum_to_size)
  prelu forward    torch.ops.aten._prelu_kernel
"""
import ml_dtypes
import numpy as np
import torch

import pyaclnn
from harness import BenchCase, op_runner

DTYPES = {"float32": (np.float32, torch.float32), "float16": (np.float16, torch.float16),
          "bfloat16": (ml_dtypes.bfloat16, torch.bfloat16)}


def _random(shape, dtype_name, seed):
    np_dtype, torch_dtype = DTYPES[dtype_name]
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return data.astype(np_dtype), torch.from_numpy(data).to(torch_dtype)


def _windows(size, k, d, p, s):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _closer(*objs):
    def cleanup():
        for o in objs:
            o.close()
    return cleanup


# ---- col2im / im2col ---------------------------------------------------------------------------
def make_col2im(n, c, hw, k, s, p, dtype):
    def make():
        oh = _windows(hw, k, 1, p, s)
        cols, cols_t = _random((n, c * k * k, oh * oh), dtype, 0)
        np_dtype, torch_dtype = DTYPES[dtype]
        g = pyaclnn.Tensor.from_numpy(cols)
        out = pyaclnn.Tensor.empty((n, c, hw, hw), np_dtype)
        ours = op_runner("Im2colBackward", g, [hw, hw], [k, k], [1, 1], [p, p], [s, s], out)
        out_t = torch.empty((n, c, hw, hw), dtype=torch_dtype)

        def theirs():
            torch.ops.aten.col2im.out(cols_t, [hw, hw], [k, k], [1, 1], [p, p], [s, s], out=out_t)

        moved = cols.nbytes + n * c * hw * hw * cols.itemsize
        return ours, theirs, moved, _closer(ours, g, out)
    return make


def make_im2col(n, c, hw, k, s, p, dtype):
    def make():
        oh = _windows(hw, k, 1, p, s)
        x, x_t = _random((n, c, hw, hw), dtype, 1)
        np_dtype, torch_dtype = DTYPES[dtype]
        xt = pyaclnn.Tensor.from_numpy(x)
        out = pyaclnn.Tensor.empty((n, c * k * k, oh * oh), np_dtype)
        ours = op_runner("Im2col", xt, [k, k], [1, 1], [p, p], [s, s], out)
        out_t = torch.empty((n, c * k * k, oh * oh), dtype=torch_dtype)

        def theirs():
            torch.ops.aten.im2col.out(x_t, [k, k], [1, 1], [p, p], [s, s], out=out_t)

        moved = x.nbytes + n * c * k * k * oh * oh * x.itemsize
        return ours, theirs, moved, _closer(ours, xt, out)
    return make


# ---- prelu ---------------------------------------------------------------------------------------
def _weight_view(shape, channels):
    return (channels,) + (1,) * (len(shape) - 2) if channels > 1 else (1,)


def make_prelu_backward(shape, channels, dtype):
    def make():
        np_dtype, torch_dtype = DTYPES[dtype]
        x, x_t = _random(shape, dtype, 2)
        g, g_t = _random(shape, dtype, 3)
        w, w_t = _random((channels,), dtype, 4)
        ts = [pyaclnn.Tensor.from_numpy(g), pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.from_numpy(w),
              pyaclnn.Tensor.empty(shape, np_dtype), pyaclnn.Tensor.empty((channels,), np_dtype)]
        ours = op_runner("PreluBackward", *ts)
        w_view = w_t.reshape(_weight_view(shape, channels))
        reduce_dims = [0] + list(range(2, len(shape))) if channels > 1 else list(range(len(shape)))

        def theirs():
            gi, gw_full = torch.ops.aten._prelu_kernel_backward(g_t, x_t, w_view)
            return gi, gw_full.sum(dim=reduce_dims)

        moved = 3 * x.nbytes + 2 * w.nbytes
        return ours, theirs, moved, _closer(ours, *ts)
    return make


def make_prelu(shape, channels, dtype):
    def make():
        np_dtype, torch_dtype = DTYPES[dtype]
        x, x_t = _random(shape, dtype, 5)
        w, w_t = _random((channels,), dtype, 6)
        ts = [pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.from_numpy(w), pyaclnn.Tensor.empty(shape, np_dtype)]
        ours = op_runner("Prelu", *ts)
        w_view = w_t.reshape(_weight_view(shape, channels))

        def theirs():
            return torch.ops.aten._prelu_kernel(x_t, w_view)

        return ours, theirs, 2 * x.nbytes, _closer(ours, *ts)
    return make


# The memory-bound rows' STREAM bars (docs/kernels_im2col_prelu.md, "What bounds them"): the
# k3s1p1 Im2col (shifted copies, output 9x the input: store-bound) at 0.9 of the same-moment
# STREAM copy for fp32 and 0.7 for fp16/bf16 at 1 and 2 threads; the k3s1p1 fp32 col2im (the sum
# of nine shifted planes: read-bound) at 0.9 at 1 thread.
STREAM_BARS = {("im2col", 1, "float32"): (0.9, (1, 2)), ("im2col", 1, "float16"): (0.7, (1, 2)),
               ("im2col", 1, "bfloat16"): (0.7, (1, 2)), ("col2im", 1, "float32"): (0.9, (1,))}

CASES = []
for _dtype in ("float32", "float16", "bfloat16"):
    for (_n, _c, _hw, _k, _s, _p) in ((8, 64, 56, 3, 1, 1), (8, 256, 28, 3, 2, 1)):
        _tag = "N%d C%d %dx%d k%ds%dp%d" % (_n, _c, _hw, _hw, _k, _s, _p)
        _c2i_bar, _c2i_threads = STREAM_BARS.get(("col2im", _s, _dtype), (None, ()))
        _i2c_bar, _i2c_threads = STREAM_BARS.get(("im2col", _s, _dtype), (None, ()))
        CASES.append(BenchCase(name="col2im " + _tag, dtype=_dtype,
                               make=make_col2im(_n, _c, _hw, _k, _s, _p, _dtype),
                               stream_bar=_c2i_bar, stream_bar_threads=_c2i_threads))
        CASES.append(BenchCase(name="im2col " + _tag, dtype=_dtype,
                               make=make_im2col(_n, _c, _hw, _k, _s, _p, _dtype),
                               quick=_dtype == "float32",
                               stream_bar=_i2c_bar, stream_bar_threads=_i2c_threads))
for _dtype in ("float32", "bfloat16", "float16"):
    for (_shape, _channels, _tag) in (((32, 64, 112, 112), 64, "N32 C64 112x112 w[C]"),
                                      ((32, 64, 112, 112), 1, "N32 C64 112x112 w[1]"),
                                      ((4096, 1024), 1024, "2D 4096x1024 w[C]")):
        CASES.append(BenchCase(name="prelu_backward " + _tag, dtype=_dtype,
                               make=make_prelu_backward(_shape, _channels, _dtype),
                               quick=_dtype != "float16"))
        CASES.append(BenchCase(name="prelu " + _tag, dtype=_dtype,
                               make=make_prelu(_shape, _channels, _dtype),
                               quick=_dtype == "float32"))
