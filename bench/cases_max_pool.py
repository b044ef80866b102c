"""Benchmarks: aclnnMaxPool2dWithMask[Backward] against torch's max_pool2d_with_indices[_backward].

Shapes from issue 4: N32 C64 112x112 k3 s2 p1 (overlapping windows, the ResNet stem pool) and
N32 C256 56x56 k2 s2 (tiling), fp32 and bf16, forward and backward.  Both sides write into
preallocated outputs (torch's ``grad_input=`` / ``out=`` overloads; ours via a repeatable
executor).  Ideal bytes:
* backward: read gradOutput and the indices (our int32 stream: 4 B per output; torch reads
  8 B int64 indices, it is charged the same 4 B so the GB/s columns compare the kernels on equal
  terms), write gradInput;
* forward: read self, write out and the whole INT8 mask container [N, C, kH*kW,
  32*(ceil(Ho*Wo/16)+1)] - the int32 stream and its zero tail, all of which the forward writes
  (CANN's layout imposes the tail: 4.5x the stream for a 3x3 kernel).  torch writes 8 B int64
  indices instead; its GB/s column is computed from the same byte count.
"""
import ml_dtypes
import numpy as np
import torch

import pyaclnn
from harness import BenchCase, op_runner

GEOMETRIES = [((32, 64, 112, 112), 3, 2, 1), ((32, 256, 56, 56), 2, 2, 0)]
DTYPES = {"float32": (np.float32, torch.float32), "float16": (np.float16, torch.float16),
          "bfloat16": (ml_dtypes.bfloat16, torch.bfloat16)}


def _pooled(size, k, s, p):
    return (size + 2 * p - k) // s + 1


def _setup(shape, k, s, p, dtype):
    np_dtype, t_dtype = DTYPES[dtype]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=np.float32)
    n, c, h, w = shape
    ho, wo = _pooled(h, k, s, p), _pooled(w, k, s, p)
    mask_w = (-(-(ho * wo) // 16) + 1) * 32
    X = torch.from_numpy(x).to(t_dtype)
    xt = pyaclnn.Tensor.from_numpy(x.astype(np_dtype))
    out = pyaclnn.Tensor.empty((n, c, ho, wo), np_dtype)
    mask = pyaclnn.Tensor.empty((n, c, k * k, mask_w), np.int8)
    return X, xt, out, mask, (n, c, ho, wo), np.dtype(np_dtype).itemsize


def make_forward(shape, k, s, p, dtype):
    def make():
        X, xt, out, mask, oshape, es = _setup(shape, k, s, p, dtype)
        ours = op_runner("MaxPool2dWithMask", xt, [k, k], [s, s], [p, p], [1, 1], False, out, mask)
        t_out = torch.empty(oshape, dtype=X.dtype)
        t_idx = torch.empty(oshape, dtype=torch.int64)

        def theirs():
            torch.ops.aten.max_pool2d_with_indices.out(X, [k, k], [s, s], [p, p], [1, 1], False,
                                                       out=t_out, indices=t_idx)

        count = int(np.prod(oshape))
        bytes_moved = X.numel() * es + count * es + int(np.prod(mask.shape))  # int8 container

        def cleanup():
            ours.close()
            for t in (xt, out, mask):
                t.close()
        return ours, theirs, bytes_moved, cleanup
    return make


def make_backward(shape, k, s, p, dtype):
    def make():
        X, xt, out, mask, oshape, es = _setup(shape, k, s, p, dtype)
        np_dtype, t_dtype = DTYPES[dtype]
        pyaclnn.run_op("MaxPool2dWithMask", xt, [k, k], [s, s], [p, p], [1, 1], False, out, mask)
        grad = np.random.default_rng(1).standard_normal(oshape, dtype=np.float32)
        go = pyaclnn.Tensor.from_numpy(grad.astype(np_dtype))
        gi = pyaclnn.Tensor.empty(shape, np_dtype)
        ours = op_runner("MaxPool2dWithMaskBackward", go, xt, mask, [k, k], [s, s], [p, p], [1, 1], False, gi)
        _, t_idx = torch.ops.aten.max_pool2d_with_indices(X, [k, k], [s, s], [p, p], [1, 1], False)
        G = torch.from_numpy(grad).to(t_dtype)
        t_gi = torch.empty_like(X)

        def theirs():
            torch.ops.aten.max_pool2d_with_indices_backward(G, X, [k, k], [s, s], [p, p], [1, 1], False, t_idx,
                                                            grad_input=t_gi)

        count = int(np.prod(oshape))
        bytes_moved = count * es + count * 4 + X.numel() * es

        def cleanup():
            ours.close()
            for t in (xt, out, mask, go, gi):
                t.close()
        return ours, theirs, bytes_moved, cleanup
    return make


def _name(direction, shape, k, s, p):
    n, c, h, w = shape
    return "max_pool2d %s N%d C%d %dx%d k%ds%dp%d" % (direction, n, c, h, w, k, s, p)


CASES = []
for _shape, _k, _s, _p in GEOMETRIES:
    for _dtype in DTYPES:
        if _dtype != "float16":  # the backward rows stay as they were
            CASES.append(BenchCase(name=_name("bw", _shape, _k, _s, _p), dtype=_dtype,
                                   make=make_backward(_shape, _k, _s, _p, _dtype)))
        # the 2x2 stride-2 fp16 forward (the paired path, docs/kernels_max_pool.md) promises 0.7
        # of the STREAM copy at 1 thread, with or without AVX512-FP16
        _fp16_pairs = _dtype == "float16" and (_k, _s, _p) == (2, 2, 0)
        CASES.append(BenchCase(name=_name("fw", _shape, _k, _s, _p), dtype=_dtype,
                               make=make_forward(_shape, _k, _s, _p, _dtype), quick=False,
                               stream_bar=0.7 if _fp16_pairs else None, stream_bar_threads=(1,)))
