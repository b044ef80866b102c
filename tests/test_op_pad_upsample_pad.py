"""aclnnReplicationPad2d and aclnnReplicationPad2dBackward against PyTorch CPU
(torch.ops.aten.replication_pad2d{,_backward}) and the NumPy references
(reference.replication_pad2d[_backward]).

The forward is a copy: bit-exact for every dtype.  The backward follows the selected product
(docs/precision.md): on Ascend950 (and for fp64/complex everywhere) it sums, per gradInput
element, the gradOutput values of its replicated strip in (row, column) order starting from +0 --
ATen's order -- so fp32/fp64/complex128 results are bit-identical to PyTorch there; fp16/bf16 are
summed in fp32 and rounded once (ATen rounds after every add), complex64 in double: both are
compared bit for bit against the wider reference rounded once, and against torch with a
tolerance.  On Atlas A2/A3 (the default) fp32/fp16/bf16 follow the card's kernels: compared bit
for bit with reference.replication_pad2d_backward_a2 and with torch within a tolerance
(tests/test_op_pad_backward_card.py covers that arithmetic case by case).
"""
import textwrap

import ml_dtypes
import numpy as np
import pytest
import torch

import pyaclnn
from pyaclnn.functional import replication_pad2d, replication_pad2d_backward
from pyaclnn.testing import assert_bitwise_equal, layouts
import reference as ref
import tiers
from op_helpers import assert_still_filled, empty_tensor, empty_with_room, run_rebound

torch.set_num_threads(1)

BF16 = ml_dtypes.bfloat16
INVALID, NULLPTR = 161002, 161001

FWD_DTYPES = [np.float32, np.int32, np.int64, np.float16, np.int16, np.float64, np.int8, np.uint8,
              np.complex64, np.complex128, BF16]
BWD_DTYPES = [np.float32, np.float16, BF16, np.float64, np.complex64, np.complex128]
TORCH_DTYPE = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
               np.dtype(np.float16): torch.float16, np.dtype(BF16): torch.bfloat16,
               np.dtype(np.complex64): torch.complex64, np.dtype(np.complex128): torch.complex128}

# (self shape, padding [left, right, top, bottom]): 3-D and 4-D, 1x1 up to a few hundred,
# pads from 0 to dim - 1
SHAPES = [
    ((1, 1, 1, 1), (0, 0, 0, 0)),
    ((1, 1, 2, 2), (1, 1, 1, 1)),
    ((2, 3, 5, 4), (1, 2, 3, 1)),
    ((3, 4, 7), (6, 0, 3, 2)),
    ((1, 2, 1, 9), (8, 3, 0, 0)),
    ((2, 1, 9, 1), (0, 0, 8, 4)),
    ((1, 3, 17, 33), (32, 32, 16, 16)),
    ((2, 2, 64, 300), (7, 5, 7, 7)),
    ((1, 1, 300, 3), (2, 1, 299, 150)),
]
SHAPE_IDS = ["x".join(map(str, s)) + "-p" + "_".join(map(str, p)) for s, p in SHAPES]


def random_values(shape, dtype, rng):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def widened(dtype):
    dtype = np.dtype(dtype)
    if dtype in (np.dtype(np.float16), np.dtype(BF16)):
        return np.float32
    if dtype == np.dtype(np.complex64):
        return np.complex128
    return dtype


# ---- forward ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,pad", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("dtype", FWD_DTYPES, ids=lambda d: np.dtype(d).name)
def test_forward_matches_reference(acl, rng, shape, pad, dtype):
    x = random_values(shape, dtype, rng)
    out = replication_pad2d(x, pad)
    assert_bitwise_equal(out, ref.replication_pad2d(x, pad))
    if np.dtype(dtype) in TORCH_DTYPE and np.dtype(dtype) != np.dtype(BF16):
        want = torch.ops.aten.replication_pad2d(torch.from_numpy(x), list(pad)).numpy()
        assert_bitwise_equal(out, want)
    elif np.dtype(dtype) == np.dtype(BF16):
        want = torch.ops.aten.replication_pad2d(torch.from_numpy(x.astype(np.float32)).bfloat16(),
                                                list(pad)).float().numpy().astype(BF16)
        assert_bitwise_equal(out, want)


def test_forward_spec_examples(acl):
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    out = replication_pad2d(x, [2, 2, 2, 2])[0, 0]
    for r in range(3):
        assert out[r].tolist() == [0, 0, 0, 1, 2, 2, 2]
        assert out[4 + r].tolist() == [6, 6, 6, 7, 8, 8, 8]
    assert out[3].tolist() == [3, 3, 3, 4, 5, 5, 5]
    x = np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2)
    assert replication_pad2d(x, [1, 1, 1, 1]).reshape(-1).tolist() == \
        [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32).reshape(1, 2, 3)
    assert replication_pad2d(x, [0, 2, 1, 0]).tolist() == \
        [[[1, 2, 3, 3, 3], [1, 2, 3, 3, 3], [4, 5, 6, 6, 6]]]


@pytest.mark.parametrize("which", ["self", "out"])
def test_forward_strided_and_offset_views(acl, rng, which):
    x = random_values((2, 3, 6, 5), np.float32, rng)
    pad = (2, 1, 3, 2)
    want = ref.replication_pad2d(x, pad)
    for layout in layouts(x.shape if which == "self" else want.shape):
        x_view, out_view = (layout, ()) if which == "self" else ((), layout)     # () = contiguous
        with pyaclnn.Tensor.strided(x, *x_view) as xt, \
                pyaclnn.Tensor.strided(np.full(want.shape, np.nan, np.float32), *out_view) as out:
            pyaclnn.run_op("ReplicationPad2d", xt, list(pad), out)
            assert_bitwise_equal(out.numpy(), want)
            # storage outside the view is untouched (still NaN)
            assert np.isnan(out.storage_numpy()).sum() == out.storage_numel - want.size


def test_forward_empty_batch_writes_nothing(acl):
    with pyaclnn.Tensor.empty((0, 2, 3, 4), np.float32) as x, \
            empty_with_room((0, 2, 5, 6)) as out:
        ws, ex = pyaclnn.aclnnReplicationPad2dGetWorkspaceSize(x, [1, 1, 1, 1], out)
        assert ws == 0
        pyaclnn.aclnnReplicationPad2d(None, 0, ex)
        pyaclnn.synchronize()
        assert_still_filled(out)


@pytest.mark.parametrize("shape,out_shape", [
    ((0, 3, 4), (0, 5, 6)),          # a 3-D self may never be empty
    ((1, 0, 3, 4), (1, 0, 5, 6)),    # 4-D: only N may be 0
    ((1, 2, 0, 4), (1, 2, 2, 6)),
])
def test_forward_empty_rules(acl, shape, out_shape):
    with pyaclnn.Tensor.empty(shape, np.float32) as x, pyaclnn.Tensor.empty(out_shape, np.float32) as out:
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnReplicationPad2dGetWorkspaceSize(x, [1, 1, 1, 1], out)
    assert err.value.code == INVALID
    assert "self" in err.value.message or "input" in err.value.message


# ---- backward --------------------------------------------------------------------------------

@pytest.mark.parametrize("product", ["Ascend910B", "Ascend950"])
@pytest.mark.parametrize("shape,pad", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("dtype", BWD_DTYPES, ids=lambda d: np.dtype(d).name)
def test_backward_matches_reference(acl, soc, rng, shape, pad, dtype, product):
    soc(product)
    x = random_values(shape, dtype, rng)
    g = random_values(ref.padded_shape(shape, pad), dtype, rng)
    if np.dtype(dtype) == np.dtype(BF16) and (pad[2] or pad[3]) and max(pad) > 7:
        # CANN's bf16 kernel limit: H padded and a pad > 7 -> INVALID
        with pytest.raises(pyaclnn.AclnnError) as err:
            replication_pad2d_backward(g, x, pad)
        assert err.value.code == INVALID and "bf16" in err.value.message
        return
    gi = replication_pad2d_backward(g, x, pad)
    acc = widened(dtype)
    if product == "Ascend910B" and ref.a2_runs_on_ai_core(pad, dtype):
        assert_bitwise_equal(gi, ref.replication_pad2d_backward_a2(g, shape, pad))
        exact = ref.replication_pad2d_backward(g, shape, pad, np.float64)
        magnitude = ref.replication_pad2d_backward(np.abs(g.astype(np.float64)), shape, pad, np.float64)
        ulp = {np.dtype(np.float32): 2.0 ** -23, np.dtype(np.float16): 2.0 ** -10,
               np.dtype(BF16): 2.0 ** -7}[np.dtype(dtype)]
        contributions = (max(pad[0], pad[1]) + 1) * (max(pad[2], pad[3]) + 1)
        assert np.all(np.abs(gi.astype(np.float64) - exact) <= 2 * ulp * contributions * magnitude)
        return
    want = ref.replication_pad2d_backward(g, shape, pad, acc).astype(dtype)   # summed wide, rounded once
    assert_bitwise_equal(gi, want)
    t = torch.from_numpy(g.astype(acc)) if acc != np.dtype(dtype) else torch.from_numpy(g)
    t_x = torch.zeros(shape, dtype=t.dtype)
    torch_wide = torch.ops.aten.replication_pad2d_backward(t, t_x, list(pad)).numpy()
    if acc == np.dtype(dtype):
        assert_bitwise_equal(gi, torch_wide)       # same summation order as ATen
    else:
        assert_bitwise_equal(gi, torch_wide.astype(dtype))
        # and within the storage-type rounding ATen itself does (docs/precision.md)
        t_native = torch.ops.aten.replication_pad2d_backward(
            torch.from_numpy(g.astype(np.float32)).to(TORCH_DTYPE[np.dtype(dtype)])
            if np.dtype(dtype).kind != "c" else torch.from_numpy(g),
            torch.zeros(shape, dtype=TORCH_DTYPE[np.dtype(dtype)]), list(pad))
        native = t_native.to(torch.complex128 if np.dtype(dtype).kind == "c" else torch.float64).numpy()
        ulp = {np.dtype(np.float16): 2.0 ** -10, np.dtype(BF16): 2.0 ** -7,
               np.dtype(np.complex64): 2.0 ** -23}[np.dtype(dtype)]
        contributions = (max(pad[0], pad[1]) + 1) * (max(pad[2], pad[3]) + 1)
        magnitude = ref.replication_pad2d_backward(np.abs(g.astype(acc)), shape, pad, np.float64)
        bound = ulp * contributions * (magnitude + 1e-30)
        assert np.all(np.abs(gi.astype(native.dtype) - native) <= bound)


def test_backward_spec_examples(acl):
    gi = replication_pad2d_backward(np.ones((1, 1, 7), np.float32), np.zeros((1, 1, 5), np.float32),
                                    [1, 1, 0, 0])
    assert gi.tolist() == [[[2, 1, 1, 1, 2]]]
    gi = replication_pad2d_backward(np.ones((1, 1, 4, 4), np.float32),
                                    np.zeros((1, 1, 2, 2), np.float32), [1, 1, 1, 1])
    assert gi.reshape(-1).tolist() == [4, 4, 4, 4]
    # The PyTorch example self [1,2,3], padding [2,1,1,2] pads H=2 by 2 (>= H): rejected by our
    # stricter rule (docs/compatibility.md); the same numbers with H=3 against the reference:
    g = np.arange(1, 37, dtype=np.float32).reshape(1, 6, 6)
    gi = replication_pad2d_backward(g, np.zeros((1, 3, 3), np.float32), [2, 1, 1, 2])
    assert_bitwise_equal(gi, ref.replication_pad2d_backward(g, (1, 3, 3), (2, 1, 1, 2), np.float32))
    with pytest.raises(pyaclnn.AclnnError) as err:
        replication_pad2d_backward(np.arange(1, 31, dtype=np.float32).reshape(1, 5, 6),
                                   np.zeros((1, 2, 3), np.float32), [2, 1, 1, 2])
    assert err.value.code == INVALID and "padding" in err.value.message


@pytest.mark.parametrize("product", ["Ascend910B", "Ascend950"])
def test_backward_fp16_sums_in_fp32(acl, soc, product):
    # 16 copies of 0.1 (fp16) into one corner: fp32 sums rounded once, not 15 fp16 roundings.
    # Ascend950: +0 and the 16 in a row; A2 (the mini kernel): each column's 4 (the edge row
    # first), then the 4 column sums.
    soc(product)
    g = np.full((1, 1, 7, 7), np.float16(0.1), np.float16)
    gi = replication_pad2d_backward(g, np.zeros((1, 1, 4, 4), np.float16), [3, 0, 3, 0])
    x = np.float32(np.float16(0.1))
    if product == "Ascend950":
        corner = np.float32(0)
        for _ in range(16):
            corner = np.float32(corner + x)
    else:
        column = np.float32(np.float32(np.float32(x + x) + x) + x)
        corner = np.float32(np.float32(np.float32(column + column) + column) + column)
    assert gi[0, 0, 0, 0] == np.float16(corner)


@pytest.mark.parametrize("which", ["gradOutput", "self", "gradInput"])
def test_backward_strided_and_offset_views(acl, rng, which):
    shape, pad = (2, 3, 6, 5), (2, 1, 3, 2)
    x = random_values(shape, np.float32, rng)
    g = random_values(ref.padded_shape(shape, pad), np.float32, rng)
    want = ref.replication_pad2d_backward_a2(g, shape, pad)   # the default product: Atlas A2
    target_shape = {"gradOutput": g.shape, "self": shape, "gradInput": shape}[which]
    for strides, offset, storage in layouts(target_shape):
        def make(name, values):
            if name == which:
                return pyaclnn.Tensor.strided(values, strides, offset, storage)
            return pyaclnn.Tensor.from_numpy(values)
        with make("gradOutput", g) as gt, make("self", x) as xt, \
                make("gradInput", np.full(shape, np.nan, np.float32)) as git:
            pyaclnn.run_op("ReplicationPad2dBackward", gt, xt, list(pad), git)
            assert_bitwise_equal(git.numpy(), want)


def test_backward_empty_rules(acl):
    with pyaclnn.Tensor.empty((0, 2, 5, 6), np.float32) as g, \
            pyaclnn.Tensor.empty((0, 2, 3, 4), np.float32) as x, \
            empty_with_room((0, 2, 3, 4)) as gi:
        ws, ex = pyaclnn.aclnnReplicationPad2dBackwardGetWorkspaceSize(g, x, [1, 1, 1, 1], gi)
        assert ws == 0
        pyaclnn.aclnnReplicationPad2dBackward(None, 0, ex)
        pyaclnn.synchronize()
        assert_still_filled(gi)
    for x_shape, g_shape in [((0, 3, 4), (0, 5, 6)), ((1, 0, 3, 4), (1, 0, 5, 6))]:
        with pyaclnn.Tensor.empty(g_shape, np.float32) as g, \
                pyaclnn.Tensor.empty(x_shape, np.float32) as x, \
                pyaclnn.Tensor.empty(x_shape, np.float32) as gi:
            with pytest.raises(pyaclnn.AclnnError) as err:
                pyaclnn.aclnnReplicationPad2dBackwardGetWorkspaceSize(g, x, [1, 1, 1, 1], gi)
            assert err.value.code == INVALID and "empty" in err.value.message


def test_repeatable_executors_with_new_addresses(acl, rng):
    shape, pad = (2, 2, 5, 7), [1, 2, 2, 1]
    data = [(random_values(ref.padded_shape(shape, pad), np.float32, rng),
             random_values(shape, np.float32, rng)) for _ in range(2)]
    tensors = [[pyaclnn.Tensor.from_numpy(g), pyaclnn.Tensor.from_numpy(x),
                pyaclnn.Tensor.empty(shape, np.float32, fill=np.nan)] for g, x in data]
    first, second = tensors
    try:
        # backward: inputs 0 gradOutput, 1 self; output 0 gradInput
        results = run_rebound("ReplicationPad2dBackward", (first[0], first[1], pad, first[2]),
                              inputs=[(0, first[0], second[0]), (1, first[1], second[1])],
                              outputs=[(0, first[2], second[2])])
        for (g, _), (gi,) in zip(data, results):
            assert_bitwise_equal(gi, ref.replication_pad2d_backward_a2(g, shape, pad))
        # forward: input 0 self, output 0 out (fresh tensors: the ones above were rebound)
        xs = [pyaclnn.Tensor.from_numpy(x) for _, x in data]
        outs = [pyaclnn.Tensor.empty(ref.padded_shape(shape, pad), np.float32, fill=np.nan) for _ in data]
        tensors.extend([xs, outs])
        results = run_rebound("ReplicationPad2d", (xs[0], pad, outs[0]), inputs=[(0, xs[0], xs[1])],
                              outputs=[(0, outs[0], outs[1])])
        for (_, x), (out,) in zip(data, results):
            assert_bitwise_equal(out, ref.replication_pad2d(x, pad))
    finally:
        for group in tensors:
            for t in group:
                t.close()


THREAD_SCRIPT = textwrap.dedent("""
    import hashlib, sys, numpy as np, ml_dtypes
    import pyaclnn
    from pyaclnn.functional import replication_pad2d_backward
    rng = np.random.default_rng(5)
    digest = hashlib.sha256()
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16, np.complex64):
        g = rng.standard_normal((3, 5, 40, 37)).astype(np.float32).astype(dtype)
        x = np.zeros((3, 5, 33, 30), dtype)
        digest.update(replication_pad2d_backward(g, x, [3, 4, 2, 5]).tobytes())
    print(digest.hexdigest())
""")


def test_backward_bits_do_not_depend_on_thread_count_or_tier():
    tiers.assert_same_output(THREAD_SCRIPT, tiers.sweep(threads=(1, 2)))


# ---- validation ------------------------------------------------------------------------------

FWD_CASES = [
    # (self shape, self dtype, padding, out shape, out dtype, code, word in message)
    ("padding length 3", (1, 1, 3, 3), np.float32, [1, 1, 1], (1, 1, 5, 5), np.float32, INVALID, "padding"),
    ("2-D self", (3, 3), np.float32, [1, 1, 1, 1], (5, 5), np.float32, INVALID, "self"),
    ("5-D self", (1, 1, 1, 3, 3), np.float32, [1, 1, 1, 1], (1, 1, 1, 5, 5), np.float32, INVALID, "self"),
    ("out rank", (1, 1, 3, 3), np.float32, [1, 1, 1, 1], (1, 5, 5), np.float32, INVALID, "out"),
    ("out batch", (1, 1, 3, 10), np.float16, [2, 2, 2, 2], (2, 1, 7, 14), np.float16, INVALID, "out"),
    ("out width", (1, 1, 3, 10), np.float16, [2, 2, 2, 2], (1, 1, 7, 15), np.float16, INVALID, "out"),
    ("dtype mismatch", (1, 1, 3, 3), np.float16, [1, 1, 1, 1], (1, 1, 5, 5), np.float32, INVALID, "out"),
    ("bool self", (1, 1, 3, 3), np.bool_, [1, 1, 1, 1], (1, 1, 5, 5), np.bool_, INVALID, "self"),
    ("uint16 self", (1, 1, 3, 3), np.uint16, [1, 1, 1, 1], (1, 1, 5, 5), np.uint16, INVALID, "self"),
    ("negative pad", (1, 1, 3, 3), np.float32, [-1, 1, 1, 1], (1, 1, 5, 3), np.float32, INVALID, "padding"),
    ("pad >= W", (1, 1, 3, 3), np.float32, [3, 0, 0, 0], (1, 1, 3, 6), np.float32, INVALID, "padding"),
    ("pad >= H", (1, 1, 3, 3), np.float32, [0, 0, 0, 3], (1, 1, 6, 3), np.float32, INVALID, "padding"),
]


@pytest.mark.parametrize("case", FWD_CASES, ids=[c[0] for c in FWD_CASES])
def test_forward_validation(acl, case):
    _, shape, dtype, padding, out_shape, out_dtype, code, word = case
    with empty_tensor(shape, dtype) as x, empty_tensor(out_shape, out_dtype) as out:
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnReplicationPad2dGetWorkspaceSize(x, padding, out)
    assert err.value.code == code
    assert word in err.value.message and "aclnnReplicationPad2d" in err.value.message


def test_forward_null_and_format_checks(acl):
    with empty_tensor((1, 1, 3, 3)) as x, empty_tensor((1, 1, 5, 5)) as out, \
            empty_tensor((1, 1, 5, 5), fmt=pyaclnn.lib.ACL_FORMAT_NCHW) as out_nchw:
        for args, word in [((None, [1, 1, 1, 1], out), "self"), ((x, None, out), "padding"),
                           ((x, [1, 1, 1, 1], None), "out")]:
            with pytest.raises(pyaclnn.AclnnError) as err:
                pyaclnn.aclnnReplicationPad2dGetWorkspaceSize(*args)
            assert err.value.code == NULLPTR and word in err.value.message
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnReplicationPad2dGetWorkspaceSize(x, [1, 1, 1, 1], out_nchw)
        assert err.value.code == INVALID and "Format" in err.value.message


BWD_CASES = [
    # (gradOutput shape, self shape, gradInput shape, dtype(s), padding, code, word)
    ("padding length 3", (1, 1, 4, 4), (1, 1, 2, 2), (1, 1, 2, 2), np.float32, [1, 1, 1], INVALID, "padding"),
    ("2-D tensors", (4, 4), (2, 2), (2, 2), np.float32, [1, 1, 1, 1], INVALID, "self"),
    ("rank mismatch", (1, 4, 4), (1, 1, 2, 2), (1, 1, 2, 2), np.float32, [1, 1, 1, 1], INVALID, "gradOutput"),
    ("int16", (1, 1, 4, 4), (1, 1, 2, 2), (1, 1, 2, 2), np.int16, [1, 1, 1, 1], INVALID, "gradOutput"),
    ("wrong gradOutput", (1, 5, 5), (1, 2, 4), (1, 2, 4), np.float32, [1, 1, 1, 1], INVALID, "gradOutput"),
    ("gradOutput batch", (2, 1, 4, 4), (1, 1, 2, 2), (1, 1, 2, 2), np.float32, [1, 1, 1, 1], INVALID, "gradOutput"),
    ("gradInput shape", (1, 1, 4, 4), (1, 1, 2, 2), (1, 1, 2, 3), np.float32, [1, 1, 1, 1], INVALID, "gradInput"),
    ("bf16 pad 8", (1, 1, 12, 20), (1, 1, 10, 10), (1, 1, 10, 10), BF16, [8, 2, 1, 1], INVALID, "bf16"),
    ("bf16 negative", (1, 1, 10, 9), (1, 1, 10, 10), (1, 1, 10, 10), BF16, [-1, 0, 0, 0], INVALID, "bf16"),
    ("negative pad", (1, 1, 10, 9), (1, 1, 10, 10), (1, 1, 10, 10), np.float32, [-1, 0, 0, 0], INVALID, "padding"),
    ("pad >= W", (1, 1, 2, 5), (1, 1, 2, 2), (1, 1, 2, 2), np.float32, [2, 1, 0, 0], INVALID, "padding"),
]


@pytest.mark.parametrize("case", BWD_CASES, ids=[c[0] for c in BWD_CASES])
def test_backward_validation(acl, case):
    _, g_shape, x_shape, gi_shape, dtype, padding, code, word = case
    with empty_tensor(g_shape, dtype) as g, empty_tensor(x_shape, dtype) as x, empty_tensor(gi_shape, dtype) as gi:
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnReplicationPad2dBackwardGetWorkspaceSize(g, x, padding, gi)
    assert err.value.code == code
    assert word in err.value.message and "aclnnReplicationPad2dBackward" in err.value.message


def test_backward_bf16_pads_allowed_without_h_padding(acl, rng):
    g = random_values((1, 2, 4, 40), BF16, rng)
    gi = replication_pad2d_backward(g, np.zeros((1, 2, 4, 20), BF16), [12, 8, 0, 0])
    assert_bitwise_equal(gi, ref.replication_pad2d_backward_a2(g, (1, 2, 4, 20), (12, 8, 0, 0)))


def test_backward_dtype_and_null_checks(acl):
    with empty_tensor((1, 1, 4, 4)) as g, empty_tensor((1, 1, 2, 2)) as x, empty_tensor((1, 1, 2, 2)) as gi, \
            empty_tensor((1, 1, 2, 2), np.float16) as gi16:
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnReplicationPad2dBackwardGetWorkspaceSize(g, x, [1, 1, 1, 1], gi16)
        assert err.value.code == INVALID and "gradInput" in err.value.message
        for args, word in [((None, x, [1, 1, 1, 1], gi), "gradOutput"), ((g, None, [1, 1, 1, 1], gi), "self"),
                           ((g, x, None, gi), "padding"), ((g, x, [1, 1, 1, 1], None), "gradInput")]:
            with pytest.raises(pyaclnn.AclnnError) as err:
                pyaclnn.aclnnReplicationPad2dBackwardGetWorkspaceSize(*args)
            assert err.value.code == NULLPTR and word in err.value.message


def test_forward_large_output_streamed(acl, rng):
    # outputs of 16 MiB and more take the non-temporal store path; rows of 520 bytes are not
    # 16-byte aligned, which exercises its head and tail handling
    x = random_values((4, 64, 128, 128), np.float32, rng)
    out = replication_pad2d(x, (1, 1, 1, 1))
    assert out.nbytes >= 16 << 20
    assert_bitwise_equal(out, ref.replication_pad2d(x, (1, 1, 1, 1)))
