"""aclnnIm2colBackward (col2im / fold) against a NumPy reference and torch.nn.functional.fold.

The library sums every output element's contributions in fp32 in the card's order on the
selected product (kernel order (ki, then kj), or window order on A2/A3 without padding and on
Ascend950) and rounds to gradOutput's dtype, then to out's.  The NumPy reference
(reference.col2im) does the same from CANN's kernels, so the comparison is bit-exact for every
dtype; against PyTorch (fp32, kernel order) it is bit-exact in kernel order and a tolerance
otherwise, and for fp16/bf16 PyTorch rounds after every add, so the check there is a tolerance.
"""
import textwrap

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pyaclnn
from pyaclnn.functional import im2col_backward
import reference as ref
import tiers
from op_helpers import (BF16, assert_bits, assert_rejected, assert_still_filled, empty_with_room, layouts,
                        run_rebound, to_torch, windows)

torch.set_num_threads(1)

DTYPES = [np.float32, np.float16, BF16]


def random_cols(size, k, d, p, s, c, n=None, dtype=np.float32, seed=0):
    oh, ow = windows(size[0], k[0], d[0], p[0], s[0]), windows(size[1], k[1], d[1], p[1], s[1])
    shape = (c * k[0] * k[1], oh * ow) if n is None else (n, c * k[0] * k[1], oh * ow)
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


# (input_size, kernel, dilation, padding, stride, C, N or None)
CASES = [
    ((3, 3), (2, 2), (1, 1), (0, 0), (1, 1), 1, 1),
    ((7, 5), (3, 3), (1, 1), (1, 1), (1, 1), 3, 2),
    ((9, 11), (3, 2), (2, 1), (1, 2), (2, 3), 2, 2),
    ((12, 10), (5, 4), (1, 2), (2, 0), (3, 1), 3, 1),
    ((5, 8), (4, 1), (1, 3), (3, 4), (1, 2), 3, None),
    ((13, 6), (1, 5), (5, 1), (0, 2), (4, 5), 2, None),
    ((4, 4), (4, 4), (1, 1), (0, 0), (1, 1), 2, 1),      # L = 1
    ((5, 6), (2, 3), (3, 2), (5, 5), (5, 4), 1, 2),
    ((3, 17), (3, 5), (1, 4), (1, 1), (2, 5), 4, 1),
    ((8, 8), (3, 3), (2, 2), (2, 2), (1, 1), 2, 3),
    ((6, 9), (2, 2), (1, 1), (0, 0), (2, 2), 2, 1),      # stride == kernel (no overlap)
]


@pytest.mark.parametrize("dtype", DTYPES, ids=["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("size,k,d,p,s,c,n", CASES)
def test_values(size, k, d, p, s, c, n, dtype):
    cols = random_cols(size, k, d, p, s, c, n, dtype, seed=c + k[0])
    got = im2col_backward(cols, size, k, d, p, s)
    assert_bits(got, ref.col2im(cols, size, k, d, p, s))
    t = to_torch(cols)
    want = F.fold(t if n is not None else t[None], size, k, d, p, s)
    want = (want if n is not None else want[0]).float().numpy()
    if dtype == np.float32 and ref.col2im_order("Ascend910B", p) == "kernel":
        assert_bits(got, want)
    elif dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        tol = 4e-2 if dtype == BF16 else 4e-3
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=tol, atol=tol * 4)


@pytest.mark.parametrize("s", [(2**63 - 1, 2**63 - 1), (2**63 - 1, 3), (2, 2**63 - 1)],
                         ids=["both", "rows", "cols"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp32", "fp16", "bf16"])
def test_huge_strides_one_window_per_axis(s, dtype):
    """A stride of up to INT64_MAX is valid; with one window along that axis it never moves
    (the kernels must not overflow computing with it: found by the fuzzer)."""
    size, k, d, p = (5, 9), (2, 3), (1, 2), (1, 0)
    cols = random_cols(size, k, d, p, s, 3, 2, dtype, seed=9)
    got = im2col_backward(cols, size, k, d, p, s)
    assert_bits(got, ref.col2im(cols, size, k, d, p, s))


@pytest.mark.parametrize("src,dst", [(np.float16, np.float32), (np.float32, BF16),
                                     (BF16, np.float16), (np.float32, np.float16)])
def test_out_dtype_cast(src, dst):
    size, k, d, p, s = (6, 7), (3, 2), (1, 2), (1, 1), (1, 1)
    cols = random_cols(size, k, d, p, s, 2, 2, src, seed=4)
    got = im2col_backward(cols, size, k, d, p, s, out_dtype=dst)
    assert_bits(got, ref.col2im(cols, size, k, d, p, s, out_dtype=dst))


def test_fp16_sums_in_fp32_and_rounds_once():
    # 9 contributions of 1 + 2^-11 each: fp16-by-fp16 accumulation would lose the small parts.
    cols = np.full((9, 9), 1 + 2.0 ** -11, dtype=np.float32).astype(np.float16)
    got = im2col_backward(cols, (3, 3), 3, 1, 1, 1)
    assert_bits(got, ref.col2im(cols, (3, 3), (3, 3), (1, 1), (1, 1), (1, 1)))


def test_ops_md_examples():
    g = np.array([0.1, 1.1, 2.1, 3.1, 4.1, 5.1, 6.1, 7.1], dtype=np.float32).reshape(4, 2)
    got = im2col_backward(g, (1, 1), (2, 2), (1, 1), (1, 1), (1, 2))
    assert got.shape == (1, 1, 1)
    assert got[0, 0, 0] == np.float32(6.1) + np.float32(3.1)
    g = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4)
    np.testing.assert_array_equal(im2col_backward(g, (3, 3), 2, 1, 0, 1),
                                  np.array([[[[1, 7, 6], [12, 34, 22], [11, 27, 16]]]], np.float32))
    g = np.arange(1, 49, dtype=np.float32).reshape(1, 8, 6)
    want = np.array([[[[3, 13, 10], [18, 50, 32], [15, 37, 22]],
                      [[27, 61, 34], [66, 146, 80], [39, 85, 46]]]], np.float32)
    np.testing.assert_array_equal(im2col_backward(g, (3, 3), (2, 2), (2, 1), (1, 0), 1), want)
    # UT shapes
    assert im2col_backward(np.ones((1, 60, 56), np.float32), (10, 12), (4, 5), 1, 0, 1).shape == (1, 3, 10, 12)
    assert im2col_backward(np.ones((1, 12, 12), np.float16), (4, 5), 2, 1, 0, 1).shape == (1, 3, 4, 5)


def test_strided_and_offset_views():
    size, k, d, p, s = (5, 6), (2, 3), (2, 1), (1, 1), (1, 2)
    cols = random_cols(size, k, d, p, s, 3, 2, np.float32, seed=9)
    want = ref.col2im(cols, size, k, d, p, s)
    slack = dict(offset_view=(7, 11), swapped=(3, 3))
    for g_layout, out_layout in zip(layouts(cols.shape, **slack), layouts(want.shape, **slack)):
        with pyaclnn.Tensor.strided(cols, *g_layout) as gt, \
                pyaclnn.Tensor.strided(np.full(want.shape, np.nan, np.float32), *out_layout) as ot:
            pyaclnn.run_op("Im2colBackward", gt, list(size), list(k), list(d), list(p), list(s), ot)
            assert_bits(ot.numpy(), want)
            storage = ot.storage_numpy()
            assert np.isnan(storage).sum() == storage.size - want.size


def test_repeatable_executor_with_new_addresses():
    size, k, d, p, s = (6, 6), (3, 3), (1, 1), (1, 1), (2, 2)
    c1 = random_cols(size, k, d, p, s, 2, 1, np.float16, seed=1)
    c2 = random_cols(size, k, d, p, s, 2, 1, np.float16, seed=2)
    shape = (1, 2) + size
    with pyaclnn.Tensor.from_numpy(c1) as g1, pyaclnn.Tensor.from_numpy(c2) as g2, \
            pyaclnn.Tensor.empty(shape, np.float16, fill=np.nan) as o1, \
            pyaclnn.Tensor.empty(shape, np.float16, fill=np.nan) as o2:
        runs = run_rebound("Im2colBackward", (g1, list(size), list(k), list(d), list(p), list(s), o1),
                           inputs=[(0, g1, g2)], outputs=[(0, o1, o2)], first_runs=2)
        for (got,), cols in zip(runs, (c1, c1, c2)):
            assert_bits(got, ref.col2im(cols, size, k, d, p, s))


def test_empty_batch_succeeds_and_leaves_out_untouched():
    with pyaclnn.Tensor.empty((0, 60, 56), np.float32) as gt, \
            empty_with_room((0, 3, 10, 12)) as ot:
        ws, ex = pyaclnn.aclnnIm2colBackwardGetWorkspaceSize(gt, [10, 12], [4, 5], [1, 1], [0, 0],
                                                             [1, 1], ot)
        assert ws == 0
        pyaclnn.aclnnIm2colBackward(None, 0, ex)
        pyaclnn.synchronize()
        assert_still_filled(ot)


THREAD_SCRIPT = textwrap.dedent("""
    import hashlib, numpy as np, ml_dtypes
    from pyaclnn.functional import im2col_backward
    rng = np.random.default_rng(5)
    out = b""
    for dtype in (np.float32, ml_dtypes.bfloat16):
        cols = rng.standard_normal((3, 5 * 9, 22 * 19)).astype(np.float32).astype(dtype)
        out += im2col_backward(cols, (22, 19), 3, 1, 1, 1).tobytes()
    print(hashlib.sha256(out).hexdigest())
""")


def test_bit_identical_for_any_thread_count_and_tier():
    tiers.assert_same_output(THREAD_SCRIPT, tiers.sweep())


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------
def _attempt(g_shape=(1, 8, 12), g_dtype=np.float32, size=(4, 5), k=(2, 2), d=(1, 1), p=(0, 0),
             s=(1, 1), out_shape=(1, 2, 4, 5), out_dtype=np.float32, null=None):
    tensors = []
    try:
        g = None if null == "gradOutput" else pyaclnn.Tensor.empty(g_shape, g_dtype)
        out = None if null == "out" else pyaclnn.Tensor.empty(out_shape, out_dtype)
        tensors = [t for t in (g, out) if t is not None]
        args = {"inputSize": list(size), "kernelSize": list(k), "dilation": list(d),
                "padding": list(p), "stride": list(s)}
        if null in args:
            args[null] = None
        ws, ex = pyaclnn.aclnnIm2colBackwardGetWorkspaceSize(
            g, args["inputSize"], args["kernelSize"], args["dilation"], args["padding"],
            args["stride"], out)
        ex.close()
    finally:
        for t in tensors:
            t.close()


INVALID = [
    (dict(null="gradOutput"), 161001, "gradOutput"),
    (dict(null="inputSize"), 161001, "inputSize"),
    (dict(null="kernelSize"), 161001, "kernelSize"),
    (dict(null="dilation"), 161001, "dilation"),
    (dict(null="padding"), 161001, "padding"),
    (dict(null="stride"), 161001, "stride"),
    (dict(null="out"), 161001, "out"),
    (dict(g_dtype=np.float64), 161002, "gradOutput"),
    (dict(g_dtype=np.int32), 161002, "gradOutput"),
    (dict(out_dtype=np.float64), 161002, "out"),
    (dict(g_shape=(1, 1, 8, 12)), 161002, "gradOutput"),
    (dict(g_shape=(96,)), 161002, "gradOutput"),
    (dict(out_shape=(2, 4, 5)), 161002, "out"),
    (dict(size=(4, 5, 1)), 161002, "inputSize"),
    (dict(k=(2,)), 161002, "kernelSize"),
    (dict(d=(1, 1, 1)), 161002, "dilation"),
    (dict(p=(0,)), 161002, "padding"),
    (dict(s=()), 161002, "stride"),
    (dict(k=(0, 2)), 161002, "kernelSize"),
    (dict(s=(1, 0)), 161002, "stride"),
    (dict(d=(-1, 1)), 161002, "dilation"),
    (dict(p=(-1, 0)), 161002, "adding"),
    (dict(size=(0, 5)), 161002, "inputSize"),
    (dict(g_shape=(1, 7, 12)), 161002, "gradOutput"),    # 7 not divisible by 2*2
    (dict(g_shape=(1, 8, 11)), 161002, "gradOutput"),    # wrong L
    (dict(size=(1, 5)), 161002, "at least one"),
    (dict(out_shape=(1, 2, 5, 4)), 161002, "out"),
    (dict(out_shape=(1, 8, 4, 5)), 161002, "out"),
]


@pytest.mark.parametrize("kwargs,code,needle", INVALID)
def test_invalid_arguments(kwargs, code, needle):
    assert_rejected(code, needle, _attempt, **kwargs)


def test_null_workspace_size_or_executor():
    with pyaclnn.Tensor.empty((1, 8, 12), np.float32) as g, \
            pyaclnn.Tensor.empty((1, 2, 4, 5), np.float32) as out:
        for ws_ptr, ex_ptr in ((pyaclnn.ffi.NULL, pyaclnn.ffi.new("aclOpExecutor **")),
                               (pyaclnn.ffi.new("uint64_t *"), pyaclnn.ffi.NULL)):
            with pyaclnn.IntArray([4, 5]) as size, pyaclnn.IntArray([2, 2]) as k, \
                    pyaclnn.IntArray([1, 1]) as one, pyaclnn.IntArray([0, 0]) as zero:
                status = pyaclnn.lib.aclnnIm2colBackwardGetWorkspaceSize(
                    g.ptr, size.ptr, k.ptr, one.ptr, zero.ptr, one.ptr, out.ptr, ws_ptr, ex_ptr)
                assert status == 161001
