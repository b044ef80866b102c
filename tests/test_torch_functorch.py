"""functorch over pyaclnn's operators: torch.func.vmap, jvp, grad, jacrev, jacfwd and forward-mode
AD give what they give over torch's own functions.

Every check runs pyaclnn.functional's calls (the path that failed with "Cannot access data
pointer of Tensor that doesn't have storage": the eager fast path took functorch's wrappers for
plain tensors) and torch.nn.functional's under the same transform, and compares the values.
"""

import copy
from contextlib import contextmanager

import pytest
import torch
import torch.nn.functional as TF
from torch import nn
from torch.autograd import forward_ad

import pyaclnn.functional as F
import pyaclnn.nn as pnn
import pyaclnn.torch_ops  # noqa: F401  (registers torch.ops.aclnn)

ops = torch.ops.aclnn
WEIGHT = torch.tensor([0.25, -0.5, 1.5])

# name -> (pyaclnn's function, torch's, one sample's shape)
PAIRS = {
    "pad": (lambda x: F.replication_pad2d(x, (1, 2, 0, 1)),
            lambda x: TF.pad(x, (1, 2, 0, 1), mode="replicate"), (2, 3, 5, 6)),
    "pad 3-D": (lambda x: F.replication_pad2d(x, (1, 1, 2, 0)),
                lambda x: TF.pad(x, (1, 1, 2, 0), mode="replicate"), (3, 5, 6)),
    "upsample": (lambda x: F.upsample_nearest_exact1d(x, 9),
                 lambda x: TF.interpolate(x, size=9, mode="nearest-exact"), (2, 3, 5)),
    "mask pool": (lambda x: F.max_pool2d_with_mask(x, 3, 2, 1)[0],
                  lambda x: TF.max_pool2d(x, 3, 2, 1), (2, 3, 7, 8)),
    "indices pool": (lambda x: F.max_pool2d_with_indices(x, 2, 2)[0],
                     lambda x: TF.max_pool2d(x, 2, 2), (2, 3, 6, 6)),
    "im2col": (lambda x: F.im2col(x, 2, 1, 1, 1), lambda x: TF.unfold(x, 2, 1, 1, 1),
               (2, 3, 4, 5)),
    "prelu": (lambda x: F.prelu(x, WEIGHT), lambda x: TF.prelu(x, WEIGHT), (2, 3, 4, 5)),
}
NAMES = list(PAIRS)


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _close(ours, theirs):
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


@contextmanager
def _no_vmap_fallback():
    """torch's per-sample fallback raises instead of running: a batching rule must answer."""
    before = torch._C._functorch._is_vmap_fallback_enabled()
    torch._C._functorch._set_vmap_fallback_enabled(False)
    try:
        yield
    finally:
        torch._C._functorch._set_vmap_fallback_enabled(before)


def test_the_fallback_switch_refuses_an_operator_without_a_rule():
    with _no_vmap_fallback(), pytest.raises(RuntimeError):
        torch.func.vmap(lambda v: torch.ops.aten._foreach_add([v], 1.0)[0])(_rand(2, 3))


@pytest.mark.parametrize("name", NAMES)
def test_vmap(name):
    ours, theirs, shape = PAIRS[name]
    x = _rand(4, *shape)
    with _no_vmap_fallback():          # (torch's own upsample has no batching rule)
        batched = torch.func.vmap(ours)(x)
    _close(batched, torch.func.vmap(theirs)(x))
    _close(torch.func.vmap(ours)(x), torch.func.vmap(theirs)(x))
    moved = x.movedim(0, 1)
    _close(torch.func.vmap(ours, in_dims=1)(moved), torch.func.vmap(theirs, in_dims=1)(moved))


@pytest.mark.parametrize("name", NAMES)
def test_jvp(name):
    ours, theirs, shape = PAIRS[name]
    x, t = _rand(*shape), _rand(*shape, seed=1)
    out, tangent = torch.func.jvp(ours, (x,), (t,))
    ref, ref_tangent = torch.func.jvp(theirs, (x,), (t,))
    _close(out, ref)
    _close(tangent, ref_tangent)


@pytest.mark.parametrize("name", NAMES)
def test_grad_jacrev_jacfwd(name):
    ours, theirs, shape = PAIRS[name]
    x = _rand(*shape)
    weights = _rand(*theirs(x).shape, seed=2)
    _close(torch.func.grad(lambda v: (ours(v) * weights).sum())(x),
           torch.func.grad(lambda v: (theirs(v) * weights).sum())(x))
    small = x[:1] if len(shape) == 4 else x
    _close(torch.func.jacrev(ours)(small), torch.func.jacrev(theirs)(small))
    _close(torch.func.jacfwd(ours)(small), torch.func.jacfwd(theirs)(small))


@pytest.mark.parametrize("name", NAMES)
def test_forward_mode_dual_tensors(name):
    ours, theirs, shape = PAIRS[name]
    x, t = _rand(*shape), _rand(*shape, seed=1)
    for _ in range(2):                   # the second call is the one an eager lane would take
        with forward_ad.dual_level():
            out = forward_ad.unpack_dual(ours(forward_ad.make_dual(x, t)))
            ref = forward_ad.unpack_dual(theirs(forward_ad.make_dual(x, t)))
        _close(out.primal, ref.primal)
        _close(out.tangent, ref.tangent)


def test_per_sample_prelu_weight_gradients():
    x, w = _rand(6, 3, 4, 5), torch.tensor([0.25, -0.5, 1.5])

    def loss(function):
        return lambda sample, weight: (function(sample[None], weight) ** 2).sum()

    ours = torch.func.vmap(torch.func.grad(loss(F.prelu), argnums=1), in_dims=(0, None))(x, w)
    theirs = torch.func.vmap(torch.func.grad(loss(TF.prelu), argnums=1),
                             in_dims=(0, None))(x, w)
    _close(ours, theirs)


def test_vmap_over_a_batch_of_prelu_weights():
    x, weights = _rand(5, 2, 3, 4, 4), _rand(5, 3, seed=3)
    _close(torch.func.vmap(F.prelu)(x, weights), torch.func.vmap(TF.prelu)(x, weights))
    shared = _rand(5, 1, seed=4)
    _close(torch.func.vmap(F.prelu)(x, shared), torch.func.vmap(TF.prelu)(x, shared))


BACKWARDS = [
    ("pad_backward", ops.replication_pad2d_backward,
     lambda: (_rand(4, 2, 3, 6, 9), _rand(4, 2, 3, 5, 6), [1, 2, 0, 1])),
    ("upsample_backward", ops.upsample_nearest_exact1d_backward,
     lambda: (_rand(4, 2, 3, 9), [9], [2, 3, 5], None)),
    ("indices_backward", ops.max_pool2d_with_indices_backward,
     lambda: (_rand(4, 2, 3, 3, 3), _rand(4, 2, 3, 6, 6),
              torch.randint(0, 36, (4, 2, 3, 3, 3), generator=torch.Generator().manual_seed(5),
                            dtype=torch.int32), [2, 2], [2, 2], [0, 0], [1, 1], False)),
    ("col2im", ops.im2col_backward,
     lambda: (_rand(4, 2, 12, 30), [4, 5], [2, 2], [1, 1], [1, 1], [1, 1])),
    ("prelu_backward", ops.prelu_backward,
     lambda: (_rand(4, 2, 3, 4, 4), _rand(4, 2, 3, 4, 4, seed=1), _rand(4, 3, seed=2))),
    ("mask_backward", ops.max_pool2d_with_mask_backward, None),
]


def _per_sample(op, args, tensors):
    outs = [op(*[a[i] for a in args[:tensors]], *args[tensors:]) for i in range(4)]
    if isinstance(outs[0], tuple):
        return tuple(torch.stack(parts) for parts in zip(*outs))
    return torch.stack(outs)


def _mask_backward_args():
    x = _rand(4, 2, 3, 7, 8)
    masks = torch.stack([ops.max_pool2d_with_mask(x[i], [3, 3], [2, 2], [1, 1], [1, 1],
                                                  False)[1] for i in range(4)])
    return (_rand(4, 2, 3, 4, 4, seed=1), x, masks, [3, 3], [2, 2], [1, 1], [1, 1], False)


@pytest.mark.parametrize("op,make", [b[1:] for b in BACKWARDS], ids=[b[0] for b in BACKWARDS])
def test_vmap_of_the_operators_equals_one_call_per_sample(op, make):
    args = _mask_backward_args() if make is None else make()
    tensors = sum(isinstance(a, torch.Tensor) for a in args)
    with _no_vmap_fallback():
        batched = torch.func.vmap(op, in_dims=(0,) * tensors + (None,) * (len(args) - tensors))(
            *args)
    expected = _per_sample(op, args, tensors)
    if isinstance(batched, tuple):
        for got, want in zip(batched, expected):
            _close(got, want)
    else:
        _close(batched, expected)


def test_per_sample_gradients_of_a_converted_model():
    torch.manual_seed(9)
    reference = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.PReLU(3), nn.MaxPool2d(2),
                              nn.ReplicationPad2d(1), nn.Flatten(), nn.Linear(3 * 5 * 5, 1))
    ours = pnn.convert(copy.deepcopy(reference))
    x, y = _rand(6, 2, 6, 6), _rand(6, 1, seed=1)

    def per_sample(model):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, sample, target):
            out = torch.func.functional_call(model, p, (sample[None],))
            return ((out - target[None]) ** 2).sum()
        return torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    got, want = per_sample(ours), per_sample(reference)
    assert got.keys() == want.keys()
    for key in want:
        _close(got[key], want[key])


def test_a_tensor_subclass_goes_through_the_dispatcher():
    # TwoTensor (torch's test subclass) runs every op on both of its tensors in
    # __torch_dispatch__: the fast path and the lane must leave the call to the dispatcher
    from torch.testing._internal.two_tensor import TwoTensor

    a, b = _rand(1, 2, 4, 4), _rand(1, 2, 4, 4, seed=1)
    for _ in range(2):
        out = F.replication_pad2d(TwoTensor(a, b), (1, 1, 1, 1))
        assert type(out) is TwoTensor
        _close(out.a, TF.pad(a, (1, 1, 1, 1), mode="replicate"))
        _close(out.b, TF.pad(b, (1, 1, 1, 1), mode="replicate"))
