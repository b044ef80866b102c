"""Second derivatives through pyaclnn's operators: a gradient penalty (WGAN-GP) through a
converted model gives torch.nn's parameter gradients, opcheck passes on the backward samples a
real training step records, and gradcheck (backward and forward mode) and gradgradcheck hold
against finite differences for every operator whose double backward or jvp is a formula.  Both raised NotImplementedError ("... is not
differentiable") for PReLU and the default MaxPool2d before.
"""

import copy

import pytest
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


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).requires_grad_()


# every operator with its differentiable inputs first; piecewise linear (or bilinear) in them,
# so float32 finite differences with eps 1e-2 are exact up to rounding away from the kinks
POOL = ([2, 2], [1, 1], [0, 0], [1, 1], False)
CHECKED = {
    "prelu": (lambda x, w: ops.prelu(x, w), lambda: (_rand(1, 2, 3, 3), _rand(2, seed=1))),
    "prelu shared weight": (lambda x, w: ops.prelu(x, w), lambda: (_rand(2, 3, 3), _rand(1, seed=1))),
    "prelu_backward": (lambda g, x, w: ops.prelu_backward(g, x, w),
                       lambda: (_rand(1, 2, 3, 3, seed=2), _rand(1, 2, 3, 3), _rand(2, seed=1))),
    "prelu_backward shared weight": (lambda g, x, w: ops.prelu_backward(g, x, w),
                                     lambda: (_rand(1, 2, 3, 3, seed=2), _rand(1, 2, 3, 3),
                                              _rand(1, seed=1))),
    "mask pool": (lambda x: ops.max_pool2d_with_mask(x, *POOL)[0], lambda: (_rand(1, 2, 4, 4),)),
    "mask pool_backward": (
        lambda g, x: ops.max_pool2d_with_mask_backward(
            g, x, ops.max_pool2d_with_mask(x.detach(), *POOL)[1], *POOL),
        lambda: (_rand(1, 2, 3, 3, seed=2), _rand(1, 2, 4, 4))),
    "indices pool": (lambda x: ops.max_pool2d_with_indices(x, *POOL)[0], lambda: (_rand(1, 2, 4, 4),)),
    "pad_backward": (lambda g: ops.replication_pad2d_backward(g, torch.zeros(1, 2, 3, 3), [1, 0, 1, 1]),
                     lambda: (_rand(1, 2, 5, 4),)),
    "upsample_backward": (lambda g: ops.upsample_nearest_exact1d_backward(g, [7], [1, 2, 3]),
                          lambda: (_rand(1, 2, 7),)),
    "col2im": (lambda g: ops.im2col_backward(g, [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]),
               lambda: (_rand(1, 8, 4),)),
}


@pytest.mark.parametrize("name", list(CHECKED))
@pytest.mark.filterwarnings("ignore:Input #")
def test_first_second_and_forward_derivatives_against_finite_differences(name):
    fn, make = CHECKED[name]
    inputs = make()
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-2, atol=2e-3, rtol=2e-3,
                                    check_forward_ad=True)
    assert torch.autograd.gradgradcheck(fn, inputs, eps=1e-2, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("product", [None, "Ascend910"])
@pytest.mark.parametrize("kernel,stride,padding", [(3, 2, 1), (2, 2, 0), (1, 2, 0)])
def test_mask_pool_double_backward_and_jvp_gather_at_the_masks_argmax(soc, product, kernel,
                                                                       stride, padding):
    # distinct values, exact in fp16 (Ascend910 pools float32 in float16): torch's own argmax
    # is the reference for the gather
    soc(product)
    x = (torch.randperm(2 * 3 * 7 * 7, generator=torch.Generator().manual_seed(6)).float() / 8
         ).reshape(2, 3, 7, 7)
    attrs = ([kernel] * 2, [stride] * 2, [padding] * 2, [1, 1], False)
    _, indices = torch.nn.functional.max_pool2d(x, kernel, stride, padding, return_indices=True)
    out, mask = ops.max_pool2d_with_mask(x, *attrs)
    weights = torch.randn(x.shape, generator=torch.Generator().manual_seed(7))
    expected = weights.flatten(-2).gather(-1, indices.flatten(-2)).view(indices.shape)

    g = torch.zeros(out.shape, requires_grad=True)
    (ops.max_pool2d_with_mask_backward(g, x, mask, *attrs) * weights).sum().backward()
    assert torch.equal(g.grad, expected)

    _, tangent = torch.func.jvp(lambda v: ops.max_pool2d_with_mask(v, *attrs)[0], (x,),
                                (weights,))
    assert torch.equal(tangent, expected)
