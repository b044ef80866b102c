"""torch.export, torch.compile and torch.jit.trace of modules that call pyaclnn.

They see pyaclnn's operators as torch.ops.aclnn.* custom operators (pyaclnn/torch_ops.py): the
programs they make hold those operators and give the eager results, on new inputs too.
"""

import copy

import torch
from torch import nn

import pyaclnn.functional as F
import pyaclnn.nn as PN


class FiveFamilies(nn.Module):
    """Every operator family, through pyaclnn.functional, with a learnable PReLU weight."""

    def __init__(self, channels=3):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(-0.5, 0.5, channels))

    def forward(self, x):
        y = F.replication_pad2d(x, (1, 2, 1, 0))
        y, _ = F.max_pool2d_with_mask(y, 2, 2)
        y = F.prelu(y, self.weight)
        y, _ = F.max_pool2d_with_indices(y, 2, 1, ceil_mode=True)
        cols = F.im2col(y, 2, 1, 1, 1)
        return F.upsample_nearest_exact1d(cols, 2 * cols.shape[-1])


def _aclnn_targets(graph):
    return sorted({str(node.target) for node in graph.nodes
                   if node.op == "call_function" and "aclnn" in str(node.target)})


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def test_export_runs_with_the_eager_result_for_any_batch():
    model = FiveFamilies()
    x = _x(2, 3, 10, 10)
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
    assert _aclnn_targets(program.graph) == [
        "aclnn.im2col.default", "aclnn.max_pool2d_with_indices.default",
        "aclnn.max_pool2d_with_mask.default", "aclnn.prelu.default",
        "aclnn.replication_pad2d.default", "aclnn.upsample_nearest_exact1d.default"]
    for n in (2, 5):
        x = _x(n, 3, 10, 10, seed=n)
        assert torch.equal(program.module()(x), model(x))


def test_export_of_a_converted_model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.PReLU(4), nn.ReplicationPad2d(1),
                          nn.MaxPool2d(2), nn.Unfold(2), nn.Fold((4, 4), 2), nn.Flatten(2),
                          nn.Upsample(scale_factor=2, mode="nearest-exact"))
    converted = PN.convert(copy.deepcopy(model))
    x = _x(2, 3, 8, 8)
    program = torch.export.export(converted, (x,))
    assert len(_aclnn_targets(program.graph)) == 6
    assert torch.equal(program.module()(x), model(x))


def test_compile_fullgraph_forward_and_backward_match_eager():
    model = FiveFamilies()
    x = _x(2, 3, 10, 10)
    expected = model(x)
    expected.sum().backward()
    expected_grad = model.weight.grad.clone()
    model.weight.grad = None
    compiled = torch.compile(model, fullgraph=True)      # a graph break would raise here
    got = compiled(x)
    assert torch.equal(got, expected)
    got.sum().backward()
    assert torch.equal(model.weight.grad, expected_grad)


def test_jit_trace_reruns_with_correct_values():
    model = FiveFamilies()
    traced = torch.jit.trace(model, (_x(2, 3, 10, 10),), check_trace=False)
    assert "aclnn::prelu" in str(traced.graph)
    for seed in (1, 2):
        x = _x(2, 3, 10, 10, seed=seed)
        assert torch.equal(traced(x), model(x))


def test_compile_fullgraph_of_a_converted_model_with_and_without_fallback():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.PReLU(4), nn.ReplicationPad2d(1),
                          nn.MaxPool2d(2, ceil_mode=True), nn.Unfold(2), nn.Fold((4, 4), 2),
                          nn.Flatten(2), nn.Upsample(scale_factor=1.5, mode="nearest-exact"))
    x = _x(2, 3, 8, 8)
    for fallback in (False, True):
        converted = PN.convert(copy.deepcopy(model), fallback=fallback)
        # aot_eager: dynamo's capture and AOTAutograd, without inductor's compile time
        compiled = torch.compile(converted, fullgraph=True, backend="aot_eager")
        y = compiled(x)
        assert torch.equal(y, model(x))
        y.sum().backward()
        assert converted[1].weight.grad is not None
