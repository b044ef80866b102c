"""aclnnMaxPool2dWithMaskBackward: the kernel's fast paths against a NumPy loop.

The backward has a direct-write path for 2x2 windows with stride 2 and no padding (each input
cell lies in at most one window; taken on CPUs with AVX-512) that falls back, plane by plane, to
the general scatter when an index does not lie in its own window.  These tests drive both sides
of that choice and the edges of the direct path (odd H/W with ceilMode on and off, row widths
around the 16-output step, -0.0 and NaN gradients), always against an independent reference:

    gradInput[n, c, i] = float32 sum, in output order, of gradOutput[n, c, o] over the outputs o
                         whose mask index is i; rounded once to the dtype.
"""
import textwrap

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn.functional import max_pool2d_with_mask, max_pool2d_with_mask_backward
from op_helpers import assert_bits, script_outputs

BF16 = ml_dtypes.bfloat16
DTYPES = [np.float32, np.float16, BF16]
DT_IDS = ["fp32", "fp16", "bf16"]


def pooled(size, k, s, ceil_mode):
    num = size - k + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    if ceil_mode and (o - 1) * s >= size:
        o -= 1
    return o


def mask_from_stream(index, k):
    """The INT8 container with the int32 argmax stream at its head and zeros after."""
    ho, wo = index.shape[-2:]
    shape = tuple(index.shape[:-2]) + (k * k, (-(-(ho * wo) // 16) + 1) * 32)
    mask = np.zeros(shape, dtype=np.int8)
    stream = np.frombuffer(index.astype("<i4").tobytes(), dtype=np.int8)
    mask.reshape(-1)[:stream.size] = stream
    return mask


def stream_of(mask, count):
    return mask.view(np.uint8).reshape(-1)[:4 * count].view("<i4").astype(np.int64)


def reference(grad, index, in_shape, dtype):
    """A plain loop: float32 accumulation in output order, rounded once."""
    h, w = in_shape[-2:]
    planes = int(np.prod(in_shape[:-2]))
    g = grad.astype(np.float32).reshape(planes, -1)
    idx = index.reshape(planes, -1)
    acc = np.zeros((planes, h * w), dtype=np.float32)
    for plane in range(planes):
        row = acc[plane]
        for o in range(idx.shape[1]):
            row[idx[plane, o]] = np.float32(row[idx[plane, o]] + g[plane, o])
    return acc.reshape(in_shape).astype(dtype)


def random_array(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


# shapes around the direct path's edges: odd/even H and W, rows shorter than, equal to and
# longer than one 16-output step (W = 32 -> Wo = 16), 3-D and 4-D
SHAPES = [(1, 1, 2, 2), (2, 3, 5, 7), (1, 2, 8, 31), (1, 1, 6, 32), (2, 1, 9, 33), (1, 2, 4, 70),
          (3, 17, 19), (2, 56, 56)]


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("ceil_mode", [False, True], ids=["floor", "ceil"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_2x2_stride_2_with_forward_mask(shape, ceil_mode, dtype):
    x = random_array(shape, dtype, 1)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0, 1, ceil_mode)
    grad = random_array(out.shape, dtype, 2)
    index = stream_of(mask, out.size).reshape(out.shape)
    got = max_pool2d_with_mask_backward(grad, x, mask, 2, 2, 0, 1, ceil_mode)
    assert_bits(got, reference(grad, index, x.shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
def test_2x2_negative_zero_and_nan_gradients(dtype):
    x = random_array((2, 3, 6, 38), dtype, 3)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0)
    grad = random_array(out.shape, dtype, 4)
    grad.reshape(-1)[::3] = -0.0      # a lone -0.0 becomes +0.0 (0.0f + -0.0f)
    grad.reshape(-1)[1::7] = np.nan
    index = stream_of(mask, out.size).reshape(out.shape)
    got = max_pool2d_with_mask_backward(grad, x, mask, 2, 2, 0)
    want = reference(grad, index, x.shape, dtype)
    assert_bits(np.where(np.isnan(got.astype(np.float32)), 0, got).astype(dtype),
                np.where(np.isnan(want.astype(np.float32)), 0, want).astype(dtype))
    assert (np.isnan(got.astype(np.float32)) == np.isnan(want.astype(np.float32))).all()
    assert not np.signbit(got.astype(np.float32)[got.astype(np.float32) == 0]).any()


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("ceil_mode", [False, True], ids=["floor", "ceil"])
@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (1, 2, 10, 40), (4, 33, 35)],
                         ids=lambda s: "x".join(map(str, s)))
def test_2x2_adversarial_indices_inside_the_plane(shape, ceil_mode, dtype):
    """Indices anywhere in the plane (most outside their own window, several outputs on one
    cell): the plane must fall back to the scatter and still give the reference sums."""
    x = random_array(shape, dtype, 5)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0, 1, ceil_mode)
    h, w = shape[-2:]
    rng = np.random.default_rng(6)
    index = rng.integers(0, h * w, size=out.shape)
    grad = random_array(out.shape, dtype, 7)
    got = max_pool2d_with_mask_backward(grad, x, mask_from_stream(index, 2), 2, 2, 0, 1, ceil_mode)
    assert_bits(got, reference(grad, index, x.shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
def test_2x2_one_stray_index_among_good_planes(dtype):
    """Only some planes hold an index outside its window: those planes take the fallback, the
    others the direct path; all must match the reference."""
    x = random_array((2, 4, 8, 36), dtype, 8)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0)
    index = stream_of(mask, out.size).reshape(out.shape).copy()
    ho, wo = out.shape[-2:]
    w = x.shape[-1]
    # plane (0, 1): output (1, 3) points at the window to its right (its own row pair)
    index[0, 1, 1, 3] = 2 * w + 2 * 4
    # plane (1, 2): the last output points at cell 0 of the plane
    index[1, 2, ho - 1, wo - 1] = 0
    # plane (1, 3): output (0, 0) points one row below its window
    index[1, 3, 0, 0] = 2 * w
    grad = random_array(out.shape, dtype, 9)
    got = max_pool2d_with_mask_backward(grad, x, mask_from_stream(index, 2), 2, 2, 0)
    assert_bits(got, reference(grad, index, x.shape, dtype))


def test_2x2_ceil_mode_index_wrapping_to_the_next_row():
    """With odd W and ceilMode, the last window's right column lies outside the plane; the index
    ih*W + W (= the next row's first cell) is in the plane but not in that window."""
    x = random_array((1, 1, 5, 5), np.float32, 10)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0, 1, True)
    index = stream_of(mask, out.size).reshape(out.shape).copy()
    index[0, 0, 0, 2] = 0 * 5 + 5      # window (0, 2) covers columns 4..5: "column 5" wraps to (1, 0)
    index[0, 0, 1, 2] = 2 * 5 + 5      # likewise for window (1, 2)
    grad = random_array(out.shape, np.float32, 11)
    got = max_pool2d_with_mask_backward(grad, x, mask_from_stream(index, 2), 2, 2, 0, 1, True)
    assert_bits(got, reference(grad, index, x.shape, np.float32))


_THREADS_SCRIPT = textwrap.dedent("""
    import hashlib
    import numpy as np, ml_dtypes
    from pyaclnn.functional import max_pool2d_with_mask, max_pool2d_with_mask_backward
    h = hashlib.sha256()
    rng = np.random.default_rng(12)
    for dtype in (np.float32, ml_dtypes.bfloat16):
        x = rng.standard_normal((3, 5, 12, 40)).astype(np.float32).astype(dtype)
        out, mask = max_pool2d_with_mask(x, 2, 2, 0)
        grad = rng.standard_normal(out.shape).astype(np.float32).astype(dtype)
        h.update(max_pool2d_with_mask_backward(grad, x, mask, 2, 2, 0).tobytes())
        stream = mask.view(np.uint8).reshape(-1)[:4 * out.size].view("<i4")
        stream[::5] = rng.integers(0, 12 * 40, size=stream[::5].size)   # forces the fallback
        h.update(max_pool2d_with_mask_backward(grad, x, mask, 2, 2, 0).tobytes())
    print(h.hexdigest())
""")


def test_2x2_same_bits_for_any_thread_count():
    envs = [{"ACLNN_NUM_THREADS": threads, "ACLNN_STREAMING_STORES": streaming}
            for threads, streaming in (("1", "0"), ("2", "1"), ("3", "0"))]
    digests = script_outputs(_THREADS_SCRIPT, envs)
    assert len(set(digests)) == 1, digests
