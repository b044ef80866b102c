"""aclnnUpsampleNearestExact1d and aclnnUpsampleNearestExact1dBackward against PyTorch CPU
(torch.ops.aten._upsample_nearest_exact1d{,_backward}) and the NumPy references
(reference.upsample_nearest_exact1d[_backward]).

The source index is min(floor(float32((d + 0.5) * scale)), L - 1) with a float32 scale
(scales > 0: float(1/scales); otherwise float(L)/float(Lout)).  The forward is a gather (bit-exact);
the backward sums every gradient of an input cell in increasing d order from +0, in fp32 for
fp16/bf16 and rounded once -- the same arithmetic as ATen, so every dtype is compared bit for bit.
"""
import textwrap

import ml_dtypes
import numpy as np
import pytest
import torch

import pyaclnn
from pyaclnn.functional import upsample_nearest_exact1d, upsample_nearest_exact1d_backward
from pyaclnn.testing import assert_bitwise_equal, layouts
import reference as ref
import tiers
from op_helpers import empty_tensor, from_torch, run_rebound, to_torch

torch.set_num_threads(1)

BF16 = ml_dtypes.bfloat16
INVALID, NULLPTR = 161002, 161001
FWD_DTYPES = [np.float32, np.float16, BF16, np.uint8]
BWD_DTYPES = [np.float32, np.float16, BF16]
TORCH_DTYPE = {np.dtype(np.float32): torch.float32, np.dtype(np.float16): torch.float16,
               np.dtype(BF16): torch.bfloat16, np.dtype(np.uint8): torch.uint8}

# (N, C, L, Lout, scales): up/down, integer and non-integer ratios, the 50x limit, given scales
CASES = [
    (1, 1, 1, 1, 0.0),
    (2, 3, 16, 32, 0.0),
    (1, 2, 1000, 2999, 0.0),
    (2, 2, 26, 11, 0.0),
    (1, 1, 5, 12, 2.5),
    (1, 1, 4, 6, 1.7),
    (1, 3, 7, 3, 0.0),
    (2, 1, 5, 2, 0.4),
    (1, 2, 3, 150, 0.0),       # exactly 50x
    (1, 1, 1, 50, 0.0),
    (1, 2, 4, 200, 50.0),      # scales at the limit
    (2, 2, 8192, 1024, 0.0),
    (1, 1, 50, 1, 0.0),
    (1, 4, 37, 100, 0.0),
    (1, 1, 10, 25, 2.5),
    (1, 1, 10, 30, 2.5),       # Lout > L*scales: the tail clamps into the last cell
]
CASE_IDS = ["%dx%dx%d-%d-s%g" % c for c in CASES]


def random_values(shape, dtype, rng):
    if np.dtype(dtype) == np.dtype(np.uint8):
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def torch_scales(scales):
    return scales if scales > 0 else None


# ---- forward ---------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", FWD_DTYPES, ids=lambda d: np.dtype(d).name)
def test_forward_matches_reference(acl, rng, case, dtype):
    N, C, L, Lout, scales = case
    x = random_values((N, C, L), dtype, rng)
    out = upsample_nearest_exact1d(x, [Lout], scales)
    assert_bitwise_equal(out, ref.upsample_nearest_exact1d(x, Lout, scales))
    want = torch.ops.aten._upsample_nearest_exact1d(to_torch(x), [Lout], torch_scales(scales))
    assert_bitwise_equal(out, from_torch(want, dtype))


def test_forward_spec_examples(acl):
    x = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
    want = [[0, 0, 1, 2, 2], [3, 3, 4, 5, 5], [6, 6, 7, 8, 8]]
    assert upsample_nearest_exact1d(x, [5]).tolist() == [want]
    assert upsample_nearest_exact1d(x.astype(np.uint8), [5]).tolist() == [want]
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
    assert upsample_nearest_exact1d(x, [6], 0.0).reshape(-1).tolist() == [0, 1, 1, 2, 3, 3]
    assert upsample_nearest_exact1d(x, [6], 1.7).reshape(-1).tolist() == [0, 0, 1, 2, 2, 3]
    x = np.arange(7, dtype=np.float32).reshape(1, 1, 7)
    assert upsample_nearest_exact1d(x, [3]).reshape(-1).tolist() == [1, 3, 5]
    x = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
    assert upsample_nearest_exact1d(x, [2]).reshape(-1).tolist() == [2, 4]
    assert upsample_nearest_exact1d(x, [2], 0.4).reshape(-1).tolist() == [2, 4]
    assert upsample_nearest_exact1d(x, [12], 2.5).reshape(-1).tolist() == \
        [1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5]
    # negative scales in the forward mean "derive from the sizes"
    assert upsample_nearest_exact1d(x, [2], -3.0).reshape(-1).tolist() == [2, 4]
    # UINT8 [1, 8, 16] -> 8 (downscale) succeeds
    u = np.arange(128, dtype=np.uint8).reshape(1, 8, 16)
    assert_bitwise_equal(upsample_nearest_exact1d(u, [8]), ref.upsample_nearest_exact1d(u, 8, 0.0))


def test_forward_index_boundaries_at_non_integer_ratios(acl):
    # The float32 arithmetic decides boundary cells: compare the whole index map with ATen
    for L, Lout in [(1000, 2999), (26, 11), (333, 1000), (4097, 8191), (12345, 54321)]:
        x = np.arange(L, dtype=np.float32).reshape(1, 1, L)
        out = upsample_nearest_exact1d(x, [Lout])
        want = torch.ops.aten._upsample_nearest_exact1d(torch.from_numpy(x), [Lout], None).numpy()
        assert_bitwise_equal(out, want)


@pytest.mark.parametrize("which", ["self", "out"])
def test_forward_strided_and_offset_views(acl, rng, which):
    x = random_values((2, 3, 10), np.float32, rng)
    want = ref.upsample_nearest_exact1d(x, 23, 0.0)
    for layout in layouts(x.shape if which == "self" else want.shape):
        x_view, out_view = (layout, ()) if which == "self" else ((), layout)     # () = contiguous
        with pyaclnn.Tensor.strided(x, *x_view) as xt, \
                pyaclnn.Tensor.strided(np.full(want.shape, np.nan, np.float32), *out_view) as out:
            pyaclnn.run_op("UpsampleNearestExact1d", xt, [23], 0.0, out)
            assert_bitwise_equal(out.numpy(), want)


# ---- backward --------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("dtype", BWD_DTYPES, ids=lambda d: np.dtype(d).name)
def test_backward_matches_reference(acl, soc, rng, case, dtype):
    """The card's arithmetic on the default product (A2); PyTorch's where the card's gather map is
    PyTorch's scatter map, and on Ascend910 (which keeps PyTorch's map: no kernel in the sources)."""
    N, C, L, Lout, scales = case
    g = random_values((N, C, Lout), dtype, rng)
    gi = upsample_nearest_exact1d_backward(g, [Lout], [N, C, L], scales)
    assert_bitwise_equal(gi, ref.upsample_nearest_exact1d_backward(g, L, scales).reshape(N, C, L).astype(dtype))
    want = torch.ops.aten._upsample_nearest_exact1d_backward(to_torch(g), [Lout], [N, C, L],
                                                             torch_scales(scales))
    same_map = np.array_equal(ref.upsample_backward_owner(L, Lout, scales), ref.nearest_exact_source(L, Lout, scales))
    if not same_map:
        soc("Ascend910")
        gi = upsample_nearest_exact1d_backward(g, [Lout], [N, C, L], scales)
    assert_bitwise_equal(gi, from_torch(want, dtype))


def test_backward_spec_examples(acl):
    def run(values, L, scales=0.0, dtype=np.float32):
        g = np.asarray(values, dtype).reshape(1, 1, -1)
        return upsample_nearest_exact1d_backward(g, [g.shape[-1]], [1, 1, L], scales).reshape(-1)
    assert run([1, 2], 4, 0.5).tolist() == [0, 1, 0, 2]
    assert run([1, 2, 3, 4, 5], 3).tolist() == [3, 3, 9]
    assert run([1, 2, 3], 7).tolist() == [0, 1, 0, 2, 0, 3, 0]
    assert run(range(1, 13), 5, 2.5).tolist() == [3, 12, 13, 27, 23]
    assert run(range(1, 13), 5, 0.0).tolist() == [3, 12, 13, 27, 23]
    assert run([np.float16(0.1)] * 8, 1, 0.0, np.float16).tolist() == [np.float16(0.7998046875)]


@pytest.mark.parametrize("which", ["gradOutput", "out"])
def test_backward_strided_and_offset_views(acl, rng, which):
    g = random_values((2, 3, 29), np.float32, rng)
    want = ref.upsample_nearest_exact1d_backward(g, 10, 0.0).reshape(2, 3, 10)
    for layout in layouts(g.shape if which == "gradOutput" else want.shape):
        g_view, out_view = (layout, ()) if which == "gradOutput" else ((), layout)     # () = contiguous
        with pyaclnn.Tensor.strided(g, *g_view) as gt, \
                pyaclnn.Tensor.strided(np.full(want.shape, np.nan, np.float32), *out_view) as out:
            pyaclnn.run_op("UpsampleNearestExact1dBackward", gt, [29], [2, 3, 10], 0.0, out)
            assert_bitwise_equal(out.numpy(), want)


def test_repeatable_executors_with_new_addresses(acl, rng):
    shapes = ((2, 3, 40), (2, 3, 13))
    data = [random_values(shapes[0], np.float32, rng) for _ in range(2)]
    gts = [pyaclnn.Tensor.from_numpy(g) for g in data]
    outs = [pyaclnn.Tensor.empty(shapes[1], np.float32, fill=np.nan) for _ in data]
    try:
        results = run_rebound("UpsampleNearestExact1dBackward", (gts[0], [40], list(shapes[1]), 0.0, outs[0]),
                              inputs=[(0, gts[0], gts[1])], outputs=[(0, outs[0], outs[1])])
        for g, (gi,) in zip(data, results):
            assert_bitwise_equal(gi, ref.upsample_nearest_exact1d_backward(g, 13, 0.0).reshape(shapes[1]))
        # the forward, rebinding both tensors too
        xs = [pyaclnn.Tensor.from_numpy(random_values((1, 2, 7), np.float32, rng)) for _ in range(2)]
        ys = [pyaclnn.Tensor.empty((1, 2, 16), np.float32, fill=np.nan) for _ in range(2)]
        gts.extend(xs + ys)
        x_values = [x.numpy() for x in xs]
        results = run_rebound("UpsampleNearestExact1d", (xs[0], [16], 0.0, ys[0]), inputs=[(0, xs[0], xs[1])],
                              outputs=[(0, ys[0], ys[1])])
        for x, (y,) in zip(x_values, results):
            assert_bitwise_equal(y, ref.upsample_nearest_exact1d(x, 16, 0.0))
    finally:
        for t in gts + outs:
            t.close()


THREAD_SCRIPT = textwrap.dedent("""
    import hashlib, numpy as np, ml_dtypes
    from pyaclnn.functional import upsample_nearest_exact1d_backward
    rng = np.random.default_rng(3)
    digest = hashlib.sha256()
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        for L, Lout in ((300, 899), (256, 512), (512, 64), (20, 47)):
            g = rng.standard_normal((4, 33, Lout)).astype(np.float32).astype(dtype)
            digest.update(upsample_nearest_exact1d_backward(g, [Lout], [4, 33, L]).tobytes())
    print(digest.hexdigest())
""")


def test_backward_bits_do_not_depend_on_thread_count_or_tier():
    tiers.assert_same_output(THREAD_SCRIPT, tiers.sweep(threads=(1, 2)))


# ---- validation ------------------------------------------------------------------------------

FWD_CASES = [
    # (self shape, self dtype, outputSize, out shape, out dtype, code, word)
    ("outputSize 0", (1, 2, 3), np.float32, [0], (1, 2, 1), np.float32, INVALID, "output"),
    ("outputSize 2 values", (1, 2, 3), np.float32, [6, 8], (1, 2, 6), np.float32, INVALID, "outputSize"),
    ("6-D self", (1, 1, 1, 1, 2, 3), np.float32, [6], (1, 2, 6), np.float32, INVALID, "self"),
    ("2-D self", (2, 3), np.float32, [6], (2, 6), np.float32, INVALID, "self"),
    ("N = 0", (0, 2, 3), np.float32, [6], (0, 2, 6), np.float32, INVALID, "sizes"),
    ("L = 0", (1, 2, 0), np.float32, [6], (1, 2, 6), np.float32, INVALID, "sizes"),
    ("uint8 vs fp16", (1, 2, 3), np.uint8, [6], (1, 2, 6), np.float16, INVALID, "out"),
    ("int32 self", (1, 2, 3), np.int32, [6], (1, 2, 6), np.int32, INVALID, "self"),
    ("float64 self", (1, 2, 3), np.float64, [6], (1, 2, 6), np.float64, INVALID, "self"),
    ("out length", (1, 2, 3), np.float32, [6], (1, 2, 7), np.float32, INVALID, "out"),
    ("out channels", (1, 2, 3), np.float32, [6], (1, 3, 6), np.float32, INVALID, "out"),
    ("out rank", (1, 2, 3), np.float32, [6], (2, 6), np.float32, INVALID, "out"),
]


@pytest.mark.parametrize("case", FWD_CASES, ids=[c[0] for c in FWD_CASES])
def test_forward_validation(acl, case):
    _, shape, dtype, size, out_shape, out_dtype, code, word = case
    with empty_tensor(shape, dtype) as x, empty_tensor(out_shape, out_dtype) as out:
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnUpsampleNearestExact1dGetWorkspaceSize(x, size, 0.0, out)
    assert err.value.code == code
    assert word in err.value.message and "aclnnUpsampleNearestExact1d" in err.value.message


def test_forward_null_and_format_checks(acl):
    with empty_tensor((1, 2, 3)) as x, empty_tensor((1, 2, 6)) as out, \
            empty_tensor((1, 2, 6), fmt=pyaclnn.lib.ACL_FORMAT_NC1HWC0) as out_private:
        for args, word in [((None, [6], 0.0, out), "self"), ((x, None, 0.0, out), "outputSize"),
                           ((x, [6], 0.0, None), "out")]:
            with pytest.raises(pyaclnn.AclnnError) as err:
                pyaclnn.aclnnUpsampleNearestExact1dGetWorkspaceSize(*args)
            assert err.value.code == NULLPTR and word in err.value.message
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnUpsampleNearestExact1dGetWorkspaceSize(x, [6], 0.0, out_private)
        assert err.value.code == INVALID and "format" in err.value.message


BWD_CASES = [
    # (gradOutput shape, dtype, outputSize, inputSize, scales, out shape, out dtype, code, word)
    ("gradOutput N = 0", (0, 1, 5), np.float32, [5], [0, 1, 5], 0.0, (0, 1, 5), np.float32, INVALID, "sizes"),
    ("gradOutput C = 0", (1, 0, 5), np.float32, [5], [1, 0, 5], 0.0, (1, 0, 5), np.float32, INVALID, "sizes"),
    ("gradOutput L = 0", (1, 1, 0), np.float32, [0], [1, 1, 5], 0.0, (1, 1, 5), np.float32, INVALID, "scales"),
    ("inputSize of 4", (1, 1, 5), np.float32, [5], [1, 1, 1, 5], 0.0, (1, 1, 5), np.float32, INVALID, "inputSize"),
    ("outputSize of 2", (1, 1, 5), np.float32, [5, 5], [1, 1, 5], 0.0, (1, 1, 5), np.float32, INVALID, "outputSize"),
    ("dtype mismatch", (1, 1, 5), np.float32, [5], [1, 1, 5], 0.0, (1, 1, 5), np.float16, INVALID, "out"),
    ("uint8", (1, 1, 5), np.uint8, [5], [1, 1, 5], 0.0, (1, 1, 5), np.uint8, INVALID, "gradOutput"),
    ("gradOutput rank", (1, 5), np.float32, [5], [1, 1, 5], 0.0, (1, 1, 5), np.float32, INVALID, "gradOutput"),
    ("out rank", (1, 1, 5), np.float32, [5], [1, 1, 5], 0.0, (1, 5), np.float32, INVALID, "out"),
    ("N/C mismatch", (1, 2, 5), np.float32, [5], [1, 2, 5], 0.0, (1, 3, 5), np.float32, INVALID, "out"),
    ("negative scales", (1, 1, 5), np.float32, [5], [1, 1, 5], -1.0, (1, 1, 5), np.float32, INVALID, "scales"),
    ("ratio over 50", (1, 1, 151), np.float32, [151], [1, 1, 3], 0.0, (1, 1, 3), np.float32, INVALID, "scales"),
    ("scales over 50", (1, 1, 8), np.float32, [8], [1, 1, 4], 50.5, (1, 1, 4), np.float32, INVALID, "scales"),
    ("outputSize vs gradOutput", (1, 1, 5), np.float32, [6], [1, 1, 5], 0.0, (1, 1, 5), np.float32, INVALID, "outputSize"),
    ("inputSize N/C", (1, 1, 5), np.float32, [5], [2, 1, 5], 0.0, (1, 1, 5), np.float32, INVALID, "inputSize"),
    ("out length", (1, 1, 5), np.float32, [5], [1, 1, 5], 0.0, (1, 1, 4), np.float32, INVALID, "out"),
]


@pytest.mark.parametrize("case", BWD_CASES, ids=[c[0] for c in BWD_CASES])
def test_backward_validation(acl, case):
    _, g_shape, dtype, out_size, in_size, scales, out_shape, out_dtype, code, word = case
    with empty_tensor(g_shape, dtype) as g, empty_tensor(out_shape, out_dtype) as out:
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(g, out_size, in_size, scales, out)
    assert err.value.code == code
    assert word in err.value.message and "aclnnUpsampleNearestExact1dBackward" in err.value.message


def test_backward_null_checks(acl):
    with empty_tensor((1, 1, 5)) as g, empty_tensor((1, 1, 5)) as out:
        for args, word in [((None, [5], [1, 1, 5], 0.0, out), "gradOutput"),
                           ((g, [5], None, 0.0, out), "inputSize"),
                           ((g, [5], [1, 1, 5], 0.0, None), "out"),
                           ((g, None, [1, 1, 5], 0.0, out), "outputSize")]:
            with pytest.raises(pyaclnn.AclnnError) as err:
                pyaclnn.aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(*args)
            assert err.value.code == NULLPTR and word in err.value.message


def test_backward_ratio_limit_is_inclusive(acl, rng):
    g = random_values((1, 2, 150), np.float32, rng)
    gi = upsample_nearest_exact1d_backward(g, [150], [1, 2, 3])
    assert_bitwise_equal(gi, ref.upsample_nearest_exact1d_backward(g, 3, 0.0).reshape(1, 2, 3))
    g = random_values((1, 1, 200), np.float32, rng)
    gi = upsample_nearest_exact1d_backward(g, [200], [1, 1, 4], 50.0)
    assert_bitwise_equal(gi, ref.upsample_nearest_exact1d_backward(g, 4, 50.0).reshape(1, 1, 4))


def test_forward_large_output_streamed(acl, rng):
    # outputs of 16 MiB and more take the non-temporal store path (rows of 11996 bytes)
    x = random_values((2, 700, 1000), np.float32, rng)
    out = upsample_nearest_exact1d(x, [2999])
    assert out.nbytes >= 16 << 20
    assert_bitwise_equal(out, ref.upsample_nearest_exact1d(x, 2999, 0.0))
