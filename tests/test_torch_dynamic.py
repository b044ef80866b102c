"""Dynamic shapes through pyaclnn's operators: no traced path takes a Python int of a size.

torch.export with a dynamic batch (and H, W, L) of converted models in training mode, and
torch.compile(dynamic=True) building one graph across batch sizes as it does for torch.nn.
Before, the max-pool autograd setup fixed the batch (``int(d)`` in
pyaclnn.mask.mask_bytes_read: "specialized it to be a constant"), compile built one graph per
batch size, and ``upsample_nearest_exact1d(x, [x.shape[-1] * 3])`` fixed the length.
"""

import copy

import torch
import torch.nn.functional as TF
from torch import nn
from torch._dynamo.testing import CompileCounterWithBackend
from torch.export import Dim

import pyaclnn.functional as F
import pyaclnn.nn as pnn


def _conv_pool():
    torch.manual_seed(2)
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.PReLU(4), nn.MaxPool2d(2),
                         nn.ReplicationPad2d(1))


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def test_export_with_dynamic_batch_height_width_in_training():
    reference = _conv_pool().train()
    model = pnn.convert(copy.deepcopy(reference))
    dims = {0: Dim("batch", min=2, max=64), 2: Dim("h", min=4, max=64),
            3: Dim("w", min=4, max=64)}
    program = torch.export.export(model, (_rand(4, 3, 8, 8),), dynamic_shapes=(dims,))
    for shape in [(5, 3, 10, 12), (2, 3, 6, 8), (9, 3, 16, 14)]:
        x = _rand(*shape, seed=sum(shape))
        torch.testing.assert_close(program.module()(x), reference(x))


def test_export_by_keyword_input_with_dynamic_batch():
    model = pnn.convert(nn.MaxPool2d(2)).train()
    program = torch.export.export(model, (), {"input": _rand(4, 3, 8, 8)},
                                  dynamic_shapes={"input": {0: Dim("batch", min=2, max=64)}})
    x = _rand(7, 3, 8, 8)
    torch.testing.assert_close(program.module()(input=x), TF.max_pool2d(x, 2))


def test_compile_dynamic_builds_one_graph_across_batch_sizes():
    reference = _conv_pool().train()
    model = pnn.convert(copy.deepcopy(reference))
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(model, backend=counter, dynamic=True)
    for batch in (5, 6, 7, 9, 10):     # (none equal to C or H: torch ties equal sizes)
        x = _rand(batch, 3, 8, 8, seed=batch)
        out = compiled(x)
        out.square().sum().backward()
        ref = reference(x)
        ref.square().sum().backward()
        torch.testing.assert_close(out, ref)
    assert counter.frame_count == 1
    for ours, theirs in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-4, atol=1e-5)


class _Stretch(nn.Module):
    def forward(self, x):
        return F.upsample_nearest_exact1d(x, [x.shape[-1] * 3])


def test_upsample_length_stays_symbolic():
    program = torch.export.export(_Stretch(), (_rand(2, 3, 5),),
                                  dynamic_shapes=({0: Dim("n", min=2, max=32),
                                                   2: Dim("length", min=2, max=100)},))
    for shape in [(2, 3, 7), (4, 3, 11)]:
        x = _rand(*shape)
        out = program.module()(x)
        torch.testing.assert_close(out, TF.interpolate(x, size=3 * shape[-1],
                                                       mode="nearest-exact"))


def test_upsample_scale_factor_module_with_dynamic_length():
    module = pnn.convert(nn.Upsample(scale_factor=2.5, mode="nearest-exact"))
    program = torch.export.export(module, (_rand(2, 3, 6),),
                                  dynamic_shapes=({2: Dim("length", min=2, max=100)},))
    for length in (7, 13):
        x = _rand(2, 3, length)
        torch.testing.assert_close(program.module()(x),
                                   TF.interpolate(x, scale_factor=2.5, mode="nearest-exact"))
