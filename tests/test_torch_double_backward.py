"""Second derivatives through pyaclnn's operators: a gradient penalty (WGAN-GP) through a
converted model gives torch.nn's parameter gradients, and opcheck passes on the backward
samples a real training step records.  Both raised NotImplementedError ("... is not
differentiable") for PReLU and the default MaxPool2d before.
"""

import copy

import torch
from torch import nn

import pyaclnn.nn

ops = torch.ops.aclnn


def _critic():
    torch.manual_seed(7)
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.PReLU(4), nn.MaxPool2d(2),
                         nn.ReplicationPad2d(1), nn.Conv2d(4, 2, 3), nn.PReLU(),
                         nn.Flatten(), nn.Linear(2 * 4 * 4, 1))


def _penalty_gradients(model, x):
    x = x.clone().requires_grad_()
    score = model(x).sum()
    grad_x, = torch.autograd.grad(score, x, create_graph=True)
    penalty = ((grad_x.flatten(1).norm(dim=1) - 1) ** 2).mean()
    penalty.backward()
    return penalty.detach(), [p.grad for p in model.parameters()]   # None: not reached


def test_gradient_penalty_through_a_converted_model_equals_torch():
    torch_model = _critic()
    ours = pyaclnn.nn.convert(copy.deepcopy(torch_model))
    assert type(ours[1]) is pyaclnn.nn.PReLU and type(ours[2]) is pyaclnn.nn.MaxPool2d
    x = torch.randn(3, 2, 8, 8, generator=torch.Generator().manual_seed(1))
    penalty, grads = _penalty_gradients(ours, x)
    ref_penalty, ref_grads = _penalty_gradients(torch_model, x)
    torch.testing.assert_close(penalty, ref_penalty, rtol=1e-5, atol=1e-6)
    assert [g is None for g in grads] == [g is None for g in ref_grads]
    assert sum(g is not None for g in grads) >= 6      # both PReLU weights among them
    for got, want in zip(grads, ref_grads):
        if want is not None:
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def _recorded_backward_samples():
    """The (operator, args) of every backward call one training step of a converted model
    makes, recorded with a dispatch mode."""
    from torch.utils._python_dispatch import TorchDispatchMode

    calls = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func._namespace == "aclnn" and func._opname.endswith("_backward"):
                calls.append((func, args))
            return func(*args, **(kwargs or {}))

    model = pyaclnn.nn.convert(_critic())
    x = torch.randn(2, 2, 8, 8)
    with Recorder():
        model(x).sum().backward()
    return calls


def test_opcheck_on_the_samples_of_a_training_step():
    calls = _recorded_backward_samples()
    names = {func._opname for func, _ in calls}
    assert {"prelu_backward", "max_pool2d_with_mask_backward",
            "replication_pad2d_backward"} <= names
    for func, args in calls:
        args = tuple(a.detach().requires_grad_() if isinstance(a, torch.Tensor)
                     and a.is_floating_point() else a for a in args)
        torch.library.opcheck(func, args)
