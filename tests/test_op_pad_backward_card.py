"""aclnnReplicationPad2dBackward computes, on each product, what the card's kernel computes there
(docs/precision.md, "ReplicationPad2dBackward").

The reference is reference.replication_pad2d_backward_a2: the loops of Atlas A2/A3's
PadV3GradReplicate kernels (ops-math:conversion/pad_v3_grad_replicate/op_kernel), chosen by the
tiling key as pad_v3_grad_replicate_tiling.cpp does, with its own fp32 -> fp16 roundings
(reference.f32_to_f16: CAST_RINT and CAST_ROUND written out).  Ascend950's SIMT kernel (and the
products whose kernel is not public: Ascend910, Ascend310P, and every AI-CPU case) are the
row-major reference rounded once.  Everything is compared bit for bit; PyTorch (float64) checks
the values within a tolerance.

The inputs are built to tell the orders apart: fp16 edge sums exactly halfway between two fp16
values, corners whose fp16 row sums round before the column pass, cancellations between terms of
very different sizes, -0 gradients (copied, or summed without +0, they stay -0) and overflow; the
shapes reach every tiling key (H, W of gradOutput on both sides of 64, no H / no W padding, both,
neither) and the AI-CPU cases (a pad > 7 with H padded).
"""
import textwrap

import ml_dtypes
import numpy as np
import pytest
import torch

import pyaclnn
from pyaclnn.functional import replication_pad2d_backward
from pyaclnn.testing import assert_bitwise_equal
import reference as ref
import tiers

BF16 = ml_dtypes.bfloat16
PRODUCTS = ["Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"]
CARD = ("Ascend910B", "Ascend910_93")
DTYPES = [np.float32, np.float16, BF16]


def expected(g, shape, pad, product):
    """What `product` computes: the A2/A3 kernels where they run, else row-major from +0 in
    fp32, rounded once to nearest even."""
    if product in CARD and ref.a2_runs_on_ai_core(pad, g.dtype):
        return ref.replication_pad2d_backward_a2(g, shape, pad)
    with np.errstate(over="ignore"):                     # fp16 overflow: Inf in INF/NaN mode
        out = ref.replication_pad2d_backward(g, shape, pad, np.float32).astype(g.dtype)
    return ref.saturation_mode(out) if product in ref.SATURATION_ONLY else out


def run(g, shape, pad, product):
    with pyaclnn.soc(product):
        return replication_pad2d_backward(g, np.zeros(shape, g.dtype), list(pad))


def padded(shape, pad, dtype, values):
    g = np.asarray(values, np.float32).reshape(ref.padded_shape(shape, pad))
    return g.astype(dtype)


# ---- crafted cases ---------------------------------------------------------------------------

def test_fp16_edge_ties_round_away_without_h_padding(acl):
    # W padded only (_w.h): an edge sum exactly halfway between two fp16 values rounds away
    # from zero on A2/A3 (CAST_ROUND), to even elsewhere.  Row: [g0, g1, g2, g3], pads 1 | 1.
    tie = 2.0 ** -11                     # 1 + 2^-11 lies halfway between 1 and 1 + 2^-10
    g = padded((1, 1, 2, 2), (1, 1, 0, 0), np.float16,
               [[tie, 1.0, -1.0, -tie], [1.0, 2 * tie, 3.0, 0.5 * 2 ** -9]])
    away = run(g, (1, 1, 2, 2), (1, 1, 0, 0), "Ascend910B")[0, 0]
    even = run(g, (1, 1, 2, 2), (1, 1, 0, 0), "Ascend950")[0, 0]
    assert away[0].tolist() == [1.0 + 2 * tie, -1.0 - 2 * tie]
    assert even[0].tolist() == [1.0, -1.0]
    # 3 + 2^-10 is halfway between 3 and 3 + 2^-9: away gives 3 + 2^-9, even gives 3
    assert away[1, 1] == np.float16(3.0 + 2.0 ** -9) and even[1, 1] == np.float16(3.0)
    assert_bitwise_equal(away, expected(g, (1, 1, 2, 2), (1, 1, 0, 0), "Ascend910B")[0, 0])


@pytest.mark.parametrize("big", [False, True], ids=["mini", "large"])
def test_fp16_corner_rounded_twice_in_the_large_kernels(acl, big):
    # pads 1 everywhere, corner (0, 0) = column sums g[1][c] + g[0][c] for c = 1, 0, then
    # v[1] + v[0].  Column 0 sums to 1 + 2^-11 (a tie: fp16 1.0), column 1 to 2^-11.  The mini
    # kernel keeps the column sums in fp32: 1 + 2^-10; the kernels for gradOutput wider or
    # taller than 64 store them as fp16 first: 1.0 + 2^-11 -> 1.0.
    shape = (1, 1, 4, 70 if big else 4)
    g = np.zeros(ref.padded_shape(shape, (1, 1, 1, 1)), np.float16)
    g[0, 0, 0, 0], g[0, 0, 1, 0] = 2.0 ** -11, 1.0
    g[0, 0, 1, 1] = 2.0 ** -11
    gi = run(g, shape, (1, 1, 1, 1), "Ascend910B")
    assert gi[0, 0, 0, 0] == np.float16(1.0 if big else 1.0 + 2.0 ** -10)
    assert run(g, shape, (1, 1, 1, 1), "Ascend950")[0, 0, 0, 0] == np.float16(1.0 + 2.0 ** -10)
    assert_bitwise_equal(gi, expected(g, shape, (1, 1, 1, 1), "Ascend910B"))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("pad", [(1, 2, 2, 1), (0, 0, 2, 1), (2, 1, 0, 0), (0, 0, 0, 0)],
                         ids=["both", "h-only", "w-only", "none"])
def test_minus_zero_gradients(acl, dtype, pad):
    # The card copies untouched elements and sums edge-first without a +0 start, so -0 stays
    # -0 - except the H-only kernel's edge rows, which start from +0.  Row-major sums from +0.
    shape = (2, 2, 5, 6)
    g = np.full(ref.padded_shape(shape, pad), -0.0, np.float32).astype(dtype)
    card = run(g, shape, pad, "Ascend910B")
    signs = np.signbit(card.astype(np.float32))
    if pad == (0, 0, 2, 1):
        assert not signs[..., [0, -1], :].any() and signs[..., 1:-1, :].all()
    else:
        assert signs.all()
    assert not np.signbit(run(g, shape, pad, "Ascend950").astype(np.float32)).any()
    assert_bitwise_equal(card, expected(g, shape, pad, "Ascend910B"))


SIGNALLING_NAN = {np.dtype(np.float32): (np.uint32, 0x7F800001, 0x7FC00001),
                  np.dtype(np.float16): (np.uint16, 0x7D00, 0x7F00),
                  np.dtype(BF16): (np.uint16, 0x7F81, 0x7FC1)}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_interior_signalling_nan_copied_on_a2(acl, dtype):
    # An element with one contribution is a copy on A2/A3 (every bit kept); Ascend950 computes
    # 0 + x, which makes it quiet.
    bits, signalling, quiet = SIGNALLING_NAN[np.dtype(dtype)]
    shape, pad = (1, 1, 4, 5), (1, 1, 1, 1)
    g = np.ones(ref.padded_shape(shape, pad), dtype)
    g.view(bits)[0, 0, 2, 3] = signalling                 # gradInput (1, 2): inside
    assert run(g, shape, pad, "Ascend910B").view(bits)[0, 0, 1, 2] == signalling
    assert run(g, shape, pad, "Ascend950").view(bits)[0, 0, 1, 2] == quiet


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_overflow_to_inf(acl, dtype):
    big = {np.dtype(np.float32): 3e38, np.dtype(np.float16): 60000.0, np.dtype(BF16): 3e38}[np.dtype(dtype)]
    shape, pad = (1, 1, 4, 70), (1, 1, 1, 1)
    g = np.full(ref.padded_shape(shape, pad), big, np.float32).astype(dtype)
    for product in ("Ascend910B", "Ascend950"):
        gi = run(g, shape, pad, product)
        assert np.isinf(gi[0, 0, 0, 0].astype(np.float32)) and gi[0, 0, 1, 1] == g[0, 0, 2, 2]
        assert_bitwise_equal(gi, expected(g, shape, pad, product))


def test_fp32_order_differs_from_row_major_by_cancellation(acl):
    # Bottom edge of the H-only kernel: +0 + g[last] + g[last-1] + g[last-2]: 1 + 2^24 - 2^24 = 0
    # after the first two round; row-major adds 2^24 - 2^24 first and keeps the 1.
    shape, pad = (1, 1, 3, 1), (0, 0, 0, 2)
    g = np.array([5.0, 6.0, -2.0 ** 24, 2.0 ** 24, 1.0], np.float32).reshape(1, 1, 5, 1)
    assert run(g, shape, pad, "Ascend910B")[0, 0, 2, 0] == 0.0
    assert run(g, shape, pad, "Ascend950")[0, 0, 2, 0] == 1.0


# ---- every key, product, dtype, tier and thread count ------------------------------------------

# (self shape, padding [left, right, top, bottom]) -> the A2/A3 kernel it reaches
KEY_CASES = [
    ((2, 3, 10, 20), (0, 0, 2, 3)),     # _h.h (W unpadded)
    ((2, 3, 6, 70), (3, 2, 0, 0)),      # _w.h (H unpadded), whole row in one chunk and not
    ((1, 2, 4, 40), (12, 9, 0, 0)),     # _w.h with pads > 7 (still AI-Core without H padding)
    ((2, 2, 30, 40), (1, 2, 3, 1)),     # _h_w_mini.h
    ((1, 2, 60, 58), (2, 4, 1, 3)),     # mini at gradOutput 64 x 64
    ((1, 2, 58, 59), (3, 3, 3, 3)),     # small H, large W: gradOutput 64 x 65
    ((1, 2, 59, 58), (3, 3, 3, 3)),     # large H, small W: gradOutput 65 x 64
    ((1, 3, 128, 128), (1, 1, 1, 1)),   # large (the benchmark's pads)
    ((1, 2, 70, 90), (7, 7, 7, 7)),     # large, the widest AI-Core pads
    ((1, 2, 5, 6), (0, 0, 0, 0)),       # no padding: mini, a copy
    ((1, 2, 20, 30), (8, 1, 2, 1)),     # a pad > 7 with H padded: AI-CPU (row-major)
    ((1, 2, 30, 10), (0, 0, 9, 8)),     # the same through the W-unpadded test
]

SWEEP_SCRIPT = textwrap.dedent("""
    import hashlib, sys, numpy as np, ml_dtypes
    sys.path.insert(0, "tests")
    import pyaclnn
    from pyaclnn.functional import replication_pad2d_backward
    import reference as ref
    from test_op_pad_backward_card import DTYPES, KEY_CASES, PRODUCTS, accepted, expected, gradients
    digest = hashlib.sha256()
    rng = np.random.default_rng(41)
    for shape, pad in KEY_CASES:
        for dtype in DTYPES:
            if not accepted(pad, dtype):
                continue
            g = gradients(rng, ref.padded_shape(shape, pad), dtype)
            for product in PRODUCTS:
                with pyaclnn.soc(product):
                    gi = replication_pad2d_backward(g, np.zeros(shape, dtype), list(pad))
                want = expected(g, shape, pad, product)
                assert gi.tobytes() == want.tobytes(), (product, shape, pad, np.dtype(dtype).name)
                digest.update(gi.tobytes())
    print(digest.hexdigest())
""")


def gradients(rng, shape, dtype):
    """Values that tell orders and roundings apart: fp16-representable magnitudes 2^-12 .. 2^12
    (so fp32 sums of a few are exact, and fp16 results hit ties), a few large ones that cancel
    or overflow in fp16, and -0 in one place in eight."""
    mantissa = rng.integers(1024, 2048, size=shape) / 1024.0
    g = mantissa * np.exp2(rng.integers(-12, 13, size=shape)) * rng.choice([-1.0, 1.0], size=shape)
    g = np.where(rng.random(shape) < 0.02, rng.choice([-1.0, 1.0], size=shape) * 2.0 ** 15, g)
    g = np.where(rng.random(shape) < 0.125, -0.0, g).astype(np.float32)
    if np.dtype(dtype) == np.dtype(np.float32):
        g = g + np.float32(2.0 ** -20) * rng.standard_normal(shape).astype(np.float32)   # inexact sums
    return g.astype(dtype)


def test_every_key_product_and_dtype_on_every_tier_and_thread_count():
    tiers.assert_same_output(SWEEP_SCRIPT, tiers.sweep(threads=(1, 2)), timeout=600)


def accepted(pad, dtype):
    """op_api rejects bf16 with H padded and a pad > 7."""
    return not (np.dtype(dtype) == np.dtype(BF16) and (pad[2] or pad[3]) and max(pad) > 7)


TOLERANCE_CASES = [(s, p, d) for s, p in KEY_CASES for d in DTYPES if accepted(p, d)]


@pytest.mark.parametrize("shape,pad,dtype", TOLERANCE_CASES,
                         ids=["x".join(map(str, s)) + "-p" + "_".join(map(str, p)) + "-" + np.dtype(d).name
                              for s, p, d in TOLERANCE_CASES])
def test_card_values_within_torch_tolerance(acl, rng, shape, pad, dtype):
    g = gradients(rng, ref.padded_shape(shape, pad), dtype)
    gi = run(g, shape, pad, "Ascend910B").astype(np.float64)
    g64 = torch.from_numpy(g.astype(np.float64))
    exact = torch.ops.aten.replication_pad2d_backward(g64, torch.zeros(shape, dtype=torch.float64),
                                                     list(pad)).numpy()
    magnitude = torch.ops.aten.replication_pad2d_backward(g64.abs(), torch.zeros(shape, dtype=torch.float64),
                                                         list(pad)).numpy()
    ulp = {np.dtype(np.float32): 2.0 ** -23, np.dtype(np.float16): 2.0 ** -10,
           np.dtype(BF16): 2.0 ** -7}[np.dtype(dtype)]
    terms = (max(pad[0], pad[1]) + 1) * (max(pad[2], pad[3]) + 1)
    finite = np.isfinite(gi)
    assert np.all(np.abs(gi - exact)[finite] <= (2 * ulp * terms * magnitude + 2.0 ** -24)[finite])
    # fp16 overflow is the only way to Inf here
    assert np.all(finite | (magnitude > 65504))
