"""The training path of a plain eager call (pyaclnn._torch_kernels): a converted module or a
pyaclnn.functional call whose input requires grad applies the operator's autograd Function
directly, and its forward and backward operators run through their lanes.  Each test compares
values and gradients with torch.nn's own modules, on the first steps (no lane yet) and the later
ones (lanes open), and checks that whatever watches the dispatcher still sees the operator."""

import copy

import pytest
import torch
from torch import nn

import pyaclnn.functional as F
import pyaclnn.nn as pnn
from pyaclnn import _lane
from op_helpers import DispatchLog


def _model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(2, 4, 3), nn.ReplicationPad2d(1), nn.PReLU(4), nn.MaxPool2d(2),
        nn.Unfold(2), nn.Fold((4, 4), 2), nn.Flatten(2),
        nn.Upsample(scale_factor=1.5, mode="nearest-exact"), nn.Flatten(), nn.PReLU())


def _step(model, x):
    model.zero_grad()
    out = model(x)
    out.square().sum().backward()
    return out.detach(), [p.grad.clone() for p in model.parameters()]


def test_training_steps_match_torch_and_open_lanes():
    reference = _model()
    ours = pnn.convert(copy.deepcopy(reference))
    names = {"replication_pad2d", "prelu", "max_pool2d_with_mask", "im2col", "im2col_backward",
             "upsample_nearest_exact1d", "replication_pad2d_backward", "prelu_backward",
             "max_pool2d_with_mask_backward", "upsample_nearest_exact1d_backward"}
    for seed in range(4):       # the first step opens the lanes, the others take them
        x = torch.randn(3, 2, 8, 8, generator=torch.Generator().manual_seed(seed))
        out, grads = _step(ours, x.clone().requires_grad_())
        ref_out, ref_grads = _step(reference, x.clone().requires_grad_())
        torch.testing.assert_close(out, ref_out)
        for grad, ref_grad in zip(grads, ref_grads):
            torch.testing.assert_close(grad, ref_grad, rtol=1e-5, atol=1e-5)
    opened = {key[0] for key in _lane.lanes()}
    assert names <= opened, names - opened


def test_the_graph_holds_the_operators_function():
    x = torch.randn(1, 2, 4, 4, requires_grad=True)
    y = pnn.convert(nn.PReLU(2))(x)
    assert type(y.grad_fn).__name__ == "aclnn_preluBackward"
    z = F.replication_pad2d(x, [1, 1, 1, 1])
    assert type(z.grad_fn).__name__ == "aclnn_replication_pad2dBackward"


def test_a_parameter_takes_the_lane_without_grad():
    prelu = pnn.convert(nn.PReLU(3))
    x = torch.randn(2, 3, 4, 4)
    _lane.lanes().clear()
    with torch.no_grad():
        prelu(x)
        out = prelu(x)
    assert [key[0] for key in _lane.lanes()] == ["prelu"]
    torch.testing.assert_close(out, nn.functional.prelu(x, prelu.weight.detach()))


def test_double_backward_goes_through_the_training_path():
    x = torch.randn(2, 3, 5, 5, requires_grad=True)
    w = torch.rand(3, requires_grad=True)
    out = F.prelu(x, w)
    (gx,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    (ggw,) = torch.autograd.grad(gx.square().sum(), w)
    ref = nn.functional.prelu(x, w)
    (ref_gx,) = torch.autograd.grad(ref.sum(), x, create_graph=True)
    (ref_ggw,) = torch.autograd.grad(ref_gx.square().sum(), w)
    torch.testing.assert_close(gx, ref_gx)
    torch.testing.assert_close(ggw, ref_ggw)


@pytest.mark.parametrize("grad", [False, True])
def test_a_dispatch_mode_sees_the_operators(grad):
    pool = pnn.convert(nn.MaxPool2d(2))
    x = torch.randn(1, 2, 4, 4, requires_grad=grad)
    pool(x)                                          # a lane, when it can have one
    with DispatchLog() as seen:
        out = pool(x)
        if grad:
            out.sum().backward()
    assert "aclnn.max_pool2d_with_mask.default" in seen.ops
    if grad:
        assert "aclnn.max_pool2d_with_mask_backward.default" in seen.ops
