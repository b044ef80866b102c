"""Benchmarks: aclnnReplicationPad2d[Backward] and aclnnUpsampleNearestExact1d[Backward] against
torch's replication_pad2d[_backward] and _upsample_nearest_exact1d[_backward].

Shapes from issue 3:
* pad: N8 C64 128x128, padding (1, 1, 1, 1), fp32 / fp16 / bf16, backward and forward;
* upsample: N16 C256, 4096 -> 8192 and 1000 -> 2999 (scales derived from the sizes), fp32 / bf16,
  backward and forward.
Both sides write into preallocated outputs (torch's ``grad_input=`` / ``out=`` overloads; ours
via a repeatable executor).  Ideal bytes: read the input once, write the output once.
"""
import ml_dtypes
import numpy as np
import torch

import pyaclnn
from harness import BenchCase, op_runner

DTYPES = {"float32": (np.float32, torch.float32), "float16": (np.float16, torch.float16),
          "bfloat16": (ml_dtypes.bfloat16, torch.bfloat16)}
PAD_SHAPE, PAD = (8, 64, 128, 128), [1, 1, 1, 1]
UPSAMPLE_ROWS = (16, 256)


def _data(shape, dtype, seed):
    np_dtype, t_dtype = DTYPES[dtype]
    values = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    return torch.from_numpy(values).to(t_dtype), pyaclnn.Tensor.from_numpy(values.astype(np_dtype))


def _closer(runner, *tensors):
    def cleanup():
        runner.close()
        for t in tensors:
            t.close()
    return cleanup


def _padded(shape):
    return shape[:-2] + (shape[-2] + PAD[2] + PAD[3], shape[-1] + PAD[0] + PAD[1])


def make_pad_backward(dtype):
    def make():
        np_dtype = DTYPES[dtype][0]
        G, gt = _data(_padded(PAD_SHAPE), dtype, 1)
        X, xt = _data(PAD_SHAPE, dtype, 2)
        gi = pyaclnn.Tensor.empty(PAD_SHAPE, np_dtype)
        ours = op_runner("ReplicationPad2dBackward", gt, xt, PAD, gi)
        GI = torch.empty_like(X)

        def theirs():
            torch.ops.aten.replication_pad2d_backward.grad_input(G, X, PAD, grad_input=GI)
        return ours, theirs, (G.numel() + X.numel()) * G.element_size(), _closer(ours, gt, xt, gi)
    return make


def make_pad_forward(dtype):
    def make():
        np_dtype = DTYPES[dtype][0]
        X, xt = _data(PAD_SHAPE, dtype, 2)
        out = pyaclnn.Tensor.empty(_padded(PAD_SHAPE), np_dtype)
        ours = op_runner("ReplicationPad2d", xt, PAD, out)
        OUT = torch.empty(_padded(PAD_SHAPE), dtype=X.dtype)

        def theirs():
            torch.ops.aten.replication_pad2d.out(X, PAD, out=OUT)
        return ours, theirs, (X.numel() + OUT.numel()) * X.element_size(), _closer(ours, xt, out)
    return make


def make_upsample_backward(length, out_length, dtype):
    def make():
        np_dtype = DTYPES[dtype][0]
        in_shape = UPSAMPLE_ROWS + (length,)
        G, gt = _data(UPSAMPLE_ROWS + (out_length,), dtype, 3)
        gi = pyaclnn.Tensor.empty(in_shape, np_dtype)
        ours = op_runner("UpsampleNearestExact1dBackward", gt, [out_length], list(in_shape), 0.0, gi)
        GI = torch.empty(in_shape, dtype=G.dtype)

        def theirs():
            torch.ops.aten._upsample_nearest_exact1d_backward.grad_input(
                G, [out_length], list(in_shape), None, grad_input=GI)
        return ours, theirs, (G.numel() + GI.numel()) * G.element_size(), _closer(ours, gt, gi)
    return make


def make_upsample_forward(length, out_length, dtype):
    def make():
        np_dtype = DTYPES[dtype][0]
        out_shape = UPSAMPLE_ROWS + (out_length,)
        X, xt = _data(UPSAMPLE_ROWS + (length,), dtype, 4)
        out = pyaclnn.Tensor.empty(out_shape, np_dtype)
        ours = op_runner("UpsampleNearestExact1d", xt, [out_length], 0.0, out)
        OUT = torch.empty(out_shape, dtype=X.dtype)

        def theirs():
            torch.ops.aten._upsample_nearest_exact1d.out(X, [out_length], None, out=OUT)
        return ours, theirs, (X.numel() + OUT.numel()) * X.element_size(), _closer(ours, xt, out)
    return make


CASES = []
for _dtype in ("float32", "float16", "bfloat16"):
    CASES.append(BenchCase(name="replication_pad2d_backward N8 C64 128x128 pad1", dtype=_dtype,
                           make=make_pad_backward(_dtype), quick=_dtype != "float16"))
    CASES.append(BenchCase(name="replication_pad2d N8 C64 128x128 pad1", dtype=_dtype,
                           make=make_pad_forward(_dtype), quick=_dtype == "float32"))
for _length, _out_length in ((4096, 8192), (1000, 2999)):
    for _dtype in ("float32", "bfloat16"):
        CASES.append(BenchCase(
            name="upsample_nearest_exact1d_backward N16 C256 %d->%d" % (_length, _out_length),
            dtype=_dtype, make=make_upsample_backward(_length, _out_length, _dtype)))
        CASES.append(BenchCase(
            name="upsample_nearest_exact1d N16 C256 %d->%d" % (_length, _out_length),
            dtype=_dtype, make=make_upsample_forward(_length, _out_length, _dtype),
            quick=_dtype == "float32"))
