"""pyaclnn.nn: torch.nn's modules on pyaclnn's operators, and convert().

Every module is checked against its torch.nn namesake built with the same arguments: forward
values, the input's gradient and the weight's (PReLU), repr and state_dict keys.
"""

import copy

import pytest
import torch
from torch import nn

import pyaclnn
import pyaclnn.nn as PN


def _input(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


CASES = [
    ("pad int", lambda m: m.ReplicationPad2d(2), (2, 3, 5, 6)),
    ("pad tuple 3-D", lambda m: m.ReplicationPad2d((1, 0, 2, 1)), (3, 4, 5)),
    ("pool", lambda m: m.MaxPool2d(2), (2, 3, 8, 8)),
    ("pool k3s2p1 ceil", lambda m: m.MaxPool2d(3, 2, 1, ceil_mode=True), (2, 3, 9, 10)),
    ("pool rect stride", lambda m: m.MaxPool2d((2, 3), (1, 2)), (1, 2, 7, 9)),
    ("pool 3-D", lambda m: m.MaxPool2d(2, 1), (3, 5, 5)),
    ("prelu shared", lambda m: m.PReLU(), (2, 3, 4, 4)),
    ("prelu per channel init", lambda m: m.PReLU(3, init=-0.5), (2, 3, 4, 4)),
    ("prelu 2-D", lambda m: m.PReLU(5, 0.1), (4, 5)),
    ("unfold", lambda m: m.Unfold(3, padding=1), (2, 3, 6, 6)),
    ("unfold strided dilated", lambda m: m.Unfold((2, 3), dilation=(2, 1), padding=(1, 0),
                                                  stride=(1, 2)), (1, 2, 7, 8)),
    ("fold", lambda m: m.Fold((6, 6), 3, padding=1), (2, 27, 36)),
    ("fold unbatched", lambda m: m.Fold((5, 7), (2, 3), stride=(1, 2)), (12, 12)),
    ("upsample size", lambda m: m.Upsample(size=11, mode="nearest-exact"), (2, 3, 5)),
    ("upsample scale", lambda m: m.Upsample(scale_factor=2.5, mode="nearest-exact"), (2, 3, 6)),
    ("upsample recompute", lambda m: m.Upsample(scale_factor=0.7, mode="nearest-exact",
                                                recompute_scale_factor=True), (1, 2, 9)),
]


# Folds without padding add their windows in window order on the default product (Ascend910B),
# as the card's TBE Col2im does (docs/precision.md, "Im2colBackward per product"); PyTorch adds
# in kernel order, so fp32 sums can differ in the last bit where three or more windows meet.
CARD_ORDER = {"fold unbatched"}


@pytest.mark.parametrize("name,make,shape", CASES, ids=[c[0] for c in CASES])
def test_module_matches_torch_nn(name, make, shape):
    theirs, ours = make(nn), make(PN)
    assert type(ours).__module__ == "pyaclnn.nn" and isinstance(ours, type(theirs))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    x = _input(*shape, seed=len(shape))
    x_ours = x.clone().requires_grad_()
    x_theirs = x.clone().requires_grad_()
    y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    if name in CARD_ORDER:
        torch.testing.assert_close(y_ours, y_theirs, rtol=4e-7, atol=1e-6)
    else:
        assert torch.equal(y_ours, y_theirs)
    grad = _input(*y_theirs.shape, seed=7)
    y_ours.backward(grad)
    y_theirs.backward(grad)
    torch.testing.assert_close(x_ours.grad, x_theirs.grad, rtol=1e-6, atol=1e-6)
    for (name, p_ours), (_, p_theirs) in zip(ours.named_parameters(), theirs.named_parameters()):
        torch.testing.assert_close(p_ours.grad, p_theirs.grad, rtol=1e-5, atol=1e-5, msg=name)


def test_max_pool_return_indices_gives_torchs_int64_indices():
    x = _input(2, 3, 9, 9).requires_grad_()
    out, indices = PN.MaxPool2d(3, 2, 1, return_indices=True, ceil_mode=True)(x)
    ref, ref_indices = nn.MaxPool2d(3, 2, 1, return_indices=True, ceil_mode=True)(x)
    assert indices.dtype == torch.int64 and torch.equal(indices, ref_indices)
    assert torch.equal(out, ref)
    out.sum().backward()
    expected, = torch.autograd.grad(ref.sum(), x)
    assert torch.equal(x.grad, expected)


def test_fp16_and_bf16_pooling_train():
    for dtype in (torch.float16, torch.bfloat16):
        x = _input(1, 2, 6, 6, dtype=dtype).requires_grad_()
        y = PN.MaxPool2d(2)(x)
        y.sum().backward()
        ref_x = x.detach().clone().requires_grad_()
        nn.MaxPool2d(2)(ref_x).sum().backward()
        assert torch.equal(y, nn.MaxPool2d(2)(x.detach())) and torch.equal(x.grad, ref_x.grad)


def test_uncovered_arguments_name_what_is_missing():
    with pytest.raises(PN.NotCoveredError, match="mode='bilinear'"):
        PN.Upsample(scale_factor=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match="dilation"):
        PN.MaxPool2d(3, dilation=2)
    with pytest.raises(PN.NotCoveredError, match="3-D input, got 4-D"):
        PN.Upsample(size=4, mode="nearest-exact")(_input(1, 1, 2, 2))
    # an input the operator refuses: the library's own error, naming the parameter
    with pytest.raises(pyaclnn.ParamInvalidError, match="padding"):
        PN.ReplicationPad2d(4)(_input(1, 1, 3, 3))


def test_fallback_runs_torch_only_where_asked():
    up = PN.Upsample(scale_factor=2, mode="bilinear", fallback=True)
    assert repr(up).endswith("fallback=True)")
    x = _input(1, 2, 3, 3)
    assert torch.equal(up(x), nn.Upsample(scale_factor=2, mode="bilinear")(x))
    wide = PN.ReplicationPad2d(4, fallback=True)
    assert torch.equal(wide(x), nn.ReplicationPad2d(4)(x))
    four_d = PN.Upsample(size=(5,), mode="nearest-exact", fallback=True)
    x3 = _input(1, 2, 3)
    assert torch.equal(four_d(x3), nn.Upsample(size=(5,), mode="nearest-exact")(x3))


def _model():
    torch.manual_seed(3)
    return nn.Sequential(
        nn.ReplicationPad2d(1), nn.Conv2d(3, 4, 3), nn.PReLU(4, 0.1),
        nn.MaxPool2d(2, ceil_mode=True), nn.Unfold(2), nn.Fold((4, 4), 2), nn.Flatten(2),
        nn.Upsample(scale_factor=1.5, mode="nearest-exact"),
        nn.Sequential(nn.PReLU(), nn.Upsample(scale_factor=2.0, mode="linear")))


def test_convert_swaps_every_covered_module_and_keeps_the_weights():
    model = _model()
    reference = copy.deepcopy(model)
    prelu_weight = model[2].weight
    converted = PN.convert(model)
    assert converted is model
    left = [m for m in converted.modules() if type(m) in PN.COVERED]
    assert left == [converted[8][1]]                     # the linear Upsample: not covered
    assert converted[2].weight is prelu_weight           # the same Parameter
    x = _input(2, 3, 8, 8)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    ya, yb = converted(xa), reference(xb)
    assert torch.equal(ya, yb)
    ya.sum().backward()
    yb.sum().backward()
    torch.testing.assert_close(xa.grad, xb.grad, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(converted[2].weight.grad, reference[2].weight.grad)
    assert isinstance(PN.convert(nn.PReLU()), PN.PReLU)   # a covered root is returned anew


def test_converted_model_follows_the_selected_product(soc):
    model = PN.convert(nn.Sequential(nn.MaxPool2d(2), nn.PReLU()))
    x = _input(1, 2, 6, 6) * 3 + 1 / 3
    soc("Ascend910")
    # Ascend910's max pooling computes float32 in float16
    expected = nn.PReLU()(nn.MaxPool2d(2)(x.half()).float())
    assert torch.equal(model(x), expected)
    # and its indices pooling is refused
    with pytest.raises(pyaclnn.ParamInvalidError, match="Ascend910"):
        PN.MaxPool2d(2, return_indices=True)(x)
    soc(None)
    assert torch.equal(model(x), nn.PReLU()(nn.MaxPool2d(2)(x)))
