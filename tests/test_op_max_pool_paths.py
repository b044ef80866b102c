"""aclnnMaxPool2dWithMaskBackward: the kernel's fast paths against a NumPy loop.

The backward has a direct-write path for 2x2 windows with stride 2 and no padding (each input
cell lies in at most one window) and a "slots" path for 3x3 windows with stride 2 and padding 0
or 1 (16 outputs at a time add to the cells their indices name, in output order); both are taken on CPUs
with AVX-512 and fall back, plane by plane, to the general scatter when an index does not lie
in its own window.  These tests drive both sides of that choice and the edges of the fast paths
(odd H/W with ceilMode on and off, row widths around the 16-cell step, cells that are the argmax
of four windows, -0.0 and NaN gradients), always against an independent reference
(reference.max_pool_backward):

    gradInput[n, c, i] = float32 sum, in output order, of gradOutput[n, c, o] over the outputs o
                         whose mask index is i; rounded once to the dtype.
"""
import re
import textwrap

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn.functional import max_pool2d_with_mask, max_pool2d_with_mask_backward
import reference as ref
import tiers
from op_helpers import assert_bits, pooled_size

BF16 = ml_dtypes.bfloat16
DTYPES = [np.float32, np.float16, BF16]
DT_IDS = ["fp32", "fp16", "bf16"]


@pytest.fixture(autouse=True)
def fast_paths_at_any_width(monkeypatch):
    """The fast paths' edges lie in narrow planes, which the library's own choice gives to the
    scatter (ACLNN_MP_BW_MIN_WIDTH; test_narrow_planes_take_the_scatter): here they run at any
    width, in this process and in the runs it starts."""
    monkeypatch.setenv("ACLNN_MP_BW_MIN_WIDTH", "0")


def random_array(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def check_backward_of_forward_mask(x, kernel, stride, pad, ceil_mode, grad_seed):
    """The backward of the mask the forward wrote for x, against the reference sums; returns the
    forward's output."""
    out, mask = max_pool2d_with_mask(x, kernel, stride, pad, 1, ceil_mode)
    grad = random_array(out.shape, x.dtype, grad_seed)
    index = ref.mask_indices(mask, out.size).reshape(out.shape)
    got = max_pool2d_with_mask_backward(grad, x, mask, kernel, stride, pad, 1, ceil_mode)
    assert_bits(got, ref.max_pool_backward(grad, index, x.shape, x.dtype))
    return out


# shapes around the direct path's edges: odd/even H and W, rows shorter than, equal to and
# longer than one 16-output step (W = 32 -> Wo = 16), 3-D and 4-D
SHAPES = [(1, 1, 2, 2), (2, 3, 5, 7), (1, 2, 8, 31), (1, 1, 6, 32), (2, 1, 9, 33), (1, 2, 4, 70),
          (3, 17, 19), (2, 56, 56)]


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("ceil_mode", [False, True], ids=["floor", "ceil"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_2x2_stride_2_with_forward_mask(shape, ceil_mode, dtype):
    check_backward_of_forward_mask(random_array(shape, dtype, 1), 2, 2, 0, ceil_mode, 2)


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
def test_2x2_negative_zero_and_nan_gradients(dtype):
    x = random_array((2, 3, 6, 38), dtype, 3)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0)
    grad = random_array(out.shape, dtype, 4)
    grad.reshape(-1)[::3] = -0.0      # a lone -0.0 becomes +0.0 (0.0f + -0.0f)
    grad.reshape(-1)[1::7] = np.nan
    grad.reshape(-1)[2::11] = np.float32(-3e-39).astype(dtype)   # subnormal (fp16: rounds to -0.0)
    index = ref.mask_indices(mask, out.size).reshape(out.shape)
    got = max_pool2d_with_mask_backward(grad, x, mask, 2, 2, 0)
    want = ref.max_pool_backward(grad, index, x.shape, dtype)
    assert_bits(np.where(np.isnan(got.astype(np.float32)), 0, got).astype(dtype),
                np.where(np.isnan(want.astype(np.float32)), 0, want).astype(dtype))
    assert (np.isnan(got.astype(np.float32)) == np.isnan(want.astype(np.float32))).all()
    assert not np.signbit(got.astype(np.float32)[got.astype(np.float32) == 0]).any()


def test_2x2_bf16_nan_payloads_are_kept_and_quieted():
    """bf16 cells are the top half of 0.0f + g: a NaN keeps its payload and sign, and a
    signalling NaN comes out quiet (bit 6 set), as core's rounding would give."""
    x = random_array((2, 3, 8, 40), np.float32, 12).astype(BF16)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0)
    payloads = np.array([0x7f81, 0xff85, 0x7fc3, 0xffe0, 0x7f80], np.uint16)   # sNaN, -sNaN, qNaN, -qNaN, inf
    grad_bits = payloads[np.arange(out.size) % payloads.size].reshape(out.shape)
    grad = grad_bits.view(BF16)
    got = max_pool2d_with_mask_backward(grad, x, mask, 2, 2, 0).view(np.uint16)
    index = ref.mask_indices(mask, out.size).reshape(2, 3, -1)
    want = np.zeros((2, 3, 8 * 40), np.uint16)
    flat = grad_bits.reshape(2, 3, -1)
    quiet = np.where((flat & 0x7f80) == 0x7f80, np.where(flat & 0x7f, flat | 0x40, flat), flat)
    np.put_along_axis(want, index, quiet, axis=-1)
    assert_bits(got, want.reshape(got.shape))


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
    got = max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 2), 2, 2, 0, 1, ceil_mode)
    assert_bits(got, ref.max_pool_backward(grad, index, x.shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
def test_2x2_one_stray_index_among_good_planes(dtype):
    """Only some planes hold an index outside its window: those planes take the fallback, the
    others the direct path; all must match the reference."""
    x = random_array((2, 4, 8, 36), dtype, 8)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0)
    index = ref.mask_indices(mask, out.size).reshape(out.shape).copy()
    ho, wo = out.shape[-2:]
    w = x.shape[-1]
    # plane (0, 1): output (1, 3) points at the window to its right (its own row pair)
    index[0, 1, 1, 3] = 2 * w + 2 * 4
    # plane (1, 2): the last output points at cell 0 of the plane
    index[1, 2, ho - 1, wo - 1] = 0
    # plane (1, 3): output (0, 0) points one row below its window
    index[1, 3, 0, 0] = 2 * w
    grad = random_array(out.shape, dtype, 9)
    got = max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 2), 2, 2, 0)
    assert_bits(got, ref.max_pool_backward(grad, index, x.shape, dtype))


def test_2x2_ceil_mode_index_wrapping_to_the_next_row():
    """With odd W and ceilMode, the last window's right column lies outside the plane; the index
    ih*W + W (= the next row's first cell) is in the plane but not in that window."""
    x = random_array((1, 1, 5, 5), np.float32, 10)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0, 1, True)
    index = ref.mask_indices(mask, out.size).reshape(out.shape).copy()
    index[0, 0, 0, 2] = 0 * 5 + 5      # window (0, 2) covers columns 4..5: "column 5" wraps to (1, 0)
    index[0, 0, 1, 2] = 2 * 5 + 5      # likewise for window (1, 2)
    grad = random_array(out.shape, np.float32, 11)
    got = max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 2), 2, 2, 0, 1, True)
    assert_bits(got, ref.max_pool_backward(grad, index, x.shape, np.float32))




# ---------------------------------------------------------------------------------------------
# 3x3 windows, stride 2 (the slots path)
# ---------------------------------------------------------------------------------------------

# padding (pH, pW): both 0, both 1 (the ResNet stem pool), and mixed
PADS_3X3 = [(0, 0), (1, 1), (1, 0), (0, 1)]
# row widths around the 16-cell step and the row end (W = 15..17, 31..33, 47, 112), odd/even H
SHAPES_3X3 = [(1, 1, 3, 3), (2, 3, 5, 7), (1, 2, 8, 15), (1, 1, 6, 16), (2, 1, 9, 17), (1, 2, 4, 31),
              (1, 1, 7, 32), (1, 2, 5, 33), (3, 11, 47), (1, 2, 20, 112)]


def with_spikes(x, seed):
    """x with large values on some odd-row, odd-column cells: with padding 1 such a cell is the
    argmax of all four windows around it (the most contributions a cell can get)."""
    x = x.astype(np.float32).copy()
    rng = np.random.default_rng(seed)
    h, w = x.shape[-2:]
    spikes = x[..., 1::2, 1::2]
    pick = rng.random(spikes.shape) < 0.5
    spikes[pick] = 10 + rng.random(np.count_nonzero(pick)).astype(np.float32)
    return x


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("ceil_mode", [False, True], ids=["floor", "ceil"])
@pytest.mark.parametrize("pad", PADS_3X3, ids=lambda p: "p%d%d" % p)
@pytest.mark.parametrize("shape", SHAPES_3X3, ids=lambda s: "x".join(map(str, s)))
def test_3x3_stride_2_with_forward_mask(shape, pad, ceil_mode, dtype):
    x = with_spikes(random_array(shape, np.float32, 21), 22).astype(dtype)
    out = check_backward_of_forward_mask(x, 3, 2, list(pad), ceil_mode, 23)
    assert out.shape[-2:] == tuple(pooled_size(n, 3, 2, q, ceil_mode) for n, q in zip(shape[-2:], pad))


def test_3x3_stride_2_four_windows_on_one_cell_against_torch():
    """fp32 against torch itself: cells receiving 2 and 4 gradients sum in torch's order."""
    import torch
    x = with_spikes(random_array((2, 3, 23, 40), np.float32, 24), 25)
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    t_out, t_idx = torch.ops.aten.max_pool2d_with_indices(torch.from_numpy(x), [3, 3], [2, 2], [1, 1], [1, 1],
                                                           False)
    counts = np.bincount(t_idx.reshape(6, -1)[0].numpy(), minlength=23 * 40)
    assert counts.max() == 4          # the spikes really are the argmax of four windows
    grad = random_array(out.shape, np.float32, 26)
    want = torch.ops.aten.max_pool2d_with_indices_backward(torch.from_numpy(grad), torch.from_numpy(x), [3, 3],
                                                           [2, 2], [1, 1], [1, 1], False, t_idx)
    got = max_pool2d_with_mask_backward(grad, x, mask, 3, 2, 1)
    assert_bits(got, want.numpy())


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
def test_3x3_negative_zero_and_nan_gradients(dtype):
    x = with_spikes(random_array((2, 3, 9, 38), np.float32, 27), 28).astype(dtype)
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    grad = random_array(out.shape, dtype, 29)
    grad.reshape(-1)[::3] = -0.0
    grad.reshape(-1)[1::7] = np.nan
    grad.reshape(-1)[2::11] = np.float32(3e-39).astype(dtype)    # subnormal in fp32 and bf16
    index = ref.mask_indices(mask, out.size).reshape(out.shape)
    got = max_pool2d_with_mask_backward(grad, x, mask, 3, 2, 1)
    want = ref.max_pool_backward(grad, index, x.shape, dtype)
    g32, w32 = got.astype(np.float32), want.astype(np.float32)
    assert (np.isnan(g32) == np.isnan(w32)).all()
    assert_bits(np.where(np.isnan(g32), 0, got).astype(dtype), np.where(np.isnan(w32), 0, want).astype(dtype))
    assert not np.signbit(g32[g32 == 0]).any()


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("pad", [(0, 0), (1, 1)], ids=lambda p: "p%d%d" % p)
@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (1, 2, 10, 40), (4, 33, 35), (1, 2, 9, 100)],
                         ids=lambda s: "x".join(map(str, s)))
def test_3x3_adversarial_indices_inside_the_plane(shape, pad, dtype):
    x = random_array(shape, dtype, 30)
    out, mask = max_pool2d_with_mask(x, 3, 2, list(pad), 1, True)
    h, w = shape[-2:]
    index = np.random.default_rng(31).integers(0, h * w, size=out.shape)
    grad = random_array(out.shape, dtype, 32)
    got = max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 3), 3, 2, list(pad), 1, True)
    assert_bits(got, ref.max_pool_backward(grad, index, x.shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
def test_3x3_one_stray_index_among_good_planes(dtype):
    """Indices just outside their window (one column or row too far, wrapped to the next row, a
    padding cell's neighbour): those planes fall back, the others take the gather."""
    x = random_array((2, 4, 9, 36), dtype, 33)
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    index = ref.mask_indices(mask, out.size).reshape(out.shape).copy()
    ho, wo = out.shape[-2:]
    w = x.shape[-1]
    index[0, 1, 1, 3] = 2 * w + 2 * 3 + 2       # column 8: one right of window (1, 3)'s columns 5..7
    index[1, 0, 0, 0] = 2 * w                   # row 2: one below window (0, 0)'s rows 0..1
    index[1, 2, ho - 1, wo - 1] = 0             # the far corner
    index[1, 3, 2, 0] = 3 * w + w - 1           # window (2, 0) covers columns -1..1: "column -1" wraps
    grad = random_array(out.shape, dtype, 34)
    got = max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 3), 3, 2, 1)
    assert_bits(got, ref.max_pool_backward(grad, index, x.shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("pad", [0, 1])
def test_3x3_stray_indices_in_full_blocks(pad, dtype):
    """Rows wide enough for blocks of 16 outputs whose windows all lie inside the row (slots
    16..31 here), which the kernel checks without per-lane masks: each kind of stray index
    there must still send its plane to the scatter."""
    x = random_array((2, 4, 11, 100), dtype, 36)
    out, mask = max_pool2d_with_mask(x, 3, 2, pad)
    index = ref.mask_indices(mask, out.size).reshape(out.shape).copy()
    w = x.shape[-1]

    def origin(oh, ow):
        return (2 * oh - pad) * w + 2 * ow - pad

    index[0, 0, 2, 20] = origin(2, 20) + 3              # column 3 of the window: wraps past dx = 2
    index[0, 2, 3, 17] = origin(3, 17) + w + 3          # the same one row down
    index[1, 1, 2, 25] = origin(2, 25) + 3 * w + 1      # one row below the window
    index[1, 3, 3, 31] = origin(3, 31) - 1              # one column left of it
    grad = random_array(out.shape, dtype, 37)
    got = max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 3), 3, 2, pad)
    assert_bits(got, ref.max_pool_backward(grad, index, x.shape, dtype))


# ---------------------------------------------------------------------------------------------
# fp16 / bf16, padding 1, even H, W = 32n + 16 (the ResNet stem pool's 112x112): the right-paired
# path, which writes whole lines straight from registers (max_pool2d_with_mask_backward.c,
# next_3x3s2_plane); other planes take the slots path above
# ---------------------------------------------------------------------------------------------

RIGHT_PAIRED_SHAPES = [(1, 2, 4, 48), (2, 3, 10, 80), (1, 1, 6, 112), (3, 12, 176), (1, 2, 112, 112)]
HALF_DTYPES = [np.float16, BF16]
HALF_IDS = ["fp16", "bf16"]


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=HALF_IDS)
@pytest.mark.parametrize("ceil_mode", [False, True], ids=["floor", "ceil"])
@pytest.mark.parametrize("shape", RIGHT_PAIRED_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_right_paired_with_forward_mask(shape, ceil_mode, dtype):
    check_backward_of_forward_mask(with_spikes(random_array(shape, np.float32, 41), 42).astype(dtype), 3, 2, 1,
                                   ceil_mode, 43)


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=HALF_IDS)
@pytest.mark.parametrize("shape", [(2, 3, 12, 48), (2, 3, 10, 80)], ids=lambda s: "x".join(map(str, s)))
def test_right_paired_stray_indices(shape, dtype):
    """Each kind of index the right pairing cannot place sends its plane to the scatter: column -1
    of output 0's window (the row above's last cell), one column right of the window in a full
    block and in the last 8-output block (wrapping to the next row there), one row below the
    window, and a cell of another window on the plane's last window row."""
    x = random_array(shape, dtype, 44)
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    index = ref.mask_indices(mask, out.size).reshape(out.shape).copy()
    ho, wo = out.shape[-2:]
    w = x.shape[-1]

    def origin(oh, ow):
        return (2 * oh - 1) * w + 2 * ow - 1

    index[0, 0, 2, 0] = origin(2, 0)                    # column -1: wraps to row 2's last cell
    index[0, 1, 1, 5] = origin(1, 5) + 3                # dx = 3 in the first block
    index[0, 2, 3, wo - 1] = origin(3, wo - 1) + 3      # dx = 3 in the last block: the next row's first cell
    index[1, 0, 1, wo - 3] = origin(1, wo - 3) + 3 * w  # dy = 3 in the last block
    index[1, 2, ho - 1, 17] = 0                         # the last window row names the first cell
    grad = random_array(out.shape, dtype, 45)
    got = max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 3), 3, 2, 1)
    assert_bits(got, ref.max_pool_backward(grad, index, x.shape, dtype))


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=HALF_IDS)
@pytest.mark.parametrize("ow", [5, 22], ids=["full_block", "last_block"])
def test_right_paired_index_above_the_plane_is_reported(ow, dtype):
    """The first window row's top cells lie in row -1 (padding): an index naming one is outside
    the plane and must be reported at synchronize, not dropped with the row the path never
    writes."""
    x = random_array((1, 2, 8, 48), dtype, 48)
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    index = ref.mask_indices(mask, out.size).reshape(out.shape).copy()
    index[0, 1, 0, ow] = -48 + 2 * ow - 1 + 1         # window (0, ow)'s top row, its middle column
    grad = random_array(out.shape, dtype, 49)
    with pytest.raises(pyaclnn.AclError) as err:
        max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 3), 3, 2, 1)
    assert err.value.code == 507015 and str(-48 + 2 * ow) in err.value.message


# (exponent field, quiet bit, quiet NaN, signalling NaN, negative quiet NaN) of each dtype
HALF_NAN_BITS = {"fp16": (0x7c00, 0x0200, 0x7e01, 0x7c02, 0xfe03), "bf16": (0x7f80, 0x0040, 0x7fc1, 0x7f82, 0xffc3)}


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=HALF_IDS)
def test_right_paired_negative_zero_and_nan_payloads(dtype):
    """-0.0 gradients become +0.0 and NaNs meeting in a cell keep the first one's payload
    (quieted), as in the scatter; different NaNs reach every odd/odd cell."""
    exponent, quiet, qnan, snan, neg_qnan = HALF_NAN_BITS["fp16" if dtype == np.float16 else "bf16"]
    x = np.full((1, 2, 6, 48), -1.0, np.float32)
    x[..., 1::2, 1::2] = 5.0                       # every odd/odd cell is the argmax of four windows
    x = x.astype(dtype)
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    payloads = np.array([qnan, snan, neg_qnan, 0x0000, 0x8000], np.uint16)
    grad = payloads[np.arange(out.size) % 5].view(dtype).reshape(out.shape)
    index = ref.mask_indices(mask, out.size).reshape(out.shape)
    got = max_pool2d_with_mask_backward(grad, x, mask, 3, 2, 1)
    # the rule of an x86 add with the accumulator first: a NaN accumulator stays (quieted),
    # else a NaN gradient replaces it (quieted), else +0.0 + (+-0.0) = +0.0
    want = np.zeros(x.shape, np.uint16)
    flat_want, bits = want.reshape(2, -1), grad.view(np.uint16).reshape(2, -1)
    for plane in range(2):
        for o, cell in enumerate(index.reshape(2, -1)[plane]):
            acc, g = flat_want[plane, cell], bits[plane, o]
            if acc & 0x7fff <= exponent and g & 0x7fff > exponent:
                flat_want[plane, cell] = g | quiet
    assert_bits(got, want.view(dtype))


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=HALF_IDS)
def test_right_paired_unaligned_gradinput(dtype):
    """A gradInput view that starts off a cache line cannot take whole-line stores: its planes
    take the slots path, with the same bits."""
    shape = (2, 3, 8, 48)
    x = random_array(shape, dtype, 46)
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    grad = random_array(out.shape, dtype, 47)
    want = ref.max_pool_backward(grad, ref.mask_indices(mask, out.size).reshape(out.shape), shape, dtype)
    for offset in (1, 16, 32):
        numel = int(np.prod(shape))
        with pyaclnn.Tensor.from_numpy(grad) as go, pyaclnn.Tensor.from_numpy(x) as xt, \
                pyaclnn.Tensor.from_numpy(mask) as mt, \
                pyaclnn.Tensor.strided(np.full(shape, np.nan, dtype), None, offset, numel + offset) as gi:
            pyaclnn.run_op("MaxPool2dWithMaskBackward", go, xt, mt, [3, 3], [2, 2], [1, 1], [1, 1], False, gi)
            assert_bits(gi.numpy(), want, "offset %d" % offset)


def test_3x3_nan_payloads_in_torchs_order():
    """Four different NaNs reaching one cell: the sum keeps the first one's payload (the
    accumulator is the add's first operand), as PyTorch's scatter does."""
    import torch
    x = np.full((1, 2, 6, 40), -1.0, np.float32)
    x[..., 1::2, 1::2] = 5.0                       # every odd/odd cell is the argmax of four windows
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    payloads = np.array([0x7fc00001, 0x7fc00002, 0xffc00003, 0x7fa00004], np.uint32)
    grad = payloads[np.arange(out.size) % 4].view(np.float32).reshape(out.shape)
    t_out, t_idx = torch.ops.aten.max_pool2d_with_indices(torch.from_numpy(x), [3, 3], [2, 2], [1, 1], [1, 1],
                                                           False)
    want = torch.ops.aten.max_pool2d_with_indices_backward(torch.from_numpy(grad), torch.from_numpy(x), [3, 3],
                                                           [2, 2], [1, 1], [1, 1], False, t_idx)
    got = max_pool2d_with_mask_backward(grad, x, mask, 3, 2, 1)
    assert_bits(got, want.numpy())


def test_3x3_bf16_subnormal_sums_late_in_the_plane():
    """bf16 sums are rounded with AVX512-BF16 where it has them, which reads subnormals as zero;
    tiny gradients that first appear late in a plane, and cancel or add to subnormal sums, must
    still round exactly."""
    x = with_spikes(random_array((2, 2, 24, 50), np.float32, 40), 41).astype(BF16)
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    grad = random_array(out.shape, np.float32, 42)
    rng = np.random.default_rng(43)
    tail = grad[..., 9:, :]                                # output rows 9.. : small multiples of a tiny step
    tail[...] = rng.integers(-3, 4, size=tail.shape) * rng.choice([2.0 ** -130, 2.0 ** -120], size=tail.shape)
    grad = grad.astype(BF16)
    index = ref.mask_indices(mask, out.size).reshape(out.shape)
    got = max_pool2d_with_mask_backward(grad, x, mask, 3, 2, 1)
    want = ref.max_pool_backward(grad, index, x.shape, BF16)
    magnitude = np.abs(want.astype(np.float32))
    assert ((magnitude > 0) & (magnitude < 2.0 ** -126)).sum() > 20        # many subnormal sums
    assert_bits(got, want)


def test_3x3_ceil_window_on_the_last_row_with_an_index_below_the_plane():
    """ceilMode lets the last window start on the last input row (H = 6, pH = 1): an index one
    row further down, outside the plane, must be reported, not dropped."""
    x = random_array((1, 1, 6, 20), np.float32, 44)
    out, mask = max_pool2d_with_mask(x, 3, 2, 1, 1, True)
    assert out.shape[-2] == 4
    index = ref.mask_indices(mask, out.size).reshape(out.shape).copy()
    index[0, 0, 3, 2] = 6 * 20 + 2 * 2 - 1 + 1        # the window's middle row (row 6): outside
    grad = random_array(out.shape, np.float32, 45)
    with pytest.raises(pyaclnn.AclError) as err:
        max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 3), 3, 2, 1, 1, True)
    assert err.value.code == 507015 and str(6 * 20 + 4) in err.value.message


@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("kernel, stride, pad", [(2, 2, 0), (3, 2, 1)], ids=["k2s2", "k3s2p1"])
def test_small_planes_scatter_several_at_a_time(kernel, stride, pad, dtype, monkeypatch):
    """Planes under 2 KiB of gradInput (8x8 here) that take the scatter are scattered several at
    a time and stored together (plan->scatter_group: 16 fp32 or 32 bf16 planes a store): an 18 MB
    gradInput, so the stores stream, against the reference sums."""
    monkeypatch.delenv("ACLNN_MP_BW_MIN_WIDTH")      # the library's own choice: the scatter
    x = with_spikes(random_array((4, 1100, 8, 8), np.float32, 46), 47).astype(dtype)
    out, mask = max_pool2d_with_mask(x, kernel, stride, pad)
    grad = random_array(out.shape, dtype, 48)
    index = ref.mask_indices(mask, out.size).reshape(out.shape)
    got = max_pool2d_with_mask_backward(grad, x, mask, kernel, stride, pad)
    assert_bits(got, ref.max_pool_backward(grad, index, x.shape, dtype))


def test_small_planes_bad_index_in_the_middle_of_a_group(monkeypatch):
    """An index outside its plane in the 6th plane of a group of 16 is reported with its plane
    and output; the other planes' gradients are the reference sums."""
    monkeypatch.delenv("ACLNN_MP_BW_MIN_WIDTH")
    x = random_array((2, 40, 8, 8), np.float32, 49)
    out, mask = max_pool2d_with_mask(x, 2, 2, 0)
    index = ref.mask_indices(mask, out.size).reshape(out.shape).copy()
    index[0, 21, 2, 3] = 64 + 5
    grad = random_array(out.shape, np.float32, 50)
    with pytest.raises(pyaclnn.AclError) as err:
        max_pool2d_with_mask_backward(grad, x, ref.max_pool_mask(index, 2), 2, 2, 0)
    assert err.value.code == 507015 and "argmax 69 for output (n=0, c=21, oh=2, ow=3)" in err.value.message


_THREADS_SCRIPT = textwrap.dedent("""
    import hashlib
    import numpy as np, ml_dtypes
    from pyaclnn.functional import max_pool2d_with_mask, max_pool2d_with_mask_backward
    h = hashlib.sha256()
    rng = np.random.default_rng(35)
    for k, s, p in ((2, 2, 0), (3, 2, 1)):
        for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
            for shape, ceil in (((3, 5, 13, 40), False), ((2, 3, 9, 33), True)):
                x = rng.standard_normal(shape).astype(np.float32)
                x[..., 1::4, 1::4] = 9                   # cells that are the argmax of several windows
                x = x.astype(dtype)
                out, mask = max_pool2d_with_mask(x, k, s, p, 1, ceil)
                grad = rng.standard_normal(out.shape).astype(np.float32).astype(dtype)
                h.update(max_pool2d_with_mask_backward(grad, x, mask, k, s, p, 1, ceil).tobytes())
                stream = mask.view(np.uint8).reshape(-1)[:4 * out.size].view("<i4")
                stream[::5] = rng.integers(0, shape[2] * shape[3], size=stream[::5].size)  # forces the fallback
                h.update(max_pool2d_with_mask_backward(grad, x, mask, k, s, p, 1, ceil).tobytes())
    print(h.hexdigest())
""")


_SMALL_PLANES_SCRIPT = textwrap.dedent("""
    import hashlib
    import numpy as np, ml_dtypes
    from pyaclnn.functional import max_pool2d_with_mask, max_pool2d_with_mask_backward
    h = hashlib.sha256()
    rng = np.random.default_rng(51)
    for k, s, p in ((2, 2, 0), (3, 2, 1)):
        for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
            for shape in ((3, 37, 8, 8), (2, 45, 5, 7)):
                x = rng.standard_normal(shape).astype(np.float32).astype(dtype)
                out, mask = max_pool2d_with_mask(x, k, s, p)
                grad = rng.standard_normal(out.shape).astype(np.float32).astype(dtype)
                h.update(max_pool2d_with_mask_backward(grad, x, mask, k, s, p).tobytes())
    print(h.hexdigest())
""")


_PATH_SCRIPT = textwrap.dedent("""
    import numpy as np, ml_dtypes
    from pyaclnn.functional import max_pool2d_with_mask, max_pool2d_with_mask_backward
    for k, s, p, widths in ((2, 2, 0, (16, 32)), (3, 2, 1, (64, 72))):
        for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
            for w in widths:
                x = np.random.default_rng(w).standard_normal((2, 3, 8, w)).astype(dtype)
                out, mask = max_pool2d_with_mask(x, k, s, p)
                max_pool2d_with_mask_backward(np.ones_like(out), x, mask, k, s, p)
""")


def test_narrow_planes_take_the_scatter(monkeypatch):
    """The library's own choice (AVX-512): planes narrower than 32 cells (2x2 s2), 72 (3x3 s2,
    fp32) or 48 (3x3 s2, fp16/bf16) take the scatter, which is faster there than a fast path's
    set-up per plane (docs/kernels_max_pool.md, "Small planes"); wider ones the fast path."""
    monkeypatch.delenv("ACLNN_MP_BW_MIN_WIDTH")
    out = tiers.run_script(_PATH_SCRIPT, tiers.Run("best", threads=1, extra=(
        ("ASCEND_GLOBAL_LOG_LEVEL", "1"), ("ASCEND_SLOG_PRINT_TO_STDOUT", "1"))))
    paths = re.findall(r"\[aclnnMaxPool2dWithMaskBackward\] exec .* kernel=(\S+)", out)
    scatter, tiled, slots = ("max_pool_bw_portable_scatter", "max_pool_bw_avx512_tiled_2x2",
                             "max_pool_bw_avx512_slots_3x3s2")
    if not tiers.has_avx512():       # the AVX2 tier has the 2x2 path only
        tiled, slots = "max_pool_bw_avx2_tiled_2x2", scatter
    assert paths == [scatter, tiled] * 3 + [scatter, slots] + [slots, slots] * 2, out


def test_streamed_launches_take_the_fast_paths_on_narrower_planes(monkeypatch):
    """A launch that streams gradInput gives the fast paths less to earn back: the 2x2 paths take
    planes from 16 wide and the slots from 32 (docs/kernels_max_pool.md, "Small planes")."""
    monkeypatch.delenv("ACLNN_MP_BW_MIN_WIDTH")
    script = _PATH_SCRIPT.replace("(16, 32)", "(8, 16)").replace("(64, 72)", "(16, 32)")
    out = tiers.run_script(script, tiers.Run("best", threads=1, streaming=1, extra=(
        ("ASCEND_GLOBAL_LOG_LEVEL", "1"), ("ASCEND_SLOG_PRINT_TO_STDOUT", "1"))))
    paths = re.findall(r"\[aclnnMaxPool2dWithMaskBackward\] exec .* kernel=(\S+)", out)
    scatter, tiled, slots = ("max_pool_bw_portable_scatter", "max_pool_bw_avx512_tiled_2x2",
                             "max_pool_bw_avx512_slots_3x3s2")
    expected_3x3 = [scatter, slots] * 3
    if not tiers.has_avx512():       # the AVX2 slots take fp32 and fp16, not bf16
        tiled, slots = "max_pool_bw_avx2_tiled_2x2", "max_pool_bw_avx2_slots_3x3s2"
        expected_3x3 = [scatter, slots] * 2 + [scatter, scatter]
    assert paths == [scatter, tiled] * 3 + expected_3x3, out


def test_avx2_slots_only_in_streamed_launches_and_not_bf16(monkeypatch):
    """On the AVX2 tier the 3x3 stride-2 slot kernel measured faster than the scatter only where
    gradInput is streamed (out of cache) and not for bf16 (docs/kernels_max_pool.md, "Slot kernel,
    AVX2"): a streamed launch takes it for fp32 and fp16 planes from 32 wide; bf16 and any launch
    that does not stream keep the scatter (the 2x2 calls of the script, first, are not checked)."""
    monkeypatch.delenv("ACLNN_MP_BW_MIN_WIDTH")
    script = _PATH_SCRIPT.replace("(64, 72)", "(16, 32)")
    log = (("ASCEND_GLOBAL_LOG_LEVEL", "1"), ("ASCEND_SLOG_PRINT_TO_STDOUT", "1"))
    pattern = r"\[aclnnMaxPool2dWithMaskBackward\] exec .* kernel=(\S+)"
    scatter, slots = "max_pool_bw_portable_scatter", "max_pool_bw_avx2_slots_3x3s2"
    streamed = re.findall(pattern, tiers.run_script(script, tiers.Run("avx2", threads=1, streaming=1, extra=log)))
    assert streamed[6:] == [scatter, slots] * 2 + [scatter, scatter], streamed
    unstreamed = re.findall(pattern, tiers.run_script(script, tiers.Run("avx2", threads=1, streaming=0, extra=log)))
    assert unstreamed[6:] == [scatter] * 6, unstreamed


def test_3x3_tests_on_the_avx2_slots():
    """This file's 3x3 tests again on the AVX2 tier with streamed launches, where the fp32 and
    fp16 planes take the AVX2 slot kernel (max_pool_bw_avx2.c) instead of the AVX-512 one."""
    tiers.run_script("import sys, pytest\n"
                     "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-k',\n"
                     "                      '(3x3 or right_paired) and not avx2',\n"
                     "                      'tests/test_op_max_pool_paths.py']))", tiers.Run("avx2", streaming=1))


def test_plain_c_2x2_write_takes_planes_from_8_wide(monkeypatch):
    """Without AVX2 (aarch64, ACLNN_NO_SIMD=1) the 2x2 windows have the plain C direct write, which
    beats the scatter from 8-wide planes on (docs/kernels_max_pool.md, "Small planes"); the 3x3
    windows keep the scatter."""
    monkeypatch.delenv("ACLNN_MP_BW_MIN_WIDTH")
    script = _PATH_SCRIPT.replace("(16, 32)", "(4, 8)")
    out = tiers.run_script(script, tiers.Run("portable", threads=1, extra=(
        ("ASCEND_GLOBAL_LOG_LEVEL", "1"), ("ASCEND_SLOG_PRINT_TO_STDOUT", "1"))))
    paths = re.findall(r"\[aclnnMaxPool2dWithMaskBackward\] exec .* kernel=(\S+)", out)
    scatter, tiled = "max_pool_bw_portable_scatter", "max_pool_bw_portable_tiled_2x2"
    assert paths == [scatter, tiled] * 3 + [scatter] * 6, out


def test_2x2_tests_on_the_plain_c_write():
    """This file's 2x2 tests again on the portable tier, where the 2x2 planes take the plain C
    direct write (max_pool_bw_2x2_portable.c) instead of the AVX-512 / AVX2 forms."""
    tiers.run_script("import sys, pytest\n"
                     "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-k', '2x2 and not plain_c',\n"
                     "                      'tests/test_op_max_pool_paths.py']))", tiers.Run("portable"))


def test_fast_paths_same_bits_for_any_thread_count():
    """Both fast paths (2x2 and 3x3 stride 2) and their fallback, at 1-3 threads, with and
    without streaming stores, on the AVX2 tier and on the portable loops."""
    runs = [tiers.Run(threads=t, streaming=s) for t, s in ((1, 0), (2, 1), (3, 0))]
    runs += [tiers.Run("avx2", threads=2, streaming=1), tiers.Run("avx2", threads=1, streaming=0),
             tiers.Run("portable", threads=2)]
    tiers.assert_same_output(_THREADS_SCRIPT, runs)


def test_small_planes_same_bits_for_any_thread_count():
    """Small planes with the library's own path choice (the scatter several planes at a time; the
    plain C 2x2 write from 8 wide on the portable tier), at 1-3 threads, streamed or not, on every
    tier: groups cut by the threads' claims at different planes."""
    small = (("ACLNN_MP_BW_MIN_WIDTH", ""),)
    runs = [tiers.Run(threads=t, streaming=s, extra=small) for t, s in ((1, 1), (2, 0), (3, 1))]
    runs += [tiers.Run("avx2", threads=2, streaming=1, extra=small),
             tiers.Run("portable", threads=3, streaming=1, extra=small)]
    tiers.assert_same_output(_SMALL_PLANES_SCRIPT, runs)


@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("kernel, stride, pad, shape", [(3, 2, 1, (2, 3, 112, 112)), (2, 2, 0, (2, 5, 56, 56))],
                         ids=["k3s2p1", "k2s2"])
def test_workspace_anywhere_in_a_page(kernel, stride, pad, shape, dtype):
    """The fast paths' line stage lives in the workspace and is kept inside one page when the
    workspace's place would make it straddle two (nn_line_stage_place): one repeatable executor
    run with its workspace at offsets across a page gives the reference bits every time."""
    x = with_spikes(random_array(shape, np.float32, 31), 32).astype(dtype)
    out, mask = max_pool2d_with_mask(x, kernel, stride, pad, 1, False)
    grad = random_array(out.shape, dtype, 33)
    want = ref.max_pool_backward(grad, ref.mask_indices(mask, out.size).reshape(out.shape), x.shape, dtype)
    with pyaclnn.Tensor.from_numpy(grad) as go, pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.from_numpy(mask) as mt, pyaclnn.Tensor.empty(x.shape, dtype) as gi:
        size, executor = pyaclnn.aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(
            go, xt, mt, [kernel, kernel], [stride, stride], [pad, pad], [1, 1], False, gi)
        assert size > 0
        executor.set_repeatable()
        nan = np.full(x.shape, np.nan, dtype)
        with executor, pyaclnn.DeviceBuffer(size + 8192) as room:
            page = (room.address + 4095) // 4096 * 4096
            for offset in range(0, 4096, 192):
                gi.buffer.copy_from_host(nan.reshape(-1))
                pyaclnn.aclnnMaxPool2dWithMaskBackward(page + offset, size, executor)
                pyaclnn.synchronize()
                assert_bits(gi.numpy(), want)
