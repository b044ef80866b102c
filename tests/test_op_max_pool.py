"""aclnnMaxPool2dWithMask / aclnnMaxPool2dWithMaskBackward against PyTorch CPU and NumPy loops.

References used here (none of them is libaclnn code; the NumPy ones are in tests/reference.py):
* forward: torch.nn.functional.max_pool2d(..., return_indices=True) and a NumPy loop over the
  window cells that applies PyTorch's rule (start at -inf with the first in-range cell, take a
  value when it is greater or NaN): reference.max_pool_argmax;
* the mask: zeros of the container size whose first bytes are torch's indices as int32 bytes
  (reference.max_pool_mask; the 1x1 kernel's legacy pattern: reference.legacy_mask);
* backward: np.add.at in float32 over the outputs in order (rounded once for fp16/bf16;
  reference.max_pool_backward), and
  torch's max_pool2d_with_indices_backward run in float32 (bit-exact for fp32, and equal after
  one rounding for fp16/bf16, since both add the same terms in the same order).
Outputs are pre-filled with NaN / 0x5A bytes so an unwritten element fails.
"""
import textwrap

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pyaclnn
from pyaclnn.functional import max_pool2d_with_mask, max_pool2d_with_mask_backward
import reference as ref
import tiers
from op_helpers import BF16, assert_bits, assert_still_filled, empty_with_room, from_torch, run_rebound, to_torch

torch.set_num_threads(1)

DTYPES = [np.float32, np.float16, BF16]
DT_IDS = ["fp32", "fp16", "bf16"]
GARBAGE = 0x5A


# ---------------------------------------------------------------------------------------------
# PyTorch and the inputs (the NumPy references are in reference.py)
# ---------------------------------------------------------------------------------------------
def torch_forward(x, k, s, p, ceil_mode):
    values, index = F.max_pool2d(to_torch(x), k, s, p, 1, ceil_mode, return_indices=True)
    return from_torch(values, x.dtype), index.numpy()


def torch_backward_fp32(grad, x, index, k, s, p, ceil_mode):
    g = torch.ops.aten.max_pool2d_with_indices_backward(
        torch.from_numpy(grad.astype(np.float32)), torch.from_numpy(x.astype(np.float32)),
        list(k), list(s), list(p), [1, 1], ceil_mode, torch.from_numpy(index))
    return g.numpy().astype(x.dtype)


def random_input(shape, dtype, kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "ties":                       # small integers: many equal maxima per window
        a = rng.integers(-3, 3, size=shape).astype(np.float32)
    elif kind == "negative":                 # all negative: padding must never win
        a = -np.abs(rng.standard_normal(shape)).astype(np.float32) - 1.0
    else:
        a = rng.standard_normal(shape).astype(np.float32)
    return a.astype(dtype)


# ---------------------------------------------------------------------------------------------
# the geometry table: (input shape, kernel, stride, padding, ceil_mode)
# ---------------------------------------------------------------------------------------------
CASES = [
    ((1, 1, 4, 3), (2, 2), (2, 2), (0, 0), False),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1), False),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1), True),
    ((1, 2, 8, 10), (2, 3), (1, 2), (1, 1), True),
    ((3, 9, 10), (3, 2), (2, 1), (1, 0), True),            # 3-D
    ((4, 5, 6), (2, 2), (2, 2), (0, 0), False),             # 3-D, tiling
    ((1, 2, 13, 11), (7, 7), (3, 3), (3, 3), True),
    ((1, 3, 10, 12), (5, 4), (5, 4), (2, 2), True),         # stride == kernel, padding
    ((3, 4, 6, 6), (4, 4), (1, 1), (2, 2), False),
    ((2, 2, 9, 10), (6, 5), (1, 2), (3, 2), True),
    ((1, 2, 5, 5), (2, 2), (3, 3), (1, 1), True),           # stride > kernel
    ((2, 3, 7, 8), (1, 3), (1, 3), (0, 1), False),          # 1xK
    ((2, 3, 8, 7), (3, 1), (2, 1), (1, 0), True),           # Kx1
    ((2, 3, 6, 5), (1, 1), (2, 2), (0, 0), True),           # 1x1: legacy mask
    ((2, 4, 28, 28), (3, 3), (2, 2), (1, 1), False),        # ResNet-style stem pooling
    ((1, 8, 33, 17), (2, 2), (2, 2), (0, 0), True),
]
CASE_IDS = ["%s-k%s-s%s-p%s-%s" % ("x".join(map(str, c[0])), "x".join(map(str, c[1])),
                                  "x".join(map(str, c[2])), "x".join(map(str, c[3])),
                                  "ceil" if c[4] else "floor") for c in CASES]


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_forward_and_backward_against_torch(case, dtype):
    shape, k, s, p, ceil_mode = case
    for seed, kind in enumerate(("randn", "ties", "negative")):
        x = random_input(shape, dtype, kind, seed)
        out, mask = max_pool2d_with_mask(x, k, s, p, 1, ceil_mode)
        t_out, t_index = torch_forward(x, k, s, p, ceil_mode)
        index = ref.max_pool_argmax(x, k, s, p, ceil_mode)
        np.testing.assert_array_equal(index, t_index)          # the two references agree
        assert_bits(out, t_out, "out vs torch (%s)" % kind)
        assert_bits(out, ref.max_pool_values(x, index), "out vs numpy (%s)" % kind)
        if k == (1, 1):
            assert_bits(mask, ref.legacy_mask(out.shape, k), "1x1 legacy mask")
        else:
            assert_bits(mask, ref.max_pool_mask(t_index, k), "mask vs torch indices (%s)" % kind)

        grad = random_input(out.shape, dtype, "randn", seed + 10)
        grad_in = max_pool2d_with_mask_backward(grad, x, mask, k, s, p, 1, ceil_mode)
        assert_bits(grad_in, ref.max_pool_backward(grad, index, x.shape, dtype), "grad vs numpy (%s)" % kind)
        assert_bits(grad_in, torch_backward_fp32(grad, x, t_index, k, s, p, ceil_mode),
                     "grad vs torch fp32 (%s)" % kind)
        if dtype is not np.float32:
            # PyTorch's own low-precision kernel adds in the storage type: close, not equal.
            t_grad = torch.ops.aten.max_pool2d_with_indices_backward(
                to_torch(grad), to_torch(x), list(k), list(s), list(p), [1, 1], ceil_mode,
                torch.from_numpy(t_index))
            pyaclnn.testing.assert_close(grad_in.astype(np.float32),
                                         from_torch(t_grad, dtype).astype(np.float32),
                                         rtol=0.05 if dtype is BF16 else 0.01, atol=0.05)


def test_attribute_forms():
    """kernel of 1 value, stride [] (= kernel) or 1 value, padding of 1 value, dilation [1]."""
    x = random_input((2, 3, 9, 7), np.float32, "randn", 3)
    want, t_index = torch_forward(x, (3, 3), (3, 3), (1, 1), True)
    for stride in (None, [], [3], [3, 3]):
        out, mask = max_pool2d_with_mask(x, [3], stride, [1], [1], True)
        assert_bits(out, want, "stride form %r" % (stride,))
        assert_bits(mask, ref.max_pool_mask(t_index, (3, 3)))
        grad = random_input(out.shape, np.float32, "randn", 4)
        g = max_pool2d_with_mask_backward(grad, x, mask, 3, stride, 1, 1, True)
        assert_bits(g, ref.max_pool_backward(grad, t_index, x.shape, np.float32))


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
def test_nan_and_infinities(dtype):
    """NaN propagates with PyTorch's index (the last NaN of a window); -inf windows keep the
    first in-range cell; +inf wins."""
    shape, k, s, p = (2, 3, 9, 9), (3, 3), (2, 2), (1, 1)
    x = random_input(shape, dtype, "randn", 7).astype(np.float32)
    rng = np.random.default_rng(8)
    x.reshape(-1)[rng.choice(x.size, 25, replace=False)] = np.nan
    x.reshape(-1)[rng.choice(x.size, 10, replace=False)] = np.inf
    x[1, 2] = -np.inf                                 # a whole plane of -inf
    x[0, 0, 4:7, 4:7] = np.nan                        # a window of several NaNs
    x = x.astype(dtype)
    for ceil_mode in (False, True):
        out, mask = max_pool2d_with_mask(x, k, s, p, 1, ceil_mode)
        t_out, t_index = torch_forward(x, k, s, p, ceil_mode)
        np.testing.assert_array_equal(ref.max_pool_argmax(x, k, s, p, ceil_mode), t_index)
        assert_bits(out, t_out, "out")
        assert_bits(mask, ref.max_pool_mask(t_index, k), "mask")


SPEC_X_4x3 = np.array([0.0850, -0.5147, -0.0212, -0.5654, -0.3222, 0.5847,
                       1.7510, 0.9954, 0.1842, 0.8392, 0.4835, 0.9213], dtype=np.float32).reshape(1, 1, 4, 3)


def test_spec_examples_forward():
    """A worked example: a 4x3 plane, 2x2 windows with stride 2 (the winners read off by hand)."""
    out, mask = max_pool2d_with_mask(SPEC_X_4x3, [2, 2], [2, 2], [0, 0], [1, 1], False)
    np.testing.assert_array_equal(out.reshape(-1), np.float32([0.0850, 1.7510]))
    assert mask.shape == (1, 1, 4, 64)
    assert bytes(mask.view(np.uint8).reshape(-1)[:8]) == bytes([0, 0, 0, 0, 6, 0, 0, 0])
    assert not mask.reshape(-1)[8:].any()

    x3 = np.stack([np.arange(1, 10), np.arange(9, 0, -1)]).reshape(2, 3, 3).astype(np.float32)
    out, mask = max_pool2d_with_mask(x3, 2, 1, 0)
    np.testing.assert_array_equal(out, np.float32([[[5, 6], [8, 9]], [[9, 8], [6, 5]]]))
    assert mask.shape == (2, 4, 64)
    np.testing.assert_array_equal(mask.view(np.uint8).reshape(-1)[:32].view("<i4"), [4, 5, 7, 8, 0, 1, 3, 4])

    x = np.float32([[1, 5, 2, 2], [3, 5, 0, 9], [4, 1, 6, 6], [7, 7, 8, 0]]).reshape(1, 1, 4, 4)
    out, mask = max_pool2d_with_mask(x, 3, 1, 1)
    np.testing.assert_array_equal(out[0, 0], [[5, 5, 9, 9], [5, 6, 9, 9], [7, 8, 9, 9], [7, 8, 8, 8]])
    np.testing.assert_array_equal(pyaclnn.mask.indices_from_mask(mask, out.shape)[0, 0],
                                  [[1, 1, 7, 7], [1, 10, 7, 7], [12, 14, 7, 7], [12, 14, 14, 14]])

    out, mask = max_pool2d_with_mask(np.float32([[-5, -1], [-2, -3]]).reshape(1, 1, 2, 2), 3, 1, 1)
    np.testing.assert_array_equal(out, np.full((1, 1, 2, 2), -1, np.float32))
    np.testing.assert_array_equal(pyaclnn.mask.indices_from_mask(mask, out.shape), np.ones((1, 1, 2, 2)))

    out, mask = max_pool2d_with_mask(np.float32([[3, 3], [3, 1]]).reshape(1, 1, 2, 2), 2)
    assert out.reshape(-1).tolist() == [3] and mask.view(np.uint8).reshape(-1)[:4].tolist() == [0, 0, 0, 0]

    row = np.float32([[0, 1, 2, 3]]).reshape(1, 1, 1, 4)
    out, _ = max_pool2d_with_mask(row, [1, 3], [1, 2], 0, 1, False)
    assert out.reshape(-1).tolist() == [2]
    out, mask = max_pool2d_with_mask(row, [1, 3], [1, 2], 0, 1, True)
    assert out.reshape(-1).tolist() == [2, 3]
    assert mask.view(np.uint8).reshape(-1)[:8].view("<i4").tolist() == [2, 3]
    out, _ = max_pool2d_with_mask(np.float32([[0, 1, 2]]).reshape(1, 1, 1, 3), [1, 2], [1, 2], [0, 1], 1, True)
    assert out.shape[-1] == 2          # not 3: the third window would start at 4 >= W + p


def test_spec_examples_backward():
    """A worked example of the backward: the gradient lands on the forward's winners."""
    x3 = np.stack([np.arange(1, 10), np.arange(9, 0, -1)]).reshape(2, 3, 3).astype(np.float32)
    out, mask = max_pool2d_with_mask(x3, 2, 1, 0)
    grad = np.float32([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
    g = max_pool2d_with_mask_backward(grad, x3, mask, 2, 1, 0)
    np.testing.assert_array_equal(g, np.float32([[[0, 0, 0], [0, 1, 2], [0, 3, 4]],
                                                 [[5, 6, 0], [7, 8, 0], [0, 0, 0]]]))

    x = np.float32([[1, 5, 2, 2], [3, 5, 0, 9], [4, 1, 6, 6], [7, 7, 8, 0]]).reshape(1, 1, 4, 4)
    out, mask = max_pool2d_with_mask(x, 3, 1, 1)
    g = max_pool2d_with_mask_backward(np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4), x, mask, 3, 1, 1)
    np.testing.assert_array_equal(g[0, 0], [[0, 8, 0, 0], [0, 0, 0, 45], [0, 0, 6, 0], [22, 0, 55, 0]])

    # 1x1 kernel, stride 2: the mask is the legacy pattern and is not read by the backward.
    out, mask = max_pool2d_with_mask(SPEC_X_4x3, 1, 2, 0)
    assert out.shape == (1, 1, 2, 2)
    grad = np.float32([0.4757, 0.1726, 1, 2]).reshape(1, 1, 2, 2)
    want = np.float32([[0.4757, 0, 0.1726], [0, 0, 0], [1, 0, 2], [0, 0, 0]])
    np.testing.assert_array_equal(max_pool2d_with_mask_backward(grad, SPEC_X_4x3, mask, 1, 2, 0)[0, 0], want)
    garbage = np.full(mask.shape, 0x7F, dtype=np.int8)      # would be out of range if it were read
    np.testing.assert_array_equal(max_pool2d_with_mask_backward(grad, SPEC_X_4x3, garbage, 1, 2, 0)[0, 0], want)


# ---------------------------------------------------------------------------------------------
# strided / offset views of every tensor argument
# ---------------------------------------------------------------------------------------------
def _run_strided(x, k, s, p, ceil_mode, x_layout, out_layout, grad_layout, gi_layout, grad):
    oshape = ref.pooled_shape(x.shape, k, s, p, ceil_mode)
    with pyaclnn.Tensor.strided(x, *x_layout) as xt, \
            pyaclnn.Tensor.strided(np.full(oshape, np.nan, x.dtype), *out_layout) as out, \
            pyaclnn.Tensor.empty(ref.mask_shape(oshape, k), np.int8, fill=np.int8(GARBAGE)) as mask:
        pyaclnn.run_op("MaxPool2dWithMask", xt, list(k), list(s), list(p), [1, 1], ceil_mode, out, mask)
        out_np, mask_np = out.numpy(), mask.numpy()
        with pyaclnn.Tensor.strided(grad, *grad_layout) as go, \
                pyaclnn.Tensor.strided(np.full(x.shape, np.nan, x.dtype), *gi_layout) as gi:
            pyaclnn.run_op("MaxPool2dWithMaskBackward", go, xt, mask, list(k), list(s), list(p), [1, 1],
                           ceil_mode, gi)
            storage = gi.storage_numpy()
            return out_np, mask_np, gi.numpy(), storage


@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["fp32", "bf16"])
def test_strided_views(dtype):
    shape, k, s, p, ceil_mode = (2, 3, 9, 8), (3, 3), (2, 2), (1, 1), True
    x = random_input(shape, dtype, "ties", 11)
    oshape = ref.pooled_shape(shape, k, s, p, ceil_mode)
    grad = random_input(oshape, dtype, "randn", 12)
    t_out, t_index = torch_forward(x, k, s, p, ceil_mode)
    want_grad = ref.max_pool_backward(grad, t_index, shape, dtype)
    x_layouts = list(pyaclnn.testing.layouts(shape))
    o_layouts = list(pyaclnn.testing.layouts(oshape))
    for i in range(max(len(x_layouts), len(o_layouts))):
        xl, ol = x_layouts[i % len(x_layouts)], o_layouts[i % len(o_layouts)]
        gl, il = o_layouts[(i + 1) % len(o_layouts)], x_layouts[(i + 2) % len(x_layouts)]
        out, mask, g, storage = _run_strided(x, k, s, p, ceil_mode, xl, ol, gl, il, grad)
        tag = "x=%s out=%s grad=%s gradInput=%s" % (xl.name, ol.name, gl.name, il.name)
        assert_bits(out, t_out, "out " + tag)
        assert_bits(mask, ref.max_pool_mask(t_index, k), "mask " + tag)
        assert_bits(g, want_grad, "gradInput " + tag)
        # storage the gradInput view does not cover keeps its NaN fill (nothing written outside)
        assert np.isnan(storage.astype(np.float32)).sum() == storage.size - g.size, tag


def test_backward_accepts_non_contiguous_mask():
    """CANN makes the indices contiguous before the kernel: a strided view of the mask bytes
    means the bytes of the view, in order."""
    x = random_input((2, 2, 6, 6), np.float32, "randn", 13)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0)
    grad = random_input(out.shape, np.float32, "randn", 14)
    want = max_pool2d_with_mask_backward(grad, x, mask, 2, 2, 0)
    for strides, offset, numel in list(pyaclnn.testing.layouts(mask.shape))[1:3]:
        with pyaclnn.Tensor.strided(mask, strides, offset, numel, fill=np.nan) as mt, \
                pyaclnn.Tensor.from_numpy(grad) as go, pyaclnn.Tensor.from_numpy(x) as xt, \
                pyaclnn.Tensor.empty(x.shape, np.float32, fill=np.nan) as gi:
            pyaclnn.run_op("MaxPool2dWithMaskBackward", go, xt, mt, [2], [2], [0], [1], False, gi)
            assert_bits(gi.numpy(), want)


def test_forward_rejects_non_contiguous_mask():
    x = random_input((1, 1, 4, 4), np.float32, "randn", 15)
    layout = list(pyaclnn.testing.layouts((1, 1, 4, 64)))[3]          # stepped
    with pyaclnn.Tensor.from_numpy(x) as xt, pyaclnn.Tensor.empty((1, 1, 2, 2), np.float32) as out, \
            pyaclnn.Tensor.strided(np.zeros((1, 1, 4, 64), np.int8), *layout) as mask:
        with pytest.raises(pyaclnn.ParamInvalidError) as err:
            pyaclnn.aclnnMaxPool2dWithMaskGetWorkspaceSize(xt, [2, 2], [2, 2], [0, 0], [1, 1], False, out, mask)
        assert "indices" in err.value.message


# ---------------------------------------------------------------------------------------------
# executors, empty batches, bad masks, threads
# ---------------------------------------------------------------------------------------------
def test_repeatable_executors_with_new_addresses():
    shape, k, s, p = (2, 3, 7, 7), [3, 3], [2, 2], [1, 1]
    x1, x2 = random_input(shape, np.float32, "randn", 20), random_input(shape, np.float32, "ties", 21)
    oshape = ref.pooled_shape(shape, k, s, p, False)
    mshape = ref.mask_shape(oshape, k)
    with pyaclnn.Tensor.from_numpy(x1) as xt, pyaclnn.Tensor.empty(oshape, np.float32, fill=np.nan) as out, \
            pyaclnn.Tensor.empty(mshape, np.int8, fill=np.int8(GARBAGE)) as mask, \
            pyaclnn.Tensor.from_numpy(x2) as x2t, pyaclnn.Tensor.empty(oshape, np.float32, fill=np.nan) as out2, \
            pyaclnn.Tensor.empty(mshape, np.int8, fill=np.int8(GARBAGE)) as mask2:
        runs = run_rebound("MaxPool2dWithMask", (xt, k, s, p, [1, 1], False, out, mask), inputs=[(0, xt, x2t)],
                           outputs=[(0, out, out2), (1, mask, mask2)], first_runs=2)
        want, t_index = torch_forward(x1, k, s, p, False)
        want2, t_index2 = torch_forward(x2, k, s, p, False)
        for (got, got_mask), (w, index) in zip(runs, ((want, t_index), (want, t_index), (want2, t_index2))):
            assert_bits(got, w)
            assert_bits(got_mask, ref.max_pool_mask(index, k))

        # After the rebinding above, `xt` and `mask` describe x2 and its mask.
        grad1, grad2 = (random_input(oshape, np.float32, "randn", 22), random_input(oshape, np.float32, "randn", 23))
        with pyaclnn.Tensor.from_numpy(grad1) as go, pyaclnn.Tensor.from_numpy(grad2) as go2, \
                pyaclnn.Tensor.from_numpy(ref.max_pool_mask(t_index, k)) as mask1, \
                pyaclnn.Tensor.empty(shape, np.float32, fill=np.nan) as gi, \
                pyaclnn.Tensor.empty(shape, np.float32, fill=np.nan) as gi2:
            (first,), (second,) = run_rebound("MaxPool2dWithMaskBackward", (go, xt, mask, k, s, p, [1, 1], False, gi),
                                              inputs=[(0, go, go2), (2, mask, mask1)], outputs=[(0, gi, gi2)])
            assert_bits(first, ref.max_pool_backward(grad1, t_index2, shape, np.float32))
            assert_bits(second, ref.max_pool_backward(grad2, t_index, shape, np.float32))


def test_empty_batch_writes_nothing():
    x = np.zeros((0, 3, 5, 5), np.float32)
    with pyaclnn.Tensor.from_numpy(x) as xt, empty_with_room((0, 3, 2, 2)) as out, \
            empty_with_room((0, 3, 4, 64), np.int8) as mask, \
            pyaclnn.Tensor.empty((0, 3, 2, 2), np.float32) as go, \
            empty_with_room((0, 3, 5, 5)) as gi:
        ws, ex = pyaclnn.aclnnMaxPool2dWithMaskGetWorkspaceSize(xt, [2, 2], [], [0], [1], False, out, mask)
        assert ws == 0
        pyaclnn.aclnnMaxPool2dWithMask(None, 0, ex)
        pyaclnn.synchronize()
        assert_still_filled(out)
        assert_still_filled(mask)
        ws, ex = pyaclnn.aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(go, xt, mask, [2, 2], [], [0], [1], False,
                                                                        gi)
        assert ws == 0
        pyaclnn.aclnnMaxPool2dWithMaskBackward(None, 0, ex)
        pyaclnn.synchronize()
        assert_still_filled(gi)


@pytest.mark.parametrize("bad_value", [16, -1, 2**31 - 1])
def test_backward_reports_out_of_plane_index_at_synchronize(bad_value):
    x = random_input((1, 2, 4, 4), np.float32, "randn", 30)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0)
    stream = ref.mask_indices(mask, out.size).astype("<i4")
    good = stream.copy()
    stream[5] = bad_value                             # plane 1, output (0, 1)
    bad_mask = mask.copy()
    bad_mask.reshape(-1)[:stream.nbytes] = stream.view(np.int8)
    grad = np.arange(1, out.size + 1, dtype=np.float32).reshape(out.shape)
    with pyaclnn.Tensor.from_numpy(grad) as go, pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.from_numpy(bad_mask) as mt, pyaclnn.Tensor.empty(x.shape, np.float32, fill=np.nan) as gi:
        ws, ex = pyaclnn.aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(go, xt, mt, [2], [2], [0], [1], False, gi)
        pyaclnn.aclnnMaxPool2dWithMaskBackward(pyaclnn.DeviceBuffer(ws) if ws else None, ws, ex)
        with pytest.raises(pyaclnn.AclError) as err:
            pyaclnn.synchronize()
        assert err.value.code == 507015
        assert "indices" in err.value.message and str(bad_value) in err.value.message
        assert "the mask does not come from aclnnMaxPool2dWithMask" in err.value.message
        # nothing outside the plane was touched; the bad contribution is dropped, the rest lands
        got = gi.numpy()
        want_index = good.reshape(out.shape).astype(np.int64)
        want = ref.max_pool_backward(np.where(np.arange(out.size).reshape(out.shape) == 5, 0, grad), want_index,
                            x.shape, np.float32)
        assert_bits(got, want)


_THREAD_SCRIPT = textwrap.dedent("""
    import hashlib, sys
    import numpy as np, ml_dtypes, pyaclnn
    from pyaclnn.functional import max_pool2d_with_mask, max_pool2d_with_mask_backward
    h = hashlib.sha256()
    for dtype in (np.float32, ml_dtypes.bfloat16, np.float16):
        rng = np.random.default_rng(5)
        x = rng.standard_normal((3, 16, 37, 41)).astype(dtype)
        for k, s, p in (((3, 3), (1, 1), (1, 1)), ((5, 3), (2, 1), (2, 1)), ((2, 2), (2, 2), (0, 0))):
            out, mask = max_pool2d_with_mask(x, k, s, p, 1, True)
            grad = rng.standard_normal(out.shape).astype(dtype)
            g = max_pool2d_with_mask_backward(grad, x, mask, k, s, p, 1, True)
            for a in (out, mask, g):
                h.update(np.ascontiguousarray(a).tobytes())
    print(h.hexdigest())
""")


def test_thread_count_and_tier_invariance():
    tiers.assert_same_output(_THREAD_SCRIPT, tiers.sweep())


@pytest.mark.parametrize("dtype,shape", [(np.float32, (4, 64, 128, 128)), (BF16, (8, 64, 128, 128))],
                         ids=["fp32", "bf16"])
def test_large_backward_uses_streaming_stores(dtype, shape):
    """gradInput of 16 MiB or more is written with non-temporal stores and next-plane prefetch:
    the same bits as the small path."""
    k, s, p = (3, 3), (2, 2), (1, 1)
    x = random_input(shape, dtype, "randn", 40)
    out, mask = max_pool2d_with_mask(x, k, s, p)
    t_out, t_index = torch_forward(x, k, s, p, False)
    assert_bits(out, t_out)
    grad = random_input(out.shape, dtype, "randn", 41)
    assert_bits(max_pool2d_with_mask_backward(grad, x, mask, k, s, p), ref.max_pool_backward(grad, t_index, shape, dtype))
