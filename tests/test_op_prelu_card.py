"""Prelu and PreluBackward compute the card's arithmetic on every product (docs/precision.md,
"Prelu" and "PreluBackward"), bit for bit against tests/reference.py's NumPy transcription of the
sources' formulas (reference.prelu, reference.prelu_backward_terms): the 950's AscendC selects,
the TBE kernels' after-v200 branch (A2/A3/310P) and pre-v200 branch (Ascend910), every update
term rounded to the dtype, 0 * inf spreading NaN, fp16 saturation of the intermediates on the
products that only have saturation mode.

The checks run inside fresh processes, one per SIMD tier and thread count (tests/tiers.py, and
ACLNN_NO_AVX512FP16), and those print the same digest.  gradWeight is compared bit for bit on every weight value whose terms
add up exactly in fp32 (then every summation order gives the same bits; the inputs are built so
that most do), and within a bound of the float64 sum otherwise: the card's fp32 reduce order is
not in the sources.  A zero gradWeight is compared as +0 (the library's sum starts from +0; the
card's is open).  Final outputs that overflow fp16 on Ascend910/310P are compared with inf and
65504 taken as equal: saturating final outputs is the shared overflow-mode pass's job.
"""
import textwrap

import numpy as np
import pytest
import torch

import pyaclnn
from pyaclnn.functional import prelu, prelu_backward
import tiers
from op_helpers import BF16, to_torch

torch.set_num_threads(1)

CHECK_SCRIPT = textwrap.dedent(r'''
    import hashlib
    import sys

    import numpy as np

    sys.path.insert(0, "tests")
    import pyaclnn
    import reference as ref
    from op_helpers import BF16, assert_bits
    from pyaclnn.functional import prelu, prelu_backward

    SOCS = ["Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"]
    SATURATING = ("Ascend910", "Ascend310P")

    def dtypes(soc):
        return [np.float32, np.float16] + ([] if soc in SATURATING else [BF16])

    def dyadic(rng, shape, ks=(1, 3), js=(-1, 0, 1)):
        """+-k * 2^j: products have 4 bits and a narrow exponent range, so long sums are exact."""
        v = rng.choice(ks, shape) * 2.0 ** rng.choice(js, shape) * rng.choice([-1.0, 1.0], shape)
        return v.astype(np.float32)

    def with_specials(a, rng, values):
        flat = a.reshape(-1).copy()
        flat[rng.choice(flat.size, size=len(values), replace=False)] = values
        return flat.reshape(a.shape)

    INF, NAN = np.inf, np.nan
    # (x, g, w) triples, one weight value each: every gradWeight is one term, so exact
    EDGE = [
        (-0.0, 1.0, 0.5), (0.0, 1.0, 0.5), (-0.0, -1.0, 0.5),
        (2.0, 3.0, -0.0), (-2.0, 3.0, -0.0), (-2.0, -3.0, -0.0), (-2.0, 3.0, 0.0),
        (2.0, 3.0, INF), (2.0, 3.0, -INF), (2.0, 3.0, NAN), (-2.0, 3.0, INF), (0.0, 3.0, INF),
        (INF, 1.0, 0.5), (-INF, 1.0, 0.5), (2.0, INF, 0.5), (2.0, -INF, 0.5), (-2.0, INF, 0.5),
        (NAN, 1.0, 0.5), (-1.0, NAN, 0.5), (2.0, NAN, 0.5), (2.0, -0.0, 0.5), (-2.0, -0.0, 0.5),
        (-2.0 ** -13, 2.0 ** -13, 0.5), (-2.0 ** -12, 2.0 ** -13, 0.5), (-3 * 2.0 ** -13, 2.0 ** -13, 0.5),
        (-2.0 ** -12, 3 * 2.0 ** -12, 0.5),                     # fp16 products below and at 2^-25
        (-300.0, 300.0, 0.5), (-256.0, 256.0, 0.5),             # fp16 update overflow, and 65536
        (-1.0, 300.0, 300.0), (-1.0, -300.0, 300.0),            # fp16 gradInput overflow
        (-1.0, 208.0, 315.0), (-1.0, 208.0, 314.5),             # 65520 (ties to inf) and below
        (-1.0, float.fromhex("0x1.02p64"), float.fromhex("0x1.fcp63")),  # bf16 gradInput overflow
        (-(1 + 2.0 ** -10), 1.5, 0.5), (-(1 + 2.0 ** -7), 1.5, 0.5),  # per-term ties (fp16, bf16)
        (-(1 + 3 * 2.0 ** -10), 1.5, 0.5),
        (2.0 ** -130, 3.0, 0.5), (2.0 ** -149, 3.0, 0.5), (2.0 ** -126, 3.0, 0.5),  # fp32 subnormal x
        (3 * 2.0 ** -131, -5.0, -0.25), (2.0 ** -127, 2.0, NAN),
    ]

    def cases(dtype, rng):
        x, g, w = (np.array(c, np.float32)[None, :] for c in zip(*EDGE))
        yield "edge", x, g, w.reshape(-1)
        shape = (2, 3, 2100)                                    # plane mode: vector bodies and tails
        yield "plane", dyadic(rng, shape), dyadic(rng, shape), np.float32([0.5, -1.5, 3.0])
        specials = [-0.0, 0.0, NAN, INF, -INF]
        yield ("plane specials", with_specials(dyadic(rng, shape), rng, specials),
               with_specials(dyadic(rng, shape), rng, specials[:1] + [INF, NAN]), np.float32([0.5, -0.0, INF]))
        w = dyadic(rng, (40,))
        w[[3, 7, 11, 13, 17]] = [-0.0, INF, NAN, -INF, 0.0]
        yield "channel-last", dyadic(rng, (37, 40)), dyadic(rng, (37, 40)), w   # row mode, per-element w
        yield "single weight", dyadic(rng, (1, 1, 40000)), dyadic(rng, (1, 1, 40000)), np.float32([-0.75])
        yield "small inner", dyadic(rng, (3, 5, 4, 7)), dyadic(rng, (3, 5, 4, 7)), dyadic(rng, (5,))
        yield ("random", rng.standard_normal((4, 6, 50)).astype(np.float32) * 8,
               rng.standard_normal((4, 6, 50)).astype(np.float32) * 8, rng.standard_normal(6).astype(np.float32))

    def saturated_view(v, soc, dtype):
        """Final fp16 outputs on these products go through saturation mode (the shared pass,
        docs/precision.md "Overflow mode"): an infinite result is +-65504, a NaN result +0."""
        v = np.asarray(v)
        return ref.saturation_mode(v) if soc in SATURATING and np.dtype(dtype) == np.float16 else v

    def exact_sums(terms, axes):
        """Per weight value: are the finite terms multiples of one power of two (their lowest set
        bit) small enough that every partial sum is exact in fp32?"""
        t = np.where(np.isfinite(terms), terms, 0).astype(np.float64)
        mant, expo = np.frexp(np.where(t == 0, 1.0, t))
        digits = np.abs(mant * 2.0 ** 53).astype(np.int64)
        grain = np.where(t == 0, np.inf, (digits & -digits) * np.ldexp(1.0, expo - 53))
        grain = grain.min(axis=axes).reshape(-1)
        total = np.abs(t).sum(axis=axes).reshape(-1)
        return total < grain * 2.0 ** 24

    def check(soc, dtype, name, x32, g32, w32):
        x, g, w = x32.astype(dtype), g32.astype(dtype), w32.astype(dtype)
        what = "%s %s %s" % (soc, np.dtype(dtype).name, name)
        y = prelu(x, w)
        assert_bits(saturated_view(y, soc, dtype), saturated_view(ref.prelu(x, w, soc=soc), soc, dtype),
                    what + " forward", nan_sign_free=True)
        gi, gw = prelu_backward(g, x, w)
        want_gi, terms = ref.prelu_backward_terms(g, x, w, soc)
        assert_bits(saturated_view(gi, soc, dtype), saturated_view(want_gi, soc, dtype), what + " gradInput",
                    nan_sign_free=True)
        axes = tuple(range(x.ndim)) if w.size == 1 or x.ndim <= 1 else (0,) + tuple(range(2, x.ndim))
        sums = terms.astype(np.float64).sum(axis=axes).reshape(-1)
        got = np.asarray(gw).reshape(-1)
        want_nan = np.isnan(sums) & ~(soc in SATURATING and np.dtype(dtype) == np.float16)
        np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), want_nan, what + " gradWeight NaN")
        exact = exact_sums(terms, axes) & ~np.isnan(sums)
        want = (np.float32(sums) + np.float32(0)).astype(dtype)
        assert_bits(saturated_view(got[exact], soc, dtype), saturated_view(want[exact], soc, dtype),
                    what + " gradWeight")
        mag = np.abs(np.where(np.isfinite(terms), terms, 0)).astype(np.float64).sum(axis=axes).reshape(-1)
        eps = {2: 2.0 ** -11 if np.dtype(dtype) == np.float16 else 2.0 ** -8, 4: 2.0 ** -24}[np.dtype(dtype).itemsize]
        rest = ~exact & np.isfinite(sums)
        err = np.abs(got[rest].astype(np.float64) - sums[rest])
        assert np.all(err <= mag[rest] * 2.0 ** -24 * 64 + np.abs(sums[rest]) * eps), (what, err)
        canon = lambda a: np.where(np.isnan(a.astype(np.float32)), 0, a).astype(a.dtype).tobytes()
        return canon(y) + canon(gi) + canon(got), int(exact.sum())

    digest, exact = hashlib.sha256(), 0
    for soc in SOCS:
        pyaclnn.set_soc_version(soc)
        for dtype in dtypes(soc):
            for name, x32, g32, w32 in cases(dtype, np.random.default_rng(5)):
                out, n_exact = check(soc, dtype, name, x32, g32, w32)
                digest.update(out)
                exact += n_exact
    print(exact, digest.hexdigest())
''')


def test_card_bits_on_every_product_tier_and_thread_count():
    """tiers.sweep at 1 and 2 threads, and the best tier without AVX512-FP16 (whose fp16 update
    terms are one vmulph on a CPU that has it)."""
    runs = tiers.sweep(threads=(1, 2)) + [tiers.Run(threads=2, extra=(("ACLNN_NO_AVX512FP16", "1"),))]
    outs = tiers.outputs(CHECK_SCRIPT, runs)
    assert len(set(outs)) == 1, outs
    assert int(outs[0].split()[0]) >= 900    # most weight values were compared bit for bit


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"])
def test_mixed_dtypes_promote_then_compute_on_every_product(soc):
    """op_api casts self and weight to the promoted dtype (fp32 for fp16 + fp32) before the kernel."""
    import reference as ref
    x = np.float16([[-0.0, 1.5, -2.0, np.inf, np.nan, 0.0]])
    w = np.float32([0.5, np.inf, -0.0, 2.0, 0.25, -np.inf])
    with pyaclnn.soc(soc):
        y = prelu(x, w)
    want = ref.prelu(x, w, soc=soc)
    assert y.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(y[ok]), np.signbit(want[ok]))
    np.testing.assert_array_equal(y[ok], want[ok])


TORCH_CASES = [(soc, dtype) for soc in ("Ascend910B", "Ascend950", "Ascend910", "Ascend310P")
               for dtype in ("fp32", "fp16", "bf16") if not (dtype == "bf16" and soc in ("Ascend910", "Ascend310P"))]


@pytest.mark.parametrize("soc,dtype_name", TORCH_CASES)
def test_torch_within_tolerance(soc, dtype_name):
    """PyTorch stays a sanity check: finite inputs agree within the dtype's tolerance (BFLOAT16 is
    not accepted on Ascend910/310P: tests/test_products_ops.py checks the rejection)."""
    dtype = {"fp32": np.float32, "fp16": np.float16, "bf16": BF16}[dtype_name]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6, 33)).astype(np.float32).astype(dtype)
    g = rng.standard_normal((4, 6, 33)).astype(np.float32).astype(dtype)
    w = rng.standard_normal(6).astype(np.float32).astype(dtype)
    with pyaclnn.soc(soc):
        y = prelu(x, w)
        gi, gw = prelu_backward(g, x, w)
    xt = to_torch(x).double().requires_grad_()
    wt = to_torch(w).double().requires_grad_()
    yt = torch.nn.functional.prelu(xt, wt)
    yt.backward(to_torch(g).double())
    eps = {np.dtype(np.float32): 1e-6, np.dtype(np.float16): 2e-3, np.dtype(BF16): 1.6e-2}[np.dtype(dtype)]
    f64 = lambda a: np.asarray(a).astype(np.float64)
    np.testing.assert_allclose(f64(y), yt.detach().numpy(), rtol=eps, atol=eps)
    np.testing.assert_allclose(f64(gi), xt.grad.numpy(), rtol=eps, atol=eps)
    scale = np.abs(f64(x) * f64(g)).sum(axis=(0, 2))
    assert np.all(np.abs(f64(gw) - wt.grad.numpy()) <= scale * eps + 1e-6)
