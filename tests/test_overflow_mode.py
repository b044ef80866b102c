"""The card's overflow mode (docs/precision.md, "Overflow mode"), per product and device mode.

Ascend910 and Ascend310P have only saturation mode; A2/A3 start in INF/NaN mode and
aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION) switches the device, which the streams
created after it follow (a stream keeps the mode it was created in); Ascend950 has only INF/NaN
mode.  In saturation mode a computed fp16/bf16 result that is Inf becomes the largest finite
value of its sign and a NaN result becomes +0 (CANN runtime's aclrtFloatOverflowMode page); fp32
results stay as computed, and copies (the forwards that move data) keep Inf and NaN.

The references are NumPy loops of each operator's arithmetic (sums in fp32, exact here: the
values are multiples of 32 whose fp16 sums up to 65504 are representable, and every element's
contributions share one sign, so no order of additions can overflow and come back), rounded with
NumPy's / ml_dtypes' own casts and saturated by the rule as tests/reference.py writes it.  Saturated results
are compared bit for bit (+0 included); IEEE results bit for bit too, NaN positions by value.
"""
import ml_dtypes
import numpy as np
import pytest

import pyaclnn
import pyaclnn.functional as F
from pyaclnn import ffi, lib
from pyaclnn.mask import indices_from_mask

import reference as ref

SATURATION, INFNAN = 0, 1
FEATURE_NOT_SUPPORT = 207000
PRODUCTS = ["Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"]
SATURATION_ONLY = set(ref.SATURATION_ONLY)
SWITCHABLE = {"Ascend910B", "Ascend910_93"}


# ---- the rule, written independently of the library --------------------------------------------

def narrow(values, dtype, saturate):
    """fp32 results -> dtype (round to nearest even, NumPy's / ml_dtypes' cast), then in saturation
    mode Inf -> +-max finite and NaN -> +0."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(values, np.float32).astype(dtype)
    return ref.saturation_mode(out) if saturate else out


def assert_same(got, want):
    """Bit for bit; NaN (IEEE results only) compared by position, its payload left open."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
    bits = {2: np.uint16, 4: np.uint32}[want.dtype.itemsize]
    np.testing.assert_array_equal(got.view(bits)[~nan], want.view(bits)[~nan])


# ---- inputs ---------------------------------------------------------------------------------------

def signed_values(rng, signs, specials=True):
    """One value per entry of `signs` (+-1): a multiple of 32 of that sign, sometimes large enough
    that two of them overflow fp16, sometimes +-inf of that sign or NaN."""
    magnitudes = rng.choice(np.float32([32, 64, 20000, 40000]), size=signs.shape)
    values = (magnitudes * signs).astype(np.float32)
    if specials:
        pick = rng.random(signs.shape)
        values = np.where(pick < 0.06, np.float32(np.inf) * signs, values)
        values = np.where((pick >= 0.06) & (pick < 0.1), np.float32(np.nan), values)
    return values


def pad_backward_case(rng, specials=True):
    """ReplicationPad2dBackward, pads (1, 1, 1, 1) on a [2, 3, 4, 5] x: each input element sums
    the gradients of the outputs copied from it (edges and corners several)."""
    x = np.zeros((2, 3, 4, 5), np.float16)
    rows, cols = np.clip(np.arange(6) - 1, 0, 3), np.clip(np.arange(7) - 1, 0, 4)
    dest_signs = rng.choice(np.float32([-1, 1]), size=x.shape)
    signs = dest_signs[:, :, rows][:, :, :, cols]
    g = signed_values(rng, signs, specials)
    want = np.zeros(x.shape, np.float32)
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            want[:, :, r, c] += g[:, :, i, j]
    return (g, x), want


def upsample_backward_case(rng):
    """UpsampleNearestExact1dBackward, L = 6 -> 12: input i sums outputs 2i and 2i + 1 (finite
    gradients only: the A2/A3 card's matrix product spreads Inf/NaN across a slide)."""
    dest_signs = rng.choice(np.float32([-1, 1]), size=(2, 3, 6))
    g = signed_values(rng, np.repeat(dest_signs, 2, axis=-1), specials=False)
    return g, g[..., 0::2] + g[..., 1::2]


def col2im_case(rng):
    """Im2colBackward, 2x2 kernel, stride 1 on a 3x4 image: interior pixels sum four columns."""
    dest_signs = rng.choice(np.float32([-1, 1]), size=(2, 3, 3, 4))
    k, oh, ow = 2, 2, 3
    signs = np.empty((2, 3 * k * k, oh * ow), np.float32)
    for c in range(3):
        for ki in range(k):
            for kj in range(k):
                for l in range(oh * ow):
                    signs[:, (c * k + ki) * k + kj, l] = dest_signs[:, c, l // ow + ki, l % ow + kj]
    cols = signed_values(rng, signs)
    want = np.zeros((2, 3, 3, 4), np.float32)
    for c in range(3):
        for ki in range(k):
            for kj in range(k):
                for l in range(oh * ow):
                    want[:, c, l // ow + ki, l % ow + kj] += cols[:, (c * k + ki) * k + kj, l]
    return cols, want


def prelu_case(rng):
    """Prelu with weights (2, -3): x > 0 kept, else weight * x (+-inf included, no NaN: the A2/A3
    card's max/min on NaN is not documented)."""
    x = signed_values(rng, rng.choice(np.float32([-1, 1]), size=(2, 2, 3, 4)))
    x = np.where(np.isnan(x), np.float32(-64), x)
    w = np.float32([2, -3])
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.where(x > 0, x, w[None, :, None, None] * x)
    return (x, w), want


def prelu_backward_case(rng):
    """PreluBackward: x < 0 in channel 0 with positive gradients (every x * g term negative and
    huge), x > 0 in channel 1 (no terms); weights (300, 2): 300 * g overflows fp16."""
    x = np.stack([-signed_values(rng, np.ones((2, 3, 4), np.float32), specials=False),
                  signed_values(rng, np.ones((2, 3, 4), np.float32), specials=False)], axis=1)
    g = signed_values(rng, np.ones(x.shape, np.float32), specials=False)
    w = np.float32([300, 2])
    grad_input = np.where(x > 0, g, w[None, :, None, None] * g)
    grad_weight = np.float32([(x[:, 0] * g[:, 0]).sum(dtype=np.float32), 0.0])
    return (g, x, w), (grad_input, grad_weight)


def launch(op, args, outputs, stream=None):
    """pyaclnn.run_op on `stream` (None: the default stream) with NumPy arrays as tensors and
    tuples as aclIntArrays; `outputs` are (shape, dtype) pairs; returns them as NumPy arrays."""
    handles = []

    def handle(value):
        if isinstance(value, np.ndarray):
            handles.append(pyaclnn.Tensor.from_numpy(np.ascontiguousarray(value)))
        elif isinstance(value, tuple):
            handles.append(pyaclnn.IntArray(list(value)))
        else:
            return value
        return handles[-1]

    made = [handle(np.zeros(shape, dtype)) for shape, dtype in outputs]
    try:
        pyaclnn.run_op(op, *[handle(value) for value in args], *made, stream=stream)
        return [tensor.numpy().copy() for tensor in made]
    finally:
        for item in handles:
            item.close()


def run_computed(op, rng, dtype, stream=None):
    """(outputs, fp32 references) of one computed operator on fp16/bf16 inputs."""
    if op == "pad_backward":
        (g, x), want = pad_backward_case(rng)
        args, outputs = (g.astype(dtype), x.astype(dtype), (1, 1, 1, 1)), [(x.shape, dtype)]
        return launch("ReplicationPad2dBackward", args, outputs, stream), [want]
    if op == "upsample_backward":
        g, want = upsample_backward_case(rng)
        args = (g.astype(dtype), (12,), (2, 3, 6), 0.0)
        return launch("UpsampleNearestExact1dBackward", args, [(want.shape, dtype)], stream), [want]
    if op == "col2im":
        cols, want = col2im_case(rng)
        args = (cols.astype(dtype), (3, 4), (2, 2), (1, 1), (0, 0), (1, 1))
        return launch("Im2colBackward", args, [(want.shape, dtype)], stream), [want]
    if op == "prelu":
        (x, w), want = prelu_case(rng)
        return launch("Prelu", (x.astype(dtype), w.astype(dtype)), [(x.shape, dtype)], stream), [want]
    (g, x, w), wants = prelu_backward_case(rng)
    outputs = [(x.shape, dtype), (w.shape, dtype)]
    return launch("PreluBackward", (g.astype(dtype), x.astype(dtype), w.astype(dtype)), outputs, stream), list(wants)


@pytest.fixture
def saturating_stream():
    """aclrtSetDeviceSatMode(SATURATION), then a stream created after it (streams copy the
    device's mode when they are created); INF/NaN again and the stream destroyed afterwards."""
    made = []

    def make():
        assert lib.aclrtSetDeviceSatMode(SATURATION) == 0
        made.append(pyaclnn.Stream())
        return made[-1]
    yield make
    for stream in made:
        stream.close()
    with pyaclnn.soc("Ascend910B"):
        assert lib.aclrtSetDeviceSatMode(INFNAN) == 0


# ---- computed outputs -----------------------------------------------------------------------------

# Every product in its default mode, and the two that can switch, on a stream made after switching.
MODES = [(product, "default") for product in PRODUCTS] + [(product, "saturation") for product in sorted(SWITCHABLE)]


@pytest.mark.parametrize("op", ["pad_backward", "upsample_backward", "col2im", "prelu", "prelu_backward"])
@pytest.mark.parametrize("product,device", MODES)
def test_computed_fp16_outputs(saturating_stream, op, product, device):
    """fp16 results beyond 65504: Inf (and NaN) in INF/NaN mode, +-65504 (and +0) where the product
    only saturates or the stream was made in saturation mode."""
    with pyaclnn.soc(product):
        stream = saturating_stream() if device == "saturation" else None
        saturate = product in SATURATION_ONLY or device == "saturation"
        outs, wants = run_computed(op, np.random.default_rng(7), np.float16, stream)
    if op == "prelu_backward" and not saturate and product in ("Ascend910B", "Ascend910_93"):
        # A2/A3's TBE PReluGradUpdate adds 0 * dx to each weight term: channel 0's gradInput
        # overflows fp16 to inf in INF/NaN mode, so its weight gradient is NaN (docs/precision.md,
        # PreluBackward); in saturation mode dx is 65504 and the term stays finite.
        wants[1] = np.float32([np.nan, 0.0])
    for got, want in zip(outs, wants):
        assert_same(got, narrow(want, np.float16, saturate))
    if saturate:  # the case must reach the rule
        assert any((np.abs(w) > 65504).any() for w in wants)


def test_streams_keep_the_mode_they_were_created_in(saturating_stream):
    """A2, as CANN's aclrtSetDeviceSatMode page says: the mode applies to streams created after
    the call.  The default stream and a stream made before keep INF/NaN; a stream made after
    saturates, and keeps saturating after the device goes back to INF/NaN, while a stream made then
    does not.  aclrtGetDeviceSatMode reports the device's mode."""
    mode = ffi.new("aclrtFloatOverflowMode *")
    (g, x), want = pad_backward_case(np.random.default_rng(3))
    g, x = g.astype(np.float16), x.astype(np.float16)
    ieee, saturated = narrow(want, np.float16, False), narrow(want, np.float16, True)
    assert np.isinf(ieee.astype(np.float32)).any()

    def pad_backward(stream):
        return launch("ReplicationPad2dBackward", (g, x, (1, 1, 1, 1)), [(x.shape, np.float16)], stream)[0]

    with pyaclnn.Stream() as before:
        switched = saturating_stream()
        assert lib.aclrtGetDeviceSatMode(mode) == 0 and mode[0] == SATURATION
        assert_same(pad_backward(None), ieee)
        assert_same(pad_backward(before), ieee)
        assert_same(pad_backward(switched), saturated)
        assert_same(F.replication_pad2d_backward(g, x, (1, 1, 1, 1)), ieee)  # functional: default stream
        assert lib.aclrtSetDeviceSatMode(INFNAN) == 0
        assert lib.aclrtGetDeviceSatMode(mode) == 0 and mode[0] == INFNAN
        assert_same(pad_backward(switched), saturated)
        with pyaclnn.Stream() as after:
            assert_same(pad_backward(after), ieee)


def test_bf16_saturates_and_fp32_does_not(saturating_stream):
    """A2 in saturation mode: bf16 sums beyond bf16's range give +-bf16 max; the same sums in
    fp32 stay +-inf (the mode's documented types are half results and narrowing casts)."""
    stream = saturating_stream()
    big = np.float32(ml_dtypes.bfloat16(2.5e38))
    g = np.tile(np.float32([big, big, -big, -big, 1, 2]), (1, 2, 1))  # inputs: 5e38, -5e38, 3
    with np.errstate(over="ignore"):
        want = g[..., 0::2] + g[..., 1::2]
    args = ((6,), (1, 2, 3), 0.0)
    out_bf16, = launch("UpsampleNearestExact1dBackward", (g.astype(ml_dtypes.bfloat16),) + args,
                       [((1, 2, 3), ml_dtypes.bfloat16)], stream)
    out_f32, = launch("UpsampleNearestExact1dBackward", (g,) + args, [((1, 2, 3), np.float32)], stream)
    assert_same(out_bf16, narrow(want, ml_dtypes.bfloat16, True))
    assert out_bf16.astype(np.float32)[0, 0, 0] == float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    assert_same(out_f32, want)
    assert np.isinf(out_f32[0, 0, :2]).all()


@pytest.mark.parametrize("product", ["Ascend910", "Ascend310P"])
def test_fp32_outputs_keep_ieee_on_saturation_only_products(product):
    (g, x), want = pad_backward_case(np.random.default_rng(11))
    with pyaclnn.soc(product):
        got = F.replication_pad2d_backward(g, x.astype(np.float32), (1, 1, 1, 1))
    assert_same(got, want)
    assert np.isinf(got).any() and np.isnan(got).any()


# ---- copies ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("product,device", [("Ascend910", "default"), ("Ascend310P", "default"),
                                            ("Ascend910B", "saturation")])
def test_copies_keep_inf_and_nan(saturating_stream, product, device):
    x = np.float16([[[[np.inf, -np.inf, np.nan], [65504, -65504, 1]]]])
    with pyaclnn.soc(product):
        stream = saturating_stream() if device == "saturation" else None
        padded, = launch("ReplicationPad2d", (x, (1, 1, 1, 1)), [((1, 1, 4, 5), np.float16)], stream)
        columns, = launch("Im2col", (x, (2, 2), (1, 1), (0, 0), (1, 1)), [((1, 4, 2), np.float16)], stream)
        resized, = launch("UpsampleNearestExact1d", (x[0], (6,), 0.0), [((1, 2, 6), np.float16)], stream)
    assert_same(padded, np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="edge"))
    # 2x2 windows at columns 0 and 1: row ki*2 + kj of the columns holds x[ki, l + kj].
    assert_same(columns, np.float16([[[x[0, 0, ki, l + kj] for l in range(2)] for ki in range(2) for kj in range(2)]]))
    assert_same(resized, np.repeat(x[0], 2, axis=-1))


# ---- the product and the API ----------------------------------------------------------------------

@pytest.mark.parametrize("product", PRODUCTS)
def test_set_and_get_per_product(product):
    """CANN runtime's rtSetDeviceSatMode: a mode the chip lacks is refused with
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT and a message; saturation on a saturation-only chip succeeds
    and records nothing, so an A2 product selected next is still in INF/NaN mode."""
    mode = ffi.new("aclrtFloatOverflowMode *")
    with pyaclnn.soc(product):
        assert lib.aclrtGetDeviceSatMode(mode) == 0
        assert mode[0] == (SATURATION if product in SATURATION_ONLY else INFNAN)
        sat = lib.aclrtSetDeviceSatMode(SATURATION)
        message = lib.aclGetRecentErrMsg()
        sat_message = b"" if message == ffi.NULL else ffi.string(message)
        infnan = lib.aclrtSetDeviceSatMode(INFNAN)
        message = lib.aclGetRecentErrMsg()
        infnan_message = b"" if message == ffi.NULL else ffi.string(message)
        if product in SATURATION_ONLY:
            assert lib.aclrtSetDeviceSatMode(SATURATION) == 0
    assert sat == (FEATURE_NOT_SUPPORT if product == "Ascend950" else 0)
    assert infnan == (FEATURE_NOT_SUPPORT if product in SATURATION_ONLY else 0)
    assert (b"Ascend950 supports only the INF/NaN mode" in sat_message) == (product == "Ascend950")
    assert (b"supports only the saturation mode" in infnan_message) == (product in SATURATION_ONLY)
    with pyaclnn.soc("Ascend910B"):
        assert lib.aclrtGetDeviceSatMode(mode) == 0 and mode[0] == INFNAN


# ---- MaxPool2dWithMask on Ascend910: FLOAT computed as FLOAT16 --------------------------------------

def saturating_fp16(values):
    return narrow(values, np.float16, True).astype(np.float32)


def test_910_max_pool_forward_cast_saturates():
    """The op_api cast FLOAT -> FLOAT16 runs in saturation mode: 1e6 and 70000 both become 65504
    (a tie: the first in window order wins), NaN becomes 0 and wins over negatives."""
    x = np.float32([[[[1e6, 70000, np.nan, -5], [3, 4, -1e6, -7]]]])
    with pyaclnn.soc("Ascend910"):
        out, mask = F.max_pool2d_with_mask(x, 2, 2)
        indices = indices_from_mask(mask, out.shape, x.shape, 2, kernel_size=2, layout="v1")
    cast = saturating_fp16(x)
    windows = cast[0, 0].reshape(2, 2, 2).transpose(1, 0, 2).reshape(2, 4)  # cells in window order
    first = windows.argmax(axis=1)
    assert_same(out.reshape(-1), windows[np.arange(2), first])
    np.testing.assert_array_equal(indices.reshape(-1), [(c // 2) * 4 + w * 2 + c % 2 for w, c in enumerate(first)])
    with pyaclnn.soc("Ascend910B"):  # A2 computes FLOAT natively: IEEE
        out_a2, _ = F.max_pool2d_with_mask(x, 2, 2)
    assert out_a2.reshape(-1)[0] == np.float32(1e6) and np.isnan(out_a2.reshape(-1)[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("grads", [[40000, 40000], [np.inf, -1], [np.nan, 5]])
def test_910_max_pool_backward_saturates(dtype, grads):
    """Ascend910's backward chain: gradOutput cast to fp16 (FLOAT only), fp32 sums in the window
    cells, one narrowing to fp16 - all in saturation mode; FLOAT comes back widened.  Both 2x2
    windows (stride 1) of x have their maximum at (0, 1), so it receives both gradients."""
    x = np.array([[[[0, 9, 0], [0, 0, 0]]]], dtype)
    g = np.array([[[grads]]], np.float32)
    with pyaclnn.soc("Ascend910"):
        _, mask = F.max_pool2d_with_mask(x, 2, 1)
        got = F.max_pool2d_with_mask_backward(g.astype(dtype), x, mask, 2, 1)
    cast = saturating_fp16(g) if dtype == np.float32 else g.astype(np.float16).astype(np.float32)
    want = np.zeros(x.shape, np.float32)
    want[0, 0, 0, 1] = cast.sum()
    assert_same(got, narrow(want, np.float16, True).astype(dtype))
    with pyaclnn.soc("Ascend910B"):  # A2: no cast, the sums in INF/NaN mode
        _, mask = F.max_pool2d_with_mask(x, 2, 1)
        ieee = F.max_pool2d_with_mask_backward(g.astype(dtype), x, mask, 2, 1)
    want[0, 0, 0, 1] = g.astype(dtype).astype(np.float32).sum()
    assert_same(ieee, want if dtype == np.float32 else narrow(want, np.float16, False))
