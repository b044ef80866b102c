"""pyaclnn.nn.convert as a drop-in for torch.nn models: uncovered configurations stay torch's
modules, converted modules take torch's argument names, trace with torch.fx.symbolic_trace, and
keep the hooks and training flags of the modules they replace.  Each check failed before
(NotCoveredError for MaxPool2d(dilation=2), a TraceError on ``x.dim()``, "unexpected keyword
argument 'input'", hooks and flags lost).
"""

import copy

import pytest
import torch
from torch import nn

import pyaclnn
import pyaclnn.nn as pnn


def _model():
    torch.manual_seed(3)
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.PReLU(4), nn.MaxPool2d(2),
                         nn.ReplicationPad2d(1), nn.MaxPool2d(3, 1, 1, dilation=2),
                         nn.Unfold(2), nn.Fold((4, 4), 2), nn.Flatten(),
                         nn.Unflatten(1, (4, 16)), nn.Upsample(scale_factor=2, mode="nearest-exact"))


def _x():
    return torch.randn(2, 2, 8, 8, generator=torch.Generator().manual_seed(4))


def test_uncovered_configurations_stay_torch_modules(soc):
    model = _model()
    ref = model(_x())
    converted = pnn.convert(copy.deepcopy(model))
    assert type(converted[4]) is nn.MaxPool2d                      # dilation 2 on A2
    assert type(converted[2]) is pnn.MaxPool2d and type(converted[1]) is pnn.PReLU
    assert type(converted[9]) is pnn.Upsample
    torch.testing.assert_close(converted(_x()), ref)
    soc("Ascend950")
    pool = pnn.convert(nn.MaxPool2d(3, 1, 1, dilation=2, return_indices=True))
    assert type(pool) is pnn.MaxPool2d                  # the product pools with dilation
    x = _x()
    out, indices = pool(x)
    ref_out, ref_indices = nn.MaxPool2d(3, 1, 1, dilation=2, return_indices=True)(x)
    assert torch.equal(out, ref_out) and torch.equal(indices, ref_indices)


@pytest.mark.parametrize("module,x", [
    (nn.MaxPool2d(2), torch.randn(1, 2, 6, 6)),
    (nn.PReLU(), torch.randn(1, 2, 6, 6)),
    (nn.ReplicationPad2d(1), torch.randn(1, 2, 6, 6)),
    (nn.Unfold(2), torch.randn(1, 2, 6, 6)),
    (nn.Fold((3, 3), 2), torch.randn(1, 8, 4)),
    (nn.Upsample(size=9, mode="nearest-exact"), torch.randn(1, 2, 6)),
])
def test_modules_take_torch_argument_names(module, x):
    ours = pnn.convert(copy.deepcopy(module))
    assert type(ours) is not type(module)
    torch.testing.assert_close(ours(input=x), module(input=x))


def test_symbolic_trace_of_a_converted_model():
    model = pnn.convert(_model())
    traced = torch.fx.symbolic_trace(model)
    targets = {str(node.target) for node in traced.graph.nodes if node.op == "call_function"}
    assert {"aclnn.prelu", "aclnn.max_pool2d_with_mask", "aclnn.replication_pad2d",
            "aclnn.im2col", "aclnn.im2col_backward", "aclnn.upsample_nearest_exact1d"} <= targets
    x = _x()
    torch.testing.assert_close(traced(x), _model()(x))


def test_hooks_and_flags_are_kept():
    model = _model().eval()
    seen = []
    pre = model[2].register_forward_pre_hook(lambda m, args: seen.append(("pre", type(m))))
    model[1].register_forward_hook(lambda m, args, out: seen.append(("post", type(m))))
    model[3].register_full_backward_hook(lambda m, gin, gout: seen.append(("backward",
                                                                           type(m))))
    converted = pnn.convert(model)
    assert not any(m.training for m in converted.modules())
    converted(_x().requires_grad_()).sum().backward()
    assert seen == [("post", pnn.PReLU), ("pre", pnn.MaxPool2d), ("backward", pnn.ReplicationPad2d)]
    pre.remove()                                     # the handle made before convert still works
    seen.clear()
    converted(_x())
    assert seen == [("post", pnn.PReLU)]
    assert pyaclnn.nn.convert(nn.Sequential(nn.PReLU()).train())[0].training
