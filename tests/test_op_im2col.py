"""aclnnIm2col against the NumPy gather (reference.im2col) and torch.nn.functional.unfold.

im2col is a pure gather: results must be bit-identical to the reference for every dtype; a cast
to a different out dtype rounds once (through fp32).
"""
import textwrap

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pyaclnn
from pyaclnn.functional import im2col
import reference as ref
import tiers
from op_helpers import (BF16, assert_bits, assert_rejected, assert_still_filled, empty_with_room, from_torch,
                        layouts, run_rebound, to_torch)

torch.set_num_threads(1)

DTYPES = [np.float32, np.float16, BF16]


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def random_image(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


# ---------------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------------
# (shape, kernel, dilation, padding, stride)
CASES = [
    ((1, 1, 3, 3), (2, 2), (1, 1), (0, 0), (1, 1)),
    ((2, 3, 7, 5), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 2, 9, 11), (3, 2), (2, 1), (1, 2), (2, 3)),
    ((1, 3, 12, 10), (5, 4), (1, 2), (2, 0), (3, 1)),
    ((3, 5, 8), (4, 1), (1, 3), (3, 4), (1, 2)),        # unbatched, kW = 1
    ((2, 13, 6), (1, 5), (5, 1), (0, 2), (4, 5)),       # unbatched, H != W
    ((1, 2, 4, 4), (4, 4), (1, 1), (0, 0), (1, 1)),     # L = 1
    ((2, 1, 5, 6), (2, 3), (3, 2), (5, 5), (5, 4)),     # padding bigger than the kernel
    ((1, 4, 3, 17), (3, 5), (1, 4), (1, 1), (2, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("shape,k,d,p,s", CASES)
def test_values_match_reference_and_torch(shape, k, d, p, s, dtype):
    x = random_image(shape, dtype, seed=len(shape) + k[0])
    got = im2col(x, k, d, p, s)
    assert_bits(got, ref.im2col(x, k, d, p, s))
    t = F.unfold(to_torch(x)[None] if x.ndim == 3 else to_torch(x), k, d, p, s)
    want = from_torch(t[0] if x.ndim == 3 else t, dtype)
    assert_bits(got, want)


@pytest.mark.parametrize("s", [(2**63 - 1, 2**63 - 1), (2**63 - 1, 3), (2, 2**63 - 1)],
                         ids=["both", "rows", "cols"])
def test_huge_strides_one_window_per_axis(s):
    """A stride of up to INT64_MAX is valid; with one window along that axis it never moves."""
    x = random_image((2, 3, 5, 9), np.float32, seed=7)
    got = im2col(x, (2, 3), (1, 2), (1, 0), s)
    assert_bits(got, ref.im2col(x, (2, 3), (1, 2), (1, 0), s))


@pytest.mark.parametrize("src,dst", [(np.float32, np.float16), (np.float32, BF16),
                                     (np.float16, np.float32), (BF16, np.float16),
                                     (np.float16, BF16)])
def test_result_is_cast_to_out_dtype(src, dst):
    x = random_image((2, 3, 6, 7), src, seed=3) * 3
    got = im2col(x, (3, 2), (1, 2), (1, 1), (2, 1), out_dtype=dst)
    want = ref.im2col(x, (3, 2), (1, 2), (1, 1), (2, 1)).astype(np.float32).astype(dst)
    assert_bits(got, want)


def test_special_values_are_copied_bit_exactly():
    x = np.array([np.nan, -0.0, np.inf, -np.inf, 1e-40, -3.5, 0.0, 65504.0, 7.0],
                 dtype=np.float32).reshape(1, 1, 3, 3)
    got = im2col(x, 2, 1, 1, 1)
    assert_bits(got, ref.im2col(x, (2, 2), (1, 1), (1, 1), (1, 1)))


def test_ops_md_examples():
    # examples/test_aclnn_im2col.cpp
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    want = np.array([[0, 0, 0, 4], [0, 0, 3, 5], [0, 1, 0, 0], [0, 2, 0, 0], [0, 0, 0, 10],
                     [0, 0, 9, 11], [0, 7, 0, 0], [6, 8, 0, 0]], dtype=np.float32)
    np.testing.assert_array_equal(im2col(x, (2, 2), (1, 1), (1, 1), (2, 2)), want)
    # PyTorch example with dilation [2, 1], padding [1, 0]
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    want = np.array([[[0, 0, 1, 2, 4, 5], [0, 0, 2, 3, 5, 6], [4, 5, 7, 8, 0, 0],
                      [5, 6, 8, 9, 0, 0]]], dtype=np.float32)
    np.testing.assert_array_equal(im2col(x, (2, 2), (2, 1), (1, 0), (1, 1)), want)
    # UT: [1,2,2,3] -> [1,8,4] for every supported dtype
    for dtype in DTYPES:
        x = random_image((1, 2, 2, 3), dtype)
        assert im2col(x, 2, 1, 1, 2).shape == (1, 8, 4)


# ---------------------------------------------------------------------------------------------
# layouts, executors, empty tensors
# ---------------------------------------------------------------------------------------------
def run_im2col(x_tensor, out_tensor, k, d, p, s):
    pyaclnn.run_op("Im2col", x_tensor, list(k), list(d), list(p), list(s), out_tensor)


@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["fp32", "bf16"])
def test_strided_and_offset_views(dtype):
    shape, k, d, p, s = (2, 3, 5, 6), (2, 3), (2, 1), (1, 1), (1, 2)
    x = random_image(shape, dtype, seed=7)
    want = ref.im2col(x, k, d, p, s)
    for x_layout, out_layout in zip(layouts(shape), layouts(want.shape)):
        with pyaclnn.Tensor.strided(x, *x_layout) as xt, \
                pyaclnn.Tensor.strided(np.full(want.shape, np.nan, dtype), *out_layout) as ot:
            run_im2col(xt, ot, k, d, p, s)
            assert_bits(ot.numpy(), want)
            # storage the view does not cover stays untouched (NaN)
            storage = ot.storage_numpy().astype(np.float32)
            assert np.isnan(storage).sum() == storage.size - want.size


def test_repeatable_executor_with_new_addresses():
    k, d, p, s = (3, 3), (1, 1), (1, 1), (2, 2)
    x1, x2 = random_image((1, 2, 6, 6), np.float32, 1), random_image((1, 2, 6, 6), np.float32, 2)
    want_shape = ref.im2col(x1, k, d, p, s).shape
    with pyaclnn.Tensor.from_numpy(x1) as xt, pyaclnn.Tensor.empty(want_shape, np.float32, fill=np.nan) as ot, \
            pyaclnn.Tensor.from_numpy(x2) as x2t, pyaclnn.Tensor.empty(want_shape, np.float32, fill=np.nan) as o2t:
        (first,), (second,) = run_rebound("Im2col", (xt, list(k), list(d), list(p), list(s), ot),
                                          inputs=[(0, xt, x2t)], outputs=[(0, ot, o2t)])
        assert_bits(first, ref.im2col(x1, k, d, p, s))
        assert_bits(second, ref.im2col(x2, k, d, p, s))


def test_empty_batch_succeeds_and_writes_nothing():
    with pyaclnn.Tensor.empty((0, 2, 4, 4), np.float32) as xt, \
            empty_with_room((0, 8, 9)) as ot:
        ws, ex = pyaclnn.aclnnIm2colGetWorkspaceSize(xt, [2, 2], [1, 1], [0, 0], [1, 1], ot)
        assert ws == 0
        pyaclnn.aclnnIm2col(None, 0, ex)
        pyaclnn.synchronize()
        assert_still_filled(ot)


# ---------------------------------------------------------------------------------------------
# validation: status code and the parameter named in the message
# ---------------------------------------------------------------------------------------------
def _attempt(x_shape=(1, 2, 4, 5), x_dtype=np.float32, k=(2, 2), d=(1, 1), p=(0, 0), s=(1, 1),
             out_shape=None, out_dtype=np.float32, null=None):
    if out_shape is None:
        out_shape = (1, 8, 12)
    tensors = []
    try:
        x = None if null == "self" else pyaclnn.Tensor.empty(x_shape, x_dtype)
        out = None if null == "out" else pyaclnn.Tensor.empty(out_shape, out_dtype)
        tensors = [t for t in (x, out) if t is not None]
        args = {"kernelSize": list(k), "dilation": list(d), "padding": list(p), "stride": list(s)}
        if null in args:
            args[null] = None
        ws, ex = pyaclnn.aclnnIm2colGetWorkspaceSize(x, args["kernelSize"], args["dilation"],
                                                     args["padding"], args["stride"], out)
        ex.close()
    finally:
        for t in tensors:
            t.close()


INVALID = [
    (dict(null="self"), 161001, "self"),
    (dict(null="kernelSize"), 161001, "kernelSize"),
    (dict(null="dilation"), 161001, "dilation"),
    (dict(null="padding"), 161001, "padding"),
    (dict(null="stride"), 161001, "stride"),
    (dict(null="out"), 161001, "out"),
    (dict(x_dtype=np.float64), 161002, "self"),
    (dict(x_dtype=np.int32), 161002, "self"),
    (dict(x_shape=(2, 4, 5)), 161002, "self"),          # rank 3 is fine in itself: L check
    (dict(x_shape=(4, 5)), 161002, "self"),
    (dict(x_shape=(1, 1, 2, 4, 5)), 161002, "self"),
    (dict(x_shape=(1, 0, 4, 5)), 161002, "self"),
    (dict(x_shape=(0, 4, 5), out_shape=(0, 12)), 161002, "self"),
    (dict(k=(2, 2, 1)), 161002, "kernelSize"),
    (dict(d=(1,)), 161002, "dilation"),
    (dict(p=()), 161002, "padding"),
    (dict(s=(1, 1, 1)), 161002, "stride"),
    (dict(k=(0, 2)), 161002, "kernelSize"),
    (dict(s=(1, -1)), 161002, "stride"),
    (dict(d=(0, 1)), 161002, "dilation"),
    (dict(p=(0, -1)), 161002, "padding"),
    (dict(k=(5, 2)), 161002, "at least one"),
    (dict(out_shape=(1, 8, 11)), 161002, "out"),
    (dict(out_shape=(8, 12)), 161002, "out"),
    (dict(out_dtype=np.int32), 161002, "out"),
]


@pytest.mark.parametrize("kwargs,code,needle", INVALID)
def test_invalid_arguments(kwargs, code, needle):
    if kwargs.get("x_shape") == (2, 4, 5):
        kwargs = dict(kwargs, out_shape=(8, 13))        # 3-D self, wrong L -> out mismatch
        needle = "out"
    assert_rejected(code, needle, _attempt, **kwargs)


_PATHS_SCRIPT = textwrap.dedent("""
    import hashlib, numpy as np, ml_dtypes, torch
    from pyaclnn.functional import im2col
    rng = np.random.default_rng(17)
    digest = hashlib.sha256()
    cases = [((2, 3, 28, 28), (3, 3), (1, 1), (1, 1), (2, 2)), ((1, 4, 56, 57), (3, 3), (1, 1), (1, 1), (1, 1)),
             ((2, 2, 19, 45), (2, 5), (2, 1), (0, 3), (3, 4)), ((1, 3, 9, 70), (1, 4), (1, 3), (2, 1), (1, 8)),
             ((1, 2, 12, 40), (2, 2), (1, 1), (1, 1), (2, 9)), ((3, 1, 5, 3), (3, 3), (1, 1), (2, 2), (1, 1)),
             # short rows (one chunk a row, up to 8 steps' loads held at a time): 15 planes, an odd OH
             # (a pair step with one row), paddings 0 and 2, a dilation, kW != 3, 2-byte rows that are
             # not pairs (one or two loads), more than 8 steps per kernel row (fp32, OH = 200)
             ((3, 5, 28, 28), (3, 3), (1, 1), (1, 1), (2, 2)), ((1, 7, 27, 27), (3, 3), (1, 1), (2, 2), (2, 2)),
             ((2, 3, 14, 13), (3, 3), (1, 1), (0, 0), (1, 1)), ((1, 5, 10, 9), (3, 3), (2, 2), (1, 2), (1, 2)),
             ((2, 3, 9, 20), (2, 5), (1, 1), (1, 1), (1, 1)), ((1, 3, 6, 40), (3, 2), (1, 3), (1, 1), (2, 2)),
             ((1, 3, 11, 31), (3, 3), (1, 1), (1, 1), (2, 2)), ((1, 2, 200, 14), (3, 3), (1, 1), (1, 1), (1, 1)),
             # shifted copies (sW = 1, rows of a vector or more, whole-line blocks, 16 planes or more):
             # k3s1p1, a padding wider than the kernel's half (OW != W), a vertical stride, a dilation
             ((2, 9, 56, 56), (3, 3), (1, 1), (1, 1), (1, 1)), ((1, 17, 34, 50), (3, 3), (1, 1), (0, 3), (1, 1)),
             ((4, 4, 63, 48), (3, 3), (1, 1), (1, 0), (2, 1)), ((1, 16, 40, 40), (3, 3), (2, 2), (2, 2), (1, 1)),
             # blocks that end inside a line (through the line stage when streamed): k3s1p0 with OW = 35
             # (fp16 374.06 lines, fp32 748.1), OW = 29 (fp32 only: fp16 rows are under a vector)
             ((1, 16, 40, 37), (3, 3), (1, 1), (0, 0), (1, 1)), ((2, 9, 30, 31), (3, 3), (1, 1), (0, 0), (1, 1))]
    for shape, k, d, p, s in cases:
        for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
            x = rng.standard_normal(shape).astype(np.float32).astype(dtype)
            x.view(np.uint8)[::13] = 0xff                   # NaNs with payloads, copied as bits
            x.view(np.uint16)[::7] = 0x8000                 # -0.0 (fp16, bf16; fp32 halves)
            x.view(np.uint16)[5::11] = 0x0001               # subnormals
            ours = im2col(x, list(k), list(d), list(p), list(s))
            want = torch.nn.functional.unfold(torch.from_numpy(x.view(np.uint16 if x.itemsize == 2 else np.int32)
                                                               .astype(np.float64)), k, d, p, s).numpy()
            assert (ours.view(np.uint16 if x.itemsize == 2 else np.int32) == want).all(), (shape, k, d, p, s, dtype)
            digest.update(ours.tobytes())
    print(digest.hexdigest())
""")


def test_vector_streaming_and_portable_paths_agree_with_torch():
    """The AVX-512 rows (one or two loads per chunk, strides up to 8; short rows, one or two a step,
    in groups of held steps; shifted copies for sW = 1), streamed or not, split over 1-3 threads, the AVX2 tier and the
    portable loop (also taken for strides above 8): the same bits, which are torch's unfold of the
    same bit patterns (carried exactly as float64 integers)."""
    runs = [tiers.Run(threads=t, streaming=s) for t, s in ((1, 1), (1, 0), (2, 1), (2, 0), (3, 0))]
    runs += [tiers.Run("avx2", threads=2), tiers.Run("portable", threads=2)]
    tiers.assert_same_output(_PATHS_SCRIPT, runs)


_UNALIGNED_OUT_SCRIPT = textwrap.dedent("""
    import hashlib, numpy as np, ml_dtypes, torch, pyaclnn
    digest = hashlib.sha256()
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        x = np.random.default_rng(3).standard_normal((2, 9, 56, 56)).astype(np.float32).astype(dtype)
        bits = x.view(np.uint16 if x.itemsize == 2 else np.int32)
        want = torch.nn.functional.unfold(torch.from_numpy(bits.astype(np.float64)), 3, 1, 1, 1).numpy()
        for offset in (0, 1, 3):                        # out's data 0, 2-6 or 4-12 bytes past a line
            with pyaclnn.Tensor.from_numpy(x) as xt, \\
                 pyaclnn.Tensor.strided(np.zeros((2, 81, 3136), dtype), offset=offset) as out:
                pyaclnn.run_op("Im2col", xt, [3, 3], [1, 1], [1, 1], [1, 1], out)
                got = out.numpy()
            assert (got.view(bits.dtype) == want).all(), (dtype, offset)
            digest.update(got.tobytes())
    print(digest.hexdigest())
""")


def test_shifted_copies_into_an_out_off_the_line():
    """The shifted copies (k3s1p1 56x56, 18 planes) stream whole lines only when out starts on a
    line; an out whose data starts 2-12 bytes past one takes plain stores: torch's unfold of the
    same bits either way, streamed or not, on every tier."""
    runs = [tiers.Run(threads=t, streaming=s) for t, s in ((1, 1), (2, 1), (1, 0))]
    runs += [tiers.Run("avx2", threads=2, streaming=1), tiers.Run("portable", threads=1, streaming=1)]
    tiers.assert_same_output(_UNALIGNED_OUT_SCRIPT, runs)


_SHIFTED_TRACE_SCRIPT = textwrap.dedent("""
    import sys, numpy as np, ml_dtypes
    from pyaclnn.functional import im2col
    for n, c, h, w in ((1, 16, 56, 56), (1, 8, 56, 56), (1, 16, 28, 28), (1, 16, 56, 55)):
        for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
            im2col(np.ones((n, c, h, w), dtype), 3, 1, 1, 1)
            sys.stdout.flush()
""")


def test_stride1_geometries_take_the_shifted_copies():
    """On an AVX-512 CPU k3s1p1 on 56x56 with 16 planes takes the shifted copies in every dtype,
    and so does 56x55 (blocks that end inside a line: 1732.5 fp32 lines a plane); 8 planes (the
    table not paid for) and fp16/bf16 28x28 (rows shorter than a vector) keep the row chunks,
    while fp32 28x28 takes the copies; the other tiers never name an AVX-512 path."""
    import re
    shifted = "im2col_avx512_shifted"
    want = [shifted] * 3 + ["im2col_avx512_rows"] * 3 + [shifted] + ["im2col_avx512_rows"] * 2 + [shifted] * 3
    trace = (("ASCEND_GLOBAL_LOG_LEVEL", "1"), ("ASCEND_SLOG_PRINT_TO_STDOUT", "1"))
    for run in tiers.every_tier([tiers.Run(threads=1, extra=trace), tiers.Run("avx2", threads=1, extra=trace),
                                 tiers.Run("portable", threads=1, extra=trace)]):
        out = tiers.run_script(_SHIFTED_TRACE_SCRIPT, run)
        paths = re.findall(r"\[aclnnIm2col\] exec .* kernel=(\S+)", out)
        if run.tier == "best" and tiers.has_avx512():
            assert paths == want, (run, paths)
        else:
            assert paths == ["im2col_portable"] * len(want), (run, paths)


_PORTABLE_ROWS_SCRIPT = textwrap.dedent("""
    import hashlib, re, numpy as np, ml_dtypes, pyaclnn
    from pyaclnn.functional import im2col

    def reference(x, k, d, p, s):       # the padded image, sliced per kernel cell
        n, c, h, w = x.shape
        oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
        ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
        padded = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), x.dtype)
        padded[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = x
        out = np.zeros((n, c, k[0], k[1], oh, ow), x.dtype)
        for i in range(k[0]):
            for j in range(k[1]):
                out[:, :, i, j] = padded[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                                         j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
        return out.reshape(n, c * k[0] * k[1], oh * ow)

    digest = hashlib.sha256()
    geometries = [((2, 3, 9, 7), (3, 3), (1, 1), (1, 1), (1, 1)), ((1, 4, 10, 12), (2, 3), (2, 1), (0, 2), (2, 1)),
                  ((2, 2, 5, 5), (3, 3), (1, 1), (3, 3), (1, 1)), ((1, 3, 6, 40), (1, 5), (1, 3), (0, 4), (1, 1)),
                  ((2, 16, 20, 3), (3, 3), (1, 1), (1, 1), (1, 1)), ((1, 2, 7, 7), (2, 2), (3, 2), (2, 1), (3, 1)),
                  ((1, 1, 1, 1), (1, 1), (1, 1), (0, 0), (1, 1)), ((3, 17, 56, 56), (3, 3), (1, 1), (1, 1), (1, 1)),
                  ((2, 5, 13, 11), (3, 2), (1, 1), (1, 0), (2, 3)), ((1, 2, 5, 1200), (2, 3), (1, 1), (0, 1), (1, 2)),
                  ((2, 3, 11, 17), (3, 3), (2, 3), (2, 4), (2, 2)), ((4, 8, 28, 28), (3, 3), (1, 1), (1, 1), (2, 2)),
                  ((1, 1, 2, 70000), (1, 2), (1, 1), (0, 0), (1, 2)),
                  ((1, 2, 5, 9), (2, 3), (1, 2), (1, 0), (2, 2 ** 63 - 1))]
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        for shape, k, d, p, s in geometries:
            x = np.random.default_rng(5).standard_normal(shape).astype(np.float32).astype(dtype)
            got = im2col(x, list(k), list(d), list(p), list(s))
            assert np.array_equal(got.view(np.uint8), reference(x, k, d, p, s).view(np.uint8)), (dtype, shape)
            digest.update(got.tobytes())
    print(digest.hexdigest())
""")


def test_portable_rows_streamed_or_not_match_the_reference():
    """The portable rows without a cast: through the padded plane (one copy an output row; its
    columns split by phase for sW > 1: a dilation that moves the phase, a padding wider than the
    kernel), row by row where it does not fit (a 70000-column image, a stride of INT64_MAX);
    streamed through the line stage or not, any padding, dilation and vertical stride, rows
    longer than the stage's flush (2400 bytes), 1 and 2 threads - the reference's bytes, and the
    same on every tier."""
    runs = [tiers.Run("portable", threads=t, streaming=s) for t in (1, 2) for s in (0, 1)]
    runs += [tiers.Run(threads=2, streaming=1)] + [tiers.Run(tier, threads=1, streaming=1)
                                                   for tier in tiers.TIERS if tier not in ("best", "portable")]
    tiers.assert_same_output(_PORTABLE_ROWS_SCRIPT, runs)


def test_a_streamed_portable_launch_names_its_path():
    """A launch that streams (16 MiB and more moved) on the portable rows says so in the trace."""
    import re
    script = ("import numpy as np; from pyaclnn.functional import im2col\n"
              "im2col(np.ones((8, 64, 56, 56), np.float16), 3, 1, 1, 1)\n"
              "im2col(np.ones((1, 4, 8, 8), np.float16), 3, 1, 1, 1)\n")
    trace = (("ASCEND_GLOBAL_LOG_LEVEL", "1"), ("ASCEND_SLOG_PRINT_TO_STDOUT", "1"))
    out = tiers.run_script(script, tiers.Run("portable", threads=1, extra=trace))
    paths = re.findall(r"\[aclnnIm2col\] exec .* kernel=(\S+)", out)
    assert paths == ["im2col_portable_streamed", "im2col_portable"], paths
