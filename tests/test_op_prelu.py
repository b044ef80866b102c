"""aclnnPrelu against the NumPy reference (reference.prelu) and torch.nn.functional.prelu.

out = x > 0 ? x : w[c] * x in the promoted dtype of (x, w), cast to out's dtype; a single
multiply, so the result is bit-exact for every dtype.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pyaclnn
from pyaclnn.functional import prelu
import reference as ref
from op_helpers import (BF16, assert_bits, assert_rejected, assert_still_filled, empty_with_room, from_torch,
                        layouts, run_rebound, to_torch)

torch.set_num_threads(1)

DTYPES = [np.float32, np.float16, BF16]
IDS = ["fp32", "fp16", "bf16"]


def random_signed(shape, dtype, seed=0):
    """Random signs plus 0, -0.0, NaN and infinities sprinkled in."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, -1e-30], np.float32)
    if flat.size >= 12:
        idx = rng.choice(flat.size, size=6, replace=False)
        flat[idx] = specials
    return x.astype(dtype)


# (self shape, weight shape)
SHAPES = [
    ((), (1,)),
    ((), ()),
    ((7,), (1,)),
    ((6,), (1, 1)),
    ((4, 3), (3,)),                 # C is the last dim: channel-last inner loop
    ((4, 3), (1,)),
    ((5, 5), (5,)),                 # square: a last-dim broadcast would also "fit"
    ((2, 5, 5), (5,)),              # C equals the last dim (the trap)
    ((2, 6), (2, 3)),               # multi-D weight with C elements
    ((2, 4, 3, 5), (4,)),
    ((2, 4, 3, 5), (2, 2)),
    ((2, 4, 3, 5), (1, 1, 1)),
    ((1, 16, 4, 4), (16,)),
    ((2, 3, 2, 2, 3), (3,)),
    ((1, 2, 1, 3, 1, 2), (2,)),
    ((2, 2, 2, 2, 2, 1, 2), (1,)),
    ((1, 3, 1, 2, 1, 2, 1, 2), (3, 1)),
    ((3, 2049), (2049,)),           # long channel-last rows
    ((2, 3, 4500), (3,)),           # long planes crossing the staging chunk
]


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("x_shape,w_shape", SHAPES)
def test_values_all_ranks(x_shape, w_shape, dtype):
    x = random_signed(x_shape, dtype, seed=len(x_shape))
    w = random_signed(w_shape, dtype, seed=99) * np.asarray(0.5, dtype)
    got = prelu(x, w)
    assert_bits(got, ref.prelu(x, w))
    want = from_torch(F.prelu(to_torch(x), to_torch(w.reshape(-1)))).reshape(x.shape)
    assert_bits(got, want, nan_sign_free=True)


@pytest.mark.parametrize("x_dtype,w_dtype,out_dtype", [
    (np.float16, BF16, np.float32), (BF16, np.float16, BF16), (np.float16, np.float32, np.float16),
    (np.float32, BF16, np.float32), (np.float16, np.float16, np.float32), (BF16, BF16, np.float16),
    (np.float32, np.float32, BF16)])
def test_dtype_promotion_and_out_cast(x_dtype, w_dtype, out_dtype):
    x = random_signed((3, 4, 5), x_dtype, seed=1) * 7
    w = (np.linspace(-2.3, 2.9, 4, dtype=np.float32) / 3).astype(w_dtype)
    got = prelu(x, w, out_dtype=out_dtype)
    assert_bits(got, ref.prelu(x, w, out_dtype))


def test_special_values():
    x = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, -2.0, 3.0, -1e-45], np.float32)
    w = np.array([0.25], np.float32)
    got = prelu(x, w)
    assert_bits(got, ref.prelu(x, w))
    assert np.signbit(got[1])            # -0.0 takes the w * x branch: 0.25 * -0.0 = -0.0
    assert np.isnan(got[2]) and got[4] == -np.inf


def test_ops_md_examples():
    x = np.array([-2, 1, 2, -3, -4.7, 5.3, -6.9, 7], np.float32).reshape(2, 4)
    got = prelu(x, np.array([3], np.float32))
    assert got[1, 0] == np.float32(-14.099999427795410) and got[1, 2] == np.float32(-20.700000762939453)
    three = np.float32(3)
    np.testing.assert_array_equal(got, np.float32([[-6, 1, 2, -9],
                                                   [np.float32(-4.7) * three, 5.3, np.float32(-6.9) * three, 7]]))
    x = np.array([[-1, 2, -3], [4, -5, 0]], np.float32)
    got = prelu(x, np.array([0.1, 0.2, 0.3], np.float32))
    np.testing.assert_array_equal(got, np.float32([[-1 * np.float32(0.1), 2, -3 * np.float32(0.3)],
                                                   [4, -5 * np.float32(0.2), 0]]))


def test_strided_views_for_every_argument():
    x_shape, w_shape = (2, 4, 3, 5), (4,)
    x = random_signed(x_shape, np.float32, 3)
    w = random_signed(w_shape, np.float32, 4)
    want = ref.prelu(x, w)
    views = list(layouts(x_shape, offset_view=(3, 5), every_other=(1, 1)))
    for xl, ol in zip(views, views):
        with pyaclnn.Tensor.strided(x, *xl) as xt, \
                pyaclnn.Tensor.strided(w, strides=(3,), offset=2, storage_numel=12) as wt, \
                pyaclnn.Tensor.strided(np.full(x_shape, np.nan, np.float32), *ol) as ot:
            pyaclnn.run_op("Prelu", xt, wt, ot)
            assert_bits(ot.numpy(), want)
            storage = ot.storage_numpy()
            assert np.isnan(storage).sum() == storage.size - x.size + np.isnan(want).sum()


def test_repeatable_executor_with_new_addresses():
    x1, x2 = random_signed((2, 3, 8), BF16, 1), random_signed((2, 3, 8), BF16, 2)
    w1, w2 = random_signed((3,), BF16, 3), random_signed((3,), BF16, 4)
    with pyaclnn.Tensor.from_numpy(x1) as xt, pyaclnn.Tensor.from_numpy(w1) as wt, \
            pyaclnn.Tensor.from_numpy(x2) as x2t, pyaclnn.Tensor.from_numpy(w2) as w2t, \
            pyaclnn.Tensor.empty(x1.shape, BF16, fill=np.nan) as ot, \
            pyaclnn.Tensor.empty(x1.shape, BF16, fill=np.nan) as o2t:
        (first,), (second,) = run_rebound("Prelu", (xt, wt, ot), inputs=[(0, xt, x2t), (1, wt, w2t)],
                                          outputs=[(0, ot, o2t)])
        assert_bits(first, ref.prelu(x1, w1))
        assert_bits(second, ref.prelu(x2, w2))


@pytest.mark.parametrize("x_shape,w_shape", [((1, 16, 0, 4), (16,)), ((0,), (1,)), ((2, 0, 3), (0,))])
def test_empty_tensors_succeed_and_write_nothing(x_shape, w_shape):
    with pyaclnn.Tensor.empty(x_shape, np.float32) as xt, pyaclnn.Tensor.empty(w_shape, np.float32) as wt, \
            empty_with_room(x_shape) as ot:
        ws, ex = pyaclnn.aclnnPreluGetWorkspaceSize(xt, wt, ot)
        assert ws == 0
        pyaclnn.aclnnPrelu(None, 0, ex)
        pyaclnn.synchronize()
        assert_still_filled(ot)


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------
def _attempt(x_shape=(2, 3, 4), w_shape=(3,), out_shape=None, x_dtype=np.float32,
             w_dtype=np.float32, out_dtype=np.float32, null=None):
    out_shape = x_shape if out_shape is None else out_shape
    made = {}
    try:
        for name, shape, dtype in (("self", x_shape, x_dtype), ("weight", w_shape, w_dtype),
                                   ("out", out_shape, out_dtype)):
            made[name] = None if null == name else pyaclnn.Tensor.empty(shape, dtype)
        ws, ex = pyaclnn.aclnnPreluGetWorkspaceSize(made["self"], made["weight"], made["out"])
        ex.close()
    finally:
        for t in made.values():
            if t is not None:
                t.close()


INVALID = [
    (dict(null="self"), 161001, "self"),
    (dict(null="weight"), 161001, "weight"),
    (dict(null="out"), 161001, "out"),
    (dict(x_dtype=np.float64), 161002, "self"),
    (dict(w_dtype=np.int32), 161002, "weight"),
    (dict(out_dtype=np.int8), 161002, "out"),
    (dict(x_shape=(1,) * 9, w_shape=(1,)), 161002, "self"),
    (dict(w_shape=(1,) * 9), 161002, "weight"),
    (dict(out_shape=(1,) * 9), 161002, "out"),
    (dict(out_shape=(2, 3, 5)), 161002, "out"),
    (dict(out_shape=(2, 12)), 161002, "out"),
    (dict(w_shape=(4,)), 161002, "weight"),
    (dict(x_shape=(4,), w_shape=(2, 2)), 161002, "weight"),
    (dict(x_shape=(), w_shape=(2,)), 161002, "weight"),
    (dict(x_shape=(2, 3, 4), w_shape=(4,)), 161002, "weight"),   # C is dim 1, not the last
]


@pytest.mark.parametrize("kwargs,code,needle", INVALID)
def test_invalid_arguments(kwargs, code, needle):
    assert_rejected(code, needle, _attempt, **kwargs)


def test_ut_shapes_accepted_and_computed():
    """The shapes of CANN's unit tests run and give the reference values."""
    for seed, (x_shape, w_shape) in enumerate((((1, 16, 4, 4), (16,)), ((2, 4, 3, 5), (1,)), ((2, 6), (2, 3)),
                                               (tuple(range(1, 9)), (2,)))):
        x = random_signed(x_shape, np.float32, seed)
        w = random_signed(w_shape, np.float32, seed + 10)
        assert_bits(prelu(x, w), ref.prelu(x, w), str(x_shape))


def test_null_workspace_size():
    with pyaclnn.Tensor.empty((2, 3), np.float32) as x, pyaclnn.Tensor.empty((3,), np.float32) as w, \
            pyaclnn.Tensor.empty((2, 3), np.float32) as out:
        status = pyaclnn.lib.aclnnPreluGetWorkspaceSize(x.ptr, w.ptr, out.ptr, pyaclnn.ffi.NULL,
                                                        pyaclnn.ffi.new("aclOpExecutor **"))
        assert status == 161001
        status = pyaclnn.lib.aclnnPreluGetWorkspaceSize(x.ptr, w.ptr, out.ptr,
                                                        pyaclnn.ffi.new("uint64_t *"), pyaclnn.ffi.NULL)
        assert status == 161001
