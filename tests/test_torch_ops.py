"""pyaclnn's operators as torch custom operators (pyaclnn/torch_ops.py, torch.ops.aclnn.*).

torch.library.opcheck runs all its checks (schema and aliasing, autograd registration, the fake
implementation against the real kernel, AOT dispatch static and dynamic) on representative
samples of every operator; the values themselves are checked against torch's own operators.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import pyaclnn.functional as F
import pyaclnn.torch_ops as T

ops = torch.ops.aclnn
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALL_CHECKS = ("test_schema", "test_autograd_registration", "test_faketensor",
              "test_aot_dispatch_static", "test_aot_dispatch_dynamic")


def _rand(*shape, grad=True, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g).to(dtype).requires_grad_(grad)


def _pool_pair(op, x, attrs):
    out, second = op(x.detach(), *attrs)
    return _rand(*out.shape, grad=False, seed=5), second


def _samples():
    """(id, operator, args) - forward samples with inputs that require grad (the AOT checks
    differentiate them), backward samples with plain inputs."""
    x = _rand(2, 3, 7, 9)
    x3 = _rand(3, 6, 5)
    pool = ([3, 3], [2, 2], [1, 1], [1, 1], False)
    pool_ceil = ([2, 3], [2, 2], [0, 1], [1, 1], True)
    yield "pad", ops.replication_pad2d, (x, [1, 2, 0, 3])
    yield "pad 3-D", ops.replication_pad2d, (x3, [2, 0, 1, 1])
    yield "pad bf16", ops.replication_pad2d, (_rand(1, 2, 4, 4, dtype=torch.bfloat16), [1, 1, 1, 1])
    yield "pad_backward", ops.replication_pad2d_backward, (
        _rand(2, 3, 10, 12, grad=False), x.detach(), [1, 2, 0, 3])
    yield "upsample", ops.upsample_nearest_exact1d, (_rand(2, 3, 5), [7], None)
    yield "upsample down", ops.upsample_nearest_exact1d, (_rand(1, 4, 9), [4], None)
    yield "upsample_backward", ops.upsample_nearest_exact1d_backward, (
        _rand(2, 3, 7, grad=False), [7], [2, 3, 5], None)
    yield "mask pool", ops.max_pool2d_with_mask, (x,) + pool
    yield "mask pool ceil", ops.max_pool2d_with_mask, (x,) + pool_ceil
    yield "mask pool fp16", ops.max_pool2d_with_mask, (_rand(1, 2, 6, 6, dtype=torch.float16),) + pool
    g, mask = _pool_pair(ops.max_pool2d_with_mask, x, pool)
    yield "mask pool_backward", ops.max_pool2d_with_mask_backward, (g, x.detach(), mask) + pool
    yield "indices pool", ops.max_pool2d_with_indices, (x,) + pool
    yield "indices pool ceil", ops.max_pool2d_with_indices, (x,) + pool_ceil
    yield "indices pool int64", ops.max_pool2d_with_indices, (x,) + pool + (torch.int64,)
    yield "indices pool bf16", ops.max_pool2d_with_indices, (
        _rand(1, 2, 6, 6, dtype=torch.bfloat16),) + pool
    g, indices = _pool_pair(ops.max_pool2d_with_indices, x, pool)
    yield "indices pool_backward", ops.max_pool2d_with_indices_backward, (
        g, x.detach(), indices) + pool
    yield "im2col", ops.im2col, (x, [3, 3], [1, 1], [1, 1], [1, 1])
    yield "im2col 3-D strided", ops.im2col, (x3, [2, 3], [1, 2], [0, 1], [2, 1])
    yield "im2col_backward", ops.im2col_backward, (
        _rand(2, 27, 63, grad=False), [7, 9], [3, 3], [1, 1], [1, 1], [1, 1])
    yield "prelu", ops.prelu, (x, _rand(3))
    yield "prelu shared weight", ops.prelu, (x, _rand(1))
    yield "prelu mixed dtypes", ops.prelu, (_rand(2, 3, 4, dtype=torch.float16),
                                            _rand(3, dtype=torch.bfloat16))
    cl = _rand(2, 3, 6, 7, grad=False).to(memory_format=torch.channels_last).requires_grad_()
    yield "pad channels_last", ops.replication_pad2d, (cl, [1, 1, 2, 0])
    yield "indices pool channels_last", ops.max_pool2d_with_indices, (cl,) + pool
    yield "mask pool channels_last", ops.max_pool2d_with_mask, (cl,) + pool
    yield "prelu channels_last", ops.prelu, (cl, _rand(3))
    yield "prelu_backward", ops.prelu_backward, (_rand(2, 3, 7, 9, grad=False), x.detach(),
                                                 _rand(3, grad=False))


SAMPLES = list(_samples())


@pytest.mark.parametrize("op,args", [s[1:] for s in SAMPLES], ids=[s[0] for s in SAMPLES])
def test_opcheck(op, args):
    torch.library.opcheck(op, args, test_utils=ALL_CHECKS)


def test_every_operator_is_registered_and_sampled():
    sampled = {op._qualified_op_name.split("::")[1] for _, op, _ in SAMPLES}
    assert sampled == set(T.OPERATORS)
    for name in T.OPERATORS:
        overload = getattr(ops, name).default
        assert torch.Tag.pt2_compliant_tag in overload.tags
        assert not overload._schema.is_mutable


def test_values_equal_torch():
    x = _rand(2, 3, 7, 9, grad=False)
    assert torch.equal(ops.replication_pad2d(x, [1, 2, 0, 3]),
                       TF.pad(x, (1, 2, 0, 3), mode="replicate"))
    out, indices = ops.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], True,
                                               torch.int64)
    ref, ref_indices = TF.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
    assert torch.equal(out, ref) and torch.equal(indices, ref_indices)
    assert torch.equal(ops.im2col(x, [3, 3], [1, 1], [1, 1], [1, 1]), TF.unfold(x, 3, 1, 1, 1))
    w = torch.tensor([0.5, -1.0, 2.0])
    assert torch.equal(ops.prelu(x, w), TF.prelu(x, w))
    x1 = x[:, :, 0]
    assert torch.equal(ops.upsample_nearest_exact1d(x1, [13], None),
                       TF.interpolate(x1, size=13, mode="nearest-exact"))


DOUBLE = [
    ("pad", lambda x: ops.replication_pad2d(x, [1, 2, 0, 1]), (1, 2, 4, 5)),
    ("upsample", lambda x: ops.upsample_nearest_exact1d(x, [7], None), (1, 2, 5)),
    ("im2col", lambda x: ops.im2col(x, [2, 2], [1, 1], [1, 1], [1, 1]), (1, 2, 4, 4)),
    ("indices pool", lambda x: ops.max_pool2d_with_indices(x, [2, 2], [1, 1], [0, 0], [1, 1],
                                                           False)[0], (1, 2, 4, 4)),
    ("mask pool", lambda x: ops.max_pool2d_with_mask(x, [2, 2], [1, 1], [0, 0], [1, 1],
                                                     False)[0], (1, 2, 4, 4)),
    ("prelu", lambda x: ops.prelu(x, torch.tensor([0.25, -0.5])) ** 2, (1, 2, 3, 3)),
]


@pytest.mark.parametrize("fn,shape", [d[1:] for d in DOUBLE], ids=[d[0] for d in DOUBLE])
@pytest.mark.filterwarnings("ignore:Input #")
def test_second_derivative(fn, shape):
    # gradgradcheck in float32 (not every operator takes float64) against finite differences:
    # the operators are piecewise linear (PReLU squared: piecewise quadratic), so the
    # differences are exact up to rounding; the mask pooling and PReLU backwards raised
    # NotImplementedError here before they had their double backward
    x = _rand(*shape).detach().requires_grad_()
    assert torch.autograd.gradgradcheck(fn, (x,), eps=1e-2, atol=1e-3, rtol=1e-3)


def test_functional_torch_calls_go_through_the_operators():
    x = _rand(1, 2, 5, 5)
    y = F.replication_pad2d(x, (1, 1, 1, 1))
    assert "aclnn_replication_pad2d" in type(y.grad_fn).__name__
    out, mask = F.max_pool2d_with_mask(x, 2)
    assert "aclnn_max_pool2d_with_mask" in type(out.grad_fn).__name__
    # numpy mixed with a tensor that requires grad: the numpy side becomes a tensor
    w = torch.full((2,), 0.25, requires_grad=True)
    F.prelu(x.detach().numpy(), w).sum().backward()
    assert torch.allclose(w.grad, torch.where(x > 0, 0.0, x).sum((0, 2, 3)).detach())


NO_TORCH = """
import builtins, sys
real_import = builtins.__import__
def refuse_torch(name, *args, **kwargs):
    if name == "torch" or name.startswith("torch."):
        raise ImportError("torch is hidden in this test")
    return real_import(name, *args, **kwargs)
builtins.__import__ = refuse_torch
import numpy as np, pyaclnn, pyaclnn.functional as F
x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
assert F.replication_pad2d(x, (1, 0, 0, 0)).tolist() == [[[[0, 0, 1], [2, 2, 3]]]]
out, mask = F.max_pool2d_with_mask(x, 2)
assert out.ravel().tolist() == [3.0]
assert "torch" not in sys.modules
print("ok")
"""


def test_import_and_numpy_calls_work_with_torch_hidden():
    result = subprocess.run([sys.executable, "-c", NO_TORCH], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stdout + result.stderr


def test_dispatch_modes_and_the_profiler_see_the_operator():
    # a plain eager call skips the dispatcher (pyaclnn._torch_kernels.call); anything that
    # watches it must still see the op
    from op_helpers import DispatchLog

    x, w = _rand(1, 2, 4, 4, grad=False), _rand(2, grad=False)
    with DispatchLog() as log:
        y = F.prelu(x, w)
    assert "aclnn.prelu.default" in log.ops and torch.equal(y, TF.prelu(x, w))
    with torch.profiler.profile() as prof:
        F.replication_pad2d(x, (1, 1, 1, 1))
    assert any(e.name == "aclnn::replication_pad2d" for e in prof.events())
