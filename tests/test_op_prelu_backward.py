"""aclnnPreluBackward against the NumPy reference (reference.prelu_backward) and
torch.ops.aten._prelu_kernel_backward plus the channel reduction PyTorch's autograd performs.

These run on the default product (Ascend910B, the TBE kernel); tests/test_op_prelu_card.py covers
every product.  gradInput = x > 0 ? g : w[c] * g is a single multiply for a finite weight:
bit-exact for every dtype.  gradWeight = sum of the update terms (x > 0 ? 0 : x * g, each rounded
to the dtype as the card's update tensor holds it) per channel: the library sums in fp32 over
fixed blocks and rounds once; checked against a float64 sum of the same terms with a bound
proportional to the sum of magnitudes.
"""
import textwrap

import numpy as np
import pytest
import torch

import pyaclnn
from pyaclnn.functional import prelu_backward
import reference as ref
import tiers
from op_helpers import (BF16, assert_bits, assert_rejected, assert_still_filled, empty_with_room, from_torch,
                        layouts, run_rebound, to_torch)

torch.set_num_threads(1)

DTYPES = [np.float32, np.float16, BF16]
IDS = ["fp32", "fp16", "bf16"]
EPS = {np.dtype(np.float32): 2.0 ** -24, np.dtype(np.float16): 2.0 ** -11, np.dtype(BF16): 2.0 ** -8}


def assert_grad_weight(got, gw, mag, dtype, n):
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    finite = np.isfinite(gw)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(gw))
    bound = mag * 2.0 ** -24 * (np.log2(max(n, 2)) + 40) + np.abs(gw) * EPS[np.dtype(dtype)] + 1e-30
    err = np.abs(got - gw)
    assert np.all(err[finite] <= bound[finite]), (got, gw, bound)


def random_signed(shape, dtype, seed=0, specials=True):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    if specials and flat.size >= 12:
        flat[rng.choice(flat.size, size=3, replace=False)] = [0.0, -0.0, np.nan]
    return x.astype(dtype)


# (self shape, weight shape, gradOutput shape or None = self's)
SHAPES = [
    ((), (1,), None),
    ((), (), None),
    ((7,), (1,), None),
    ((5,), (1, 1), (1,)),
    ((4, 3), (3,), None),                   # C is the last dim
    ((4, 3), (1,), None),
    ((2, 5, 5), (5,), None),                # C equal to the last dim (trap)
    ((2, 6), (2, 3), None),                 # multi-D weight, gradWeight [6]
    ((2, 4, 3, 5), (2, 2), (1, 4, 1, 1)),   # gradOutput broadcast from [1, C, 1, 1]
    ((2, 4, 3, 5), (4,), (4, 1, 5)),        # lower-rank gradOutput
    ((2, 4, 3, 5), (1, 1, 1), (1,)),
    ((1, 16, 4, 4), (16,), None),
    ((2, 3, 2, 2, 3), (3,), None),
    ((1, 2, 1, 3, 1, 2), (2,), (1, 2, 1, 1, 1, 1)),
    ((2, 2, 2, 2, 2, 1, 2), (1,), None),
    tuple([tuple(range(1, 9)), (2,), None]),
    ((2, 3, 20000), (3,), None),            # plane mode, two blocks per plane
    ((1, 1, 40000), (1,), None),            # single weight, several blocks
    ((300, 7, 5), (7,), None),              # row mode, several row groups
    ((3, 5000), (5000,), None),             # channel-last rows wider than a tile
    ((2, 700, 9), (700,), None),            # row mode, several channel tiles
]


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("x_shape,w_shape,g_shape", SHAPES)
def test_values(x_shape, w_shape, g_shape, dtype):
    x = random_signed(x_shape, dtype, seed=len(x_shape))
    g = random_signed(g_shape or x_shape, dtype, seed=7, specials=False)
    w = random_signed(w_shape, dtype, seed=11, specials=False)
    gi, gw = prelu_backward(g, x, w)
    ref_gi, ref_gw, mag = ref.prelu_backward(g, x, w)
    assert_bits(gi, ref_gi)
    want_gw_shape = w.shape if w.size == 1 else (w.size,)
    assert gw.shape == want_gw_shape and gw.dtype == np.dtype(dtype)
    assert_grad_weight(gw, ref_gw, mag, dtype, x.size)

    # PyTorch: the aten kernel with a broadcast weight, then autograd's reduction.
    xt = to_torch(x)
    wt = to_torch(ref.channel_view(x_shape, w))
    gt = to_torch(np.broadcast_to(g, x_shape).copy())
    t_gi, t_gw_full = torch.ops.aten._prelu_kernel_backward(gt, xt, wt)
    assert_bits(gi, from_torch(t_gi).reshape(x_shape), nan_sign_free=True)
    t_gw = t_gw_full.float().sum_to_size(wt.shape).reshape(-1).double().numpy()
    np.testing.assert_allclose(np.asarray(gw, np.float64).reshape(-1), t_gw,
                               rtol=8 * EPS[np.dtype(dtype)], atol=np.nan_to_num(mag, posinf=0).max() * 64 * EPS[np.dtype(dtype)] + 1e-30)


def test_ops_md_examples():
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    gi, gw = prelu_backward(np.ones((4, 2), np.float32), x, np.float32([0.5, 0.5]))
    np.testing.assert_array_equal(gi, np.float32([[0.5, 1], [1, 1], [1, 1], [1, 1]]))
    np.testing.assert_array_equal(gw, np.float32([0, 0]))
    x = np.float32([[-1, 2, -3], [4, -5, 0]])
    gi, gw = prelu_backward(np.float32([[1, 2, 3], [4, 5, 6]]), x, np.float32([0.1, 0.2, 0.3]))
    np.testing.assert_array_equal(gi, np.float32([[np.float32(0.1), 2, np.float32(0.3) * 3],
                                                  [4, np.float32(0.2) * 5, np.float32(0.3) * 6]]))
    np.testing.assert_array_equal(gw, np.float32([-1, -25, -9]))
    x = np.float32([[[-1, 2], [3, -4]], [[5, -6], [-7, 8]]])
    gi, gw = prelu_backward(np.ones((2, 2, 2), np.float32), x, np.float32([0.25]))
    np.testing.assert_array_equal(gi, np.float32([[[0.25, 1], [1, 0.25]], [[1, 0.25], [0.25, 1]]]))
    np.testing.assert_array_equal(gw, np.float32([-18]))


def test_strided_views_for_every_argument():
    x_shape = (2, 4, 3, 5)
    x = random_signed(x_shape, np.float32, 3)
    g = random_signed(x_shape, np.float32, 4, specials=False)
    w = random_signed((4,), np.float32, 5, specials=False)
    ref_gi, ref_gw, mag = ref.prelu_backward(g, x, w)
    views = list(layouts(x_shape, offset_view=(3, 5), every_other=(1, 1)))
    for (xl, gl, il) in zip(views, views, views):
        with pyaclnn.Tensor.strided(x, *xl) as xt, pyaclnn.Tensor.strided(g, *gl) as gt, \
                pyaclnn.Tensor.strided(w, strides=(2,), offset=1, storage_numel=9) as wt, \
                pyaclnn.Tensor.strided(np.full(x_shape, np.nan, np.float32), *il) as git, \
                pyaclnn.Tensor.strided(np.full((4,), np.nan, np.float32), strides=(3,), offset=2,
                                       storage_numel=14) as gwt:
            pyaclnn.run_op("PreluBackward", gt, xt, wt, git, gwt)
            assert_bits(git.numpy(), ref_gi)
            assert_grad_weight(gwt.numpy(), ref_gw, mag, np.float32, x.size)
            assert np.isnan(gwt.storage_numpy()).sum() == 14 - 4 + np.isnan(ref_gw).sum()


def test_repeatable_executor_with_new_addresses():
    shape = (2, 3, 8)
    data = [(random_signed(shape, np.float16, s), random_signed(shape, np.float16, s + 10, False),
             random_signed((3,), np.float16, s + 20, False)) for s in (1, 2)]
    tensors = []
    try:
        for x, g, w in data:
            tensors.append([pyaclnn.Tensor.from_numpy(g), pyaclnn.Tensor.from_numpy(x),
                            pyaclnn.Tensor.from_numpy(w),
                            pyaclnn.Tensor.empty(shape, np.float16, fill=np.nan),
                            pyaclnn.Tensor.empty((3,), np.float16, fill=np.nan)])
        first, second = tensors
        results = run_rebound("PreluBackward", first, inputs=[(i, first[i], second[i]) for i in range(3)],
                              outputs=[(i, first[3 + i], second[3 + i]) for i in range(2)])
        for (x, g, w), (gi, gw) in zip(data, results):
            ref_gi, ref_gw, mag = ref.prelu_backward(g, x, w)
            assert_bits(gi, ref_gi)
            assert_grad_weight(gw, ref_gw, mag, np.float16, x.size)
    finally:
        for group in tensors:
            for t in group:
                t.close()


@pytest.mark.parametrize("x_shape,g_shape,w_shape,gw_shape", [
    ((0, 2, 3, 2), (1, 2, 3, 2), (2,), (2,)),
    ((0, 2, 3, 2), (0, 2, 3, 2), (1, 1), (1, 1)),
    ((2, 0, 3), (2, 0, 3), (0,), (0,)),
    ((0,), (0,), (1,), (1,)),
])
def test_empty_inputs_zero_grad_weight(x_shape, g_shape, w_shape, gw_shape):
    with pyaclnn.Tensor.empty(g_shape, np.float32, fill=1.0) as gt, \
            pyaclnn.Tensor.empty(x_shape, np.float32) as xt, \
            pyaclnn.Tensor.empty(w_shape, np.float32, fill=1.0) as wt, \
            empty_with_room(x_shape) as git, \
            pyaclnn.Tensor.empty(gw_shape, np.float32, fill=np.nan) as gwt:
        pyaclnn.run_op("PreluBackward", gt, xt, wt, git, gwt)
        np.testing.assert_array_equal(gwt.numpy(), np.zeros(gw_shape, np.float32))
        assert_still_filled(git)


THREAD_SCRIPT = textwrap.dedent("""
    import hashlib, numpy as np, ml_dtypes
    from pyaclnn.functional import prelu_backward
    rng = np.random.default_rng(3)
    out = b""
    for dtype in (np.float32, ml_dtypes.bfloat16, np.float16):
        for xs, ws in (((4, 8, 60, 70), (8,)), ((4, 8, 60, 70), (1,)), ((3000, 50), (50,)),
                       ((40, 30, 9), (30,)), ((3, 7, 1001), (7,))):
            x = rng.standard_normal(xs).astype(np.float32).astype(dtype)
            g = rng.standard_normal(xs).astype(np.float32).astype(dtype)
            w = rng.standard_normal(ws).astype(np.float32).astype(dtype)
            gi, gw = prelu_backward(g, x, w)
            out += gi.tobytes() + gw.tobytes()
        # special values: subnormal products w*g (the AVX512-BF16 rounding's fallback), NaN,
        # infinities, signed zeros
        x = rng.standard_normal((2, 3, 517)).astype(np.float32)
        g = (rng.standard_normal((2, 3, 517)) * 1e-36).astype(np.float32)
        flat_x, flat_g = x.reshape(-1), g.reshape(-1)
        flat_x[::97], flat_g[5::89], flat_g[7::83], flat_x[11::61] = np.nan, np.inf, -0.0, -0.0
        w = np.array([1e-3, -2.5e-3, 0.5], np.float32)
        gi, gw = prelu_backward(g.astype(dtype), x.astype(dtype), w.astype(dtype))
        out += gi.tobytes() + gw.tobytes()
    print(hashlib.sha256(out).hexdigest())
""")


def test_bit_identical_for_any_thread_count_and_tier():
    tiers.assert_same_output(THREAD_SCRIPT, tiers.sweep())


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------
NAMES = ("gradOutput", "self", "weight", "gradInput", "gradWeight")


def _attempt(shapes=None, dtypes=None, null=None):
    shapes = dict({"gradOutput": (2, 3, 4), "self": (2, 3, 4), "weight": (3,),
                   "gradInput": (2, 3, 4), "gradWeight": (3,)}, **(shapes or {}))
    dtypes = dict({n: np.float32 for n in NAMES}, **(dtypes or {}))
    made = {}
    try:
        for n in NAMES:
            made[n] = None if null == n else pyaclnn.Tensor.empty(shapes[n], dtypes[n])
        ws, ex = pyaclnn.aclnnPreluBackwardGetWorkspaceSize(*(made[n] for n in NAMES))
        ex.close()
    finally:
        for t in made.values():
            if t is not None:
                t.close()


INVALID = [(dict(null=n), 161001, n) for n in NAMES] + [
    (dict(dtypes={n: np.float64 for n in NAMES}), 161002, "self"),
    (dict(dtypes={"self": np.int32}), 161002, "self"),
    (dict(dtypes={"gradOutput": np.float16}), 161002, "gradOutput"),
    (dict(dtypes={"weight": BF16}), 161002, "weight"),
    (dict(dtypes={"gradInput": np.float16}), 161002, "gradInput"),
    (dict(dtypes={"gradWeight": np.float16}), 161002, "gradWeight"),
    (dict(shapes={"gradOutput": (1,) * 9}), 161002, "gradOutput"),
    (dict(shapes={"self": (1,) * 9, "gradInput": (1,) * 9, "weight": (1,), "gradWeight": (1,)}),
     161002, "self"),
    (dict(shapes={"weight": (1,) * 9, "gradWeight": (1,)}), 161002, "weight"),
    (dict(shapes={"gradInput": (2, 3, 5)}), 161002, "gradInput"),
    (dict(shapes={"self": (), "gradOutput": (), "gradInput": (), "weight": (2,), "gradWeight": (2,)}),
     161002, "self"),
    (dict(shapes={"weight": (0,)}), 161002, "weight"),
    (dict(shapes={"weight": (4,)}), 161002, "weight"),
    (dict(shapes={"gradWeight": (1, 3)}), 161002, "gradWeight"),
    (dict(shapes={"weight": (1, 3), "gradWeight": (1, 3)}), 161002, "gradWeight"),
    (dict(shapes={"weight": (1, 1), "gradWeight": (1,)}), 161002, "gradWeight"),
    (dict(shapes={"gradOutput": (2, 4, 4)}), 161002, "gradOutput"),
    (dict(shapes={"gradOutput": (3, 3, 4)}), 161002, "gradOutput"),
    (dict(shapes={"gradOutput": (1, 2, 3, 4)}), 161002, "gradOutput"),
]


@pytest.mark.parametrize("kwargs,code,needle", INVALID)
def test_invalid_arguments(kwargs, code, needle):
    assert_rejected(code, needle, _attempt, **kwargs)


# (self, gradOutput, weight, gradWeight) shapes of CANN's unit tests
UT_CASES = [
    ((0, 2, 3, 2), (1, 2, 3, 2), (2,), (2,)),
    ((2, 3, 4), (2, 3, 4), (1, 1), (1, 1)),
    ((2, 4, 3), (2, 4, 3), (2, 2), (4,)),
    (tuple(range(1, 9)), tuple(range(1, 9)), (2,), (2,)),
    ((7,), (7,), (1,), (1,)),
]


def test_ut_cases_accepted_and_computed():
    """The cases of CANN's unit tests run and give the reference values."""
    for seed, (x_shape, g_shape, w_shape, gw_shape) in enumerate(UT_CASES):
        x = random_signed(x_shape, np.float32, seed)
        g = random_signed(g_shape, np.float32, seed + 10, specials=False)
        w = random_signed(w_shape, np.float32, seed + 20, specials=False)
        gi, gw = prelu_backward(g, x, w)
        ref_gi, ref_gw, mag = ref.prelu_backward(g, x, w)
        assert_bits(gi, ref_gi, str(x_shape))
        assert gw.shape == gw_shape, x_shape
        assert_grad_weight(gw, ref_gw, mag, np.float32, x.size)
