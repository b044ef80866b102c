"""Autocast: pyaclnn's operators follow torch's CPU autocast policy for the functions they
replace, compared with torch's own functions and modules under the same ``torch.autocast``.

Before, a converted Conv2d+PReLU+MaxPool2d returned float32 under bfloat16 autocast where torch
returns bfloat16 (the PReLU mixed a bf16 input with its fp32 weight), and replication_pad2d
stayed bf16 where torch's returns float32.
"""

import copy

import pytest
import torch
import torch.nn.functional as TF
from torch import nn

import pyaclnn.functional as F
import pyaclnn.nn as pnn

DTYPES = [torch.bfloat16, torch.float16]
WEIGHT = torch.tensor([0.25, -0.5, 1.5])

# name -> (pyaclnn's call, torch's); both run twice (the second call is the one a lane takes)
CALLS = {
    "pad": (lambda x: F.replication_pad2d(x, (1, 1, 2, 0)),
            lambda x: TF.pad(x, (1, 1, 2, 0), mode="replicate")),
    "prelu": (lambda x: F.prelu(x, WEIGHT), lambda x: TF.prelu(x, WEIGHT)),
    "mask pool": (lambda x: F.max_pool2d_with_mask(x, 2)[0], lambda x: TF.max_pool2d(x, 2)),
    "indices pool": (lambda x: F.max_pool2d_with_indices(x, 2)[0], lambda x: TF.max_pool2d(x, 2)),
    "im2col": (lambda x: F.im2col(x, 2), lambda x: TF.unfold(x, 2)),
    "upsample": (lambda x: F.upsample_nearest_exact1d(x[:, :, 0], 11),
                 lambda x: TF.interpolate(x[:, :, 0], size=11, mode="nearest-exact")),
}


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("input_dtype", ["float32", "autocast"])
@pytest.mark.parametrize("name", list(CALLS))
def test_functional_calls_follow_torch_policy(name, input_dtype, dtype):
    ours, theirs = CALLS[name]
    x = _rand(2, 3, 6, 6).to(torch.float32 if input_dtype == "float32" else dtype)
    for _ in range(2):
        with torch.autocast("cpu", dtype):
            got, want = ours(x), theirs(x)
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=1e-2, atol=1e-2)


def _model():
    torch.manual_seed(5)
    return nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.PReLU(3), nn.MaxPool2d(2),
                         nn.ReplicationPad2d(1), nn.Conv2d(3, 2, 3), nn.PReLU())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_converted_model_under_autocast_equals_torch(dtype):
    reference = _model()
    ours = pnn.convert(copy.deepcopy(reference))
    x = _rand(2, 3, 8, 8).requires_grad_()
    x_ref = x.detach().clone().requires_grad_()
    with torch.autocast("cpu", dtype):
        out, ref = ours(x), reference(x_ref)
    assert out.dtype == ref.dtype == dtype
    torch.testing.assert_close(out, ref, rtol=2e-2, atol=2e-2)
    out.float().sum().backward()
    ref.float().sum().backward()
    assert x.grad.dtype == x_ref.grad.dtype == torch.float32
    torch.testing.assert_close(x.grad, x_ref.grad, rtol=5e-2, atol=5e-2)
    for got, want in zip(ours.parameters(), reference.parameters()):
        assert got.grad.dtype == want.grad.dtype
        torch.testing.assert_close(got.grad, want.grad, rtol=5e-2, atol=5e-2)


def test_float64_is_not_cast():
    x = _rand(1, 3, 4, 4).double()
    with torch.autocast("cpu", torch.bfloat16):
        assert F.replication_pad2d(x, (1, 1, 1, 1)).dtype == torch.float64
